//! Articulated registration of a skinned template onto a mesh ([`super::fit`]): each template joint carries an
//! affine map, the template's surface moves by linear blend skinning with its own weights, and the maps are
//! solved so that the moved surface lies on the mesh's. A neck that is longer, thinner and raised in the mesh
//! is one bone's stretch, narrowing and turn, which a smooth displacement field cannot express without tearing
//! the neck from the body.
//!
//! Each round matches both ways (every template point to its nearest mesh point, every mesh point to its
//! nearest template point; a pair counts only when the surfaces face the same way), then solves one linear
//! least-squares problem for every joint's map at once:
//!
//! - the matched template points land on their mesh points (point to point);
//! - at each joint's pivot, the joint's map and its parent's agree (the skeleton does not tear);
//! - two joints that share skinned points move those points alike, and a joint's linear part stays near its
//!   parent's (stiffness). The stiffness falls round by round, from one affine map for the whole body to
//!   bones that bend and stretch on their own (coarse to fine, as in Amberg, Romdhani and Vetter's optimal step
//!   non-rigid ICP, 2007, with the skeleton's bones as the deformation graph's nodes of Sumner, Schmid and
//!   Pauly's embedded deformation, 2007).
//!
//! The three output coordinates do not couple, so each round factors one symmetric matrix of 4 unknowns per
//! joint and solves it for three right-hand sides. A joint's fitted pivot is where its map and its parent's put
//! the template's pivot (their mean).

use glam::{DVec4, Mat3, Vec3};
use rayon::prelude::*;

use crate::spatial::points::PointIndex;

/// Points spread over a surface by area, with their face normals and, for a template, their joint influences.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    pub points: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    /// Per point, up to four (joint, weight) pairs summing to 1 (empty for a mesh without weights).
    pub influences: Vec<Vec<(u32, f32)>>,
}

/// Spread about `count` points (at most `count` plus the triangles' number when they are fewer) over the
/// triangles by area (the same points for the same input), with each
/// point's influences blended from its triangle's vertices' `rows` (joint, weight) when given.
pub fn sample_surface(
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    rows: Option<&[Vec<(u32, f32)>]>,
    count: usize,
) -> Samples {
    let corner = |t: &[u32; 3]| -> Option<[Vec3; 3]> {
        let p = t.map(|i| positions.get(i as usize).copied());
        match p {
            [Some(a), Some(b), Some(c)] if a.is_finite() && b.is_finite() && c.is_finite() => Some([a, b, c]),
            _ => None,
        }
    };
    let area = |p: &[Vec3; 3]| 0.5 * (p[1] - p[0]).cross(p[2] - p[0]).length();
    let total: f64 = triangles.iter().filter_map(corner).map(|p| area(&p) as f64).sum();
    let mut out = Samples::default();
    if total.is_nan() || total <= 0.0 || count == 0 {
        return out;
    }
    let mut carry = 0.0f64;
    let mut k = 0u64;
    let mut blend: Vec<(u32, f32)> = Vec::new();
    for t in triangles {
        let Some(p) = corner(t) else { continue };
        carry += area(&p) as f64 / total * count as f64;
        let n = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero();
        // By area; when there are fewer triangles than points, every triangle gets at least its centre, so that
        // a low-poly model's small parts (ears, toes) are not missed. The count stays bounded either way.
        let least = if triangles.len() <= count { 1.0 } else { 0.0 };
        let here = carry.floor().max(least) as usize;
        carry -= here as f64;
        for s in 0..here {
            // The R2 sequence folded into the triangle; the first point is the centre.
            let (mut u, mut v) = if s == 0 {
                (1.0 / 3.0, 1.0 / 3.0)
            } else {
                k += 1;
                (
                    (0.5 + k as f64 * 0.754_877_666_246_692_7).fract() as f32,
                    (0.5 + k as f64 * 0.569_840_290_998_053_2).fract() as f32,
                )
            };
            if u + v > 1.0 {
                (u, v) = (1.0 - u, 1.0 - v);
            }
            let bary = [1.0 - u - v, u, v];
            out.points.push(p[0] * bary[0] + p[1] * bary[1] + p[2] * bary[2]);
            out.normals.push(n);
            if let Some(rows) = rows {
                blend.clear();
                for (c, &b) in t.iter().zip(&bary) {
                    for &(j, w) in rows.get(*c as usize).map_or(&[][..], |r| r.as_slice()) {
                        match blend.iter_mut().find(|(bj, _)| *bj == j) {
                            Some(e) => e.1 += w * b,
                            None => blend.push((j, w * b)),
                        }
                    }
                }
                blend.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                blend.truncate(4);
                let sum: f32 = blend.iter().map(|e| e.1).sum();
                out.influences.push(if sum > 0.0 {
                    blend.iter().map(|&(j, w)| (j, w / sum)).collect()
                } else {
                    Vec::new()
                });
            }
        }
    }
    out
}

/// How the articulated registration runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoneSchedule {
    pub rounds: usize,
    /// The stiffness in the first and the last round (relative to the matched points' total weight of 1).
    pub stiff_start: f64,
    pub stiff_end: f64,
    /// How strongly a joint's map and its parent's agree at its pivot.
    pub joint: f64,
    /// Matched pairs whose normals' cosine is below this are dropped.
    pub facing: f32,
    /// The share of the mesh-to-template matches in the matched points' weight (the rest is template-to-mesh).
    pub back: f64,
}

impl Default for BoneSchedule {
    fn default() -> Self {
        Self {
            rounds: 30,
            stiff_start: 1.0,
            stiff_end: 1e-3,
            joint: 1.0,
            facing: 0.2,
            back: 0.5,
        }
    }
}

/// Per pair of joints sharing skinned points: the shared weight and the second moment of those points.
type Shared = std::collections::BTreeMap<(usize, usize), (f64, [[f64; 4]; 4])>;

/// One affine map per joint, as three rows of four (the last entry the translation).
type Maps = Vec<[DVec4; 3]>;

fn apply(m: &[DVec4; 3], p: DVec4) -> Vec3 {
    Vec3::new(m[0].dot(p) as f32, m[1].dot(p) as f32, m[2].dot(p) as f32)
}

fn linear(m: &[DVec4; 3]) -> Mat3 {
    Mat3::from_cols(
        Vec3::new(m[0].x as f32, m[1].x as f32, m[2].x as f32),
        Vec3::new(m[0].y as f32, m[1].y as f32, m[2].y as f32),
        Vec3::new(m[0].z as f32, m[1].z as f32, m[2].z as f32),
    )
}

/// A dense symmetric system of `4 * joints` unknowns with three right-hand sides.
struct System {
    n: usize,
    a: Vec<f64>,
    b: Vec<[f64; 3]>,
}

// Dense linear algebra reads best with its indices.
#[allow(clippy::needless_range_loop)]
impl System {
    fn new(joints: usize) -> Self {
        let n = 4 * joints;
        Self {
            n,
            a: vec![0.0; n * n],
            b: vec![[0.0; 3]; n],
        }
    }

    /// Add `weight * |sum_t coef_t . x[block_t] - target|^2` for each of the three coordinates, where each term
    /// is (joint, 4-vector).
    fn add(&mut self, terms: &[(usize, DVec4)], target: Vec3, weight: f64) {
        let t = [target.x as f64, target.y as f64, target.z as f64];
        for &(j1, c1) in terms {
            let c1 = c1.to_array();
            for &(j2, c2) in terms {
                let c2 = c2.to_array();
                for a in 0..4 {
                    let row = (4 * j1 + a) * self.n + 4 * j2;
                    for b in 0..4 {
                        self.a[row + b] += weight * c1[a] * c2[b];
                    }
                }
            }
            for a in 0..4 {
                for k in 0..3 {
                    self.b[4 * j1 + a][k] += weight * c1[a] * t[k];
                }
            }
        }
    }

    /// Solve by Cholesky; None when the matrix is not positive definite.
    fn solve(mut self) -> Option<Vec<[f64; 3]>> {
        let n = self.n;
        let a = &mut self.a;
        for j in 0..n {
            let mut d = a[j * n + j];
            for k in 0..j {
                d -= a[j * n + k] * a[j * n + k];
            }
            if d.is_nan() || d <= 0.0 {
                return None;
            }
            let d = d.sqrt();
            a[j * n + j] = d;
            for i in j + 1..n {
                let mut s = a[i * n + j];
                for k in 0..j {
                    s -= a[i * n + k] * a[j * n + k];
                }
                a[i * n + j] = s / d;
            }
        }
        let mut x = self.b;
        for i in 0..n {
            for k in 0..3 {
                let mut s = x[i][k];
                for j in 0..i {
                    s -= a[i * n + j] * x[j][k];
                }
                x[i][k] = s / a[i * n + i];
            }
        }
        for i in (0..n).rev() {
            for k in 0..3 {
                let mut s = x[i][k];
                for j in i + 1..n {
                    s -= a[j * n + i] * x[j][k];
                }
                x[i][k] = s / a[i * n + i];
            }
        }
        Some(x)
    }
}

/// The nearest of the 8 points nearest `q` whose normal faces along `n` (cosine at least `facing`), so that the
/// two sides of a thin part are not matched to each other. The nearest point alone answers most queries.
fn nearest_facing(index: &PointIndex, normals: &[Vec3], q: Vec3, n: Vec3, facing: f32) -> Option<usize> {
    let faces = |i: &usize| normals.get(*i).is_some_and(|m| m.dot(n) >= facing);
    match index.nearest_within(q, f32::INFINITY) {
        Some(i) if faces(&i) => Some(i),
        Some(_) => index.nearest_n(q, 8).into_iter().find(faces),
        None => None,
    }
}

/// Move the template (`template`: samples with influences, in the mesh's frame already, and `pivots`, its joints'
/// pivots with `parents`) onto the mesh's samples `mesh` by the schedule; `diag` is the mesh's box diagonal.
/// Returns the moved pivots.
pub fn register_bones(
    template: &Samples,
    pivots: &[Vec3],
    parents: &[Option<usize>],
    mesh: &Samples,
    diag: f32,
    schedule: &BoneSchedule,
) -> Vec<Vec3> {
    let joints = pivots.len();
    if joints == 0
        || template.points.is_empty()
        || template.influences.len() != template.points.len()
        || mesh.points.is_empty()
        || !(diag > 0.0 && diag.is_finite())
    {
        return pivots.to_vec();
    }
    // Work in a frame where the mesh's diagonal is 1, so the weights below do not depend on units.
    let centre = pivots.iter().copied().sum::<Vec3>() / joints as f32;
    let scale = 1.0 / diag;
    let norm = |p: Vec3| (p - centre) * scale;
    let homog = |p: Vec3| {
        let q = norm(p);
        DVec4::new(q.x as f64, q.y as f64, q.z as f64, 1.0)
    };
    let tpts: Vec<DVec4> = template.points.iter().map(|&p| homog(p)).collect();
    let mpts: Vec<Vec3> = mesh.points.iter().map(|&p| norm(p)).collect();
    let tpiv: Vec<DVec4> = pivots.iter().map(|&p| homog(p)).collect();
    let mesh_index = PointIndex::of(&mpts);

    // Which joints carry points, and which pairs share them (with the second moment of the shared points).
    let mut mass = vec![0f64; joints];
    let mut shared: Shared = Default::default();
    for (infl, p) in template.influences.iter().zip(&tpts) {
        for &(j, w) in infl {
            if let Some(m) = mass.get_mut(j as usize) {
                *m += w as f64;
            }
        }
        for (x, &(j1, w1)) in infl.iter().enumerate() {
            for &(j2, w2) in &infl[x + 1..] {
                let (a, b) = (j1.min(j2) as usize, j1.max(j2) as usize);
                if b >= joints || w1.min(w2) < 0.05 {
                    continue;
                }
                let e = shared.entry((a, b)).or_insert((0.0, [[0.0; 4]; 4]));
                let w = (w1 * w2) as f64;
                e.0 += w;
                let pa = p.to_array();
                for r in 0..4 {
                    for c in 0..4 {
                        e.1[r][c] += w * pa[r] * pa[c];
                    }
                }
            }
        }
    }
    let total_mass: f64 = mass.iter().sum::<f64>().max(1e-12);

    let identity = [DVec4::X, DVec4::Y, DVec4::Z];
    let mut maps: Maps = vec![identity; joints];
    let rounds = schedule.rounds.max(1);
    let mut pairs: Vec<(usize, Vec3, f64)> = Vec::new();
    for round in 0..rounds {
        let t = if rounds > 1 {
            round as f64 / (rounds - 1) as f64
        } else {
            1.0
        };
        let stiff = schedule.stiff_start * (schedule.stiff_end / schedule.stiff_start).powf(t);
        // Where the template's points and normals are now.
        let moved: Vec<(Vec3, Vec3)> = template
            .influences
            .iter()
            .zip(&tpts)
            .zip(&template.normals)
            .map(|((infl, p), n)| {
                let mut at = Vec3::ZERO;
                let mut lin = Mat3::ZERO;
                for &(j, w) in infl {
                    if let Some(m) = maps.get(j as usize) {
                        at += apply(m, *p) * w;
                        lin += linear(m) * w;
                    }
                }
                let nn = if lin.determinant().abs() > 1e-12 {
                    (lin.inverse().transpose() * *n).normalize_or_zero()
                } else {
                    *n
                };
                (at, nn)
            })
            .collect();
        let moved_points: Vec<Vec3> = moved.iter().map(|m| m.0).collect();
        let moved_normals: Vec<Vec3> = moved.iter().map(|m| m.1).collect();
        let moved_index = PointIndex::of(&moved_points);
        pairs.clear();
        let forward = (1.0 - schedule.back) / tpts.len() as f64;
        // The matches split over the cores; collected in order, so the answer does not depend on their number.
        let to_mesh: Vec<Option<usize>> = moved
            .par_iter()
            .map(|(p, n)| nearest_facing(&mesh_index, &mesh.normals, *p, *n, schedule.facing))
            .collect();
        for (i, k) in to_mesh.into_iter().enumerate() {
            if let Some(k) = k {
                pairs.push((i, mpts[k], forward));
            }
        }
        let backward = schedule.back / mpts.len() as f64;
        let to_template: Vec<Option<usize>> = mpts
            .par_iter()
            .zip(&mesh.normals)
            .map(|(q, n)| nearest_facing(&moved_index, &moved_normals, *q, *n, schedule.facing))
            .collect();
        for (q, i) in mpts.iter().zip(to_template) {
            if let Some(i) = i {
                pairs.push((i, *q, backward));
            }
        }

        let mut sys = System::new(joints);
        let mut terms: Vec<(usize, DVec4)> = Vec::with_capacity(4);
        for &(i, q, w) in &pairs {
            terms.clear();
            terms.extend(
                template.influences[i]
                    .iter()
                    .filter(|(j, _)| (*j as usize) < joints)
                    .map(|&(j, wj)| (j as usize, tpts[i] * wj as f64)),
            );
            sys.add(&terms, q, w);
        }
        for j in 0..joints {
            // A joint's pivot is where its map and its parent's agree; a parent without points of its own (a
            // root, a control) holds on weakly, so that it does not pull its children together.
            if let Some(p) = parents[j] {
                let w = if mass[p] > 0.0 {
                    schedule.joint
                } else {
                    1e-3 * schedule.joint
                };
                sys.add(&[(j, tpiv[j]), (p, -tpiv[j])], Vec3::ZERO, w);
                // Stiffness: the linear parts stay near the parent's.
                for d in [DVec4::X, DVec4::Y, DVec4::Z] {
                    sys.add(&[(j, d), (p, -d)], Vec3::ZERO, stiff * 0.1);
                }
            }
            // A faint pull toward the last round's map keeps every block solvable.
            for (d, target) in [DVec4::X, DVec4::Y, DVec4::Z, DVec4::W].into_iter().zip(0..4) {
                let m = &maps[j];
                let current = Vec3::new(
                    m[0].to_array()[target] as f32,
                    m[1].to_array()[target] as f32,
                    m[2].to_array()[target] as f32,
                );
                sys.add(&[(j, d)], current, 1e-6);
            }
        }
        // Joints that share points move them alike.
        for (&(a, b), (w, moment)) in &shared {
            let weight = stiff * w / total_mass;
            // |(A_a - A_b) p|^2 summed over the shared points = trace((A_a - A_b) S (A_a - A_b)^T); add it
            // through S's square root by its columns (S = sum of p p^T, added row by row of S's Cholesky).
            if let Some(rows) = cholesky4(moment, *w) {
                for r in rows {
                    sys.add(&[(a, r), (b, -r)], Vec3::ZERO, weight);
                }
            }
        }
        match sys.solve() {
            Some(x) => {
                for (j, m) in maps.iter_mut().enumerate() {
                    for (k, row) in m.iter_mut().enumerate() {
                        *row = DVec4::new(x[4 * j][k], x[4 * j + 1][k], x[4 * j + 2][k], x[4 * j + 3][k]);
                    }
                }
            }
            None => break,
        }
    }

    (0..joints)
        .map(|j| {
            let own = apply(&maps[j], tpiv[j]);
            let at = match parents[j] {
                Some(p) if mass[j] > 0.0 && mass[p] > 0.0 => 0.5 * (own + apply(&maps[p], tpiv[j])),
                Some(p) if mass[j] <= 0.0 => apply(&maps[p], tpiv[j]),
                _ => own,
            };
            at / scale + centre
        })
        .collect()
}

/// Vectors `r` with `sum r r^T = moment / total` (the rows of its Cholesky factor, transposed), so that a
/// quadratic form over many points becomes four terms; None when `moment` is degenerate.
#[allow(clippy::needless_range_loop)]
fn cholesky4(moment: &[[f64; 4]; 4], total: f64) -> Option<Vec<DVec4>> {
    if total.is_nan() || total <= 0.0 {
        return None;
    }
    let mut l = [[0f64; 4]; 4];
    for j in 0..4 {
        let mut d = moment[j][j] / total;
        for k in 0..j {
            d -= l[j][k] * l[j][k];
        }
        // A flat or thin set of shared points: the missing directions are left free.
        if d <= 1e-12 {
            continue;
        }
        let d = d.sqrt();
        l[j][j] = d;
        for i in j + 1..4 {
            let mut s = moment[i][j] / total;
            for k in 0..j {
                s -= l[i][k] * l[j][k];
            }
            l[i][j] = s / d;
        }
    }
    Some((0..4).map(|c| DVec4::new(l[0][c], l[1][c], l[2][c], l[3][c])).collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A box-section bar along x from 0 to `len`, `width` across, as triangles: the surface the samples lie on.
    fn bar(len: f32, width: f32, segments: usize) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let h = width / 2.0;
        let ring = [(-h, -h), (h, -h), (h, h), (-h, h)];
        let mut p = Vec::new();
        for s in 0..=segments {
            let x = len * s as f32 / segments as f32;
            p.extend(ring.iter().map(|&(y, z)| Vec3::new(x, y, z)));
        }
        let mut t = Vec::new();
        for s in 0..segments as u32 {
            for k in 0..4u32 {
                let (a, b) = (4 * s + k, 4 * s + (k + 1) % 4);
                t.push([a, b, b + 4]);
                t.push([a, b + 4, a + 4]);
            }
        }
        // Caps.
        let last = 4 * segments as u32;
        t.push([0, 2, 1]);
        t.push([0, 3, 2]);
        t.push([last, last + 1, last + 2]);
        t.push([last, last + 2, last + 3]);
        (p, t)
    }

    /// Two bones along the bar, split at x = `at`: weights 1 on the side each vertex lies.
    fn rows(p: &[Vec3], at: f32) -> Vec<Vec<(u32, f32)>> {
        p.iter()
            .map(|v| if v.x < at { vec![(0, 1.0)] } else { vec![(1, 1.0)] })
            .collect()
    }

    #[test]
    fn samples_cover_every_triangle_by_area_with_whole_weights() {
        let (p, t) = bar(4.0, 1.0, 8);
        let r = rows(&p, 2.0);
        let s = sample_surface(&p, &t, Some(&r), 500);
        assert!(
            s.points.len() >= 498 && s.points.len() <= 500 + t.len(),
            "{}",
            s.points.len()
        );
        assert_eq!(s.influences.len(), s.points.len());
        for (q, infl) in s.points.iter().zip(&s.influences) {
            assert!(q.x >= -1e-5 && q.x <= 4.0 + 1e-5 && q.y.abs() <= 0.5 + 1e-5 && q.z.abs() <= 0.5 + 1e-5);
            let sum: f32 = infl.iter().map(|e| e.1).sum();
            assert!((sum - 1.0).abs() < 1e-5, "{infl:?}");
        }
        // The same input gives the same points.
        assert_eq!(sample_surface(&p, &t, Some(&r), 500).points, s.points);
        // Nothing to sample.
        assert!(sample_surface(&p, &[], None, 100).points.is_empty());
        // More triangles than points: the count holds (not one point per triangle).
        let few = sample_surface(&p, &t, None, 10).points.len();
        assert!(
            t.len() > 10 && (9..=11).contains(&few),
            "{few} from {} triangles",
            t.len()
        );
    }

    /// The mesh's second bone is half again as long and turned up by 40 degrees: the joint between the bones stays
    /// at the bend, and the tip joint lands where the mesh's tip is (its pivot is where the template's tip was;
    /// left by the box it would be 1.95 away).
    #[test]
    fn a_bone_turns_and_stretches_to_the_part_it_skins() {
        let (p, t) = bar(4.0, 0.6, 16);
        let template = sample_surface(&p, &t, Some(&rows(&p, 2.0)), 3000);
        let angle = 40f32.to_radians();
        let dir = Vec3::new(angle.cos(), angle.sin(), 0.0);
        let bend = |v: Vec3| {
            if v.x <= 2.0 {
                v
            } else {
                let along = (v.x - 2.0) * 1.5;
                Vec3::new(2.0, 0.0, v.z) + dir * along + Vec3::new(-angle.sin(), angle.cos(), 0.0) * v.y
            }
        };
        let moved: Vec<Vec3> = p.iter().map(|&v| bend(v)).collect();
        let mesh = sample_surface(&moved, &t, None, 3000);
        let pivots = [Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0), Vec3::new(4.0, 0.0, 0.0)];
        // The tip is a third joint with no points of its own, child of the second.
        let parents = [None, Some(0), Some(1)];
        let out = register_bones(&template, &pivots, &parents, &mesh, 5.0, &BoneSchedule::default());
        assert!(out[0].distance(Vec3::ZERO) < 0.15, "{}", out[0]);
        assert!(out[1].distance(Vec3::new(2.0, 0.0, 0.0)) < 0.2, "{}", out[1]);
        let tip = Vec3::new(2.0, 0.0, 0.0) + dir * 3.0;
        assert!(out[2].distance(tip) < 0.35, "{} vs {tip}", out[2]);
    }

    #[test]
    fn nothing_to_match_moves_nothing() {
        let pivots = [Vec3::ONE];
        let empty = Samples::default();
        let out = register_bones(&empty, &pivots, &[None], &empty, 1.0, &BoneSchedule::default());
        assert_eq!(out, pivots.to_vec());
    }

    #[test]
    fn cholesky_solves_a_known_system() {
        // Two joints, identity-like normal matrix scaled: x = b / 2.
        let mut sys = System::new(1);
        for d in [DVec4::X, DVec4::Y, DVec4::Z, DVec4::W] {
            sys.add(&[(0, d)], Vec3::new(2.0, 4.0, 6.0), 2.0);
        }
        let x = sys.solve().unwrap();
        for row in x {
            assert!((row[0] - 2.0).abs() < 1e-12 && (row[1] - 4.0).abs() < 1e-12 && (row[2] - 6.0).abs() < 1e-12);
        }
        assert!(System::new(1).solve().is_none());
    }
}
