//! Classic machine-learning operators on the host: TfIdfVectorizer (default domain), as
//! ONNX's reference computes it.

use super::HostVal;
use crate::onnx::proto::{dtype, AttrValue, Node};
use std::collections::HashMap;

/// One of these operators; None for others.
pub(super) fn eval(n: &Node, x: &HostVal) -> Option<Result<HostVal, String>> {
    Some(match n.op_type.as_str() {
        "TfIdfVectorizer" => tf_idf(n, x),
        _ => return None,
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
    if !(1..=max).contains(&min) || !(0..=1 << 20).contains(&skips) {
        return Err(format!(
            "min_gram_length {min}, max_gram_length {max}, max_skip_count {skips}: need 1 <= min <= max and 0 <= skips"
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
    let mut freq = vec![0u64; rows * width];
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
