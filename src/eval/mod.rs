//! Measuring weights against a reference (artist weights), with the metrics of RigNet (Xu et al., "RigNet:
//! Neural Rigging for Articulated Characters", SIGGRAPH 2020) and later automatic-rigging papers.
//!
//! For weights `A` and reference `B` over the same vertices and joints (rows already sum to 1):
//! - **mean L1**: the mean over all vertices of `sum_j |a_j - b_j|`; a vertex with weights on one side only
//!   counts 1, a vertex empty on both sides 0. Lower is better; 0 means identical.
//! - **dominant agreement**: the share of vertices whose largest-weight joint (ties: lower index) is the same
//!   on both sides; a vertex empty on one side only disagrees, one empty on both agrees (so any weights agree
//!   fully with themselves).
//! - **influence precision / recall**: an influence is a (vertex, joint) pair with weight above 0.01;
//!   precision = |A ∩ B| / |A|, recall = |A ∩ B| / |B|, over all pairs (1 when the denominator is 0).
//! - **unweighted vertices** on each side.

pub mod posed;

use crate::model::Weights;

/// Weight above which a joint counts as influencing a vertex.
pub const INFLUENCE_THRESHOLD: f32 = 0.01;

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Comparison {
    pub vertices: usize,
    pub mean_l1: f64,
    pub dominant_agreement: f64,
    pub influence_precision: f64,
    pub influence_recall: f64,
    pub unweighted_a: usize,
    pub unweighted_b: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the weights cover {a} and {b} vertices; they must be the same mesh")]
pub struct CompareError {
    pub a: usize,
    pub b: usize,
}

/// Compare `a` with the reference `b`.
pub fn compare_weights(a: &Weights, b: &Weights) -> Result<Comparison, CompareError> {
    if a.len() != b.len() {
        return Err(CompareError { a: a.len(), b: b.len() });
    }
    let n = a.len();
    let (mut l1, mut agree) = (0.0f64, 0usize);
    let (mut inf_a, mut inf_b, mut inf_both) = (0usize, 0usize, 0usize);
    let (mut empty_a, mut empty_b) = (0usize, 0usize);
    for v in 0..n {
        let (ja, wa) = a.row(v);
        let (jb, wb) = b.row(v);
        empty_a += ja.is_empty() as usize;
        empty_b += jb.is_empty() as usize;
        l1 += match (ja.is_empty(), jb.is_empty()) {
            (true, true) => 0.0,
            (true, false) | (false, true) => 1.0,
            _ => {
                let mut d = 0.0f64;
                for (j, x) in ja.iter().zip(wa) {
                    let y = jb.iter().position(|k| k == j).map_or(0.0, |i| wb[i]);
                    d += (*x as f64 - y as f64).abs();
                }
                for (j, y) in jb.iter().zip(wb) {
                    if !ja.contains(j) {
                        d += *y as f64;
                    }
                }
                d
            }
        };
        agree += (a.dominant(v) == b.dominant(v)) as usize;
        let sa = ja.iter().zip(wa).filter(|(_, w)| **w > INFLUENCE_THRESHOLD);
        for (j, _) in sa {
            inf_a += 1;
            if jb.iter().zip(wb).any(|(k, w)| k == j && *w > INFLUENCE_THRESHOLD) {
                inf_both += 1;
            }
        }
        inf_b += wb.iter().filter(|w| **w > INFLUENCE_THRESHOLD).count();
    }
    let ratio = |x: usize, y: usize| if y == 0 { 1.0 } else { x as f64 / y as f64 };
    Ok(Comparison {
        vertices: n,
        mean_l1: if n == 0 { 0.0 } else { l1 / n as f64 },
        dominant_agreement: ratio(agree, n),
        influence_precision: ratio(inf_both, inf_a),
        influence_recall: ratio(inf_both, inf_b),
        unweighted_a: empty_a,
        unweighted_b: empty_b,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_by_hand() {
        // v0: A (0: 1) vs B (0: 0.5, 1: 0.5): L1 1, dominant 0 both (tie in B: lower index), inf A {0}, B {0,1}.
        // v1: A (1: 1) vs B empty: L1 1, disagree, inf A {1}.
        // v2: both (2: 1): L1 0, agree.
        let a = Weights::new(vec![0, 1, 2, 3], vec![0, 1, 2], vec![1.0, 1.0, 1.0]).unwrap();
        let b = Weights::new(vec![0, 2, 2, 3], vec![0, 1, 2], vec![0.5, 0.5, 1.0]).unwrap();
        let c = compare_weights(&a, &b).unwrap();
        assert_eq!(c.mean_l1, 2.0 / 3.0);
        assert_eq!(c.dominant_agreement, 2.0 / 3.0); // v1 is empty in B only
        assert_eq!(c.influence_precision, 2.0 / 3.0); // A's {0, 1, 2}: 0 and 2 are in B
        assert_eq!(c.influence_recall, 2.0 / 3.0); // B's {0, 1, 2 (v2)}: v0's 1 is missed
        assert_eq!((c.unweighted_a, c.unweighted_b), (0, 1));
        let same = compare_weights(&b, &b).unwrap();
        assert_eq!((same.mean_l1, same.dominant_agreement), (0.0, 1.0));
    }
}
