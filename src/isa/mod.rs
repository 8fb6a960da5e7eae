//! The instruction set, defined once. Field positions are allocated here, in order, from the
//! field widths; the assembler encodes from these tables, `hwgen isa` prints them, and the
//! Verilog decoder macros (`hwgen_isa.vh`) are generated from them.

mod word;

pub use word::Word;

use std::fmt::Write as _;

/// Every instruction is this many bits wide.
pub const INSTR_BITS: u32 = 192;
/// Width of the opcode field.
pub const OPCODE_BITS: u32 = 4;

/// The four in-order queues of a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Queue {
    Load,
    Compute,
    Vector,
    Store,
}

impl Queue {
    pub const ALL: [Queue; 4] = [Queue::Load, Queue::Compute, Queue::Vector, Queue::Store];
    pub fn name(self) -> &'static str {
        match self {
            Queue::Load => "load",
            Queue::Compute => "compute",
            Queue::Vector => "vector",
            Queue::Store => "store",
        }
    }
}

/// A counting semaphore between one producer queue and one consumer queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Semaphore {
    pub producer: Queue,
    pub consumer: Queue,
}

impl Semaphore {
    pub fn name(&self) -> String {
        format!("{}_to_{}", self.producer.name(), self.consumer.name())
    }
}

/// The semaphores, in bit order of the wait and signal masks.
pub const SEMAPHORES: [Semaphore; 10] = [
    sem(Queue::Load, Queue::Compute),
    sem(Queue::Compute, Queue::Load),
    sem(Queue::Compute, Queue::Vector),
    sem(Queue::Vector, Queue::Compute),
    sem(Queue::Vector, Queue::Store),
    sem(Queue::Store, Queue::Vector),
    sem(Queue::Load, Queue::Vector),
    sem(Queue::Vector, Queue::Load),
    sem(Queue::Store, Queue::Load),
    sem(Queue::Load, Queue::Store),
];

const fn sem(producer: Queue, consumer: Queue) -> Semaphore {
    Semaphore { producer, consumer }
}

pub const NUM_SEMAPHORES: u32 = SEMAPHORES.len() as u32;

/// Index of the semaphore from `producer` to `consumer`.
pub fn semaphore_index(producer: Queue, consumer: Queue) -> Option<usize> {
    SEMAPHORES
        .iter()
        .position(|s| s.producer == producer && s.consumer == consumer)
}

/// Mask of the semaphores `q` may wait on (it is their consumer).
pub fn consumed_mask(q: Queue) -> u32 {
    SEMAPHORES
        .iter()
        .enumerate()
        .filter(|(_, s)| s.consumer == q)
        .fold(0, |m, (i, _)| m | (1 << i))
}

/// Mask of the semaphores `q` may signal (it is their producer).
pub fn produced_mask(q: Queue) -> u32 {
    SEMAPHORES
        .iter()
        .enumerate()
        .filter(|(_, s)| s.producer == q)
        .fold(0, |m, (i, _)| m | (1 << i))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Opcode {
    End = 0,
    Load = 1,
    Matmul = 2,
    Vector = 3,
    Store = 4,
}

impl Opcode {
    pub const ALL: [Opcode; 5] = [
        Opcode::End,
        Opcode::Load,
        Opcode::Matmul,
        Opcode::Vector,
        Opcode::Store,
    ];
    pub fn mnemonic(self) -> &'static str {
        match self {
            Opcode::End => "end",
            Opcode::Load => "load",
            Opcode::Matmul => "matmul",
            Opcode::Vector => "vector",
            Opcode::Store => "store",
        }
    }
    /// The queue that executes it; `None` for `end`, which the fetch unit consumes.
    pub fn queue(self) -> Option<Queue> {
        match self {
            Opcode::End => None,
            Opcode::Load => Some(Queue::Load),
            Opcode::Matmul => Some(Queue::Compute),
            Opcode::Vector => Some(Queue::Vector),
            Opcode::Store => Some(Queue::Store),
        }
    }
    pub fn from_code(code: u64) -> Option<Opcode> {
        Opcode::ALL.into_iter().find(|o| *o as u64 == code)
    }
}

/// Scratchpad selector of `load` and `store`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buffer {
    Input = 0,
    Weight = 1,
    Accumulator = 2,
    Output = 3,
}

impl Buffer {
    pub const ALL: [Buffer; 4] = [
        Buffer::Input,
        Buffer::Weight,
        Buffer::Accumulator,
        Buffer::Output,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Buffer::Input => "input",
            Buffer::Weight => "weight",
            Buffer::Accumulator => "accumulator",
            Buffer::Output => "output",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub lsb: u32,
    pub width: u32,
    pub doc: &'static str,
}

impl Field {
    pub fn msb(&self) -> u32 {
        self.lsb + self.width - 1
    }
    pub fn max(&self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }
}

#[derive(Debug, Clone)]
pub struct Format {
    pub opcode: Opcode,
    pub doc: &'static str,
    pub fields: Vec<Field>,
}

impl Format {
    pub fn field(&self, name: &str) -> &Field {
        self.fields
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("{} has no field {name}", self.opcode.mnemonic()))
    }
}

type FieldSpec = (&'static str, u32, &'static str);

const HEADER: [FieldSpec; 3] = [
    ("opcode", OPCODE_BITS, "operation"),
    (
        "wait",
        NUM_SEMAPHORES,
        "semaphores to acquire (decrement) before starting",
    ),
    (
        "signal",
        NUM_SEMAPHORES,
        "semaphores to release (increment) when done",
    ),
];

const TRANSFER: [FieldSpec; 9] = [
    (
        "stream",
        1,
        "1: the elastic stream between units instead of external memory",
    ),
    (
        "buffer",
        2,
        "scratchpad: 0 input, 1 weight, 2 accumulator, 3 output",
    ),
    ("spad_addr", 16, "first scratchpad row; rows are contiguous"),
    ("ext_addr", 32, "first external-memory beat"),
    ("count0", 12, "rows in the inner loop"),
    ("stride0", 20, "beats between consecutive inner rows"),
    ("count1", 12, "iterations of the outer loop"),
    ("stride1", 24, "beats between consecutive outer iterations"),
    (
        "scale",
        1,
        "input/output rows carry an MX block scale in one more beat (multi-precision designs; MX designs always move it)",
    ),
];

const MATMUL: [FieldSpec; 11] = [
    (
        "preload",
        1,
        "shift a weight tile into the idle weight bank while this runs",
    ),
    (
        "swap",
        1,
        "switch to the last preloaded weight bank before the first input row",
    ),
    (
        "accumulate",
        1,
        "add to the accumulator rows instead of overwriting them",
    ),
    ("weight_addr", 16, "first of the cpf weight rows to preload"),
    ("input_addr", 16, "first input row"),
    ("acc_addr", 16, "first accumulator row; rows are contiguous"),
    ("count0", 12, "input rows in the inner loop"),
    ("stride0", 12, "input-buffer rows between inner iterations"),
    ("count1", 12, "iterations of the outer loop"),
    ("stride1", 16, "input-buffer rows between outer iterations"),
    (
        "mx",
        1,
        "MX layer (multi-precision designs): preload the tile's scale rows too; dequantize block sums and accumulate in FP32",
    ),
];

const VECTOR: [FieldSpec; 18] = [
    ("relu", 1, "clamp below at the output zero point"),
    ("add", 1, "add the operand row element-wise (saturating)"),
    (
        "pool",
        1,
        "take the element-wise maximum with the operand row",
    ),
    ("bias", 1, "add the bias register before requantizing"),
    (
        "load_bias",
        1,
        "first read the bias register from accumulator row bias_addr",
    ),
    ("acc_addr", 16, "first accumulator row"),
    ("out_addr", 16, "first output-buffer row written"),
    (
        "opnd_addr",
        16,
        "first output-buffer row read as the add or pool operand",
    ),
    ("bias_addr", 16, "accumulator row holding the bias"),
    ("count", 12, "rows to process"),
    ("multiplier", 16, "requantization multiplier (unsigned)"),
    ("shift", 6, "requantization right shift, rounding half up"),
    ("zero_point", 16, "output zero point (two's complement)"),
    ("clamp", 1, "clamp above at clamp_max after ReLU (ReLU6)"),
    ("clamp_max", 16, "upper clamp (two's complement)"),
    (
        "mx_in",
        1,
        "the accumulator rows are FP32 (MX layer of a multi-precision design)",
    ),
    (
        "mx_out",
        1,
        "write MX rows: quantize FP32 rows to MX blocks, or tag integer rows with fixed_scale",
    ),
    (
        "fixed_scale",
        8,
        "E8M0 code of an integer row crossing to or from MX: element q means 2^(code-127) q / 2^frac",
    ),
];

/// The format of `op`, with every field placed.
pub fn format(op: Opcode) -> Format {
    let (doc, body): (&str, &[FieldSpec]) = match op {
        Opcode::End => (
            "stop fetching; the unit is done when every queue drains",
            &[],
        ),
        Opcode::Load => ("external memory or stream -> scratchpad", &TRANSFER),
        Opcode::Store => ("output buffer -> external memory or stream", &TRANSFER),
        Opcode::Matmul => ("stream input rows through the systolic array", &MATMUL),
        Opcode::Vector => ("accumulator -> post-processing -> output buffer", &VECTOR),
    };
    let mut lsb = 0;
    let mut fields = Vec::new();
    for (name, width, doc) in HEADER.iter().chain(body) {
        fields.push(Field {
            name,
            lsb,
            width: *width,
            doc,
        });
        lsb += width;
    }
    assert!(lsb <= INSTR_BITS, "{} does not fit", op.mnemonic());
    Format {
        opcode: op,
        doc,
        fields,
    }
}

/// An instruction as field values, in format order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instr {
    pub opcode: Opcode,
    pub values: Vec<(&'static str, u64)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IsaError {
    UnknownField {
        op: &'static str,
        field: String,
    },
    TooWide {
        op: &'static str,
        field: &'static str,
        value: u64,
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
            IsaError::UnknownField { op, field } => write!(f, "{op} has no field {field}"),
            IsaError::TooWide {
                op,
                field,
                value,
                width,
            } => write!(
                f,
                "{op}.{field} = {value} does not fit in {width} bits (max {})",
                (1u128 << width) - 1
            ),
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

impl Instr {
    /// An instruction with every field zero.
    pub fn new(opcode: Opcode) -> Instr {
        let f = format(opcode);
        Instr {
            opcode,
            values: f.fields.iter().skip(1).map(|fl| (fl.name, 0)).collect(),
        }
    }

    pub fn set(mut self, field: &str, value: u64) -> Result<Instr, IsaError> {
        let op = self.opcode.mnemonic();
        let f = format(self.opcode);
        let fl = f
            .fields
            .iter()
            .find(|x| x.name == field && x.name != "opcode")
            .ok_or_else(|| IsaError::UnknownField {
                op,
                field: field.to_string(),
            })?;
        if value > fl.max() {
            return Err(IsaError::TooWide {
                op,
                field: fl.name,
                value,
                width: fl.width,
            });
        }
        for slot in &mut self.values {
            if slot.0 == field {
                slot.1 = value;
            }
        }
        Ok(self)
    }

    pub fn get(&self, field: &str) -> u64 {
        self.values
            .iter()
            .find(|(n, _)| *n == field)
            .map_or(0, |(_, v)| *v)
    }

    /// Check that wait and signal name only semaphores this queue consumes / produces.
    pub fn check_masks(&self) -> Result<(), IsaError> {
        let Some(q) = self.opcode.queue() else {
            return Ok(());
        };
        for (field, allowed) in [("wait", consumed_mask(q)), ("signal", produced_mask(q))] {
            let bad = self.get(field) & !u64::from(allowed);
            if bad != 0 {
                let bits = (0..NUM_SEMAPHORES as usize)
                    .filter(|i| bad & (1 << i) != 0)
                    .map(|i| SEMAPHORES[i].name())
                    .collect();
                return Err(IsaError::BadMask {
                    op: self.opcode.mnemonic(),
                    field: if field == "wait" { "wait" } else { "signal" },
                    bits,
                });
            }
        }
        Ok(())
    }

    pub fn encode(&self) -> Word {
        let f = format(self.opcode);
        let mut w = Word::zero();
        w.set(f.field("opcode"), self.opcode as u64);
        for (name, v) in &self.values {
            w.set(f.field(name), *v);
        }
        w
    }

    pub fn decode(w: &Word) -> Result<Instr, IsaError> {
        let code = w.get(0, OPCODE_BITS);
        let opcode = Opcode::from_code(code).ok_or(IsaError::BadOpcode(code))?;
        let f = format(opcode);
        let values = f
            .fields
            .iter()
            .skip(1)
            .map(|fl| (fl.name, w.get(fl.lsb, fl.width)))
            .collect();
        Ok(Instr { opcode, values })
    }
}

/// The format tables as markdown (for `hwgen isa` and the manifest's readers).
pub fn markdown() -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# hwgen instruction set\n\nEvery instruction is {INSTR_BITS} bits; bit 0 is the least significant.\n"
    );
    let _ = writeln!(
        s,
        "## Semaphores\n\n| bit | name | producer | consumer |\n|---|---|---|---|"
    );
    for (i, sm) in SEMAPHORES.iter().enumerate() {
        let _ = writeln!(
            s,
            "| {i} | {} | {} | {} |",
            sm.name(),
            sm.producer.name(),
            sm.consumer.name()
        );
    }
    for op in Opcode::ALL {
        let f = format(op);
        let queue = op.queue().map_or("fetch", Queue::name);
        let _ = writeln!(
            s,
            "\n## {} (opcode {}, {} queue)\n\n{}\n\n| field | bits | width | meaning |\n|---|---|---|---|",
            op.mnemonic(),
            op as u32,
            queue,
            f.doc
        );
        for fl in &f.fields {
            let _ = writeln!(
                s,
                "| {} | {}:{} | {} | {} |",
                fl.name,
                fl.msb(),
                fl.lsb,
                fl.width,
                fl.doc
            );
        }
    }
    s
}

impl Instr {
    /// One line of assembly: mnemonic, the non-zero fields, and the semaphores by name.
    pub fn to_asm(&self) -> String {
        let mut parts = vec![self.opcode.mnemonic().to_string()];
        for (name, v) in &self.values {
            let always = *name == "buffer" || (*name == "count1" && *v != 1);
            if (*v == 0 && !always) || *name == "wait" || *name == "signal" {
                continue;
            }
            if *name == "buffer" {
                parts.push(format!("buffer={}", Buffer::ALL[*v as usize].name()));
            } else if *name == "ext_addr" {
                parts.push(format!("ext_addr=0x{v:x}"));
            } else {
                parts.push(format!("{name}={v}"));
            }
        }
        for field in ["wait", "signal"] {
            let m = self.get(field);
            if m != 0 {
                let names: Vec<String> = (0..NUM_SEMAPHORES as usize)
                    .filter(|i| m & (1 << i) != 0)
                    .map(|i| SEMAPHORES[i].name())
                    .collect();
                parts.push(format!("{field}={}", names.join("|")));
            }
        }
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift for test values
    fn next(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    #[test]
    fn fields_are_contiguous_and_fit() {
        for op in Opcode::ALL {
            let f = format(op);
            let mut lsb = 0;
            for fl in &f.fields {
                assert_eq!(fl.lsb, lsb, "{}.{} is not packed", op.mnemonic(), fl.name);
                assert!(fl.width > 0);
                lsb += fl.width;
            }
            assert!(lsb <= INSTR_BITS, "{} is {lsb} bits", op.mnemonic());
            // The common header sits at the same place in every format.
            assert_eq!(f.field("opcode").lsb, 0);
            assert_eq!(f.field("wait").lsb, OPCODE_BITS);
            assert_eq!(f.field("signal").lsb, OPCODE_BITS + NUM_SEMAPHORES);
        }
    }

    #[test]
    fn encode_decode_round_trips_every_opcode() {
        let mut seed = 0x1234_5678_9abc_def1u64;
        for op in Opcode::ALL {
            let f = format(op);
            for trial in 0..200 {
                let mut instr = Instr::new(op);
                for fl in f.fields.iter().skip(1) {
                    // All zeros, all ones, then random values.
                    let v = match trial {
                        0 => 0,
                        1 => fl.max(),
                        _ => next(&mut seed) & fl.max(),
                    };
                    instr = instr.set(fl.name, v).unwrap();
                }
                let word = instr.encode();
                assert_eq!(Instr::decode(&word).unwrap(), instr);
                let hex = word.to_hex();
                assert_eq!(hex.len(), (INSTR_BITS / 4) as usize);
                assert_eq!(Word::from_hex(&hex).unwrap(), word);
            }
        }
    }

    #[test]
    fn hand_encoded_load() {
        // load with wait = bit 7 (vector_to_load), buffer = weight (1), spad_addr = 3,
        // ext_addr = 0x100 (48 hex digits: 192 bits): opcode 1 in bits 3:0, wait in 13:4, buffer in 26:25,
        // spad_addr in 42:27, ext_addr in 74:43.
        let i = Instr::new(Opcode::Load)
            .set("wait", 1 << 7)
            .unwrap()
            .set("buffer", 1)
            .unwrap()
            .set("spad_addr", 3)
            .unwrap()
            .set("ext_addr", 0x100)
            .unwrap();
        let expect: u128 = 1 | (1 << (4 + 7)) | (1 << 25) | (3 << 27) | (0x100u128 << 43);
        assert_eq!(i.encode().to_hex(), format!("{expect:048x}"));
    }

    #[test]
    fn rejects_values_too_wide_and_unknown_fields() {
        assert!(matches!(
            Instr::new(Opcode::Matmul).set("count0", 4096),
            Err(IsaError::TooWide { .. })
        ));
        assert!(matches!(
            Instr::new(Opcode::Matmul).set("bogus", 1),
            Err(IsaError::UnknownField { .. })
        ));
        assert!(Instr::decode(&Word::from_hex("f").unwrap()).is_err());
    }

    #[test]
    fn masks_follow_producer_and_consumer() {
        let l2c = semaphore_index(Queue::Load, Queue::Compute).unwrap();
        let ok = Instr::new(Opcode::Matmul).set("wait", 1 << l2c).unwrap();
        assert!(ok.check_masks().is_ok());
        // The compute queue cannot signal load_to_compute: it does not produce it.
        let bad = Instr::new(Opcode::Matmul).set("signal", 1 << l2c).unwrap();
        assert!(bad.check_masks().is_err());
        for q in Queue::ALL {
            assert_eq!(consumed_mask(q) & produced_mask(q), 0);
        }
        let all = Queue::ALL.iter().fold(0, |m, q| m | consumed_mask(*q));
        assert_eq!(all, (1 << NUM_SEMAPHORES) - 1);
    }

    #[test]
    fn markdown_lists_every_field() {
        let md = markdown();
        for op in Opcode::ALL {
            for fl in format(op).fields {
                assert!(md.contains(&format!("| {} | {}:{} |", fl.name, fl.msb(), fl.lsb)));
            }
        }
    }
}
