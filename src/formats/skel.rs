//! `.skel`: the CSE169 skeleton format.
//!
//! ```text
//! balljoint NAME {
//!     offset x y z          pivot in the parent's space
//!     boxmin x y z          box corners in the joint's space
//!     boxmax x y z
//!     rotxlimit lo hi       (also rotylimit, rotzlimit), radians
//!     pose x y z            rotations to show, radians, clamped to the limits when posed
//!     balljoint CHILD { ... }
//! }
//! ```
//!
//! Tolerated as the course loaders tolerate them: tabs, CRLF, no final newline, a name written against `{`,
//! an empty name (`balljoint {`), repeated names, boxmax below boxmin (kept as written), no boxes at all, and an
//! unknown keyword, whose line is skipped with a warning (spider.skel's `pos`). Pose values outside the limits
//! are kept as written and clamped when posed, with a warning.

use std::io::{self, Read, Write};

use glam::Vec3;

use super::lexer::{Kind, Lexer};
use super::{ParseError, Parsed, Warning, fmt_f32};
use crate::model::{Joint, Limit, Skeleton};

/// Deepest nesting accepted; deeper files are rejected rather than risking the stack of a recursive reader.
const MAX_DEPTH: usize = 1000;

/// Read a skeleton. `len` is the input's size when known.
pub fn read_skel(src: impl Read, len: Option<u64>) -> Result<Parsed<Skeleton>, ParseError> {
    let mut lx = Lexer::new(src, len);
    let mut joints = Vec::new();
    let mut warnings = Vec::new();
    let t = lx.next_token()?;
    if t.kind != Kind::Word || lx.text(&t) != b"balljoint" {
        return Err(lx.error_at(&t, "`balljoint`"));
    }
    read_joint(&mut lx, &mut joints, &mut warnings, None, 0)?;
    let t = lx.next_token()?;
    if t.kind != Kind::End {
        return Err(lx.error_at(&t, "the end of the file after the root joint's `}`"));
    }
    let first_line = 1;
    let skel = Skeleton::new(joints).map_err(|e| ParseError::new(first_line, 1, "a valid skeleton", e.to_string()))?;
    Ok(Parsed { value: skel, warnings })
}

fn read_vec3(lx: &mut Lexer<impl Read>, key: &str) -> Result<Vec3, ParseError> {
    let what = format!("a number after `{key}`");
    Ok(Vec3::new(lx.f32(&what)?, lx.f32(&what)?, lx.f32(&what)?))
}

/// Read one `balljoint` after its keyword: name, `{`, fields and children, `}`.
fn read_joint(
    lx: &mut Lexer<impl Read>,
    joints: &mut Vec<Joint>,
    warnings: &mut Vec<Warning>,
    parent: Option<usize>,
    depth: usize,
) -> Result<(), ParseError> {
    let t = lx.next_token()?;
    let name = match t.kind {
        Kind::Word => {
            let name = String::from_utf8_lossy(lx.text(&t)).into_owned();
            lx.expect_open("after the joint's name")?;
            name
        }
        Kind::Open => String::new(),
        _ => return Err(lx.error_at(&t, "a joint name or `{` after `balljoint`")),
    };
    if depth > MAX_DEPTH {
        return Err(ParseError::new(
            t.line,
            t.col,
            format!("joints nested at most {MAX_DEPTH} deep"),
            "deeper nesting",
        ));
    }
    let index = joints.len();
    joints.push(Joint::new(name, parent, Vec3::ZERO));
    let mut pose_at: Option<(u32, u32)> = None;
    loop {
        let t = lx.next_token()?;
        match t.kind {
            Kind::Close => break,
            Kind::End => return Err(lx.error_at(&t, format!("`}}` closing joint `{}`", joints[index].name))),
            Kind::Open => return Err(lx.error_at(&t, "a joint field such as `offset` or `balljoint`")),
            Kind::Word => {}
        }
        let key = lx.text(&t).to_vec();
        match key.as_slice() {
            b"offset" => joints[index].offset = read_vec3(lx, "offset")?,
            b"boxmin" => joints[index].box_min = Some(read_vec3(lx, "boxmin")?),
            b"boxmax" => joints[index].box_max = Some(read_vec3(lx, "boxmax")?),
            b"pose" => {
                joints[index].pose = Some(read_vec3(lx, "pose")?);
                pose_at = Some((t.line, t.col));
            }
            b"rotxlimit" | b"rotylimit" | b"rotzlimit" => {
                let axis = (key[3] - b'x') as usize;
                let what = format!("a number after `{}`", String::from_utf8_lossy(&key));
                let lo = lx.f32(&what)?;
                let hi = lx.f32(&what)?;
                if lo > hi {
                    warnings.push(Warning {
                        line: t.line,
                        col: t.col,
                        message: format!("limit {lo} is above {hi}; every value clamps to {hi}"),
                    });
                }
                joints[index].limits[axis] = Some(Limit { lo, hi });
            }
            b"balljoint" => read_joint(lx, joints, warnings, Some(index), depth + 1)?,
            _ => {
                warnings.push(Warning {
                    line: t.line,
                    col: t.col,
                    message: format!(
                        "unknown keyword `{}`; its line is skipped",
                        String::from_utf8_lossy(&key)
                    ),
                });
                lx.skip_line(t.line)?;
            }
        }
    }
    if let (Some(p), Some((line, col))) = (joints[index].pose, pose_at) {
        let j = &joints[index];
        let clamped = j.clamp3(p);
        if clamped != p {
            warnings.push(Warning {
                line,
                col,
                message: format!(
                    "pose {} {} {} of joint `{}` is outside its limits; it poses at {} {} {}",
                    p.x, p.y, p.z, j.name, clamped.x, clamped.y, clamped.z
                ),
            });
        }
    }
    Ok(())
}

/// Write a skeleton in the course layout (tab indents, LF). Only the fields the model holds are written.
pub fn write_skel(out: &mut dyn Write, skel: &Skeleton) -> io::Result<()> {
    let mut buf = ryu::Buffer::new();
    let mut vec3 = |out: &mut dyn Write, indent: &str, key: &str, v: Vec3| -> io::Result<()> {
        write!(out, "{indent}{key}")?;
        for c in v.to_array() {
            write!(out, " {}", fmt_f32(&mut buf, c))?;
        }
        writeln!(out)
    };
    // Depth-first order means a joint's subtree is the contiguous run after it; close braces as depth falls.
    let depths = skel.depths();
    for (i, j) in skel.joints().iter().enumerate() {
        let indent = "\t".repeat(depths[i]);
        let inner = format!("{indent}\t");
        if j.name.is_empty() {
            writeln!(out, "{indent}balljoint {{")?;
        } else {
            writeln!(out, "{indent}balljoint {} {{", j.name)?;
        }
        vec3(out, &inner, "offset", j.offset)?;
        if let Some(b) = j.box_min {
            vec3(out, &inner, "boxmin", b)?;
        }
        if let Some(b) = j.box_max {
            vec3(out, &inner, "boxmax", b)?;
        }
        for (axis, l) in j.limits.iter().enumerate() {
            if let Some(l) = l {
                let mut b = ryu::Buffer::new();
                let lo = fmt_f32(&mut b, l.lo).to_string();
                writeln!(
                    out,
                    "{inner}rot{}limit {lo} {}",
                    ["x", "y", "z"][axis],
                    fmt_f32(&mut b, l.hi)
                )?;
            }
        }
        if let Some(p) = j.pose {
            vec3(out, &inner, "pose", p)?;
        }
        let next_depth = depths.get(i + 1).copied().unwrap_or(0);
        for d in (next_depth..=depths[i]).rev() {
            writeln!(out, "{}}}", "\t".repeat(d))?;
        }
    }
    Ok(())
}
