use super::stat::{self, base_name, Cells};
use super::Resources;

/// A hand-written `stat`: `top` holds two `mid`s (one parameterisation) and a RAMB36;
/// each `mid` three `leaf`s and a DSP; each `leaf` two ANDs and a flip-flop.
const STAT: &str = r"
=== leaf ===

   Number of wires:                  4
   Number of cells:                  3
     $_AND_                          2
     $_DFF_P_                        1

=== $paramod$abc\mid ===

   Number of cells:                  4
     DSP48E2                         1
     leaf                            3

=== top ===

   Number of cells:                  3
     $paramod$abc\mid                2
     RAMB36E2                        1

=== design hierarchy ===

   top                               1
     $paramod$abc\mid                2
       leaf                          6

   Number of cells:                 21
     $_AND_                         12
";

#[test]
fn totals_follow_the_instance_tree() {
    let h = stat::parse(STAT).unwrap();
    assert_eq!(h.modules.len(), 3);
    assert_eq!(h.reported_total, Some(21));
    let totals = h.totals();
    // top = 2 mid + RAMB36; mid = DSP + 3 leaf; leaf = 2 AND + DFF.
    let want: Cells = [
        ("$_AND_", 12),
        ("$_DFF_P_", 6),
        ("DSP48E2", 2),
        ("RAMB36E2", 1),
    ]
    .into_iter()
    .map(|(t, n)| (t.to_string(), n))
    .collect();
    assert_eq!(totals["top"], want);
    let inst = h.instances("top");
    assert_eq!(inst["top"], 1);
    assert_eq!(inst["$paramod$abc\\mid"], 2);
    assert_eq!(inst["leaf"], 6);
    assert_eq!(h.within(&totals, "top", "mid")["DSP48E2"], 2);
    let r = Resources::of(&totals["top"]);
    assert_eq!(
        (r.cells, r.ffs, r.dsps, r.bram18, r.luts),
        (21, 6, 2, 2, 0),
        "a RAMB36 is two 18-Kbit blocks"
    );
}

#[test]
fn names_and_netlist_instances() {
    assert_eq!(base_name("$paramod$0a1b\\hwgen_fifo"), "hwgen_fifo");
    assert_eq!(
        base_name("$paramod\\hwgen_semaphore\\COUNT_W=s32'00000000000000000000000000000100"),
        "hwgen_semaphore"
    );
    assert_eq!(base_name("hwgen_decode_window"), "hwgen_decode_window");
    let netlist = "  \\$paramod$bb9e\\hwgen_core  u_main_core_r0 (\n    .clk_i(clk_i),\n  hwgen_csr u_csr (\n  assign x = y;\n";
    let inst = stat::instances_in(netlist);
    assert_eq!(inst["u_main_core_r0"], "$paramod$bb9e\\hwgen_core");
    assert_eq!(inst["u_csr"], "hwgen_csr");
    assert_eq!(inst.len(), 2);
}

#[test]
fn a_bad_cell_line_is_named() {
    let e = stat::parse("=== m ===\n   Number of cells: 1\n     $_AND_ many\n").unwrap_err();
    assert!(e.contains("module m") && e.contains("many"), "{e}");
    assert!(stat::parse("nothing here").is_err());
}

#[test]
fn lut_ram_and_flip_flops_by_class() {
    let cells: Cells = [
        ("LUT6", 3),
        ("RAM64M8", 2),
        ("SRLC32E", 1),
        ("FDRE", 4),
        ("CARRY8", 1),
    ]
    .into_iter()
    .map(|(t, n)| (t.to_string(), n))
    .collect();
    let r = Resources::of(&cells);
    assert_eq!((r.luts, r.lutram, r.ffs, r.cells), (3, 17, 4, 11));
}

#[test]
fn pass_steps_of_the_top_two_levels() {
    assert_eq!(
        super::pass_step("2.23. Executing ABC pass (technology mapping using ABC)."),
        Some("ABC pass (technology mapping using ABC)")
    );
    assert_eq!(
        super::pass_step("2. Executing SYNTH_XILINX pass."),
        Some("SYNTH_XILINX pass")
    );
    assert_eq!(super::pass_step("2.23.1. Executing ABC."), None);
    assert_eq!(super::pass_step("Executing x."), None);
    assert_eq!(
        super::pass_step("1. Executing Verilog-2005 frontend: rtl/a.v"),
        None
    );
}
