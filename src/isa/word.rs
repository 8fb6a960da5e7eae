//! A fixed-width instruction word with bit-field access.

use super::{Field, INSTR_BITS};

const LIMBS: usize = INSTR_BITS.div_ceil(64) as usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Word([u64; LIMBS]);

impl Word {
    pub fn zero() -> Word {
        Word([0; LIMBS])
    }

    pub fn get(&self, lsb: u32, width: u32) -> u64 {
        let mut v = 0u64;
        for i in 0..width {
            let b = lsb + i;
            let bit = (self.0[(b / 64) as usize] >> (b % 64)) & 1;
            v |= bit << i;
        }
        v
    }

    pub fn set(&mut self, f: &Field, value: u64) {
        for i in 0..f.width {
            let b = f.lsb + i;
            let limb = &mut self.0[(b / 64) as usize];
            let mask = 1u64 << (b % 64);
            if (value >> i) & 1 == 1 {
                *limb |= mask;
            } else {
                *limb &= !mask;
            }
        }
    }

    /// `$readmemh` text: INSTR_BITS/4 hex digits, most significant first.
    pub fn to_hex(&self) -> String {
        let digits = INSTR_BITS.div_ceil(4);
        (0..digits)
            .rev()
            .map(|d| {
                let nib = self.get(d * 4, 4.min(INSTR_BITS - d * 4));
                char::from_digit(nib as u32, 16).expect("nibble")
            })
            .collect()
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
