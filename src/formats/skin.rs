//! `.skin`: the CSE169 skin format.
//!
//! ```text
//! positions N { x y z ... }
//! normals N { x y z ... }                 optional: computed (area-weighted) when missing
//! texcoords N { u v ... }                 optional
//! skinweights N { n j0 w0 j1 w1 ... }     optional for a bare mesh; one row per vertex (lines not enforced)
//! material NAME { key value ... }         optional, any number, kept as written
//! triangles T { a b c ... }               optional (a point cloud has none)
//! bindings J { matrix { ax ay az  bx by bz  cx cy cz  dx dy dz } ... }   optional
//! ```
//!
//! A binding is the joint's WORLD matrix at bind time: rows a, b, c are the x, y, z axes and d the translation
//! (glam: `Mat4::from_cols(a, b, c, d)` with w = 0, 0, 0, 1). Blocks may come in any order; an unknown block
//! is skipped with a warning. Weight rows are cleaned on reading (explicit zeros dropped, repeated joints
//! merged, sums off by more than 1e-3 normalised with a warning); a vertex without weights is kept and reported.
//! Joint indices are checked against the bindings count, and against the skeleton when the caller knows it.

use std::io::{self, Read, Write};

use glam::{Mat4, Vec2, Vec3, Vec4};

use super::bulk::{At, Block, Cursor, FromFloats, Triangles, read_block};
use super::lexer::{Kind, Lexer, parse_f32, parse_u32};
use super::{ParseError, Parsed, RowWriter, Warning, ensure_finite};
use crate::model::skin::Material;
use crate::model::{Skin, Weights};

/// Read a skin. `len` is the input's size when known; `joint_count` is the skeleton's joint count when the
/// caller has one, so that out-of-range joint indices are reported where they are written.
pub fn read_skin(src: impl Read, len: Option<u64>, joint_count: Option<usize>) -> Result<Parsed<Skin>, ParseError> {
    read_skin_from(Lexer::new(src, len), joint_count)
}

/// [`read_skin`] from a lexer (tests pass one that reads token by token).
pub(super) fn read_skin_from<R: Read>(
    mut lx: Lexer<R>,
    joint_count: Option<usize>,
) -> Result<Parsed<Skin>, ParseError> {
    let mut warnings = Vec::new();
    let mut positions: Option<Vec<Vec3>> = None;
    let mut normals: Option<Vec<Vec3>> = None;
    let mut texcoords: Option<Vec<Vec2>> = None;
    let mut weights: Option<(RawWeights, At)> = None;
    let mut triangles: Option<Triangles> = None;
    let mut bindings: Option<(Vec<Mat4>, At)> = None;
    let mut materials = Vec::new();
    let mut vertex_count: Option<(usize, &'static str, At)> = None;

    loop {
        let t = lx.next_token()?;
        let at = At {
            line: t.line,
            col: t.col,
        };
        match t.kind {
            Kind::End => break,
            Kind::Word => {}
            _ => return Err(lx.error_at(&t, "a block keyword such as `positions`")),
        }
        let key = lx.text(&t).to_vec();
        let name: &'static str = match key.as_slice() {
            b"positions" => "positions",
            b"normals" => "normals",
            b"texcoords" => "texcoords",
            b"skinweights" => "skinweights",
            b"triangles" => "triangles",
            b"bindings" => "bindings",
            b"material" => {
                materials.push(read_material(&mut lx)?);
                continue;
            }
            _ => {
                warnings.push(Warning {
                    line: t.line,
                    col: t.col,
                    message: format!("unknown block `{}` skipped", String::from_utf8_lossy(&key)),
                });
                skip_unknown(&mut lx, t.line)?;
                continue;
            }
        };
        let count_tok = lx.peek()?;
        let count = lx.u32(&format!("an entry count after `{name}`"))? as usize;
        let dup = match name {
            "positions" => positions.is_some(),
            "normals" => normals.is_some(),
            "texcoords" => texcoords.is_some(),
            "skinweights" => weights.is_some(),
            "triangles" => triangles.is_some(),
            _ => bindings.is_some(),
        };
        if dup {
            return Err(ParseError::new(
                t.line,
                t.col,
                "one block of each kind",
                format!("a second `{name}` block"),
            ));
        }
        if matches!(name, "positions" | "normals" | "texcoords" | "skinweights") {
            let here = At {
                line: count_tok.line,
                col: count_tok.col,
            };
            match vertex_count {
                Some((n, first, _)) if n != count => {
                    return Err(ParseError::new(
                        here.line,
                        here.col,
                        format!("{n} entries, as `{first}` declares"),
                        format!("{count} declared by `{name}`"),
                    ));
                }
                Some(_) => {}
                None => vertex_count = Some((count, name, here)),
            }
        }
        lx.expect_open(&format!("after `{name} {count}`"))?;
        match name {
            "positions" => positions = Some(read_floats(&mut lx, name, count)?),
            "normals" => normals = Some(read_floats(&mut lx, name, count)?),
            "texcoords" => texcoords = Some(read_floats(&mut lx, name, count)?),
            "skinweights" => weights = Some((read_weights(&mut lx, count, joint_count)?, at)),
            "triangles" => triangles = Some(read_triangles(&mut lx, count)?),
            _ => bindings = Some((read_bindings(&mut lx, count)?, at)),
        }
    }

    let end = lx.peek()?;
    let Some(positions) = positions else {
        return Err(ParseError::new(
            end.line,
            end.col,
            "a `positions` block",
            "the end of the file",
        ));
    };
    let n = positions.len();
    let Triangles {
        tris: triangles,
        max: max_index,
    } = triangles.unwrap_or_default();
    if let Some((i, at)) = max_index {
        if i as usize >= n {
            return Err(ParseError::new(
                at.line,
                at.col,
                format!("a vertex index below {n} (the vertex count)"),
                format!("`{i}`"),
            ));
        }
    }
    let joint_limit = match (&bindings, joint_count) {
        (Some((b, at)), Some(j)) if b.len() != j => {
            return Err(ParseError::new(
                at.line,
                at.col,
                format!("{j} bindings, one per joint of the skeleton"),
                format!("{} bindings", b.len()),
            ));
        }
        (Some((b, _)), _) => Some((b.len(), "the bindings count")),
        (None, Some(j)) => Some((j, "the skeleton's joint count")),
        (None, None) => None,
    };
    let weights = match weights {
        Some((raw, block_at)) => {
            if let (Some((limit, what)), Some((j, at))) = (joint_limit, raw.max_joint) {
                if j as usize >= limit {
                    return Err(ParseError::new(
                        at.line,
                        at.col,
                        format!("a joint index below {limit} ({what})"),
                        format!("`{j}`"),
                    ));
                }
            }
            Some(raw.finish(block_at, &mut warnings)?)
        }
        None => None,
    };
    let mut skin = Skin::new(positions, normals, triangles)
        .map_err(|e| ParseError::new(end.line, end.col, "a consistent skin", e.to_string()))?;
    let bad = |e: crate::model::skin::SkinError| ParseError::new(end.line, end.col, "a consistent skin", e.to_string());
    skin.set_weights(weights).map_err(bad)?;
    skin.set_texcoords(texcoords).map_err(bad)?;
    skin.set_bindings(bindings.map(|b| b.0)).map_err(bad)?;
    skin.set_materials(materials);
    Ok(Parsed { value: skin, warnings })
}

/// The error for a block that ends (`}`) before its declared count.
fn too_few(lx: &Lexer<impl Read>, t: &super::lexer::Token, block: &str, declared: usize, found: usize) -> ParseError {
    ParseError::new(
        t.line,
        t.col,
        format!("{declared} entries in `{block}` (the declared count)"),
        format!("{} after {found}", lx.describe(t)),
    )
}

/// After the declared entries, the block must close; if it does not, say how many entries it really holds.
fn close_block(lx: &mut Lexer<impl Read>, block: &str, declared: usize, per_entry: usize) -> Result<(), ParseError> {
    let t = lx.next_token()?;
    match t.kind {
        Kind::Close => Ok(()),
        Kind::Word => {
            let first = lx.describe(&t);
            let extra_words = 1 + lx.count_words_to_close();
            let found = declared + extra_words.div_ceil(per_entry.max(1));
            Err(ParseError::new(
                t.line,
                t.col,
                format!("`}}` after {declared} entries in `{block}` (the declared count)"),
                format!("{first}: the block holds {found} entries"),
            ))
        }
        _ => Err(lx.error_at(&t, format!("`}}` closing `{block}`"))),
    }
}

/// Read `count` entries of `T::N` numbers each.
fn read_floats<R: Read, T: FromFloats>(lx: &mut Lexer<R>, block: &str, count: usize) -> Result<Vec<T>, ParseError> {
    // Each number takes at least one digit and one separator.
    let mut out = Vec::with_capacity(lx.capacity_for(count, 2 * T::N));
    read_block(lx, count, &mut out, |lx, out, i| {
        let mut entry = [0.0f32; 3];
        for (k, slot) in entry.iter_mut().enumerate().take(T::N) {
            let t = lx.next_token()?;
            if t.kind == Kind::Word {
                if let Some(v) = parse_f32(lx.text(&t)) {
                    *slot = v;
                    continue;
                }
            }
            if k == 0 && t.kind == Kind::Close {
                return Err(too_few(lx, &t, block, count, i));
            }
            return Err(lx.error_at(&t, format!("a finite number ({} per entry in `{block}`)", T::N)));
        }
        out.push(T::from_floats(entry));
        Ok(())
    })?;
    close_block(lx, block, count, T::N)?;
    Ok(out)
}

fn read_triangles(lx: &mut Lexer<impl Read>, count: usize) -> Result<Triangles, ParseError> {
    let mut out = Triangles {
        tris: Vec::with_capacity(lx.capacity_for(count, 6)),
        max: None,
    };
    read_block(lx, count, &mut out, |lx, out, i| {
        let mut tri = [0u32; 3];
        for (k, slot) in tri.iter_mut().enumerate() {
            let t = lx.next_token()?;
            if t.kind == Kind::Word {
                if let Some(v) = parse_u32(lx.text(&t)) {
                    *slot = v;
                    if out.max.is_none_or(|(m, _)| v > m) {
                        out.max = Some((
                            v,
                            At {
                                line: t.line,
                                col: t.col,
                            },
                        ));
                    }
                    continue;
                }
            }
            if k == 0 && t.kind == Kind::Close {
                return Err(too_few(lx, &t, "triangles", count, i));
            }
            return Err(lx.error_at(&t, "a vertex index (3 per triangle)"));
        }
        out.tris.push(tri);
        Ok(())
    })?;
    close_block(lx, "triangles", count, 3)?;
    Ok(out)
}

/// Weight rows as read, before cleaning.
struct RawWeights {
    offsets: Vec<u32>,
    joints: Vec<u16>,
    values: Vec<f32>,
    max_joint: Option<(u16, At)>,
    /// The skeleton's joint count, when known: indices are checked against it where they are written.
    joint_count: Option<usize>,
}

impl Block for RawWeights {
    /// One row, `n j0 w0 j1 w1 ...`, read as [`read_weights`] reads it.
    #[inline]
    fn entry(&mut self, c: &mut Cursor) -> bool {
        let (joints, max_joint) = (self.joints.len(), self.max_joint);
        let whole = self.row(c);
        if !whole {
            self.joints.truncate(joints);
            self.values.truncate(joints);
            self.max_joint = max_joint;
        }
        whole
    }

    fn empty(&self) -> Self {
        Self {
            offsets: vec![0],
            joints: Vec::new(),
            values: Vec::new(),
            max_joint: None,
            joint_count: self.joint_count,
        }
    }

    fn clear(&mut self) {
        self.offsets.truncate(1);
        self.joints.clear();
        self.values.clear();
        self.max_joint = None;
    }

    fn append(&mut self, later: &mut Self, line: u32) {
        let base = self.values.len() as u32;
        self.offsets
            .extend(later.offsets[1..].iter().map(|o| o.wrapping_add(base)));
        self.joints.append(&mut later.joints);
        self.values.append(&mut later.values);
        if let Some((j, at)) = later.max_joint {
            if self.max_joint.is_none_or(|(m, _)| j > m) {
                self.max_joint = Some((
                    j,
                    At {
                        line: at.line.wrapping_add(line),
                        ..at
                    },
                ));
            }
        }
    }
}

impl RawWeights {
    fn joint_ok(&self, j: u32) -> bool {
        j <= u16::MAX as u32 && self.joint_count.is_none_or(|c| (j as usize) < c)
    }

    /// [`Block::entry`]'s reading, leaving what it pushed when the row is not whole.
    #[inline]
    fn row(&mut self, c: &mut Cursor) -> bool {
        let Some((n, _)) = c.u32().filter(|(n, _)| *n <= u16::MAX as u32) else {
            return false;
        };
        for _ in 0..n {
            let Some((j, at)) = c.u32().filter(|(j, _)| self.joint_ok(*j)) else {
                return false;
            };
            let j = j as u16;
            if self.max_joint.is_none_or(|(m, _)| j > m) {
                self.max_joint = Some((j, at));
            }
            let Some(w) = c.f32().filter(|w| *w >= 0.0) else {
                return false;
            };
            self.joints.push(j);
            self.values.push(w);
        }
        self.offsets.push(self.values.len() as u32);
        true
    }

    fn finish(self, at: At, warnings: &mut Vec<Warning>) -> Result<Weights, ParseError> {
        let (w, report) = Weights::normalized_csr(self.offsets, self.joints, self.values)
            .map_err(|e| ParseError::new(at.line, at.col, "valid skin weights", e.to_string()))?;
        let warn = |message: String| Warning {
            line: at.line,
            col: at.col,
            message,
        };
        if let (Some(first), Some(lo), Some(hi)) = (
            report.renormalized.first(),
            report.renormalized.iter().map(|r| r.1).reduce(f32::min),
            report.renormalized.iter().map(|r| r.1).reduce(f32::max),
        ) {
            warnings.push(warn(format!(
                "{} vertices' weights did not sum to 1 (sums from {lo} to {hi}, first at vertex {}); normalised",
                report.renormalized.len(),
                first.0
            )));
        }
        if report.duplicates_merged > 0 {
            warnings.push(warn(format!(
                "{} repeated joints within a vertex's weights were merged",
                report.duplicates_merged
            )));
        }
        let unweighted: Vec<usize> = w.unweighted().collect();
        if let Some(first) = unweighted.first() {
            warnings.push(warn(format!(
                "{} vertices have no weights (first: vertex {first}); they stay in the bind pose",
                unweighted.len()
            )));
        }
        Ok(w)
    }
}

fn read_weights(lx: &mut Lexer<impl Read>, count: usize, joint_count: Option<usize>) -> Result<RawWeights, ParseError> {
    let cap = lx.capacity_for(count, 2);
    let mut raw = RawWeights {
        offsets: Vec::with_capacity(cap + 1),
        joints: Vec::with_capacity(cap),
        values: Vec::with_capacity(cap),
        max_joint: None,
        joint_count,
    };
    raw.offsets.push(0);
    read_block(lx, count, &mut raw, |lx, raw, i| {
        let t = lx.next_token()?;
        let n = match (t.kind, parse_u32(lx.text(&t))) {
            (Kind::Word, Some(n)) if n <= u16::MAX as u32 => n,
            (Kind::Close, _) => return Err(too_few(lx, &t, "skinweights", count, i)),
            _ => return Err(lx.error_at(&t, "an influence count (at most 65535) starting a vertex's weights")),
        };
        for _ in 0..n {
            let t = lx.next_token()?;
            let j = match (t.kind, parse_u32(lx.text(&t))) {
                (Kind::Word, Some(j)) if raw.joint_ok(j) => j as u16,
                _ => {
                    let expected = match joint_count {
                        Some(c) => format!("a joint index below {c} (the skeleton's joint count)"),
                        None => "a joint index (at most 65535)".to_string(),
                    };
                    return Err(lx.error_at(&t, expected));
                }
            };
            if raw.max_joint.is_none_or(|(m, _)| j > m) {
                raw.max_joint = Some((
                    j,
                    At {
                        line: t.line,
                        col: t.col,
                    },
                ));
            }
            let t = lx.next_token()?;
            let w = match (t.kind, parse_f32(lx.text(&t))) {
                (Kind::Word, Some(w)) if w >= 0.0 => w,
                _ => return Err(lx.error_at(&t, "a non-negative finite weight")),
            };
            raw.joints.push(j);
            raw.values.push(w);
        }
        raw.offsets.push(raw.values.len() as u32);
        Ok(())
    })?;
    close_block(lx, "skinweights", count, 3)?;
    Ok(raw)
}

fn read_bindings(lx: &mut Lexer<impl Read>, count: usize) -> Result<Vec<Mat4>, ParseError> {
    let mut out = Vec::with_capacity(lx.capacity_for(count, 40));
    for i in 0..count {
        let t = lx.next_token()?;
        match t.kind {
            Kind::Word if lx.text(&t) == b"matrix" => {}
            Kind::Close => return Err(too_few(lx, &t, "bindings", count, i)),
            _ => return Err(lx.error_at(&t, "`matrix`")),
        }
        lx.expect_open("after `matrix`")?;
        let mut m = [0.0f32; 12];
        for slot in &mut m {
            *slot = lx.f32("a finite number (12 per matrix)")?;
        }
        lx.expect_close("after the 12 numbers of a matrix")?;
        let col = |k: usize, w: f32| Vec4::new(m[3 * k], m[3 * k + 1], m[3 * k + 2], w);
        out.push(Mat4::from_cols(col(0, 0.0), col(1, 0.0), col(2, 0.0), col(3, 1.0)));
    }
    close_block(lx, "bindings", count, 14)?;
    Ok(out)
}

/// `material NAME { ... }`: words grouped by line.
fn read_material(lx: &mut Lexer<impl Read>) -> Result<Material, ParseError> {
    let (_, name) = lx.word("a material name")?;
    lx.expect_open("after the material's name")?;
    let mut lines: Vec<Vec<String>> = Vec::new();
    let mut last_line = 0;
    loop {
        let t = lx.next_token()?;
        match t.kind {
            Kind::Close => break,
            Kind::Word => {
                let w = String::from_utf8_lossy(lx.text(&t)).into_owned();
                match lines.last_mut() {
                    Some(l) if t.line == last_line => l.push(w),
                    _ => lines.push(vec![w]),
                }
                last_line = t.line;
            }
            _ => return Err(lx.error_at(&t, format!("a word or `}}` closing material `{name}`"))),
        }
    }
    Ok(Material { name, lines })
}

/// Skip an unknown block: the rest of its line and, if a `{` follows, everything to the matching `}`.
fn skip_unknown(lx: &mut Lexer<impl Read>, line: u32) -> Result<(), ParseError> {
    lx.skip_line(line)?;
    if lx.peek()?.kind != Kind::Open {
        return Ok(());
    }
    let mut depth = 0usize;
    loop {
        let t = lx.next_token()?;
        match t.kind {
            Kind::Open => depth += 1,
            Kind::Close => {
                depth -= 1;
                if depth == 0 {
                    return Ok(());
                }
            }
            Kind::End => return Err(lx.error_at(&t, "`}` closing the unknown block")),
            Kind::Word => {}
        }
    }
}

/// Write a skin: positions, normals, texcoords, skinweights, materials, triangles, bindings. Normals are always
/// written (computed ones too), so course loaders that require them can read the result.
/// Why a skin is not ready to export as a finished rig.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{count} vertices have no weights (the first is vertex {first}); bind or paint them first, or allow it")]
pub struct UnweightedVertices {
    pub count: usize,
    pub first: usize,
}

/// A finished rig has a weight on every vertex: check that a skin that has weights has them everywhere (a bare
/// mesh without a `skinweights` block passes: it is not a rig yet).
pub fn check_export(skin: &Skin) -> Result<(), UnweightedVertices> {
    let Some(w) = skin.weights() else { return Ok(()) };
    let mut unweighted = w.unweighted();
    match unweighted.next() {
        None => Ok(()),
        Some(first) => Err(UnweightedVertices {
            count: 1 + unweighted.count(),
            first,
        }),
    }
}

/// Write a skin. Refuses (before writing anything) a non-finite position, normal, texture coordinate, weight or
/// binding, naming it.
pub fn write_skin(out: &mut dyn Write, skin: &Skin) -> io::Result<()> {
    ensure_finite(skin.positions().iter().map(|p| p.to_array()), |v| {
        format!("vertex {v}'s position")
    })?;
    ensure_finite(skin.normals().iter().map(|p| p.to_array()), |v| {
        format!("vertex {v}'s normal")
    })?;
    if let Some(tc) = skin.texcoords() {
        ensure_finite(tc.iter().map(|t| t.to_array()), |v| {
            format!("vertex {v}'s texture coordinate")
        })?;
    }
    if let Some(w) = skin.weights() {
        ensure_finite((0..w.len()).flat_map(|v| w.row(v).1.iter().map(|&x| [x])), |_| {
            "a weight".into()
        })?;
    }
    if let Some(b) = skin.bindings() {
        ensure_finite(b.iter().map(|m| m.to_cols_array()), |j| format!("joint {j}'s binding"))?;
    }
    let n = skin.vertex_count();
    writeln!(out, "positions {n} {{")?;
    let (positions, normals) = (skin.positions(), skin.normals());
    super::write_lines(out, n, |v, buf, ryu| {
        super::push_row(buf, ryu, "  ", &positions[v].to_array());
    })?;
    writeln!(out, "}}\nnormals {n} {{")?;
    super::write_lines(out, n, |v, buf, ryu| {
        super::push_row(buf, ryu, "  ", &normals[v].to_array())
    })?;
    writeln!(out, "}}")?;
    if let Some(tc) = skin.texcoords() {
        writeln!(out, "texcoords {n} {{")?;
        super::write_lines(out, tc.len(), |v, buf, ryu| {
            super::push_row(buf, ryu, "  ", &tc[v].to_array());
        })?;
        writeln!(out, "}}")?;
    }
    if let Some(w) = skin.weights() {
        writeln!(out, "skinweights {n} {{")?;
        super::write_lines(out, w.len(), |v, line, ryu| {
            let (js, ws) = w.row(v);
            line.extend_from_slice(b"  ");
            super::push_uint(line, js.len());
            for (j, x) in js.iter().zip(ws) {
                line.push(b' ');
                super::push_uint(line, usize::from(*j));
                line.push(b' ');
                line.extend_from_slice(super::fmt_f32(ryu, *x).as_bytes());
            }
            line.push(b'\n');
        })?;
        writeln!(out, "}}")?;
    }
    for m in skin.materials() {
        writeln!(out, "material {} {{", m.name)?;
        for l in &m.lines {
            writeln!(out, "  {}", l.join(" "))?;
        }
        writeln!(out, "}}")?;
    }
    writeln!(out, "triangles {} {{", skin.triangles().len())?;
    let triangles = skin.triangles();
    super::write_lines(out, triangles.len(), |i, line, _| {
        line.push(b' ');
        for &corner in &triangles[i] {
            line.push(b' ');
            super::push_uint(line, corner as usize);
        }
        line.push(b'\n');
    })?;
    writeln!(out, "}}")?;
    if let Some(b) = skin.bindings() {
        writeln!(out, "bindings {} {{", b.len())?;
        let mut rows = RowWriter::default();
        for m in b {
            writeln!(out, "  matrix {{")?;
            for c in 0..4 {
                rows.write_row(out, "    ", &m.col(c).truncate().to_array())?;
            }
            writeln!(out, "  }}")?;
        }
        writeln!(out, "}}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_not_summing_to_one_are_normalised_with_a_warning() {
        let text = "positions 3 { 0 0 0 1 0 0 0 1 0 }\nskinweights 3 {\n 2 0 0.25 1 0.25\n 0\n 2 0 0.0 1 1\n}\n\
                    triangles 1 { 0 1 2 }";
        let p = read_skin(text.as_bytes(), None, None).unwrap();
        let w = p.value.weights().unwrap();
        assert_eq!(w.row(0), (&[0u16, 1][..], &[0.5f32, 0.5][..]));
        assert_eq!(w.row(1).0.len(), 0, "an unweighted vertex is kept");
        assert_eq!(w.row(2), (&[1u16][..], &[1.0f32][..]), "explicit zeros are dropped");
        let msgs: Vec<_> = p.warnings.iter().map(|w| (w.line, w.message.as_str())).collect();
        assert_eq!(
            msgs,
            vec![
                (
                    2,
                    "1 vertices' weights did not sum to 1 (sums from 0.5 to 0.5, first at vertex 0); normalised"
                ),
                (
                    2,
                    "1 vertices have no weights (first: vertex 1); they stay in the bind pose"
                ),
            ]
        );
    }

    #[test]
    fn missing_normals_are_computed_and_unknown_blocks_skipped() {
        let text = "colors 3 { 1 0 0 }\npositions 3 { 0 0 0 1 0 0 0 1 0 }\ntriangles 1 { 0 1 2 }\n";
        let p = read_skin(text.as_bytes(), None, None).unwrap();
        assert!(p.value.normals_computed());
        assert_eq!(p.value.normals(), &[Vec3::Z; 3]);
        assert_eq!(p.warnings[0].message, "unknown block `colors` skipped");
    }
}
