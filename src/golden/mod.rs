//! The golden model: every layer of a model as the README's numeric rules define it,
//! written over the model's layers (not the compiler's tiles or the ISA), with the element
//! arithmetic of `numeric`. Each operator's semantics are its own (`Operator::golden`, in
//! its file under `model/op/`); this module runs them in the model's order.

use crate::model::{Model, Tensor};
use std::collections::HashMap;

pub use crate::model::op::{concat, conv_accumulate, input_pixel};

/// Run the whole model on an array of `rows` rows (the height of a column pass, which fixes
/// the order of FP32 sums); every tensor by name, the input included.
pub fn run(model: &Model, rows: usize) -> HashMap<String, Tensor> {
    let mut t: HashMap<String, Tensor> = HashMap::new();
    for (name, x) in &model.inputs {
        t.insert(name.clone(), x.clone());
    }
    for l in &model.layers {
        let inputs: Vec<&Tensor> = l.inputs.iter().map(|i| &t[i]).collect();
        let y = l.op.get().golden(l, &inputs, rows);
        t.insert(l.name.clone(), y);
    }
    t
}

#[cfg(test)]
mod tests;
