//! A fixed-width instruction word with bit-field access.

use super::{Field, INSTR_BITS};

const LIMBS: usize = INSTR_BITS.div_ceil(64) as usize;

/// The low `n` bits set (n <= 64).
fn mask(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Word([u64; LIMBS]);

impl Word {
    pub fn zero() -> Word {
        Word([0; LIMBS])
    }

    pub fn get(&self, lsb: u32, width: u32) -> u64 {
        let mut v = 0u64;
        let mut done = 0;
        // Limb by limb: the field's bits in each limb it spans.
        while done < width {
            let b = lsb + done;
            let (limb, off) = ((b / 64) as usize, b % 64);
            let n = (64 - off).min(width - done);
            let bits = (self.0[limb] >> off) & mask(n);
            v |= bits << done;
            done += n;
        }
        v
    }

    pub fn set(&mut self, f: &Field, value: u64) {
        let mut done = 0;
        while done < f.width {
            let b = f.lsb + done;
            let (limb, off) = ((b / 64) as usize, b % 64);
            let n = (64 - off).min(f.width - done);
            let m = mask(n) << off;
            let bits = ((value >> done) << off) & m;
            self.0[limb] = (self.0[limb] & !m) | bits;
            done += n;
        }
    }

    /// The word's bytes, least significant first (INSTR_BITS / 8 of them).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        self.0
            .iter()
            .flat_map(|l| l.to_le_bytes())
            .take(INSTR_BITS.div_ceil(8) as usize)
            .collect()
    }

    /// `$readmemh` text: INSTR_BITS/4 hex digits, most significant first.
    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(INSTR_BITS.div_ceil(4) as usize);
        self.push_hex(&mut s);
        s
    }

    /// Append `to_hex` to `out`.
    pub fn push_hex(&self, out: &mut String) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let digits = INSTR_BITS.div_ceil(4);
        for d in (0..digits).rev() {
            out.push(HEX[self.get(d * 4, 4.min(INSTR_BITS - d * 4)) as usize] as char);
        }
    }

    pub fn from_hex(s: &str) -> Option<Word> {
        let s = s.trim();
        if s.is_empty() || s.len() > INSTR_BITS.div_ceil(4) as usize {
            return None;
        }
        let mut w = Word::zero();
        for (d, c) in s.chars().rev().enumerate() {
            let nib = u64::from(c.to_digit(16)?);
            let lsb = d as u32 * 4;
            let width = 4.min(INSTR_BITS - lsb);
            if nib >> width != 0 {
                return None;
            }
            w.set(
                &Field {
                    name: "",
                    lsb,
                    width,
                    doc: "",
                },
                nib,
            );
        }
        Some(w)
    }
}
