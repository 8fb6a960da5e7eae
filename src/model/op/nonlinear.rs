//! The element-wise nonlinearities of the row unit's spline stage: `gelu` (erf or tanh
//! form), `silu`, `sigmoid`, `tanh` and `erf`, each a piecewise quadratic fitted once in Rust
//! (`numeric::spline::Spline::fit`) whose table rides in accumulator rows.

use super::rowops::{self, RowQuant};
use super::{Args, Form, Operator, Parsed};
use crate::model::data::Ctx;
use crate::model::lower::{Lowered, RowWork};
use crate::model::{Layer, ModelError, Tensor};
use crate::numeric::rows::{Func, Lane, Pass, Stages};
use crate::numeric::spline::{erf, Spline, Tail};
use std::sync::OnceLock;

/// Which function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    /// x * Phi(x) = x / 2 * (1 + erf(x / sqrt 2)).
    GeluErf,
    /// x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))).
    GeluTanh,
    /// x * sigmoid(x).
    Silu,
    Sigmoid,
    Tanh,
    /// The error function (ONNX's Erf: GELU as PyTorch exports it, x / 2 (1 + erf(x /
    /// sqrt 2)), node by node).
    Erf,
}

impl Function {
    /// The function in double precision.
    pub fn f64(self, x: f64) -> f64 {
        match self {
            Function::GeluErf => 0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2)),
            Function::GeluTanh => {
                let k = (2.0 / std::f64::consts::PI).sqrt();
                0.5 * x * (1.0 + (k * (x + 0.044715 * x * x * x)).tanh())
            }
            Function::Silu => x / (1.0 + (-x).exp()),
            Function::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            Function::Tanh => x.tanh(),
            Function::Erf => erf(x),
        }
    }

    /// The interval the six inner segments fit at first, and the outer segments (the
    /// function's asymptotes).
    fn fit_domain(self) -> ((f64, f64), Tail, Tail) {
        match self {
            Function::GeluErf | Function::GeluTanh => {
                ((-4.0, 4.0), Tail::Constant(0.0), Tail::Identity)
            }
            Function::Silu => ((-12.0, 12.0), Tail::Constant(0.0), Tail::Identity),
            Function::Sigmoid => ((-10.0, 10.0), Tail::Constant(0.0), Tail::Constant(1.0)),
            Function::Tanh => ((-5.0, 5.0), Tail::Constant(-1.0), Tail::Constant(1.0)),
            Function::Erf => ((-3.0, 3.0), Tail::Constant(-1.0), Tail::Constant(1.0)),
        }
    }

    /// Its spline table, fitted once per process.
    pub fn table(self) -> Spline {
        static TABLES: [OnceLock<Spline>; 6] = [const { OnceLock::new() }; 6];
        let slot = match self {
            Function::GeluErf => 0,
            Function::GeluTanh => 1,
            Function::Silu => 2,
            Function::Sigmoid => 3,
            Function::Tanh => 4,
            Function::Erf => 5,
        };
        *TABLES[slot].get_or_init(|| {
            let (domain, left, right) = self.fit_domain();
            Spline::fit(&|x| self.f64(x), domain, left, right)
        })
    }
}

/// y = f(x), x the dequantized input, written at the output scale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nonlinear {
    pub function: Function,
    pub quant: RowQuant,
}

const KEYS: &[&str] = &["scales", "zero_points"];

pub(super) const FORMS: &[Form] = &[
    Form {
        name: "gelu",
        parse,
        keys: &["scales", "zero_points", "approximate"],
        shared: &[],
        real: true,
        auto: false,
        leaky: false,
    },
    Form {
        name: "silu",
        parse,
        keys: KEYS,
        shared: &[],
        real: true,
        auto: false,
        leaky: false,
    },
    Form {
        name: "sigmoid",
        parse,
        keys: KEYS,
        shared: &[],
        real: true,
        auto: false,
        leaky: false,
    },
    Form {
        name: "tanh",
        parse,
        keys: KEYS,
        shared: &[],
        real: true,
        auto: false,
        leaky: false,
    },
    Form {
        name: "erf",
        parse,
        keys: KEYS,
        shared: &[],
        real: true,
        auto: false,
        leaky: false,
    },
];

impl Nonlinear {
    /// One pass: y = spline(x), x = (q - z_in) * s_in rounded once, written as round(y *
    /// (1/s_out)) + z_out.
    pub fn passes(&self, channels: usize) -> Vec<Pass> {
        vec![Pass {
            stages: Stages {
                src_zero: true,
                opnd: true,
                func: Func::Spline(self.function.table()),
                write: true,
                ..Stages::default()
            },
            consts: self.quant.consts(),
            lanes: vec![Lane::default(); channels],
            zero: self.quant.out_zero,
        }]
    }
}

impl Nonlinear {
    /// Its row program.
    fn work(&self, layer: &Layer) -> RowWork {
        RowWork {
            passes: self.passes(layer.out[2]),
            groups: 1,
        }
    }
}

impl Operator for Nonlinear {
    fn name(&self) -> &'static str {
        match self.function {
            Function::GeluErf | Function::GeluTanh => "gelu",
            Function::Silu => "silu",
            Function::Sigmoid => "sigmoid",
            Function::Tanh => "tanh",
            Function::Erf => "erf",
        }
    }

    fn golden(&self, layer: &Layer, inputs: &[&Tensor], rows: usize) -> Tensor {
        rowops::golden(&self.work(layer), layer, inputs[0], rows)
    }

    fn lower(&self, layer: &Layer) -> Lowered {
        Lowered::Rows(self.work(layer))
    }

    /// A sigmoid is positive: at an output zero point not negative, so are the codes.
    fn non_negative(&self, _inputs: &[bool]) -> bool {
        self.function == Function::Sigmoid && self.quant.out_zero >= 0
    }
}

/// `gelu` (`approximate = "none"`, the default, or `"tanh"`), `silu`, `sigmoid`, `tanh`,
/// `erf`: `scales` and `zero_points`.
fn parse(ctx: &mut Ctx, a: &Args) -> Result<Parsed, ModelError> {
    let quant = rowops::quant(ctx, a, a.prec.ops().output())?;
    let function = match (a.rl.op.as_str(), a.rl.approximate.as_deref()) {
        ("gelu", None | Some("none")) => Function::GeluErf,
        ("gelu", Some("tanh")) => Function::GeluTanh,
        ("gelu", Some(other)) => {
            return Err(ctx.err(
                &format!("approximate = {other}"),
                "gelu's approximate is \"none\" (the erf form) or \"tanh\"",
                "use approximate = \"tanh\", or remove it for the erf form",
            ))
        }
        ("silu", _) => Function::Silu,
        ("sigmoid", _) => Function::Sigmoid,
        ("erf", _) => Function::Erf,
        _ => Function::Tanh,
    };
    Ok(Parsed {
        op: Nonlinear { function, quant }.into(),
        out: a.shape,
        inputs: vec![a.src.to_string()],
        prec: a.prec,
    })
}
