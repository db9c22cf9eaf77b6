//! `.morph`: CSE169 morph targets, sparse: `positions N { index x y z }` and `normals N { index x y z }`.
//! Either block may be missing; vertex indices are checked against the skin when the morph is applied.

use std::io::{self, Read, Write};

use glam::Vec3;

use super::lexer::{Kind, Lexer};
use super::{ParseError, Parsed, ensure_finite, fmt_f32};
use crate::model::Morph;

pub fn read_morph(src: impl Read, len: Option<u64>) -> Result<Parsed<Morph>, ParseError> {
    let mut lx = Lexer::new(src, len);
    let mut morph = Morph::default();
    let mut seen = [false; 2];
    loop {
        let t = lx.next_token()?;
        let slot = match (t.kind, lx.text(&t)) {
            (Kind::End, _) => break,
            (Kind::Word, b"positions") => 0,
            (Kind::Word, b"normals") => 1,
            _ => return Err(lx.error_at(&t, "`positions` or `normals`")),
        };
        let name = ["positions", "normals"][slot];
        if std::mem::replace(&mut seen[slot], true) {
            return Err(ParseError::new(
                t.line,
                t.col,
                "one block of each kind",
                format!("a second `{name}` block"),
            ));
        }
        let n = lx.u32(&format!("an entry count after `{name}`"))? as usize;
        lx.expect_open(&format!("after `{name} {n}`"))?;
        let list = if slot == 0 {
            &mut morph.positions
        } else {
            &mut morph.normals
        };
        list.reserve(lx.capacity_for(n, 8));
        for i in 0..n {
            let t = lx.peek()?;
            if t.kind == Kind::Close {
                return Err(ParseError::new(
                    t.line,
                    t.col,
                    format!("{n} entries in `{name}` (the declared count)"),
                    format!("`}}` after {i}"),
                ));
            }
            let index = lx.u32("a vertex index")?;
            let what = "a finite number (index and 3 per entry)";
            let v = Vec3::new(lx.f32(what)?, lx.f32(what)?, lx.f32(what)?);
            list.push((index, v));
        }
        lx.expect_close(&format!("after {n} entries in `{name}`"))?;
    }
    Ok(Parsed {
        value: morph,
        warnings: Vec::new(),
    })
}

/// Write a morph target. Refuses (before writing anything) a non-finite delta, naming it.
pub fn write_morph(out: &mut dyn Write, morph: &Morph) -> io::Result<()> {
    for (name, list) in [("position", &morph.positions), ("normal", &morph.normals)] {
        ensure_finite(list.iter().map(|(_, v)| v.to_array()), |k| format!("{name} delta {k}"))?;
    }
    let mut b = ryu::Buffer::new();
    for (name, list) in [("positions", &morph.positions), ("normals", &morph.normals)] {
        writeln!(out, "{name} {} {{", list.len())?;
        for (i, v) in list {
            write!(out, "  {i}")?;
            for c in v.to_array() {
                write!(out, " {}", fmt_f32(&mut b, c))?;
            }
            writeln!(out)?;
        }
        writeln!(out, "}}")?;
    }
    Ok(())
}
