//! A minimal reader of NumPy `.npy` files (format 1.0-3.0, C order, integer dtypes, and
//! float32 for MX models).

use super::MAX_ELEMENTS;
use std::path::Path;

/// Why a `.npy` file cannot be read, and what to do about it.
#[derive(Debug)]
pub struct NpyError {
    pub rule: String,
    pub fix: &'static str,
}

const REWRITE: &str = "write the array again with numpy.save (format 1.0 to 3.0, C order)";
const SMALLER: &str =
    "export the array the layer expects; a model tensor holds at most 2^27 elements";

fn fail<T>(rule: String, fix: &'static str) -> Result<T, NpyError> {
    Err(NpyError { rule, fix })
}

pub struct Npy {
    pub shape: Vec<usize>,
    pub data: Vec<i64>,
}

/// A float32 array.
pub struct NpyF32 {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

pub fn read(path: &Path) -> Result<Npy, NpyError> {
    let (descr, shape, body) = parse(path)?;
    let data = ints(path, &descr, &shape, &body)?;
    Ok(Npy { shape, data })
}

/// Any array hwgen reads (float32, float64, float16, bfloat16, bool or an integer type):
/// its dtype, shape and elements. A `<V2` array (two raw bytes an element) is read as
/// bfloat16, the way ml_dtypes saves it; a `<V1` or `<f1` array (one byte an element, as
/// ml_dtypes saves float8 and 4-bit integers) as its codes, `|V1` or `|f1`.
pub fn read_values(path: &Path) -> Result<(String, Vec<usize>, Vec<f64>), NpyError> {
    let (descr, shape, body) = parse(path)?;
    let data = if descr == "<f4" {
        data(path, &shape, 4, &body)?
            .chunks_exact(4)
            .map(|b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            .collect()
    } else if descr == "<f8" {
        data(path, &shape, 8, &body)?
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect()
    } else if descr == "<f2" || descr == "<V2" {
        // float16, and bfloat16 as ml_dtypes saves it (two raw bytes, numpy's `V2`).
        let f = if descr == "<f2" {
            crate::numeric::FP16
        } else {
            crate::numeric::BF16
        };
        data(path, &shape, 2, &body)?
            .chunks_exact(2)
            .map(|b| f.decode(u32::from(u16::from_le_bytes([b[0], b[1]]))))
            .collect()
    } else if matches!(descr.as_str(), "<V1" | "|V1" | "<f1" | "|f1") {
        // ml_dtypes' float8 (float8_e5m2 as <f1, float8_e4m3fn as <V1) and 4-bit integers
        // (<V1, one a byte): the stored codes, which the reader decodes by the type it
        // expects.
        data(path, &shape, 1, &body)?
            .iter()
            .map(|&b| f64::from(b))
            .collect()
    } else if descr == "|b1" {
        // numpy's bool: one byte per element, 0 or 1.
        let bytes = data(path, &shape, 1, &body)?;
        if let Some(k) = bytes.iter().position(|&b| b > 1) {
            return fail(
                format!(
                    "{}: bool element {k} is the byte {}, not 0 or 1",
                    path.display(),
                    bytes[k]
                ),
                "save the array with numpy as dtype bool",
            );
        }
        bytes.iter().map(|&b| f64::from(b)).collect()
    } else if matches!(
        descr.as_str(),
        "|i1" | "<i1" | "|u1" | "<u1" | "<i2" | "<u2" | "<i4" | "<u4" | "<i8" | "<u8"
    ) {
        let v = ints(path, &descr, &shape, &body)?;
        v.into_iter().map(|v| v as f64).collect()
    } else {
        return fail(
            format!("{}: dtype {descr} is not supported here", path.display()),
            "save the array as float32, float64, float16, bfloat16 (ml_dtypes), bool or a little-endian 8-, 16-, 32- or 64-bit integer type",
        );
    };
    let descr = match descr.as_str() {
        "<i1" | "<u1" | "<V1" | "<f1" => descr.replacen('<', "|", 1),
        _ => descr,
    };
    Ok((descr, shape, data))
}

/// The elements of an integer array.
fn ints(path: &Path, descr: &str, shape: &[usize], body: &[u8]) -> Result<Vec<i64>, NpyError> {
    let (size, signed) = match descr {
        "|i1" | "<i1" => (1, true),
        "|u1" | "<u1" => (1, false),
        "<i2" => (2, true),
        "<u2" => (2, false),
        "<i4" => (4, true),
        "<u4" => (4, false),
        "<i8" => (8, true),
        "<u8" => (8, false),
        other => {
            return fail(
                format!("{}: dtype {other} is not supported here", path.display()),
                "save the array as int8, uint8, int16, uint16, int32 or int64 (little-endian)",
            )
        }
    };
    let body = data(path, shape, size, body)?;
    Ok(body
        .chunks_exact(size)
        .map(|b| {
            let mut v: i64 = 0;
            for (k, byte) in b.iter().enumerate() {
                v |= i64::from(*byte) << (8 * k);
            }
            if signed && size < 8 && v >> (8 * size - 1) & 1 == 1 {
                v -= 1i64 << (8 * size);
            }
            v
        })
        .collect())
}

/// Read a little-endian float32 `.npy`.
pub fn read_f32(path: &Path) -> Result<NpyF32, NpyError> {
    let (descr, shape, body) = parse(path)?;
    if descr != "<f4" {
        return fail(
            format!(
                "{}: dtype {descr} is not supported here; real-valued layers take float32 data",
                path.display()
            ),
            "save the array as float32 (np.asarray(x, dtype=np.float32))",
        );
    }
    let data = data(path, &shape, 4, &body)?
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Ok(NpyF32 { shape, data })
}

/// The data bytes of an array of `shape` with `size`-byte elements: exactly as many as the
/// header says.
fn data<'a>(
    path: &Path,
    shape: &[usize],
    size: usize,
    body: &'a [u8],
) -> Result<&'a [u8], NpyError> {
    let count: usize = shape.iter().product();
    if body.len() != count * size {
        return fail(
            format!(
                "{}: the header's shape {shape:?} needs {} data bytes, the file holds {}",
                path.display(),
                count * size,
                body.len()
            ),
            REWRITE,
        );
    }
    Ok(body)
}

/// The header's dtype and shape, and the data bytes. Every malformed header is an error,
/// and the element count is computed without overflow and bounded before anything is
/// allocated for the data.
fn parse(path: &Path) -> Result<(String, Vec<usize>, Vec<u8>), NpyError> {
    let name = path.display();
    // The largest array (MAX_ELEMENTS of 8 bytes) and a header.
    let max = (super::MAX_ELEMENTS as u64) * 8 + (1 << 20);
    let bytes = crate::filemap::read_input(path, max).map_err(|rule| NpyError {
        rule,
        fix: "give the path of a .npy file relative to the model file, or \"random\"",
    })?;
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return fail(
            format!("{name} is not a .npy file (no \\x93NUMPY magic)"),
            REWRITE,
        );
    }
    let (hlen, start): (usize, usize) = match bytes[6] {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        2 | 3 => return fail(format!("{name}: truncated header"), REWRITE),
        v => {
            return fail(
                format!("{name}: .npy format version {v} is not supported (1, 2 or 3)"),
                REWRITE,
            )
        }
    };
    let Some(header) = bytes.get(start..start.saturating_add(hlen)) else {
        return fail(format!("{name}: truncated header"), REWRITE);
    };
    let Ok(header) = std::str::from_utf8(header) else {
        return fail(format!("{name}: the header is not text"), REWRITE);
    };
    let bad = |what: &str| NpyError {
        rule: format!("{name}: malformed header ({what}): {}", header.trim()),
        fix: REWRITE,
    };
    let h = Header::parse(header).map_err(|what| bad(&what))?;
    let descr = h.descr;
    if h.fortran_order {
        return fail(
            format!("{name}: Fortran order is not supported"),
            "save the array in C order (np.save(path, np.ascontiguousarray(x)))",
        );
    }
    let shape = h.shape;
    if super::element_count(&shape).is_none() {
        return fail(
            format!("{name}: shape {shape:?} holds more than {MAX_ELEMENTS} elements, the most a model tensor may have"),
            SMALLER,
        );
    }
    Ok((descr, shape, bytes[start + hlen..].to_vec()))
}

/// A .npy header: the Python dict literal `{'descr': '<f4', 'fortran_order': False,
/// 'shape': (2, 3), }` (then spaces and a newline), read by its grammar: each of the three
/// keys exactly once and no other, a string, a boolean and a tuple of non-negative
/// integers (one element with its trailing comma, `(5,)`; `()` for a scalar), items
/// separated by single commas.
#[derive(Debug)]
struct Header {
    descr: String,
    fortran_order: bool,
    shape: Vec<usize>,
}

impl Header {
    fn parse(text: &str) -> Result<Header, String> {
        let mut p = Cursor {
            s: text.as_bytes(),
            i: 0,
        };
        p.expect(b'{')?;
        let (mut descr, mut fortran, mut shape) = (None, None, None);
        loop {
            p.ws();
            if p.eat(b'}') {
                break;
            }
            let key = p.string()?;
            p.ws();
            p.expect(b':')?;
            p.ws();
            let seen = match key.as_str() {
                "descr" => descr.replace(p.string()?).is_some(),
                "fortran_order" => fortran.replace(p.boolean()?).is_some(),
                "shape" => shape.replace(p.tuple()?).is_some(),
                other => return Err(format!("unknown key '{other}'")),
            };
            if seen {
                return Err(format!("the key '{key}' given twice"));
            }
            p.ws();
            if p.eat(b'}') {
                break;
            }
            p.expect(b',')?;
        }
        if !p.s[p.i..].iter().all(|b| b.is_ascii_whitespace()) {
            return Err("text after the dict".into());
        }
        Ok(Header {
            descr: descr.ok_or("no 'descr'")?,
            fortran_order: fortran.ok_or("no 'fortran_order'")?,
            shape: shape.ok_or("no 'shape'")?,
        })
    }
}

/// A position in a header's text.
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn ws(&mut self) {
        while self.s.get(self.i).is_some_and(|b| *b == b' ') {
            self.i += 1;
        }
    }
    fn eat(&mut self, b: u8) -> bool {
        let hit = self.s.get(self.i) == Some(&b);
        self.i += usize::from(hit);
        hit
    }
    fn expect(&mut self, b: u8) -> Result<(), String> {
        match self.eat(b) {
            true => Ok(()),
            false => Err(format!("'{}' expected at byte {}", b as char, self.i)),
        }
    }
    /// A string in single or double quotes (no escapes: numpy writes none).
    fn string(&mut self) -> Result<String, String> {
        let q = match self.s.get(self.i) {
            Some(b'\'') => b'\'',
            Some(b'"') => b'"',
            _ => return Err(format!("a string expected at byte {}", self.i)),
        };
        self.i += 1;
        let from = self.i;
        while self.s.get(self.i).is_some_and(|b| *b != q && *b != b'\\') {
            self.i += 1;
        }
        let text = String::from_utf8_lossy(&self.s[from..self.i]).into_owned();
        self.expect(q)?;
        Ok(text)
    }
    fn boolean(&mut self) -> Result<bool, String> {
        for (word, v) in [(&b"True"[..], true), (&b"False"[..], false)] {
            if self.s[self.i..].starts_with(word) {
                self.i += word.len();
                return Ok(v);
            }
        }
        Err(format!("True or False expected at byte {}", self.i))
    }
    /// `(` integers separated by commas, a trailing comma allowed (required after one) `)`.
    fn tuple(&mut self) -> Result<Vec<usize>, String> {
        self.expect(b'(')?;
        let mut v = Vec::new();
        loop {
            self.ws();
            if self.eat(b')') {
                break;
            }
            let from = self.i;
            while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
                self.i += 1;
            }
            let digits = std::str::from_utf8(&self.s[from..self.i]).unwrap_or("");
            let n: usize = digits
                .parse()
                .map_err(|_| format!("a shape entry expected at byte {from}"))?;
            v.push(n);
            self.ws();
            if self.eat(b')') {
                if v.len() == 1 {
                    return Err("a one-element shape is written (n,)".into());
                }
                break;
            }
            self.expect(b',')?;
        }
        Ok(v)
    }
}

/// Write an int64 `.npy` (used by tests and by `hwgen compile` to export tensors).
pub fn write_i64(path: &Path, shape: &[usize], data: &[i64]) -> std::io::Result<()> {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    write_raw(path, "<i8", shape, &bytes)
}

/// Write a float32 `.npy` (MX model data).
pub fn write_f32(path: &Path, shape: &[usize], data: &[f32]) -> std::io::Result<()> {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    write_raw(path, "<f4", shape, &bytes)
}

/// An int64 `.npy` file's bytes.
pub fn encode_i64(shape: &[usize], data: &[i64]) -> Vec<u8> {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    encode("<i8", shape, &bytes)
}

/// Write a `.npy` (format 1.0) with dtype `descr` and the given data bytes.
pub fn write_raw(path: &Path, descr: &str, shape: &[usize], data: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, encode(descr, shape, data))
}

/// A `.npy` file's bytes (format 1.0) with dtype `descr` and the given data bytes.
pub fn encode(descr: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_text = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}");
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

#[cfg(test)]
mod tests {
    /// The header grammar: numpy's own headers read; an unknown key, a key given twice, a
    /// malformed shape and trailing text are refused, each named.
    #[test]
    fn header_grammar() {
        let ok = |h: &str| super::Header::parse(h).map(|h| (h.descr, h.fortran_order, h.shape));
        assert_eq!(
            ok("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }    \n"),
            Ok(("<f4".into(), false, vec![2, 3]))
        );
        assert_eq!(
            ok("{'shape': (5,), 'fortran_order': True, 'descr': '|i1'}"),
            Ok(("|i1".into(), true, vec![5]))
        );
        assert_eq!(
            ok("{'descr': '<i8', 'fortran_order': False, 'shape': ()}")
                .unwrap()
                .2,
            Vec::<usize>::new()
        );
        let err = |h: &str| super::Header::parse(h).unwrap_err();
        assert!(
            err("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}")
                .contains("unknown key 'x'")
        );
        assert!(
            err("{'descr': '<f4', 'descr': '|i1', 'fortran_order': False, 'shape': (2,)}")
                .contains("'descr' given twice")
        );
        assert!(
            err("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 8, 16, 16,,)}")
                .contains("shape entry")
        );
        assert!(err("{'descr': '<f4', 'fortran_order': False, 'shape': (5)}").contains("(n,)"));
        assert!(
            err("{'descr': '<f4', 'fortran_order': False, 'shape': (5,)} x")
                .contains("after the dict")
        );
        assert!(err("{'descr': '<f4', 'shape': (5,)}").contains("no 'fortran_order'"));
        assert!(
            err("{'descr': '<f4',, 'fortran_order': False, 'shape': (5,)}")
                .contains("string expected")
        );
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.npy");
        super::write_i64(&p, &[2, 3], &[1, -2, 3, -4, 5, -128]).unwrap();
        let n = super::read(&p).unwrap();
        assert_eq!(n.shape, vec![2, 3]);
        assert_eq!(n.data, vec![1, -2, 3, -4, 5, -128]);
        super::write_f32(&p, &[3], &[1.5, -0.0, f32::MIN_POSITIVE]).unwrap();
        let f = super::read_f32(&p).unwrap();
        assert_eq!(f.shape, vec![3]);
        assert_eq!(f.data, vec![1.5, -0.0, f32::MIN_POSITIVE]);
        assert!(super::read(&p).is_err() && super::read_f32(&dir.path().join("x")).is_err());
    }

    #[test]
    fn reads_int8_written_by_hand() {
        // The bytes numpy writes for np.array([[1, -1], [127, -128]], dtype=np.int8).
        let header = "{'descr': '|i1', 'fortran_order': False, 'shape': (2, 2), }";
        let mut h = header.to_string();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
        bytes.extend_from_slice(h.as_bytes());
        bytes.extend_from_slice(&[1, 0xff, 127, 0x80]);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.npy");
        std::fs::write(&p, bytes).unwrap();
        let n = super::read(&p).unwrap();
        assert_eq!(n.data, vec![1, -1, 127, -128]);
    }

    /// numpy's bool arrays read as 0 and 1 (and only as values, not as weights); a byte
    /// other than 0 or 1 is refused, naming the element.
    #[test]
    fn reads_bool_values() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.npy");
        std::fs::write(&p, super::encode("|b1", &[3], &[1, 0, 1])).unwrap();
        let (descr, shape, data) = super::read_values(&p).unwrap();
        assert_eq!(
            (descr.as_str(), shape, data),
            ("|b1", vec![3], vec![1.0, 0.0, 1.0])
        );
        assert!(super::read(&p).is_err());
        std::fs::write(&p, super::encode("|b1", &[2], &[1, 2])).unwrap();
        let e = super::read_values(&p).unwrap_err();
        assert!(
            e.rule.contains("bool element 1 is the byte 2"),
            "{}",
            e.rule
        );
    }
}
