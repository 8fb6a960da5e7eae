//! Instructions: their typed operations, encoding, decoding and listing.

use super::*;

/// What an instruction does, with its typed fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    End,
    Load(Transfer),
    Store(Transfer),
    Matmul(Matmul),
    Vector(Vector),
    Window(Window),
    Rows(Rows),
}

/// An instruction: the semaphores it waits on and signals, and what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instr {
    pub wait: u32,
    pub signal: u32,
    pub op: Op,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IsaError {
    TooWide {
        op: &'static str,
        field: &'static str,
        value: String,
        width: u32,
    },
    BadOpcode(u64),
    BadMask {
        op: &'static str,
        field: &'static str,
        bits: Vec<String>,
    },
}

impl std::fmt::Display for IsaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IsaError::TooWide {
                op,
                field,
                value,
                width,
            } => write!(f, "{op}.{field} = {value} does not fit in {width} bits"),
            IsaError::BadOpcode(c) => write!(f, "opcode {c} is not defined"),
            IsaError::BadMask { op, field, bits } => write!(
                f,
                "{op}.{field} names semaphores its queue cannot use: {}",
                bits.join(", ")
            ),
        }
    }
}

impl std::error::Error for IsaError {}

/// The names of the semaphores in `mask`.
pub fn semaphore_names(mask: u32) -> Vec<String> {
    (0..NUM_SEMAPHORES as usize)
        .filter(|i| mask & (1 << i) != 0)
        .map(|i| SEMAPHORES[i].name())
        .collect()
}

impl Instr {
    pub fn new(op: Op) -> Instr {
        Instr {
            wait: 0,
            signal: 0,
            op,
        }
    }
    pub fn end() -> Instr {
        Instr::new(Op::End)
    }
    pub fn opcode(&self) -> Opcode {
        match self.op {
            Op::End => Opcode::End,
            Op::Load(_) => Opcode::Load,
            Op::Store(_) => Opcode::Store,
            Op::Matmul(_) => Opcode::Matmul,
            Op::Vector(_) => Opcode::Vector,
            Op::Window(_) => Opcode::Window,
            Op::Rows(_) => Opcode::Rows,
        }
    }
    /// The queue that executes it; `None` for `end`, which the fetch unit consumes.
    pub fn queue(&self) -> Option<Queue> {
        self.opcode().queue()
    }

    /// Check that wait and signal name only semaphores this queue consumes / produces.
    pub fn check_masks(&self) -> Result<(), IsaError> {
        let Some(q) = self.queue() else {
            return Ok(());
        };
        for (field, value, allowed) in [
            ("wait", self.wait, consumed_mask(q)),
            ("signal", self.signal, produced_mask(q)),
        ] {
            let bad = value & !allowed;
            if bad != 0 {
                return Err(IsaError::BadMask {
                    op: self.opcode().mnemonic(),
                    field,
                    bits: semaphore_names(bad),
                });
            }
        }
        Ok(())
    }

    /// The bits of every field after the opcode, in format order.
    fn field_bits(&self) -> Result<Vec<u64>, IsaError> {
        let op = self.opcode();
        let body = match &self.op {
            Op::End => Vec::new(),
            Op::Load(t) | Op::Store(t) => t.bits(op)?,
            Op::Matmul(m) => m.bits(op)?,
            Op::Vector(v) => v.bits(op)?,
            Op::Window(w) => w.bits(op)?,
            Op::Rows(r) => r.bits(op)?,
        };
        let mut bits = Vec::with_capacity(body.len() + 2);
        for (field, v) in [("wait", self.wait), ("signal", self.signal)] {
            let v = u64::from(v);
            if v > mask(NUM_SEMAPHORES) {
                return Err(IsaError::TooWide {
                    op: op.mnemonic(),
                    field,
                    value: v.to_string(),
                    width: NUM_SEMAPHORES,
                });
            }
            bits.push(v);
        }
        bits.extend(body);
        Ok(bits)
    }

    /// The instruction word; an error names a field whose value does not fit.
    pub fn encode(&self) -> Result<Word, IsaError> {
        let f = super::format_ref(self.opcode());
        let mut w = Word::zero();
        w.set(&f.fields[0], self.opcode() as u64);
        for (field, v) in f.fields[1..].iter().zip(self.field_bits()?) {
            w.set(field, v);
        }
        Ok(w)
    }

    pub fn decode(w: &Word) -> Result<Instr, IsaError> {
        let code = w.get(0, OPCODE_BITS);
        let opcode = Opcode::from_code(code).ok_or(IsaError::BadOpcode(code))?;
        let f = super::format_ref(opcode);
        let bits: Vec<u64> = f.fields[1..]
            .iter()
            .map(|fl| w.get(fl.lsb, fl.width))
            .collect();
        let body = &bits[2..];
        let op = match opcode {
            Opcode::End => Op::End,
            Opcode::Load => Op::Load(Transfer::from_field_bits(body)),
            Opcode::Store => Op::Store(Transfer::from_field_bits(body)),
            Opcode::Matmul => Op::Matmul(Matmul::from_field_bits(body)),
            Opcode::Vector => Op::Vector(Vector::from_field_bits(body)),
            Opcode::Window => Op::Window(Window::from_field_bits(body)),
            Opcode::Rows => Op::Rows(Rows::from_field_bits(body)),
        };
        Ok(Instr {
            wait: bits[0] as u32,
            signal: bits[1] as u32,
            op,
        })
    }

    /// One line of assembly: mnemonic, the non-zero fields (`buffer` and `count1` always),
    /// and the semaphores by name.
    pub fn to_asm(&self) -> String {
        let mut s = String::new();
        self.push_asm(&mut s);
        s
    }

    /// Append `to_asm` to `out`.
    pub fn push_asm(&self, out: &mut String) {
        use std::fmt::Write;
        out.push_str(self.opcode().mnemonic());
        let fields = match &self.op {
            Op::End => Vec::new(),
            Op::Load(t) | Op::Store(t) => t.listed(),
            Op::Matmul(m) => m.listed(),
            Op::Vector(v) => v.listed(),
            Op::Window(w) => w.listed(),
            Op::Rows(r) => r.listed(),
        };
        for (name, value) in fields {
            out.push(' ');
            out.push_str(name);
            out.push('=');
            if name == "ext_addr" {
                let v: u64 = value.parse().expect("a number");
                write!(out, "0x{v:x}").expect("writing to a String");
            } else {
                out.push_str(&value);
            }
        }
        for (field, m) in [("wait", self.wait), ("signal", self.signal)] {
            if m != 0 {
                out.push(' ');
                out.push_str(field);
                out.push('=');
                for (k, name) in semaphore_names(m).iter().enumerate() {
                    if k > 0 {
                        out.push('|');
                    }
                    out.push_str(name);
                }
            }
        }
    }
}
