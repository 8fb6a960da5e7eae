//! The generated ISA header (`hwgen_isa.vh`: opcodes, queue and buffer ids, semaphore
//! masks, every field width) and the field decoders, from the one ISA definition.

use super::views::*;
use super::PERF_COUNTERS;
use crate::isa;

pub(super) fn isa_header(c: &Common) -> IsaHeader<'_> {
    let mut defines = Vec::new();
    let mut def = |name: &str, value: String, doc: &str| {
        defines.push(Define {
            name: format!("HWGEN_{name}"),
            value,
            doc: doc.to_string(),
        })
    };
    let load = isa::format(isa::Opcode::Load);
    def(
        "INSTR_W",
        isa::INSTR_BITS.to_string(),
        "instruction width in bits",
    );
    def(
        "NUM_SEM",
        isa::NUM_SEMAPHORES.to_string(),
        "semaphores per engine",
    );
    def(
        "SPAD_ADDR_W",
        load.field("spad_addr").width.to_string(),
        "width of scratchpad address fields",
    );
    def(
        "SCALE_W",
        crate::numeric::mx::SCALE_BITS.to_string(),
        "width of an E8M0 block scale",
    );
    def(
        "PERF_COUNTERS",
        PERF_COUNTERS.to_string(),
        "performance counters per engine",
    );
    def(
        "SPLINE_KNOTS",
        (crate::numeric::spline::SEGMENTS - 1).to_string(),
        "knots of a row-unit spline table (numeric::spline)",
    );
    def(
        "SPLINE_USED",
        crate::numeric::spline::USED.to_string(),
        "FP32 words a spline table uses: the knots, then (a, b, c) per segment",
    );
    def(
        "SPLINE_WORDS",
        crate::numeric::spline::WORDS.to_string(),
        "FP32 words of a spline table in accumulator rows",
    );
    let op = load.field("opcode");
    def("OPCODE_W", op.width.to_string(), "opcode field");
    def("OPCODE", format!("{}:{}", op.msb(), op.lsb), "");
    for o in isa::Opcode::ALL {
        def(
            &format!("OP_{}", o.mnemonic().to_uppercase()),
            format!("{}'d{}", isa::OPCODE_BITS, o as u32),
            "",
        );
    }
    for (i, q) in isa::Queue::ALL.iter().enumerate() {
        def(
            &format!("QUEUE_{}", q.name().to_uppercase()),
            i.to_string(),
            if i == 0 { "queue indices" } else { "" },
        );
    }
    for b in isa::Buffer::ALL {
        def(
            &format!("BUFFER_{}", b.name().to_uppercase()),
            format!("2'd{}", b as u32),
            if b == isa::Buffer::Input {
                "scratchpad selectors of load and store"
            } else {
                ""
            },
        );
    }
    let widen_w = isa::format(isa::Opcode::Load).field("widen").width;
    for (k, bits) in isa::WIDEN_BITS.iter().enumerate() {
        def(
            &format!("WIDEN_{bits}"),
            format!("{widen_w}'d{}", k + 1),
            if k == 0 {
                "widen codes of a load into the accumulator: integers of that many bits"
            } else {
                ""
            },
        );
    }
    for (format, op) in [
        ("TRANSFER", isa::Opcode::Load),
        ("MATMUL", isa::Opcode::Matmul),
        ("VECTOR", isa::Opcode::Vector),
        ("WINDOW", isa::Opcode::Window),
        ("ROWS", isa::Opcode::Rows),
    ] {
        for (i, fl) in isa::format(op).fields.iter().skip(3).enumerate() {
            let doc = if i == 0 {
                format!("field widths of the {} format", format.to_lowercase())
            } else {
                String::new()
            };
            def(
                &format!("{format}_{}_W", fl.name.to_uppercase()),
                fl.width.to_string(),
                &doc,
            );
        }
    }
    for (i, q) in isa::Queue::ALL.iter().enumerate() {
        let n = isa::NUM_SEMAPHORES;
        def(
            &format!("SEM_CONSUMED_BY_{}", q.name().to_uppercase()),
            format!(
                "{n}'b{:0width$b}",
                isa::consumed_mask(*q),
                width = n as usize
            ),
            if i == 0 {
                "semaphores each queue may wait on (it consumes) and signal (it produces)"
            } else {
                ""
            },
        );
        def(
            &format!("SEM_PRODUCED_BY_{}", q.name().to_uppercase()),
            format!(
                "{n}'b{:0width$b}",
                isa::produced_mask(*q),
                width = n as usize
            ),
            "",
        );
    }
    IsaHeader { c, defines }
}

pub(super) fn decoder<'a>(
    c: &'a Common,
    module: &str,
    format: &str,
    ops: &str,
    op: isa::Opcode,
) -> Decoder<'a> {
    let f = isa::format(op);
    let fields: Vec<FieldView> = f
        .fields
        .iter()
        .filter(|fl| fl.name != "opcode")
        .map(|fl| FieldView {
            name: fl.name.to_string(),
            msb: fl.msb(),
            lsb: fl.lsb,
            top: fl.width - 1,
            doc: fl.doc.to_string(),
        })
        .collect();
    let opcode = f.field("opcode");
    let end = fields.iter().map(|x| x.msb + 1).max().unwrap_or(0);
    let mut unused = Vec::new();
    if end < isa::INSTR_BITS {
        unused.push(format!("instr_i[{}:{}]", isa::INSTR_BITS - 1, end));
    }
    unused.push(format!("instr_i[{}:{}]", opcode.msb(), opcode.lsb));
    Decoder {
        c,
        module: module.to_string(),
        format: format.to_string(),
        ops: ops.to_string(),
        instr_msb: isa::INSTR_BITS - 1,
        fields,
        unused: unused.join(", "),
    }
}
