//! The FPGA parts `hwgen dse --device` budgets for: F-CAD's Table IV targets, with every
//! resource the part has (Xilinx DS190 for the Zynq-7000 XC7Z045, DS891 for the Zynq
//! UltraScale+ XCZU17EG and XCZU9CG). The resource model prices a design in DSP slices,
//! 18-Kbit block RAMs, LUTs and flip-flops; it maps no buffer to UltraRAM, so a part's
//! UltraRAM is listed but not spent.

/// One part's programmable-logic resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Device {
    /// The name `--device` takes (case-insensitive), and the part number.
    pub name: &'static str,
    pub part: &'static str,
    /// DSP slices (DSP48E1 on the Z7045, DSP48E2 on UltraScale+).
    pub dsps: u64,
    /// 18-Kbit block RAMs (two per 36-Kbit block).
    pub bram18: u64,
    /// 288-Kbit UltraRAM blocks (0 where the part has none).
    pub uram: u64,
    /// CLB LUTs and flip-flops.
    pub luts: u64,
    pub ffs: u64,
}

/// The parts of F-CAD's Table IV.
pub const DEVICES: [Device; 3] = [
    Device {
        name: "Z7045",
        part: "XC7Z045",
        dsps: 900,
        bram18: 1090,
        uram: 0,
        luts: 218_600,
        ffs: 437_200,
    },
    Device {
        name: "ZU17EG",
        part: "XCZU17EG",
        dsps: 1590,
        bram18: 1592,
        uram: 102,
        luts: 425_280,
        ffs: 850_560,
    },
    Device {
        name: "ZU9CG",
        part: "XCZU9CG",
        dsps: 2520,
        bram18: 1824,
        uram: 0,
        luts: 274_080,
        ffs: 548_160,
    },
];

/// The part named `name` (its name or part number, any case).
pub fn device(name: &str) -> Option<&'static Device> {
    DEVICES
        .iter()
        .find(|d| d.name.eq_ignore_ascii_case(name) || d.part.eq_ignore_ascii_case(name))
}

/// "Z7045 (XC7Z045), ZU17EG (XCZU17EG), ZU9CG (XCZU9CG)".
pub fn known() -> String {
    let names: Vec<String> = DEVICES
        .iter()
        .map(|d| format!("{} ({})", d.name, d.part))
        .collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dse::Budget;

    #[test]
    fn a_part_budgets_every_resource_it_has() {
        let zu9 = device("xczu9cg").expect("by part number, any case");
        assert_eq!(zu9.name, "ZU9CG");
        let b = Budget::parse_for("bw=19.2", Some(zu9)).unwrap();
        assert_eq!(
            (b.dsps, b.bram18, b.luts, b.ffs, b.bandwidth_gbs),
            (2520, 1824, Some(274_080), Some(548_160), 19.2)
        );
        // A key narrows the part's capacity, never widens it.
        let b = Budget::parse_for("lut=200000,dsp=2000,bw=19.2", Some(zu9)).unwrap();
        assert_eq!((b.dsps, b.luts), (2000, Some(200_000)));
        let e = Budget::parse_for("bram=2000,bw=19.2", Some(zu9)).unwrap_err();
        assert!(e.contains("the ZU9CG has 1824"), "{e}");
        // Without a part, LUTs and flip-flops are budgeted only when given.
        let b = Budget::parse("dsp=900,bram=1090,bw=12.8,ff=1000").unwrap();
        assert_eq!((b.luts, b.ffs), (None, Some(1000)));
        assert!(device("XC7VX690T").is_none());
        assert_eq!(
            known(),
            "Z7045 (XC7Z045), ZU17EG (XCZU17EG), ZU9CG (XCZU9CG)"
        );
    }
}
