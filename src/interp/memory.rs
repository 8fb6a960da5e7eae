//! External memory as the hardware sees it: beats of `data_width_bits`, rows of elements
//! packed least significant first, spanning consecutive beats.

use crate::design::IntType;

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
                super::wrap(v, t)
            })
            .collect()
    }

    pub fn write_row(&mut self, beat: u64, beats: u64, vals: &[i64], t: IntType) {
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

    /// An MX row: `n` elements of type `t` filling `elem_beats` beats, then the E8M0 scale in
    /// the first byte of the next beat. Returns the elements followed by the scale (0..=255).
    pub fn read_mx_row(&self, beat: u64, elem_beats: u64, n: usize, t: IntType) -> Vec<i64> {
        let mut v = self.read_row(beat, elem_beats, n, t);
        v.extend(self.read_row(beat + elem_beats, 1, 1, IntType::new(false, 8)));
        v
    }

    /// Write an MX row (elements, then the scale) as `read_mx_row` reads it; the whole scale
    /// beat is written (zero but the scale byte).
    pub fn write_mx_row(&mut self, beat: u64, elem_beats: u64, vals: &[i64], t: IntType) {
        let (scale, elems) = vals.split_last().expect("an MX row has a scale");
        self.write_row(beat, elem_beats, elems, t);
        self.write_row(beat + elem_beats, 1, &[*scale], IntType::new(false, 8));
    }

    /// One beat as `$readmemh` text.
    pub fn beat_hex(&self, beat: usize) -> String {
        let bytes = (self.beat_bits / 8) as usize;
        self.bytes[beat * bytes..(beat + 1) * bytes]
            .iter()
            .rev()
            .map(|b| format!("{b:02x}"))
            .collect()
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
