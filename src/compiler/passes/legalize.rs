//! legalize: check the model against the Design and build the layer graph (petgraph).

use crate::compiler::CompileError;
use crate::design::{Design, IntType, Unit};
use crate::model::{Model, Op};
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::HashMap;

/// One layer as the later passes see it.
#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
    pub op: Op,
    /// The tensor the matmul streams (the first input).
    pub input: String,
    /// A tensor added element-wise in the vector unit (add layers, fused residuals).
    pub residual: Option<String>,
    pub out: [usize; 3],
    /// A max-pool (window, stride) fused into a convolution: each pool tap is a pass of the
    /// convolution at the pooled positions, folded into the output rows by the vector unit.
    pub pool: Option<(usize, usize)>,
    /// Multiply-accumulates of the model layers this node implements.
    pub macs: u64,
    /// The node computes in MX; its output tensor is stored as MX; the E8M0 code of its
    /// integer output rows at a type boundary (multi-precision; 0 elsewhere).
    pub mx: bool,
    pub out_mx: bool,
    pub fixed_scale: u8,
}

#[derive(Debug, Clone)]
pub struct Graph {
    pub unit: Unit,
    pub act: IntType,
    pub nodes: Vec<Node>,
    /// Tensor edges producer → consumer, over node indices; the input has no producer node.
    pub dag: DiGraph<usize, String>,
    pub input: String,
    pub input_shape: [usize; 3],
    /// The model input is stored as MX blocks.
    pub input_mx: bool,
    pub output: String,
}

impl Graph {
    /// True when tensor `t` is stored as MX blocks (rows with a scale).
    pub fn is_mx(&self, t: &str) -> bool {
        if t == self.input {
            return self.input_mx;
        }
        self.nodes.iter().any(|n| n.name == t && n.out_mx)
    }

    pub fn shape_of(&self, t: &str) -> [usize; 3] {
        if t == self.input {
            return self.input_shape;
        }
        self.nodes
            .iter()
            .find(|n| n.name == t)
            .expect("tensor exists")
            .out
    }

    /// Nodes reading tensor `t` (as matmul input or as residual).
    pub fn consumers(&self, t: &str) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].input == t || self.nodes[i].residual.as_deref() == Some(t))
            .collect()
    }
}

pub fn run(design: &Design, model: &Model) -> Result<Graph, CompileError> {
    // The whole model runs on the first engine (the first unit of the first branch); the
    // other engines of an elastic Design get empty programs. Mapping layers onto several
    // units and branches is the next step.
    let cores = design.cores();
    let unit = cores[0].1.clone();
    if unit.cpf != unit.kpf {
        return Err(CompileError::new(
            None,
            format!("the array is {}x{}; activations are stored in tiles of cpf channels and written in tiles of kpf channels, so the compiler needs cpf = kpf", unit.cpf, unit.kpf),
            "use a square array",
        ));
    }
    let d = unit.datatype;
    if model.is_mixed() && !d.multi_precision {
        return Err(CompileError::new(
            None,
            format!(
                "the model mixes int{0} and mxint{0} layers but the Design computes in {1} only",
                model.act_type.bits,
                d.mx.map_or(d.input.to_string(), |f| f.element.to_string())
            ),
            "compile for a multi-precision config such as configs/16x16_int8_mxint8.toml",
        ));
    }
    match (d.mx, &model.mx) {
        (Some(_), None) if d.multi_precision => {}
        (Some(f), None) => {
            return Err(CompileError::new(
                None,
                format!(
                    "the Design computes in {} blocks but the model is {}",
                    f.element, model.act_type
                ),
                format!(
                    "set type = \"{}\" in the model, or compile for an integer config",
                    f.element
                ),
            ))
        }
        (None, Some(m)) => {
            return Err(CompileError::new(
                None,
                format!(
                    "the model is {} but the Design's datatypes are {} x {}",
                    m.format.element, d.input, d.weight
                ),
                "compile for an MX config such as configs/32x32_mxint8.toml",
            ))
        }
        (Some(f), Some(m)) if f.block_size != m.format.block_size => {
            return Err(CompileError::new(
                None,
                format!(
                    "the model's MX blocks have {} elements, the Design's {}",
                    m.format.block_size, f.block_size
                ),
                format!("set block_size = {} in the model", f.block_size),
            ))
        }
        _ => {}
    }
    match (d.fp, model.fp) {
        (Some(f), m) if m != Some(f) => {
            return Err(CompileError::new(
                None,
                format!(
                    "the Design computes in {} but the model is {}",
                    f.name,
                    m.map_or(model.act_type.to_string(), |m| m.name.to_string())
                ),
                format!(
                    "set type = \"{}\" in the model, or compile for a matching config",
                    f.name
                ),
            ))
        }
        (None, Some(m)) => {
            return Err(CompileError::new(
                None,
                format!(
                    "the model is {} but the Design's datatypes are {} x {}",
                    m.name, d.input, d.weight
                ),
                "compile for a floating-point config such as configs/16x16_fp8.toml",
            ))
        }
        _ => {}
    }
    if model.act_type != d.input || model.act_type != d.output {
        return Err(CompileError::new(
            None,
            format!("the model's activations are {} but the Design's input and output types are {} and {}", model.act_type, d.input, d.output),
            "set type in the model to the Design's input type, or compile for a matching config",
        ));
    }
    if model.weight_type != d.weight {
        return Err(CompileError::new(
            None,
            format!(
                "the model's weights are {} but the Design's weight type is {}",
                model.weight_type, d.weight
            ),
            "set weight_type in the model to the Design's weight type",
        ));
    }
    let mut nodes = Vec::new();
    for l in &model.layers {
        let name = Some(l.name.as_str());
        let need = |ok: bool, what: &str| {
            if ok {
                Ok(())
            } else {
                Err(CompileError::new(
                    name,
                    format!("{what} is not enabled in the Design's vector unit"),
                    format!("add \"{what}\" to [vector] ops in the config"),
                ))
            }
        };
        match &l.op {
            Op::Conv { bias, relu, .. } => {
                if bias.iter().any(|b| *b != 0) {
                    need(design.vector.bias, "bias")?;
                }
                if *relu {
                    need(design.vector.relu, "relu")?;
                }
            }
            Op::MaxPool { .. } => need(design.vector.maxpool, "maxpool")?,
            Op::AvgPool { .. } => {}
            Op::Add { relu, .. } => {
                need(design.vector.add, "add")?;
                if *relu {
                    need(design.vector.relu, "relu")?;
                }
            }
            Op::Upsample { .. } => {}
        }
        nodes.push(Node {
            name: l.name.clone(),
            op: l.op.clone(),
            input: l.inputs[0].clone(),
            residual: l.inputs.get(1).cloned(),
            out: l.out,
            pool: None,
            mx: l.mx,
            out_mx: l.out_mx,
            fixed_scale: d.mx.and_then(|f| l.fixed_scale(f.frac)).unwrap_or(0),
            macs: match &l.op {
                Op::Conv { kh, kw, groups, .. } => {
                    let cin = model.shape_of(&l.inputs[0]).expect("input exists")[2];
                    (l.out[0] * l.out[1] * l.out[2] * kh * kw * (cin / groups)) as u64
                }
                _ => 0,
            },
        });
    }
    let mut g = Graph {
        unit,
        act: model.act_type,
        output: nodes.last().expect("a model has layers").name.clone(),
        nodes,
        dag: DiGraph::new(),
        input: model.input_name.clone(),
        input_shape: model.input.shape(),
        input_mx: model.tensor_is_mx(&model.input_name),
    };
    g.rebuild_dag();
    Ok(g)
}

impl Graph {
    /// Rebuild the tensor edges after a pass changed the nodes.
    pub fn rebuild_dag(&mut self) {
        let mut dag = DiGraph::new();
        let idx: Vec<NodeIndex> = (0..self.nodes.len()).map(|i| dag.add_node(i)).collect();
        let by_name: HashMap<&str, usize> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i))
            .collect();
        for (i, n) in self.nodes.iter().enumerate() {
            for t in std::iter::once(&n.input).chain(n.residual.iter()) {
                if let Some(&p) = by_name.get(t.as_str()) {
                    dag.add_edge(idx[p], idx[i], t.clone());
                }
            }
        }
        self.dag = dag;
    }

    /// Index of the last node that reads tensor `t` (its end of life), from the DAG.
    pub fn last_use(&self, t: &str) -> Option<usize> {
        self.dag
            .edge_indices()
            .filter(|e| self.dag[*e] == t)
            .filter_map(|e| self.dag.edge_endpoints(e))
            .map(|(_, to)| self.dag[to])
            .max()
            .or_else(|| self.consumers(t).into_iter().max())
    }
}
