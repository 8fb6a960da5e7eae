//! The instruction set, defined once. Field positions are allocated here, in order, from the
//! field widths; the assembler encodes from these tables, `hwgen isa` prints them, and the
//! Verilog decoder macros (`hwgen_isa.vh`) are generated from them.

mod fields;
mod instr;
mod word;

pub use fields::{FieldValue, Matmul, Rows, Transfer, Vector, Window};
pub use instr::{semaphore_names, Instr, IsaError, Op};
pub use word::Word;

use std::fmt::Write as _;

/// Every instruction is this many bits wide.
pub const INSTR_BITS: u32 = 256;

/// Beats of external memory one instruction takes (the engines fetch their programs from
/// there, low bits first; `hwgen_core`'s IBEATS is the same quotient).
pub fn instr_beats(mem_width_bits: u32) -> u64 {
    u64::from(INSTR_BITS.div_ceil(mem_width_bits))
}
/// Width of the opcode field.
pub const OPCODE_BITS: u32 = 4;
/// Scratchpad row addresses (every address field of a scratchpad; addresses wrap at 2^16).
pub const SPAD_ADDR_BITS: u32 = 16;
/// External-memory beat addresses.
pub const EXT_ADDR_BITS: u32 = 32;
/// Semaphore counters: a release past 2^SEM_COUNT_BITS - 1 raises the error flag.
pub const SEM_COUNT_BITS: u32 = 4;
/// Right shifts of the vector unit (the requantization's and the combination's; the RTL
/// rounds both with one function).
pub const SHIFT_BITS: u32 = 6;
/// Precision selectors: a Design runs at most 2^PREC_BITS precisions.
pub const PREC_BITS: u32 = 1;

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
    /// The position of this queue in `Queue::ALL` (per-queue arrays are indexed by it).
    pub fn index(self) -> usize {
        self as usize
    }
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

/// "waits on A (count 0), B (count 1)": the semaphores of a wait mask with their counts.
pub fn wait_text(mask: u32, counts: &[u64]) -> String {
    let named: Vec<String> = SEMAPHORES
        .iter()
        .enumerate()
        .filter(|(s, _)| mask & (1 << s) != 0)
        .map(|(s, sem)| {
            format!(
                "{} (count {})",
                sem.name(),
                counts.get(s).copied().unwrap_or(0)
            )
        })
        .collect();
    if named.is_empty() {
        "waits on no semaphore".to_string()
    } else {
        format!("waits on {}", named.join(", "))
    }
}

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
    Window = 5,
    Rows = 6,
}

impl Opcode {
    pub const ALL: [Opcode; 7] = [
        Opcode::End,
        Opcode::Load,
        Opcode::Matmul,
        Opcode::Vector,
        Opcode::Store,
        Opcode::Window,
        Opcode::Rows,
    ];
    pub fn mnemonic(self) -> &'static str {
        match self {
            Opcode::End => "end",
            Opcode::Load => "load",
            Opcode::Matmul => "matmul",
            Opcode::Vector => "vector",
            Opcode::Store => "store",
            Opcode::Window => "window",
            Opcode::Rows => "rows",
        }
    }
    /// The queue that executes it; `None` for `end`, which the fetch unit consumes.
    pub fn queue(self) -> Option<Queue> {
        match self {
            Opcode::End => None,
            Opcode::Load => Some(Queue::Load),
            Opcode::Matmul | Opcode::Window => Some(Queue::Compute),
            Opcode::Vector | Opcode::Rows => Some(Queue::Vector),
            Opcode::Store => Some(Queue::Store),
        }
    }
    pub fn from_code(code: u64) -> Option<Opcode> {
        Opcode::ALL.into_iter().find(|o| *o as u64 == code)
    }
}

/// Scratchpad selector of `load` and `store`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Buffer {
    #[default]
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
        mask(self.width)
    }
}

/// The accumulator-row element of lane l in a `per_channel` vector instruction's scale row
/// (row bias_addr + 1): the lane's multiplier in the low bits (as wide as the vector
/// instruction's `multiplier` field), its shift above them (as wide as `shift`).
pub fn scale_word(multiplier: u64, shift: u32) -> u64 {
    let f = format_ref(Opcode::Vector);
    let m = f.field("multiplier").width;
    (multiplier & mask(m)) | (u64::from(shift) & mask(f.field("shift").width)) << m
}

/// A scale-row element's (multiplier, shift): the inverse of [`scale_word`] (bits above
/// them, such as an accumulator element's sign extension, are ignored).
pub fn scale_of_word(word: u64) -> (u64, u32) {
    let f = format_ref(Opcode::Vector);
    let m = f.field("multiplier").width;
    (
        word & mask(m),
        ((word >> m) & mask(f.field("shift").width)) as u32,
    )
}

/// The largest requantization multiplier and shift a vector instruction holds (its
/// `multiplier` and `shift` fields).
pub fn requant_limits() -> (u64, u32) {
    let f = format_ref(Opcode::Vector);
    (f.field("multiplier").max(), f.field("shift").max() as u32)
}

/// The largest weight (`add_weight`, `opnd_weight`, two's complement) and shift of the
/// vector instruction's combination with its operand.
pub fn combine_limits() -> (i64, i64) {
    let f = format_ref(Opcode::Vector);
    (
        (f.field("add_weight").max() >> 1) as i64,
        f.field("add_shift").max() as i64,
    )
}

/// Accumulator bits a scale-row element needs: the multiplier's and the shift's.
pub fn scale_word_bits() -> u32 {
    let f = format_ref(Opcode::Vector);
    f.field("multiplier").width + f.field("shift").width
}

/// The largest value of `width` bits.
/// The integer widths a load into the accumulator may widen (`Transfer::widen`): code k
/// (from 1) moves signed integers of `WIDEN_BITS[k - 1]` bits, each sign-extended into its
/// accumulator lane; code 0 moves accumulator elements.
pub const WIDEN_BITS: [u32; 2] = [16, 8];

/// The integer width of `widen` code `code`, or None for 0 (accumulator elements) or a
/// code the ISA does not define.
pub fn widened_bits(code: u64) -> Option<u32> {
    let k = usize::try_from(code).ok()?.checked_sub(1)?;
    WIDEN_BITS.get(k).copied()
}

/// The `widen` code that moves integers of `bits` bits (None: not a widened width).
pub fn widen_code(bits: u32) -> Option<u64> {
    WIDEN_BITS
        .iter()
        .position(|&b| b == bits)
        .map(|k| k as u64 + 1)
}

/// Bits of the padding element `pad_value` (of `load` and `window`) holds.
pub const PAD_VALUE_BITS: u32 = 8;

/// The element a `pad_value` bit pattern stands for in rows of `bits`-bit integers
/// (`signed` or not): the pattern's low bits (as many as the element has, at most
/// `PAD_VALUE_BITS`) read in the element's signedness; a wider element holds that value.
pub fn pad_element(pattern: u64, bits: u32, signed: bool) -> i64 {
    let n = bits.min(PAD_VALUE_BITS);
    let v = pattern & mask(n);
    if signed && n > 0 && v >> (n - 1) == 1 {
        v as i64 - (1i64 << n)
    } else {
        v as i64
    }
}

/// The `pad_value` bit pattern of element `v` in rows of `bits`-bit integers (`signed` or
/// not), or None when `pad_element` cannot give it back.
pub fn pad_pattern(v: i64, bits: u32, signed: bool) -> Option<u64> {
    let pattern = (v as u64) & mask(PAD_VALUE_BITS.min(bits));
    (pad_element(pattern, bits, signed) == v).then_some(pattern)
}

pub const fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// One instruction format with every field placed.
#[derive(Debug, Clone)]
pub struct InstrFormat {
    pub opcode: Opcode,
    pub doc: &'static str,
    pub fields: Vec<Field>,
}

impl InstrFormat {
    pub fn field(&self, name: &str) -> &Field {
        self.fields
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("{} has no field {name}", self.opcode.mnemonic()))
    }
}

/// A field as the format tables list it: name, width, meaning.
pub type FieldSpec = (&'static str, u32, &'static str);

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

/// The format of `op`, with every field placed.
pub fn format(op: Opcode) -> InstrFormat {
    format_ref(op).clone()
}

/// The format of `op`, built once.
pub fn format_ref(op: Opcode) -> &'static InstrFormat {
    static FORMATS: std::sync::OnceLock<Vec<InstrFormat>> = std::sync::OnceLock::new();
    let all = FORMATS.get_or_init(|| Opcode::ALL.iter().map(|&o| build_format(o)).collect());
    all.iter()
        .find(|f| f.opcode == op)
        .expect("every opcode has a format")
}

fn build_format(op: Opcode) -> InstrFormat {
    let (doc, body): (&str, &[FieldSpec]) = match op {
        Opcode::End => (
            "stop fetching; the unit is done when every queue drains",
            &[],
        ),
        Opcode::Load => ("external memory or stream -> scratchpad", Transfer::FIELDS),
        Opcode::Store => (
            "output buffer -> external memory or stream",
            Transfer::FIELDS,
        ),
        Opcode::Matmul => (
            "stream input rows through the systolic array",
            Matmul::FIELDS,
        ),
        Opcode::Vector => (
            "accumulator -> post-processing -> output buffer",
            Vector::FIELDS,
        ),
        Opcode::Window => (
            "a depthwise convolution or max-pool window over input rows, in the window unit",
            Window::FIELDS,
        ),
        Opcode::Rows => (
            "accumulator rows through the row unit's FP32 element pipeline, reductions and statistics",
            Rows::FIELDS,
        ),
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
    InstrFormat {
        opcode: op,
        doc,
        fields,
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

#[cfg(test)]
mod tests;
