//! External memory as the hardware sees it: beats of `data_width_bits`, rows of elements
//! packed least significant first, spanning consecutive beats; a block-scaled row is its
//! element beats and then one more beat whose first byte is the E8M0 scale.

use crate::numeric::IntType;

#[derive(Debug, Clone)]
pub struct Memory {
    pub beat_bits: u32,
    bytes: Vec<u8>,
}

impl Memory {
    pub fn new(beat_bits: u32, beats: usize) -> Memory {
        Memory {
            beat_bits,
            bytes: vec![0; beats * (beat_bits / 8) as usize],
        }
    }

    pub fn beats(&self) -> usize {
        self.bytes.len() / (self.beat_bits / 8) as usize
    }

    fn bit(&self, i: u64) -> bool {
        self.bytes
            .get((i / 8) as usize)
            .is_some_and(|b| (b >> (i % 8)) & 1 == 1)
    }

    fn set_bit(&mut self, i: u64, v: bool) {
        let idx = (i / 8) as usize;
        if idx >= self.bytes.len() {
            self.bytes.resize(idx + 1, 0);
        }
        if v {
            self.bytes[idx] |= 1 << (i % 8);
        } else {
            self.bytes[idx] &= !(1 << (i % 8));
        }
    }

    /// `n` elements of type `t` starting at beat `beat`.
    pub fn read_row(&self, beat: u64, beats: u64, n: usize, t: IntType) -> Vec<i64> {
        let base = beat * u64::from(self.beat_bits);
        debug_assert!(n as u64 * u64::from(t.bits) <= beats * u64::from(self.beat_bits));
        (0..n)
            .map(|e| {
                let mut v: i64 = 0;
                for b in 0..t.bits {
                    if self.bit(base + e as u64 * u64::from(t.bits) + u64::from(b)) {
                        v |= 1 << b;
                    }
                }
                t.wrap(i128::from(v))
            })
            .collect()
    }

    /// Write `vals` as elements of type `t` over `beats` beats (the rest of them zero).
    pub fn write_row(&mut self, beat: u64, beats: u64, vals: &[i64], t: IntType) {
        let per_beat = u64::from(self.beat_bits);
        if t.bits.is_multiple_of(8) && vals.len() as u64 * u64::from(t.bits) <= beats * per_beat {
            // Whole bytes: each element's two's complement, least significant byte first.
            let per = (self.beat_bits / 8) as usize;
            let (start, len) = (beat as usize * per, beats as usize * per);
            if self.bytes.len() < start + len {
                self.bytes.resize(start + len, 0);
            }
            let row = &mut self.bytes[start..start + len];
            row.fill(0);
            let eb = (t.bits / 8) as usize;
            for (e, v) in vals.iter().enumerate() {
                for k in 0..eb {
                    row[e * eb + k] = (v >> (8 * k)) as u8;
                }
            }
            return;
        }
        let base = beat * u64::from(self.beat_bits);
        for b in 0..beats * u64::from(self.beat_bits) {
            self.set_bit(base + b, false);
        }
        for (e, v) in vals.iter().enumerate() {
            for b in 0..t.bits {
                self.set_bit(
                    base + e as u64 * u64::from(t.bits) + u64::from(b),
                    (v >> b) & 1 == 1,
                );
            }
        }
    }

    /// The E8M0 scale in the first byte of beat `beat`.
    pub fn read_scale(&self, beat: u64) -> u8 {
        self.read_row(beat, 1, 1, IntType::new(false, 8))[0] as u8
    }

    /// A scale beat: the scale in its first byte, the rest zero.
    pub fn write_scale(&mut self, beat: u64, scale: u8) {
        self.write_row(beat, 1, &[i64::from(scale)], IntType::new(false, 8));
    }

    /// This image, then every program's instructions (the first program's first), each
    /// instruction in `ceil(INSTR_BITS / beat width)` beats, low bits first; and each
    /// program's first beat (an engine's `prog_base`). The engines fetch their programs
    /// from there.
    pub fn with_programs(&self, programs: &[&[crate::isa::Instr]]) -> (Memory, Vec<u64>) {
        let w = self.beat_bits as usize;
        let ibeats = crate::isa::instr_beats(self.beat_bits) as usize;
        let total: usize = programs.iter().map(|p| p.len() * ibeats).sum();
        let mut mem = self.clone();
        mem.bytes.resize((self.beats() + total) * w / 8, 0);
        let mut bases = Vec::new();
        let mut at = self.beats();
        for p in programs {
            bases.push(at as u64);
            for i in *p {
                let bytes = i
                    .encode()
                    .expect("compiled instructions encode")
                    .to_le_bytes();
                let start = at * w / 8;
                mem.bytes[start..start + bytes.len()].copy_from_slice(&bytes);
                at += ibeats;
            }
        }
        (mem, bases)
    }

    /// One beat as `$readmemh` text.
    pub fn beat_hex(&self, beat: usize) -> String {
        let mut s = String::with_capacity(self.beat_bits as usize / 4);
        self.push_beat_hex(beat, &mut s);
        s
    }

    /// Append one beat as `$readmemh` text to `out`.
    pub fn push_beat_hex(&self, beat: usize, out: &mut String) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let bytes = (self.beat_bits / 8) as usize;
        for b in self.bytes[beat * bytes..(beat + 1) * bytes].iter().rev() {
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        }
    }

    /// The whole memory as a `$readmemh` file: one beat per line.
    pub fn to_hex_lines(&self) -> String {
        let mut s = String::with_capacity(self.beats() * (self.beat_bits as usize / 4 + 1));
        for b in 0..self.beats() {
            self.push_beat_hex(b, &mut s);
            s.push('\n');
        }
        s
    }

    /// Set one beat from `$readmemh` text.
    pub fn set_beat_hex(&mut self, beat: usize, hex: &str) {
        let bytes = (self.beat_bits / 8) as usize;
        let hex = format!("{:0>width$}", hex.trim(), width = bytes * 2);
        for k in 0..bytes {
            let lo = hex.len() - 2 * (k + 1);
            let v = u8::from_str_radix(&hex[lo..lo + 2], 16).expect("hex beat");
            self.bytes[beat * bytes + k] = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_pack_little_endian_across_beats() {
        let mut m = Memory::new(16, 4);
        let t = IntType::new(true, 4);
        m.write_row(1, 2, &[1, -1, 2, -8, 7, 0, 3, -2], t);
        // Elements 0..3 in beat 1 (element 0 in the low nibble), 4..7 in beat 2.
        assert_eq!(m.beat_hex(1), "82f1");
        assert_eq!(m.beat_hex(2), "e307");
        assert_eq!(m.read_row(1, 2, 8, t), vec![1, -1, 2, -8, 7, 0, 3, -2]);
        m.write_scale(3, 0x85);
        assert_eq!((m.beat_hex(3).as_str(), m.read_scale(3)), ("0085", 0x85));
        // The `$readmemh` file: every beat, most significant digit first, one per line.
        assert_eq!(m.to_hex_lines(), "0000\n82f1\ne307\n0085\n");
    }
}
