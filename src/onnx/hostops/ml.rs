//! Classic machine-learning operators on the host, as ONNX's reference computes them:
//! TfIdfVectorizer (default domain) and ai.onnx.ml's Binarizer, ArrayFeatureExtractor and
//! TreeEnsemble; and which operators of domains other than the default one the host runs.

use super::HostVal;
use crate::onnx::proto::{dtype, AttrValue, Node};
use std::collections::HashMap;

/// The operators the host runs from domains other than the default one (each has one
/// version there). com.microsoft's are onnxruntime's quantized contrib operators, run by
/// their names as quantize_static writes them.
const DOMAINS: &[(&str, &[&str])] = &[
    (
        "ai.onnx.ml",
        &["Binarizer", "ArrayFeatureExtractor", "TreeEnsemble"],
    ),
    ("ai.onnx.preview.training", &["Adagrad", "Adam", "Momentum"]),
    ("ai.onnx.preview", &["FlexAttention"]),
];

/// Whether the host runs operator `op` of a domain other than the default one.
pub fn runs_in_domain(domain: &str, op: &str) -> bool {
    DOMAINS
        .iter()
        .any(|(d, ops)| *d == domain && ops.contains(&op))
}

/// Why node `n`'s domain keeps it off the host, if it does.
pub(super) fn domain_error(n: &Node) -> Option<String> {
    let d = n.domain.as_str();
    if matches!(d, "" | "ai.onnx" | "com.microsoft") || runs_in_domain(d, &n.op_type) {
        return None;
    }
    let listed: Vec<String> = DOMAINS
        .iter()
        .map(|(d, ops)| format!("{d}: {}", ops.join(", ")))
        .collect();
    Some(format!(
        "operator {} of domain {d} does not run on the host (of other domains than the default one it runs {})",
        n.op_type,
        listed.join("; ")
    ))
}

/// One of these operators; None for others.
pub(super) fn eval(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<HostVal, String>> {
    Some(match n.op_type.as_str() {
        "TfIdfVectorizer" => tf_idf(n, x),
        "Binarizer" => {
            let t = f64::from(n.attr_float("threshold", 0.0));
            let data = x.data.iter().map(|&v| f64::from(u8::from(v > t))).collect();
            Ok(HostVal { data, ..x.clone() })
        }
        "ArrayFeatureExtractor" => super::need(ins, 1).and_then(|i| feature_extract(x, i)),
        "TreeEnsemble" => tree_ensemble(n, x),
        _ => return None,
    })
}

/// ArrayFeatureExtractor: the elements of the last axis of `x` that `idx` names (int64,
/// flattened, in range), `[..., count]`; a vector gives `[1, count]`.
fn feature_extract(x: &HostVal, idx: &HostVal) -> Result<HostVal, String> {
    let c = *x
        .dims
        .last()
        .ok_or("a scalar input (it needs an axis to extract from)")?;
    let picks: Vec<usize> = idx
        .data
        .iter()
        .map(|&v| match v >= 0.0 && (v as usize) < c {
            true => Ok(v as usize),
            false => Err(format!("index {v} outside 0..{c}")),
        })
        .collect::<Result<_, _>>()?;
    let rows = x.data.len() / c.max(1);
    super::elements(&[rows, picks.len()])?;
    let data = (0..rows)
        .flat_map(|r| picks.iter().map(move |&p| r * c + p))
        .map(|k| x.data[k])
        .collect();
    let mut dims = match x.dims.len() {
        1 => vec![1],
        _ => x.dims[..x.dims.len() - 1].to_vec(),
    };
    dims.push(picks.len());
    Ok(HostVal {
        dims,
        data,
        elem: x.elem,
    })
}

/// TreeEnsemble (ai.onnx.ml 5) on `[B, F]` features: each tree walked from its root
/// (a node compares feature nodes_featureids with nodes_splits by nodes_modes: `<=`, `<`,
/// `>=`, `>`, `==`, `!=` or membership in its set of membership_values, NaN-delimited in the order of
/// the membership nodes; a NaN feature goes true where nodes_missing_value_tracks_true says)
/// to a leaf, whose weight goes to its target by aggregate_function (average, sum, min or
/// max); `[B, n_targets]` of X's type. post_transform NONE only.
fn tree_ensemble(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    let ints = |k: &str| n.attr_ints(k).unwrap_or_default();
    let tensor = |k: &str| match n.attr(k) {
        Some(AttrValue::Tensor(t)) => t.values.clone(),
        _ => vec![],
    };
    let (splits, modes, weights) = (
        tensor("nodes_splits"),
        tensor("nodes_modes"),
        tensor("leaf_weights"),
    );
    let (features, true_ids, false_ids) = (
        ints("nodes_featureids"),
        ints("nodes_truenodeids"),
        ints("nodes_falsenodeids"),
    );
    let (true_leaf, false_leaf) = (ints("nodes_trueleafs"), ints("nodes_falseleafs"));
    let (targets, roots) = (ints("leaf_targetids"), ints("tree_roots"));
    let missing = ints("nodes_missing_value_tracks_true");
    let count = modes.len();
    let lens = [
        splits.len(),
        features.len(),
        true_ids.len(),
        false_ids.len(),
        true_leaf.len(),
        false_leaf.len(),
    ];
    if lens.iter().any(|&l| l != count) || weights.len() != targets.len() || roots.is_empty() {
        return Err("the nodes_* attributes (and leaf_weights with leaf_targetids) must be of one length, with tree_roots".into());
    }
    if n.attr_int("post_transform", 0) != 0 {
        return Err("a post_transform other than NONE (0)".into());
    }
    // The membership nodes' sets, in node order.
    let mut members = tensor("membership_values").into_iter();
    let sets: Vec<Vec<f64>> = modes
        .iter()
        .map(|&m| match m == 6.0 {
            true => members.by_ref().take_while(|v| !v.is_nan()).collect(),
            false => vec![],
        })
        .collect();
    let [rows, f] = x.dims[..] else {
        return Err(format!("features of shape {:?} ([B, F])", x.dims));
    };
    let n_targets = usize::try_from(n.attr_int("n_targets", 0)).unwrap_or(0);
    let agg = n.attr_int("aggregate_function", 1);
    let init = match agg {
        0 | 1 => 0.0,
        2 => f64::MAX,
        3 => f64::MIN,
        a => return Err(format!("aggregate_function {a} (0 to 3)")),
    };
    let in_range = |v: i64, len: usize| usize::try_from(v).ok().filter(|&i| i < len);
    let mut out = vec![init; super::elements(&[rows, n_targets])?];
    for r in 0..rows {
        let row = &x.data[r * f..(r + 1) * f];
        for &root in &roots {
            let mut i = in_range(root, count).ok_or("a tree root out of range")?;
            // A root whose branches are one leaf is that leaf, numbered as the root (as
            // ONNX's reference reads it).
            let mut leaf = true_leaf[i] == 1 && false_leaf[i] == 1 && true_ids[i] == false_ids[i];
            if leaf && i >= weights.len() {
                return Err("a leaf root out of the leaves' range".into());
            }
            for _ in 0..=count {
                if leaf {
                    break;
                }
                let v = in_range(features[i], f)
                    .map(|k| row[k])
                    .ok_or("a feature id out of range")?;
                let s = splits[i];
                let go = (v.is_nan() && missing.get(i) == Some(&1))
                    || match modes[i] as u8 {
                        0 => v <= s,
                        1 => v < s,
                        2 => v >= s,
                        3 => v > s,
                        4 => v == s,
                        5 => v != s,
                        _ => sets[i].contains(&v),
                    };
                let (next, is_leaf) = if go {
                    (true_ids[i], true_leaf[i])
                } else {
                    (false_ids[i], false_leaf[i])
                };
                leaf = is_leaf == 1;
                i = in_range(next, if leaf { weights.len() } else { count })
                    .ok_or("a node or leaf id out of range")?;
            }
            if !leaf {
                return Err("a tree with a cycle".into());
            }
            let t =
                in_range(targets[i], n_targets).ok_or("a leaf target id outside 0..n_targets")?;
            let (o, w) = (&mut out[r * n_targets + t], weights[i]);
            *o = match agg {
                0 => *o + w / roots.len() as f64,
                1 => *o + w,
                2 => o.min(w),
                _ => o.max(w),
            };
        }
    }
    let data = match x.elem {
        dtype::DOUBLE => out,
        _ => out.iter().map(|&v| f64::from(v as f32)).collect(),
    };
    Ok(HostVal {
        dims: vec![rows, n_targets],
        data,
        elem: x.elem,
    })
}

/// TfIdfVectorizer on int32 or int64 tokens `[C]` or `[B, C]`: counts of the pool's n-grams
/// (pool_int64s; ngram_counts gives where each length starts; lengths outside
/// min_gram_length..=max_gram_length are not counted), each n-gram read from every start
/// with its items 1 to max_skip_count + 1 apart (unigrams once), into output column
/// `ngram_indexes[id]`; mode TF (the counts), IDF (the weight, or 1, where the count is not
/// zero) or TFIDF (weight times count, or the count). float32 `[max(ngram_indexes) + 1]` or
/// `[B, that]`.
fn tf_idf(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    if !matches!(x.elem, dtype::INT32 | dtype::INT64) {
        return Err(format!(
            "TfIdfVectorizer of {} tokens (int32 or int64; strings are not held)",
            dtype::name(x.elem)
        ));
    }
    let ints = |name: &str| n.attr_ints(name).unwrap_or_default();
    let (pool, counts, indexes) = (
        ints("pool_int64s"),
        ints("ngram_counts"),
        ints("ngram_indexes"),
    );
    let (min, max) = (
        n.attr_int("min_gram_length", 0),
        n.attr_int("max_gram_length", 0),
    );
    let skips = n.attr_int("max_skip_count", 0);
    if pool.is_empty() || indexes.iter().any(|&i| !(0..1 << 24).contains(&i)) {
        return Err(
            "no pool_int64s (pool_strings are not held), or ngram_indexes outside 0..2^24".into(),
        );
    }
    if !(1..=max).contains(&min) || max > 1 << 16 || !(0..=1 << 20).contains(&skips) {
        return Err(format!(
            "min_gram_length {min}, max_gram_length {max}, max_skip_count {skips}: need 1 <= min <= max <= 2^16 and 0 <= skips <= 2^20"
        ));
    }
    // The pool's n-grams of the counted lengths, by their ids (numbered through every
    // length, counted or not; a repeated n-gram keeps its last id).
    let mut grams: HashMap<&[i64], usize> = HashMap::new();
    let mut id = 0;
    for (k, &start) in counts.iter().enumerate() {
        let end = counts.get(k + 1).map_or(pool.len() as i64, |&e| e);
        let len = k + 1;
        let (s, e) = (usize::try_from(start), usize::try_from(end));
        let (Ok(s), Ok(e)) = (s, e) else {
            return Err(format!("ngram_counts {counts:?}"));
        };
        if s > e || e > pool.len() {
            return Err(format!(
                "ngram_counts {counts:?} for a pool of {}",
                pool.len()
            ));
        }
        for g in pool[s..e].chunks_exact(len) {
            if (min..=max).contains(&(len as i64)) {
                grams.insert(g, id);
            }
            id += 1;
        }
    }
    if id > indexes.len() {
        return Err(format!("{id} n-grams for {} ngram_indexes", indexes.len()));
    }
    let width = indexes.iter().max().map_or(0, |&m| m as usize + 1);
    let (rows, c) = match x.dims[..] {
        [] => (1, 1),
        [c] => (1, c),
        [b, c] if b > 0 => (b, c),
        _ => return Err(format!("tokens of shape {:?} ([C] or [B, C])", x.dims)),
    };
    let mut freq = vec![0u64; super::elements(&[rows, width])?];
    let max = max as usize;
    for r in 0..rows {
        let row: Vec<i64> = x.data[r * c..(r + 1) * c]
            .iter()
            .map(|&v| v as i64)
            .collect();
        let mut first = min as usize;
        for d in 1..=skips as usize + 1 {
            for s in 0..c {
                if s + d * (first - 1) >= c {
                    break;
                }
                let mut gram = Vec::with_capacity(max);
                for len in 1..=max {
                    let Some(&t) = row.get(s + (len - 1) * d) else {
                        break;
                    };
                    gram.push(t);
                    match grams.get(&gram[..]) {
                        Some(&g) if len >= first => freq[r * width + indexes[g] as usize] += 1,
                        _ => {}
                    }
                }
            }
            // Unigrams do not depend on the skip: counted in the first pass only.
            if first == 1 {
                first = 2;
                if first > max {
                    break;
                }
            }
        }
    }
    let w = match n.attr("weights") {
        Some(AttrValue::Floats(w)) => w.clone(),
        _ => vec![],
    };
    let mode = match n.attr("mode") {
        Some(AttrValue::Text(m)) => m.as_str(),
        _ => "",
    };
    let data = freq
        .iter()
        .enumerate()
        .map(|(p, &f)| {
            let weight = w.get(p % width).map(|&v| f64::from(v));
            Ok(match (mode, weight) {
                ("TF", _) | ("TFIDF", None) => f as f64,
                ("IDF", None) => f64::from(u8::from(f > 0)),
                ("IDF", Some(v)) => {
                    if f > 0 {
                        v
                    } else {
                        0.0
                    }
                }
                ("TFIDF", Some(v)) => f64::from((v * f as f64) as f32),
                _ => return Err(format!("mode {mode:?} (TF, IDF or TFIDF)")),
            })
        })
        .collect::<Result<Vec<f64>, String>>()?;
    let dims = match x.dims.len() {
        2 => vec![rows, width],
        _ => vec![width],
    };
    Ok(HostVal::float(dims, data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::proto::Tensor;

    /// By hand: one tree. Node 0 sends feature 0 <= 0.5 to leaf 0 (weight 1, target 0),
    /// else to node 1, which sends feature 1 in {2, 3} to leaf 1 (2, target 1), else to
    /// leaf 2 (3, target 0). Rows [0.2, 9], [0.7, 3], [0.7, 4] and [NaN, 3] (NaN is not
    /// <= 0.5) give [1, 0], [0, 2], [3, 0] and [0, 2]. Binarizer at 0.5 of [0.2, 0.7] is
    /// [0, 1]; ArrayFeatureExtractor of columns [2, 0] of [[1, 2, 3], [4, 5, 6]] is
    /// [[3, 1], [6, 4]]. A node of an unknown domain is refused.
    #[test]
    fn ml_operators_by_hand() {
        let t = |v: Vec<f64>| {
            AttrValue::Tensor(Tensor {
                dims: vec![v.len() as i64],
                data_type: dtype::FLOAT,
                values: v,
                ..Tensor::default()
            })
        };
        let n = Node::new(
            "TreeEnsemble",
            vec![
                ("nodes_splits", t(vec![0.5, 0.0])),
                ("nodes_modes", t(vec![0.0, 6.0])),
                ("membership_values", t(vec![2.0, 3.0, f64::NAN])),
                ("nodes_featureids", AttrValue::Ints(vec![0, 1])),
                ("nodes_truenodeids", AttrValue::Ints(vec![0, 1])),
                ("nodes_falsenodeids", AttrValue::Ints(vec![1, 2])),
                ("nodes_trueleafs", AttrValue::Ints(vec![1, 1])),
                ("nodes_falseleafs", AttrValue::Ints(vec![0, 1])),
                ("leaf_targetids", AttrValue::Ints(vec![0, 1, 0])),
                ("leaf_weights", t(vec![1.0, 2.0, 3.0])),
                ("tree_roots", AttrValue::Ints(vec![0])),
                ("n_targets", AttrValue::Int(2)),
            ],
        );
        let x = HostVal::float(
            vec![4, 2],
            vec![0.2, 9.0, 0.7, 3.0, 0.7, 4.0, f64::NAN, 3.0],
        );
        let y = tree_ensemble(&n, &x).unwrap();
        assert_eq!(y.dims, vec![4, 2]);
        assert_eq!(y.data, [1.0, 0.0, 0.0, 2.0, 3.0, 0.0, 0.0, 2.0]);
        let b = Node::new("Binarizer", vec![("threshold", AttrValue::Float(0.5))]);
        let x = HostVal::float(vec![2], vec![0.2, 0.7]);
        assert_eq!(eval(&b, &x, &[]).unwrap().unwrap().data, [0.0, 1.0]);
        let x = HostVal::float(vec![2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let idx = HostVal {
            dims: vec![2],
            data: vec![2.0, 0.0],
            elem: dtype::INT64,
        };
        let y = feature_extract(&x, &idx).unwrap();
        assert_eq!((y.dims, y.data), (vec![2, 2], vec![3.0, 1.0, 6.0, 4.0]));
        let mut odd = Node::new("Binarizer", vec![]);
        odd.domain = "com.example".into();
        assert!(domain_error(&odd).is_some_and(|e| e.contains("com.example")));
    }

    /// By hand: pool unigrams [2, 3] and bigram (3, 5); tokens [3, 2, 3, 4, 5]: 2 once, 3
    /// twice; (3, 5) with its items 2 apart (positions 2 and 4), so only with
    /// max_skip_count >= 1. TF gives the counts; TFIDF with weights [1, 0.5, 2] gives
    /// [1, 1, 2]; IDF without weights 1 where the count is not zero.
    #[test]
    fn tf_idf_by_hand() {
        let node = |mode: &str, skips: i64, weights: Option<Vec<f32>>| {
            let mut attrs = vec![
                ("mode", AttrValue::Text(mode.into())),
                ("min_gram_length", AttrValue::Int(1)),
                ("max_gram_length", AttrValue::Int(2)),
                ("max_skip_count", AttrValue::Int(skips)),
                ("ngram_counts", AttrValue::Ints(vec![0, 2])),
                ("ngram_indexes", AttrValue::Ints(vec![0, 1, 2])),
                ("pool_int64s", AttrValue::Ints(vec![2, 3, 3, 5])),
            ];
            attrs.extend(weights.map(|w| ("weights", AttrValue::Floats(w))));
            Node::new("TfIdfVectorizer", attrs)
        };
        let x = HostVal {
            dims: vec![5],
            data: vec![3.0, 2.0, 3.0, 4.0, 5.0],
            elem: dtype::INT64,
        };
        let run = |n: Node| tf_idf(&n, &x).unwrap().data;
        assert_eq!(run(node("TF", 0, None)), [1.0, 2.0, 0.0]);
        assert_eq!(run(node("TF", 1, None)), [1.0, 2.0, 1.0]);
        assert_eq!(
            run(node("TFIDF", 1, Some(vec![1.0, 0.5, 2.0]))),
            [1.0, 1.0, 2.0]
        );
        assert_eq!(run(node("IDF", 0, None)), [1.0, 1.0, 0.0]);
        assert!(tf_idf(&node("BM25", 0, None), &x).is_err());
    }
}
