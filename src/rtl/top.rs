//! The top level: its control/status registers, the engines of every branch and the
//! stream links between them; and the manifest that describes the emitted design.

use super::views::*;
use super::{Common, VERSION};
use crate::design::{clog2, Design};
use crate::filemap::FileMap;
use crate::isa;
use crate::names;
use serde_json::json;

/// Number of performance counters per engine (busy and stall of four queues, MAC-active).
pub const PERF_COUNTERS: u32 = 9;
pub const PERF_COUNTER_NAMES: [&str; 9] = [
    "load_busy",
    "load_stall",
    "compute_busy",
    "compute_stall",
    "vector_busy",
    "vector_stall",
    "store_busy",
    "store_stall",
    "mac_active",
];

pub const CSR_ADDR_W: u32 = 12;

/// A control/status register of the generated top.
#[derive(Debug, Clone)]
pub struct Csr {
    pub addr: u32,
    pub name: String,
    pub doc: String,
}

pub const CSR_PERF_BASE: u32 = 0x010;
pub const CSR_PERF_STRIDE: u32 = 0x010;
/// Engine e's program base (read-write) at `CSR_PERF_BASE + e * CSR_PERF_STRIDE +
/// CSR_PROG_BASE_SLOT`: the last word of its block, after the counters.
pub const CSR_PROG_BASE_SLOT: u32 = CSR_PERF_STRIDE - 1;
const _: () = assert!((PERF_COUNTER_NAMES.len() as u32) < CSR_PROG_BASE_SLOT);

/// The register map of `design`'s top.
pub fn csr_map(design: &Design) -> Vec<Csr> {
    let fixed = [
        (0x000, "id_lo", "design hash, bits 31:0 (read-only)"),
        (0x001, "id_hi", "design hash, bits 63:32 (read-only)"),
        (0x002, "control", "write 1 to bit 0 to start every engine"),
        (
            0x003,
            "status",
            "bit 0 busy, bit 1 done, bit 2 error (illegal opcode or semaphore overflow)",
        ),
        (0x004, "cycles_lo", "cycles from start to done, bits 31:0"),
        (0x005, "cycles_hi", "cycles from start to done, bits 63:32"),
        (0x006, "num_cores", "number of engines"),
    ];
    let mut v: Vec<Csr> = fixed
        .iter()
        .map(|(a, n, d)| Csr {
            addr: *a,
            name: n.to_string(),
            doc: d.to_string(),
        })
        .collect();
    for (i, (b, u, r)) in design.cores().iter().enumerate() {
        for (k, name) in PERF_COUNTER_NAMES.iter().enumerate() {
            v.push(Csr {
                addr: CSR_PERF_BASE + i as u32 * CSR_PERF_STRIDE + k as u32,
                name: format!("core{i}_{name}"),
                doc: format!("engine {i} ({}.{}[{r}]): {name} cycles", b.name, u.name),
            });
        }
        v.push(Csr {
            addr: CSR_PERF_BASE + i as u32 * CSR_PERF_STRIDE + CSR_PROG_BASE_SLOT,
            name: format!("core{i}_prog_base"),
            doc: format!(
                "engine {i} ({}.{}[{r}]): external-memory beat of its program's first instruction (read-write; set before start)",
                b.name, u.name
            ),
        });
    }
    v
}

/// Depth of each engine's read-response FIFO: enough reads in flight to cover the memory
/// latency at one beat per cycle.
pub fn rsp_depth(design: &Design) -> u32 {
    (design.memory.latency_cycles + 4)
        .next_power_of_two()
        .clamp(4, 1024)
}

fn bool_param(b: bool) -> String {
    u32::from(b).to_string()
}

pub(super) fn csr_view<'a>(c: &'a Common, design: &Design) -> CsrView<'a> {
    let regs = csr_map(design);
    let addr = |n: &str| {
        let a = regs.iter().find(|r| r.name == n).expect("fixed CSR").addr;
        format!("{CSR_ADDR_W}'h{a:03x}")
    };
    CsrView {
        c,
        addr_id_lo: addr("id_lo"),
        addr_id_hi: addr("id_hi"),
        addr_control: addr("control"),
        addr_status: addr("status"),
        addr_cycles_lo: addr("cycles_lo"),
        addr_cycles_hi: addr("cycles_hi"),
        addr_num_cores: addr("num_cores"),
        perf_base: CSR_PERF_BASE,
        perf_stride: CSR_PERF_STRIDE,
        prog_base_slot: CSR_PROG_BASE_SLOT,
        design_id: format!("{:016x}", design.hash()),
        regs: regs
            .iter()
            .take(7)
            .map(|r| CsrReg {
                addr: format!("0x{:03x}", r.addr),
                name: r.name.clone(),
                doc: r.doc.clone(),
            })
            .chain(std::iter::once(CsrReg {
                addr: format!("0x{CSR_PERF_BASE:03x}"),
                name: "perf".to_string(),
                doc: format!(
                    "engine e, counter k at 0x{CSR_PERF_BASE:03x} + 0x{CSR_PERF_STRIDE:02x}*e + k: {}",
                    PERF_COUNTER_NAMES.join(", ")
                ),
            }))
            .chain(std::iter::once(CsrReg {
                addr: format!("0x{:03x}", CSR_PERF_BASE + CSR_PROG_BASE_SLOT),
                name: "prog_base".to_string(),
                doc: format!(
                    "engine e's program base at 0x{:03x} + 0x{CSR_PERF_STRIDE:02x}*e (read-write): the external-memory beat of its first instruction",
                    CSR_PERF_BASE + CSR_PROG_BASE_SLOT
                ),
            }))
            .collect(),
    }
}

pub(super) fn top_view<'a>(c: &'a Common, design: &Design) -> TopView<'a> {
    let cores = design.cores();
    let n = cores.len() as u32;
    let port_w = clog2(u64::from(n));
    let rsp = rsp_depth(design);

    let mut links = Vec::new();
    let mut views: Vec<CoreView> = Vec::new();
    for (i, (b, u, r)) in cores.iter().enumerate() {
        let d = &u.datatype;
        let (input, weight, output) = (d.input_type(), d.weight_type(), d.output_type());
        let mut params: Vec<(&str, String)> = vec![
            ("CPF", u.cpf.to_string()),
            ("KPF", u.kpf.to_string()),
            ("INPUT_W", input.bits.to_string()),
            ("INPUT_SIGNED", bool_param(input.signed)),
            ("WEIGHT_W", weight.bits.to_string()),
            ("WEIGHT_SIGNED", bool_param(weight.signed)),
            ("PSUM_W", d.psum_bits(u.cpf).to_string()),
            ("COL_W", d.column_bits(u.cpf).to_string()),
            ("ACC_W", d.acc_type().bits.to_string()),
            ("OUTPUT_W", output.bits.to_string()),
            ("OUTPUT_SIGNED", bool_param(output.signed)),
            ("SCALE_SLOT_W", d.row_scale_bits().to_string()),
            ("W_SCALE_ROWS", d.weight_scale_rows().to_string()),
            (
                "PREC_SCALED",
                format!(
                    "{}'b{:0width$b}",
                    1 << isa::PREC_BITS,
                    d.scaled_mask(),
                    width = 1 << isa::PREC_BITS
                ),
            ),
            ("INPUT_DEPTH", u.buffers.input_depth.to_string()),
            ("WEIGHT_DEPTH", u.buffers.weight_depth.to_string()),
            ("ACC_DEPTH", u.buffers.accumulator_depth.to_string()),
            ("ACC_BANKS", u.acc_banks().to_string()),
            ("OUTPUT_DEPTH", u.buffers.output_depth.to_string()),
            ("MEM_W", "MEM_W".to_string()),
            ("MEM_ADDR_W", "MEM_ADDR_W".to_string()),
            ("RSP_DEPTH", rsp.to_string()),
            ("IMEM_DEPTH", design.control.imem_depth.to_string()),
            (
                "IMEM_ADDR_W",
                clog2(u64::from(design.control.imem_depth)).to_string(),
            ),
            ("QUEUE_DEPTH", design.control.queue_depth.to_string()),
            ("SEM_COUNT_W", isa::SEM_COUNT_BITS.to_string()),
        ];
        if c.handoff {
            params.push(("HANDOFF_DEPTH", u.handoff_depth.to_string()));
        }
        params.extend([
            ("ENABLE_BIAS", bool_param(design.vector.bias)),
            ("ENABLE_RELU", bool_param(design.vector.relu)),
            ("ENABLE_LEAKY", bool_param(design.vector.leaky_relu)),
            ("ENABLE_POOL", bool_param(design.vector.maxpool)),
            ("ENABLE_ADD", bool_param(design.vector.add)),
        ]);
        if let Some(w) = u.window {
            params.push(("KERNEL", w.kernel.to_string()));
            params.push(("LINE", w.line.to_string()));
        }
        if let Some(r) = u.rows {
            params.push(("STATS", r.stats.to_string()));
            params.push(("ZERO_POINTS", bool_param(u.zero_points())));
            params.push(("ROW_BLOCKS", bool_param(u.row_block_frac().is_some())));
            params.push(("ROW_FRAC", u.row_block_frac().unwrap_or(0).to_string()));
        }
        views.push(CoreView {
            index: i as u32,
            name: names::core_instance(&b.name, &u.name, *r),
            inst: names::instance(&names::core_instance(&b.name, &u.name, *r)),
            label: format!("{}.{}[{r}]", b.name, u.name),
            cpf: u.cpf,
            kpf: u.kpf,
            params: params
                .into_iter()
                .map(|(name, value)| ParamView {
                    name: name.to_string(),
                    value,
                })
                .collect(),
            stream_in: None,
            stream_out: None,
            has_stream_in: false,
            has_stream_out: false,
            rsp_rdata: match design.memory.ports {
                1 => "port_rsp_rdata".to_string(),
                ports => format!("mem{}_rsp_rdata", i as u32 % ports),
            },
            handoff_feeds: (0..cores.len()).any(|e| design.handoff_feeder(e) == Some(i)),
            handoff_from: design.handoff_feeder(i).map(|f| {
                let (fb, fu, fr) = cores[f];
                names::core_instance(&fb.name, &fu.name, fr)
            }),
        });
    }
    // Links (`Design::links`).
    let design_links = design.links();
    for l in &design_links {
        links.push(LinkView {
            doc: l.doc.clone(),
            name: l.name.clone(),
            inst: names::instance(&l.name),
            depth: l.depth,
            ptr_w: clog2(u64::from(l.depth)),
        });
    }
    let (joins, fanouts) = stream_ends(&mut views, &design_links);
    let id_depth = (rsp * n).next_power_of_two();
    let mem_ports = mem_port_views(design, rsp);
    TopView {
        c,
        design_name: design.name.clone(),
        branch_count: design.branches.len(),
        mem_w: design.memory.data_width_bits,
        port_w,
        id_depth,
        id_ptr_w: clog2(u64::from(id_depth)),
        cores: views,
        links,
        fanouts,
        joins,
        mem_ports,
    }
}

/// With several memory ports, each one's engines (e mod ports) and arbiter sizes.
fn mem_port_views(design: &Design, rsp: u32) -> Vec<MemPortView> {
    let ports = design.memory.ports;
    if ports == 1 {
        return Vec::new();
    }
    let n = design.cores().len() as u32;
    (0..ports)
        .map(|p| {
            let engines: Vec<u32> = (0..n).filter(|e| e % ports == p).collect();
            let cat = |sig: &str, width: &str| {
                let parts: Vec<String> = engines
                    .iter()
                    .rev()
                    .map(|e| match width {
                        "" => format!("{sig}[{e}]"),
                        w => format!("{sig}[{e}*{w} +: {w}]"),
                    })
                    .collect();
                format!("{{{}}}", parts.join(",\n      "))
            };
            let id_depth = (rsp * engines.len() as u32).next_power_of_two();
            MemPortView {
                index: p,
                doc: format!(
                    "memory port {p}: engine(s) {}",
                    engines
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                valid: cat("port_valid", ""),
                write: cat("port_write", ""),
                addr: cat("port_addr", "MEM_ADDR_W"),
                wdata: cat("port_wdata", "MEM_W"),
                port_w: clog2(u64::from(engines.len() as u32)),
                id_depth,
                id_ptr_w: clog2(u64::from(id_depth)),
                engines,
            }
        })
        .collect()
}

/// Connect every engine's stream ports to its links: an engine fed by several FIFOs (from
/// a unit of another `h`) takes a beat when all of them offer one, through a join; an
/// engine that feeds several FIFOs (a fork, or a unit of another `h`) offers each beat to
/// all of them at once through a fan-out: it leaves when every FIFO takes it.
fn stream_ends(
    views: &mut [CoreView],
    design_links: &[crate::design::Link],
) -> (Vec<JoinView>, Vec<FanoutView>) {
    // The names of the links that satisfy `side`, each signal of them joined by `op`.
    let names = |side: &dyn Fn(&crate::design::Link) -> bool| -> Vec<String> {
        design_links
            .iter()
            .filter(|l| side(l))
            .map(|l| l.name.clone())
            .collect()
    };
    let all = |links: &[String], suffix: &str, op: &str| {
        links
            .iter()
            .map(|l| format!("{l}_{suffix}"))
            .collect::<Vec<_>>()
            .join(op)
    };
    let (mut joins, mut fanouts) = (Vec::new(), Vec::new());
    for (k, view) in views.iter_mut().enumerate() {
        let ins = names(&|l| l.to == k);
        view.stream_in = match ins.len() {
            0 => None,
            1 => Some(ins[0].clone()),
            _ => {
                let name = format!("join_{}", view.name);
                joins.push(JoinView {
                    name: name.clone(),
                    doc: format!("{} is fed by {} FIFOs", view.label, ins.len()),
                    valid: all(&ins, "out_valid", " &&\n      "),
                    data: all(&ins, "out_data", " |\n      "),
                    links: ins,
                });
                Some(name)
            }
        };
        let outs = names(&|l| l.from == k);
        view.stream_out = match outs.len() {
            0 => None,
            1 => Some(outs[0].clone()),
            _ => {
                let name = format!("fanout_{}", view.name);
                fanouts.push(FanoutView {
                    name: name.clone(),
                    doc: format!("{} feeds {} FIFOs", view.label, outs.len()),
                    ready: all(&outs, "in_ready", " &&\n      "),
                    links: outs,
                });
                Some(name)
            }
        };
        view.has_stream_in = view.stream_in.is_some();
        view.has_stream_out = view.stream_out.is_some();
    }
    (joins, fanouts)
}

pub(super) fn manifest(design: &Design, files: &FileMap) -> String {
    let formats: Vec<_> = isa::Opcode::ALL
        .iter()
        .map(|op| {
            let f = isa::format(*op);
            json!({
                "mnemonic": op.mnemonic(),
                "opcode": *op as u32,
                "queue": op.queue().map(isa::Queue::name),
                "fields": f.fields.iter().map(|fl| json!({
                    "name": fl.name, "lsb": fl.lsb, "width": fl.width, "doc": fl.doc
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let sems: Vec<_> = isa::SEMAPHORES
        .iter()
        .enumerate()
        .map(|(i, s)| json!({"bit": i, "name": s.name(), "producer": s.producer.name(), "consumer": s.consumer.name()}))
        .collect();
    let cores: Vec<_> = design
        .cores()
        .iter()
        .enumerate()
        .map(|(i, (b, u, r))| json!({"index": i, "branch": b.name, "unit": u.name, "replica": r}))
        .collect();
    let csrs: Vec<_> = csr_map(design)
        .iter()
        .map(|r| json!({"addr": r.addr, "name": r.name, "doc": r.doc}))
        .collect();
    let m = json!({
        "generator": format!("hwgen {VERSION}"),
        "design_hash": format!("{:016x}", design.hash()),
        "design": design,
        "derived": {
            "response_fifo_depth": rsp_depth(design),
            "semaphore_count_bits": isa::SEM_COUNT_BITS,
            "memory_address_bits": isa::EXT_ADDR_BITS,
        },
        "cores": cores,
        "isa": {"instruction_bits": isa::INSTR_BITS, "semaphores": sems, "formats": formats},
        "csr": csrs,
        "files": files.paths().collect::<Vec<_>>(),
    });
    let mut s = serde_json::to_string_pretty(&m).expect("manifest serializes");
    s.push('\n');
    s
}
