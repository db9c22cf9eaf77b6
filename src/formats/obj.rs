//! Wavefront OBJ: output of a (deformed) mesh (`v`, `vn`, optional `vt`, and `f` with 1-based indices, so that
//! any viewer can check a pose), and input of a mesh to bind (a bare skin: positions, triangles, normals and
//! texture coordinates where every face corner has them).
//!
//! Reading: `v x y z` (a fourth value or vertex colours are ignored), `vn`, `vt u [v]`, and `f` with `i`, `i/t`,
//! `i//n` or `i/t/n` corners, 1-based or negative (relative to the end) indices; polygons are split into a fan
//! of triangles. A skin vertex is one distinct (position, texcoord, normal) triple, so seams split vertices as
//! every renderer does. `o`, `g`, `s`, `usemtl`, `mtllib` are accepted and ignored; other statements (`l`, `p`,
//! curves) are skipped with one warning per kind (with its count; past 16 kinds, one for the rest). Positions that no face uses are dropped (with a warning) unless
//! the file has no faces. Errors name the line and column (1-based) and what was expected. Written by hand rather
//! than with `tobj` so that errors carry a place, as every other reader's do.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};

use glam::{Vec2, Vec3};

use super::{ParseError, Parsed, RowWriter, Warning, ensure_finite};
use crate::model::Skin;

/// Read an OBJ file as a bare skin.
pub fn read_obj(reader: &mut dyn io::Read, _len: Option<u64>) -> Result<Parsed<Skin>, ParseError> {
    let mut positions: Vec<Vec3> = Vec::new();
    let mut normals: Vec<Vec3> = Vec::new();
    let mut texcoords: Vec<Vec2> = Vec::new();
    // Face corners as (position, texcoord, normal) 0-based indices.
    let mut corners: Vec<[Option<u32>; 3]> = Vec::new();
    let mut warnings: Vec<Warning> = Vec::new();
    let mut skipped = Skipped::default();
    let reader = io::BufReader::new(reader);
    for (n, line) in reader.split(b'\n').enumerate() {
        let line_no = n as u32 + 1;
        let bytes = line.map_err(|e| ParseError::new(line_no, 1, "readable text", e.to_string()))?;
        let text = String::from_utf8_lossy(&bytes);
        let text = text.split('#').next().unwrap_or("");
        let mut words = Words::new(text, line_no);
        let Some((keyword, kcol)) = words.next() else { continue };
        match keyword {
            "v" => positions.push(Vec3::new(words.number()?, words.number()?, words.number()?)),
            "vn" => normals.push(Vec3::new(words.number()?, words.number()?, words.number()?)),
            "vt" => {
                let u = words.number()?;
                let v = words.optional_number()?.unwrap_or(0.0);
                texcoords.push(Vec2::new(u, v));
            }
            "f" => {
                let mut face: Vec<[Option<u32>; 3]> = Vec::new();
                while let Some((word, col)) = words.next() {
                    face.push(corner(
                        word,
                        line_no,
                        col,
                        [positions.len(), texcoords.len(), normals.len()],
                    )?);
                }
                if face.len() < 3 {
                    return Err(ParseError::new(
                        line_no,
                        kcol,
                        "a face with at least 3 corners",
                        format!("{} corners", face.len()),
                    ));
                }
                for k in 1..face.len() - 1 {
                    corners.extend([face[0], face[k], face[k + 1]]);
                }
            }
            "o" | "g" | "s" | "usemtl" | "mtllib" => {}
            other => skipped.add(other, line_no, kcol),
        }
    }
    warnings.extend(skipped.warnings());
    if corners.is_empty() {
        let skin =
            Skin::new(positions, None, Vec::new()).map_err(|e| ParseError::new(0, 0, "a mesh", e.to_string()))?;
        return Ok(Parsed { value: skin, warnings });
    }
    let with_normals = corners.iter().all(|c| c[2].is_some());
    let with_texcoords = corners.iter().all(|c| c[1].is_some());
    let key_of = |c: &[Option<u32>; 3]| [c[0], c[1].filter(|_| with_texcoords), c[2].filter(|_| with_normals)];
    // When every position is used and always with the same texcoord and normal (files written per vertex, as
    // ours are), vertex i is position i: the order survives a round trip. Otherwise vertices are numbered in
    // the order faces first use them.
    let mut first: Vec<Option<[Option<u32>; 3]>> = vec![None; positions.len()];
    let mut one_to_one = true;
    for c in &corners {
        let k = key_of(c);
        let p = c[0].unwrap_or(0) as usize;
        match first[p] {
            None => first[p] = Some(k),
            Some(f) if f == k => {}
            Some(_) => one_to_one = false,
        }
    }
    one_to_one &= first.iter().all(Option::is_some);
    let mut index: HashMap<[Option<u32>; 3], u32> = HashMap::new();
    if one_to_one {
        for (p, k) in first.iter().enumerate() {
            if let Some(k) = k {
                index.insert(*k, p as u32);
            }
        }
    }
    let (mut out_p, mut out_n, mut out_t) = (Vec::new(), Vec::new(), Vec::new());
    let mut triangles = Vec::with_capacity(corners.len() / 3);
    let mut used = vec![false; positions.len()];
    if one_to_one {
        for k in first.iter().flatten() {
            let p = k[0].unwrap_or(0) as usize;
            used[p] = true;
            out_p.push(positions[p]);
            if let Some(n) = k[2] {
                out_n.push(normals[n as usize]);
            }
            if let Some(tc) = k[1] {
                out_t.push(texcoords[tc as usize]);
            }
        }
    }
    for tri in corners.chunks_exact(3) {
        let mut t = [0u32; 3];
        for (k, c) in tri.iter().enumerate() {
            let key = key_of(c);
            t[k] = *index.entry(key).or_insert_with(|| {
                let p = c[0].unwrap_or(0) as usize;
                used[p] = true;
                out_p.push(positions[p]);
                if let Some(n) = key[2] {
                    out_n.push(normals[n as usize]);
                }
                if let Some(tc) = key[1] {
                    out_t.push(texcoords[tc as usize]);
                }
                (out_p.len() - 1) as u32
            });
        }
        triangles.push(t);
    }
    let unused = used.iter().filter(|u| !**u).count();
    if unused > 0 {
        warnings.push(Warning {
            line: 0,
            col: 0,
            message: format!("{unused} positions that no face uses were dropped"),
        });
    }
    let mut skin = Skin::new(out_p, with_normals.then_some(out_n), triangles)
        .map_err(|e| ParseError::new(0, 0, "a mesh", e.to_string()))?;
    if with_texcoords {
        skin.set_texcoords(Some(out_t))
            .map_err(|e| ParseError::new(0, 0, "texture coordinates", e.to_string()))?;
    }
    Ok(Parsed { value: skin, warnings })
}

/// The most kinds of skipped statement named one by one; further kinds are counted together.
const NAMED_KINDS: usize = 16;

/// Statements that are not part of a skin, counted by keyword (a map, so that 200,000 kinds cost linear time,
/// not a search of a list each): one warning per kind at its first line, with the count.
#[derive(Default)]
struct Skipped {
    /// Keyword to its index in `kinds`.
    index: HashMap<String, usize>,
    /// (keyword, first line, first column, lines), in order of first appearance.
    kinds: Vec<(String, u32, u32, usize)>,
    /// Lines of further kinds past [`NAMED_KINDS`], and the first of them.
    others: usize,
    first_other: (u32, u32),
}

impl Skipped {
    fn add(&mut self, keyword: &str, line: u32, col: u32) {
        if let Some(&i) = self.index.get(keyword) {
            if let Some(k) = self.kinds.get_mut(i) {
                k.3 += 1;
            }
        } else if self.kinds.len() < NAMED_KINDS {
            self.index.insert(keyword.to_string(), self.kinds.len());
            self.kinds.push((keyword.to_string(), line, col, 1));
        } else {
            if self.others == 0 {
                self.first_other = (line, col);
            }
            self.others += 1;
        }
    }

    fn warnings(self) -> impl Iterator<Item = Warning> {
        let named = self.kinds.into_iter().map(|(keyword, line, col, count)| Warning {
            line,
            col,
            message: if count == 1 {
                format!("`{keyword}` statements are not part of a skin; skipped")
            } else {
                format!("`{keyword}` statements are not part of a skin; skipped ({count} lines)")
            },
        });
        let (line, col) = self.first_other;
        let others = (self.others > 0).then(|| Warning {
            line,
            col,
            message: format!(
                "{} more lines of other statements that are not part of a skin skipped (the first {NAMED_KINDS} \
                 kinds are named)",
                self.others
            ),
        });
        named.chain(others)
    }
}

/// One face corner `i`, `i/t`, `i//n`, `i/t/n` as 0-based indices into lists of `counts` entries.
fn corner(word: &str, line: u32, col: u32, counts: [usize; 3]) -> Result<[Option<u32>; 3], ParseError> {
    let mut out = [None; 3];
    let parts: Vec<&str> = word.split('/').collect();
    if parts.len() > 3 || parts[0].is_empty() {
        return Err(ParseError::new(
            line,
            col,
            "a face corner v, v/t, v//n or v/t/n",
            format!("`{word}`"),
        ));
    }
    const WHAT: [&str; 3] = ["vertex", "texture coordinate", "normal"];
    for (k, part) in parts.iter().enumerate() {
        if part.is_empty() {
            continue;
        }
        let n = counts[k] as i64;
        let bad = || {
            ParseError::new(
                line,
                col,
                format!("a {} index from 1 to {n} (or -1 to -{n})", WHAT[k]),
                if *part == word {
                    format!("`{part}`")
                } else {
                    format!("`{part}` in `{word}`")
                },
            )
        };
        let i: i64 = part.parse().map_err(|_| bad())?;
        let zero_based = if i > 0 { i - 1 } else { n + i };
        if i == 0 || zero_based < 0 || zero_based >= n {
            return Err(bad());
        }
        out[k] = Some(zero_based as u32);
    }
    Ok(out)
}

/// Whitespace-separated words of one line with their 1-based columns. Columns are counted in characters as the
/// words go by, so a line of a million words costs linear time.
struct Words<'a> {
    text: &'a str,
    pos: usize,
    /// Characters in `text[..pos]`.
    col: u32,
    line: u32,
}

impl<'a> Words<'a> {
    fn new(text: &'a str, line: u32) -> Self {
        Self {
            text,
            pos: 0,
            col: 0,
            line,
        }
    }

    fn next(&mut self) -> Option<(&'a str, u32)> {
        let rest = &self.text[self.pos..];
        let trimmed = rest.trim_start();
        self.col += rest[..rest.len() - trimmed.len()].chars().count() as u32;
        let start = self.pos + rest.len() - trimmed.len();
        if trimmed.is_empty() {
            self.pos = self.text.len();
            return None;
        }
        let len = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
        let word = &trimmed[..len];
        let col = self.col + 1;
        self.pos = start + len;
        self.col += word.chars().count() as u32;
        Some((word, col))
    }

    fn number(&mut self) -> Result<f32, ParseError> {
        match self.next() {
            // At the end, `col` counts every character of the line.
            None => Err(ParseError::new(
                self.line,
                self.col + 1,
                "a number",
                "the end of the line",
            )),
            Some((w, col)) => parse_number(w, self.line, col),
        }
    }

    fn optional_number(&mut self) -> Result<Option<f32>, ParseError> {
        match self.next() {
            None => Ok(None),
            Some((w, col)) => parse_number(w, self.line, col).map(Some),
        }
    }
}

fn parse_number(w: &str, line: u32, col: u32) -> Result<f32, ParseError> {
    w.parse::<f32>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| ParseError::new(line, col, "a number", format!("`{w}`")))
}

pub fn write_obj(
    out: &mut dyn Write,
    positions: &[Vec3],
    normals: &[Vec3],
    texcoords: Option<&[Vec2]>,
    triangles: &[[u32; 3]],
) -> io::Result<()> {
    ensure_finite(positions.iter().map(|p| p.to_array()), |v| {
        format!("vertex {v}'s position")
    })?;
    ensure_finite(normals.iter().map(|p| p.to_array()), |v| format!("vertex {v}'s normal"))?;
    if let Some(tc) = texcoords {
        ensure_finite(tc.iter().map(|t| t.to_array()), |v| {
            format!("vertex {v}'s texture coordinate")
        })?;
    }
    writeln!(
        out,
        "# skinbind: {} vertices, {} triangles",
        positions.len(),
        triangles.len()
    )?;
    let mut rows = RowWriter::default();
    for p in positions {
        rows.write_row(out, "v ", &p.to_array())?;
    }
    for n in normals {
        rows.write_row(out, "vn ", &n.to_array())?;
    }
    if let Some(tc) = texcoords {
        for t in tc {
            rows.write_row(out, "vt ", &t.to_array())?;
        }
    }
    for t in triangles {
        let [a, b, c] = t.map(|i| i + 1);
        if texcoords.is_some() {
            writeln!(out, "f {a}/{a}/{a} {b}/{b}/{b} {c}/{c}/{c}")?;
        } else {
            writeln!(out, "f {a}//{a} {b}//{b} {c}//{c}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Parsed<Skin>, ParseError> {
        read_obj(&mut text.as_bytes(), None)
    }

    #[test]
    fn quads_split_into_triangles_and_seams_split_vertices() {
        let text = "# a unit square, two texture islands\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n\
                    vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvt 0.5 0.5\nvn 0 0 1\n\
                    f 1/1/1 2/2/1 3/3/1 4/4/1\nf 1/5/1 3/3/1 4/4/1\n";
        let p = read(text).unwrap();
        let k = p.value;
        // The quad fans to (1 2 3) (1 3 4); the last face reuses 3 and 4 but 1 with another texcoord.
        assert_eq!(k.triangles(), &[[0, 1, 2], [0, 2, 3], [4, 2, 3]]);
        assert_eq!(k.vertex_count(), 5);
        assert_eq!(k.positions()[4], Vec3::ZERO);
        assert_eq!(k.texcoords().unwrap()[4], Vec2::new(0.5, 0.5));
        assert!(!k.normals_computed());
        assert!(p.warnings.is_empty());
    }

    #[test]
    fn negative_indices_count_from_the_end_and_unused_positions_are_dropped() {
        let p = read("v 9 9 9\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\nl 1 2\n").unwrap();
        assert_eq!(p.value.positions(), &[Vec3::ZERO, Vec3::X, Vec3::Y]);
        assert!(p.value.normals_computed());
        let msgs: Vec<&str> = p.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(
            msgs,
            [
                "`l` statements are not part of a skin; skipped",
                "1 positions that no face uses were dropped"
            ]
        );
        assert_eq!((p.warnings[0].line, p.warnings[0].col), (6, 1));
    }

    #[test]
    fn skipped_statements_are_counted_per_kind_and_many_kinds_summed() {
        let mut text = String::from("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nl 1 2\nl 2 3\n");
        for i in 0..40 {
            text += &format!("k{i} 1\n");
        }
        let p = read(&text).unwrap();
        let msgs: Vec<&str> = p.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(msgs.len(), NAMED_KINDS + 1);
        assert_eq!(msgs[0], "`l` statements are not part of a skin; skipped (2 lines)");
        assert_eq!(msgs[1], "`k0` statements are not part of a skin; skipped");
        assert_eq!(
            msgs[NAMED_KINDS],
            "25 more lines of other statements that are not part of a skin skipped (the first 16 kinds are named)"
        );
        let at = |i: usize| (p.warnings[i].line, p.warnings[i].col);
        assert_eq!((at(0), at(1), at(NAMED_KINDS)), ((5, 1), (7, 1), (22, 1)));
    }

    #[test]
    fn errors_name_line_column_expected_and_found() {
        let e = read("v 0 0 0\nv 1 x 0\n").unwrap_err();
        assert_eq!(e.to_string(), "2:5: expected a number, found `x`");
        let e = read("v 0 0\n").unwrap_err();
        assert_eq!(e.to_string(), "1:6: expected a number, found the end of the line");
        let e = read("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "4:7: expected a vertex index from 1 to 3 (or -1 to -3), found `4`"
        );
        let e = read("v 0 0 0\nf 1 1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "2:1: expected a face with at least 3 corners, found 2 corners"
        );
        let e = read("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/1 2 3\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "4:3: expected a texture coordinate index from 1 to 0 (or -1 to -0), found `1` in `1/1`"
        );
    }
}
