//! The protocol-buffer wire format, as far as ONNX files use it: varints, fixed 32- and
//! 64-bit fields, length-delimited fields (strings, bytes, nested messages, packed
//! repeated scalars). Groups (wire types 3 and 4) are deprecated and never appear in ONNX.
//! Every read is bounds-checked: a truncated or corrupt file is an error, never a panic.

/// A field's payload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

/// A wire-format problem and the byte offset (within the message being read) where it is.
#[derive(Debug, PartialEq)]
pub struct WireError {
    pub offset: usize,
    pub what: String,
}

/// Reads the fields of one message in order.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    fn fail<T>(&self, what: impl Into<String>) -> Result<T, WireError> {
        Err(WireError {
            offset: self.pos,
            what: what.into(),
        })
    }

    fn varint(&mut self) -> Result<u64, WireError> {
        let mut v = 0u64;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos) else {
                return self.fail("the file ends inside a varint");
            };
            self.pos += 1;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        self.fail("a varint longer than 10 bytes")
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        match self.pos.checked_add(n).filter(|&end| end <= self.buf.len()) {
            Some(end) => {
                let s = &self.buf[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => self.fail(format!(
                "a field of {n} bytes runs past the end ({} bytes left)",
                self.buf.len() - self.pos
            )),
        }
    }

    /// The next field (number, payload), or None at the end of the message.
    pub fn next_field(&mut self) -> Result<Option<(u32, Value<'a>)>, WireError> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let number = u32::try_from(key >> 3).unwrap_or(u32::MAX);
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => Value::Fixed64(u64::from_le_bytes(self.take(8)?.try_into().unwrap())),
            2 => {
                let n = self.varint()?;
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                Value::Bytes(self.take(n)?)
            }
            5 => Value::Fixed32(u32::from_le_bytes(self.take(4)?.try_into().unwrap())),
            t => return self.fail(format!("wire type {t} (groups are not used by ONNX)")),
        };
        Ok(Some((number, value)))
    }
}

/// The integers of a repeated int field: one varint, or a packed run of them.
pub fn ints(v: Value, out: &mut Vec<i64>) -> Result<(), WireError> {
    match v {
        Value::Varint(x) => out.push(x as i64),
        Value::Bytes(b) => {
            let mut r = Reader::new(b);
            while r.pos < b.len() {
                out.push(r.varint()? as i64);
            }
        }
        _ => {
            return Err(WireError {
                offset: 0,
                what: "an integer field with a fixed-width payload".into(),
            })
        }
    }
    Ok(())
}

/// The floats of a repeated float field: one fixed32, or a packed run of them.
pub fn floats(v: Value, out: &mut Vec<f32>) -> Result<(), WireError> {
    match v {
        Value::Fixed32(x) => out.push(f32::from_bits(x)),
        Value::Bytes(b) if b.len() % 4 == 0 => out.extend(
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap())),
        ),
        _ => {
            return Err(WireError {
                offset: 0,
                what: "a float field that is neither 4 bytes nor a packed multiple of 4".into(),
            })
        }
    }
    Ok(())
}

/// The doubles of a repeated double field.
pub fn doubles(v: Value, out: &mut Vec<f64>) -> Result<(), WireError> {
    match v {
        Value::Fixed64(x) => out.push(f64::from_bits(x)),
        Value::Bytes(b) if b.len() % 8 == 0 => out.extend(
            b.chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap())),
        ),
        _ => {
            return Err(WireError {
                offset: 0,
                what: "a double field that is neither 8 bytes nor a packed multiple of 8".into(),
            })
        }
    }
    Ok(())
}

/// A string field's text.
pub fn text(v: Value) -> Result<String, WireError> {
    match v {
        Value::Bytes(b) => String::from_utf8(b.to_vec()).map_err(|_| WireError {
            offset: 0,
            what: "a string field that is not UTF-8".into(),
        }),
        _ => Err(WireError {
            offset: 0,
            what: "a string field with a numeric payload".into(),
        }),
    }
}

/// A nested message's bytes.
pub fn message<'a>(v: Value<'a>) -> Result<&'a [u8], WireError> {
    match v {
        Value::Bytes(b) => Ok(b),
        _ => Err(WireError {
            offset: 0,
            what: "a message field with a numeric payload".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-encoded: field 1 varint 150 (the protobuf guide's example, 08 96 01), field 2
    /// string "hi", field 3 fixed32 1.5f, field 4 packed [1, 300].
    #[test]
    fn reads_hand_encoded_fields() {
        let buf = [
            0x08, 0x96, 0x01, 0x12, 0x02, b'h', b'i', 0x1d, 0x00, 0x00, 0xc0, 0x3f, 0x22, 0x03,
            0x01, 0xac, 0x02,
        ];
        let mut r = Reader::new(&buf);
        assert_eq!(r.next_field().unwrap(), Some((1, Value::Varint(150))));
        let (n, v) = r.next_field().unwrap().unwrap();
        assert_eq!((n, text(v).unwrap().as_str()), (2, "hi"));
        let (_, v) = r.next_field().unwrap().unwrap();
        let mut f = vec![];
        floats(v, &mut f).unwrap();
        assert_eq!(f, vec![1.5]);
        let (_, v) = r.next_field().unwrap().unwrap();
        let mut i = vec![];
        ints(v, &mut i).unwrap();
        assert_eq!(i, vec![1, 300]);
        assert_eq!(r.next_field().unwrap(), None);
    }

    #[test]
    fn negative_int64_is_ten_bytes() {
        // -1 as int64: ten bytes, 0xff x 9 then 0x01.
        let mut buf = vec![0x08];
        buf.extend([0xff; 9]);
        buf.push(0x01);
        let (_, v) = Reader::new(&buf).next_field().unwrap().unwrap();
        let mut i = vec![];
        ints(v, &mut i).unwrap();
        assert_eq!(i, vec![-1]);
    }

    #[test]
    fn truncation_and_groups_are_errors() {
        assert!(Reader::new(&[0x12, 0x05, b'a']).next_field().is_err());
        assert!(Reader::new(&[0x08, 0x80]).next_field().is_err());
        assert!(Reader::new(&[0x0b]).next_field().is_err());
        assert!(Reader::new(&[0x12, 0xff, 0xff, 0xff, 0xff, 0x0f])
            .next_field()
            .is_err());
    }
}
