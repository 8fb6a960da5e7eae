//! The graph's inputs and a segment's: float ones wait for their QuantizeLinear, int8/uint8
//! ones take their first quantized reader's scale and zero point.

use super::{describe, Importer, Val};
use crate::onnx::layer::{Layout, QTensor};
use crate::onnx::proto::{dtype, Graph};
use crate::onnx::{ImportError, InputQuant};

impl Importer<'_> {
    /// The graph's inputs (those that are not initializers): a float one waits for its
    /// QuantizeLinear; an int8/uint8 one is quantized as its first reader says.
    pub fn graph_input(&mut self, g: &Graph) -> Result<(), ImportError> {
        let inputs: Vec<_> = g
            .inputs
            .iter()
            .filter(|i| !self.consts.contains_key(&i.name))
            .collect();
        if inputs.is_empty() {
            return Err(self.err(
                "",
                "the graph has no input",
                "export the model with its input tensors",
            ));
        }
        for input in inputs {
            self.input_order.push(input.name.clone());
            self.one_input(g, input)?;
        }
        Ok(())
    }

    fn one_input(
        &mut self,
        g: &Graph,
        input: &crate::onnx::proto::ValueInfo,
    ) -> Result<(), ImportError> {
        if !matches!(input.elem_type, dtype::FLOAT | dtype::INT8 | dtype::UINT8) {
            return Err(self.err(
                "",
                format!("graph input '{}' is {}, not float, int8 or uint8", input.name, dtype::name(input.elem_type)),
                "give the float model input, quantized by a QuantizeLinear (as quantize_static writes it), or its int8/uint8 quantized form",
            ));
        }
        let dims: Vec<Option<i64>> = input.shape.clone().unwrap_or_default();
        let known: Option<Vec<usize>> = dims
            .iter()
            .enumerate()
            .map(|(k, d)| match (k, d) {
                (0, None) => Some(1),
                (_, Some(v)) if *v > 0 => Some(*v as usize),
                _ => None,
            })
            .collect();
        let Some((layout, shape)) = known.as_deref().and_then(Layout::of_dims) else {
            return Err(self.err(
                "",
                format!(
                    "graph input '{}' has shape [{}] (? a symbolic or unknown dimension)",
                    input.name,
                    dims.iter()
                        .map(|d| d.map_or("?".to_string(), |v| v.to_string()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                "give a fixed shape [1, C, H, W], [1, S, D] (tokens) or [1, K]; a symbolic batch dimension is taken as 1",
            ));
        };
        if crate::onnx::hostops::elements(&shape).is_err() {
            return Err(self.err(
                "",
                format!("graph input '{}' holds more than 2^27 elements", input.name),
                "use a smaller input",
            ));
        }
        let name = input.name.clone();
        match input.elem_type {
            dtype::FLOAT => {
                self.vals.insert(name, Val::Float(shape, layout));
                Ok(())
            }
            elem => self.integer_input(g, 0, &name, (shape, layout), elem == dtype::INT8),
        }
    }

    /// An int8/uint8 tensor `name` given as the (segment's) input: the quantized tensor
    /// its first reader from node `from` on takes, with that reader's scale and zero point
    /// (a DequantizeLinear, or a QLinear operator's input parameters).
    fn integer_input(
        &mut self,
        g: &Graph,
        from: usize,
        name: &str,
        (shape, layout): ([usize; 3], Layout),
        signed: bool,
    ) -> Result<(), ImportError> {
        let reader = g
            .nodes
            .iter()
            .enumerate()
            .skip(from)
            .find_map(|(i, n)| n.inputs.iter().position(|x| x == name).map(|k| (i, n, k)));
        // The positions of (scale, zero point) for the reader's input k.
        let params = reader.and_then(|(_, n, k)| match (n.op_type.as_str(), k) {
            ("DequantizeLinear", 0) => Some((1, 2)),
            (
                "QLinearConv"
                | "QLinearMatMul"
                | "QGemm"
                | "QLinearAveragePool"
                | "QLinearGlobalAveragePool"
                | "QLinearAdd"
                | "QLinearSoftmax",
                0,
            ) => Some((1, 2)),
            ("QLinearAdd", 3) => Some((4, 5)),
            _ => None,
        });
        let (Some((i, n, _)), Some((si, zi))) = (reader, params) else {
            return Err(self.err(
                "",
                format!("integer input '{name}' is not read by a DequantizeLinear or a quantized operator's quantized input"),
                "quantize the model with quantize_static from its float input",
            ));
        };
        let (scale, zero_point, zs) = self.quant_params(&describe(n, i), n, si, zi)?;
        if zs != signed {
            return Err(self.err(
                &describe(n, i),
                format!("its zero point's type differs from input '{name}''s"),
                "check the model",
            ));
        }
        self.set_signed("", signed)?;
        let q = self.model_input(name, (scale, zero_point, signed), (shape, layout), true);
        self.vals.insert(name.to_string(), Val::Q(q));
        Ok(())
    }

    /// A segment's input (after the host's part of the graph; a 4-D one read as `reading`
    /// when that is attention's heads): the tensor `name` the host
    /// computed, of ONNX dims `dims` ([1, C, H, W], [1, S, D] or [1, K]): a float one, which a
    /// QuantizeLinear of the segment quantizes as it would the graph input, or an int8/uint8
    /// one, which the segment's first quantized operator reads (`integer_input`).
    pub fn segment_input(
        &mut self,
        g: &Graph,
        start: usize,
        name: &str,
        (dims, elem): (&[usize], i32),
        reading: Option<Layout>,
    ) -> Result<(), ImportError> {
        let read = match (reading, dims) {
            (Some(Layout::Heads(h)), [1, _, s, t]) => Some((Layout::Heads(h), [*s, 1, h * t])),
            _ => Layout::of_dims(dims),
        };
        let Some((layout, shape)) = read else {
            return Err(self.err(
                "",
                format!("the host's tensor '{name}' has shape {dims:?}"),
                "an accelerator segment starts from a [1, C, H, W], [1, S, D] or [1, K] tensor",
            ));
        };
        match elem {
            dtype::FLOAT => {
                self.vals
                    .insert(name.to_string(), Val::Float(shape, layout));
                Ok(())
            }
            dtype::INT8 | dtype::UINT8 => {
                self.integer_input(g, start, name, (shape, layout), elem == dtype::INT8)
            }
            other => Err(self.err(
                "",
                format!("the host's tensor '{name}' is {}", dtype::name(other)),
                "an accelerator segment starts from a float, int8 or uint8 tensor",
            )),
        }
    }

    /// The constants nodes before `start` define (Constant nodes, dequantized
    /// initializers), which a segment from `start` may read.
    pub fn constants_before(&mut self, g: &Graph, start: usize) {
        for (i, n) in g.nodes.iter().enumerate().take(start) {
            let constant = n.op_type == "Constant"
                || (n.op_type == "DequantizeLinear"
                    && n.inputs
                        .first()
                        .is_some_and(|x| self.consts.contains_key(x)));
            if constant {
                // A constant the importer cannot read is an error only if the segment
                // uses it, where it is missing.
                let _ = self.node(n, i);
            }
        }
    }

    /// Another tensor `name` the host holds that a segment from node `start` reads, of ONNX
    /// dims `dims`: a float one that a DequantizeLinear (of one scale and zero point) wrote
    /// is that dequantized tensor, quantized again on the host with its parameters (which
    /// gives its integers back exactly); another float one waits for its QuantizeLinear,
    /// an int8/uint8 one is read by its first quantized reader (`segment_input`).
    pub fn extra_input(
        &mut self,
        g: &Graph,
        start: usize,
        name: &str,
        (dims, elem): (&[usize], i32),
    ) -> Result<(), ImportError> {
        let producer = g
            .nodes
            .iter()
            .take(start)
            .enumerate()
            .rev()
            .find(|(_, n)| n.outputs.iter().any(|o| o == name));
        let dq = producer.filter(|(_, n)| n.op_type == "DequantizeLinear");
        let (Some((i, n)), dtype::FLOAT) = (dq, elem) else {
            return self.segment_input(g, start, name, (dims, elem), None);
        };
        let Some((layout, shape)) = Layout::of_dims(dims) else {
            return Err(self.err(
                "",
                format!("the host's tensor '{name}' has shape {dims:?}"),
                "an accelerator segment reads [1, C, H, W], [1, S, D] or [1, K] tensors",
            ));
        };
        let (scale, zero_point, signed) = self.quant_params(&describe(n, i), n, 1, 2)?;
        self.set_signed("", signed)?;
        let q = self.model_input(name, (scale, zero_point, signed), (shape, layout), false);
        self.vals.insert(name.to_string(), Val::Dq(q));
        Ok(())
    }

    /// A model input for ONNX tensor `onnx`, quantized as `(scale, zero point, signed)`
    /// (`integer`: the host hands over its integers as they are): registered, and the
    /// quantized tensor it is.
    pub(super) fn model_input(
        &mut self,
        onnx: &str,
        (scale, zero_point, signed): (f64, i64, bool),
        (shape, layout): ([usize; 3], Layout),
        integer: bool,
    ) -> QTensor {
        let name = self.fresh(onnx, "input");
        self.inputs.push(InputQuant {
            name: name.clone(),
            onnx: onnx.to_string(),
            scale,
            zero_point,
            signed,
            shape,
            layout,
            integer,
        });
        QTensor {
            name,
            scale,
            zero_point,
            signed,
            shape,
            layout,
        }
    }
}
