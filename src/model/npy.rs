//! A minimal reader of NumPy `.npy` files (format 1.0-3.0, C order, integer dtypes, and
//! float32 for MX models).

use std::path::Path;

pub struct Npy {
    pub shape: Vec<usize>,
    pub data: Vec<i64>,
}

/// A float32 array.
pub struct NpyF32 {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

pub fn read(path: &Path) -> Result<Npy, String> {
    let (descr, shape, body) = parse(path)?;
    let count: usize = shape.iter().product();
    let body = &body[..];
    let descr = descr.as_str();
    let (size, signed) = match descr {
        "|i1" | "<i1" => (1, true),
        "|u1" | "<u1" => (1, false),
        "<i2" => (2, true),
        "<u2" => (2, false),
        "<i4" => (4, true),
        "<i8" => (8, true),
        other => {
            return Err(format!(
            "{}: dtype {other} is not supported; use int8, uint8, int16, uint16, int32 or int64",
            path.display()
        ))
        }
    };
    if body.len() < count * size {
        return Err(format!(
            "{}: {} values expected, file is short",
            path.display(),
            count
        ));
    }
    let data = (0..count)
        .map(|i| {
            let b = &body[i * size..(i + 1) * size];
            let mut v: i64 = 0;
            for (k, byte) in b.iter().enumerate() {
                v |= i64::from(*byte) << (8 * k);
            }
            if signed && size < 8 && v >> (8 * size - 1) & 1 == 1 {
                v -= 1i64 << (8 * size);
            }
            v
        })
        .collect();
    Ok(Npy { shape, data })
}

/// Read a little-endian float32 `.npy`.
pub fn read_f32(path: &Path) -> Result<NpyF32, String> {
    let (descr, shape, body) = parse(path)?;
    if descr != "<f4" {
        return Err(format!(
            "{}: dtype {descr} is not supported here; MX models take float32 data",
            path.display()
        ));
    }
    let count: usize = shape.iter().product();
    if body.len() < count * 4 {
        return Err(format!(
            "{}: {} values expected, file is short",
            path.display(),
            count
        ));
    }
    let data = body
        .chunks_exact(4)
        .take(count)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Ok(NpyF32 { shape, data })
}

/// The header's dtype and shape, and the data bytes.
fn parse(path: &Path) -> Result<(String, Vec<usize>, Vec<u8>), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(format!("{} is not a .npy file", path.display()));
    }
    let major = bytes[6];
    let (hlen, start) = if major == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        if bytes.len() < 12 {
            return Err(format!("{}: truncated header", path.display()));
        }
        (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        )
    };
    let header = std::str::from_utf8(bytes.get(start..start + hlen).ok_or("truncated header")?)
        .map_err(|_| "header is not text".to_string())?;
    let field = |key: &str| -> Option<&str> {
        let i = header.find(&format!("'{key}'"))?;
        Some(header[i + key.len() + 2..].trim_start_matches([':', ' ']))
    };
    let descr = field("descr").ok_or("no descr in header")?;
    let descr = descr.trim_start_matches('\'');
    let descr = &descr[..descr.find('\'').ok_or("bad descr")?];
    if field("fortran_order").is_some_and(|f| f.starts_with("True")) {
        return Err(format!(
            "{}: Fortran order is not supported; save with C order",
            path.display()
        ));
    }
    let shape_text = field("shape").ok_or("no shape in header")?;
    let shape_text = &shape_text[1..shape_text.find(')').ok_or("bad shape")?];
    let shape: Vec<usize> = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| format!("bad shape entry {s}")))
        .collect::<Result<_, _>>()?;
    Ok((descr.to_string(), shape, bytes[start + hlen..].to_vec()))
}

/// Write an int64 `.npy` (used by tests and by `hwgen compile` to export tensors).
pub fn write_i64(path: &Path, shape: &[usize], data: &[i64]) -> std::io::Result<()> {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    write(path, "<i8", shape, &bytes)
}

/// Write a float32 `.npy` (MX model data).
pub fn write_f32(path: &Path, shape: &[usize], data: &[f32]) -> std::io::Result<()> {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    write(path, "<f4", shape, &bytes)
}

fn write(path: &Path, descr: &str, shape: &[usize], data: &[u8]) -> std::io::Result<()> {
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
    std::fs::write(path, out)
}

#[cfg(test)]
mod tests {
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
}
