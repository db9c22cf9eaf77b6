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
use super::{ParseError, Parsed, Warning, ensure_finite, fmt_f32};
use crate::model::skeleton::MAX_DEPTH;
use crate::model::{Joint, Limit, Skeleton};

/// Read a skeleton. `len` is the input's size when known.
///
/// The reader is iterative (an explicit stack of open joints), so nesting depth costs heap, never call stack.
pub fn read_skel(src: impl Read, len: Option<u64>) -> Result<Parsed<Skeleton>, ParseError> {
    let mut lx = Lexer::new(src, len);
    let mut joints: Vec<Joint> = Vec::new();
    let mut warnings = Vec::new();
    // Where each joint's name is, for a warning when the names rule changes it.
    let mut named_at: Vec<(u32, u32)> = Vec::new();
    // Open joints, innermost last, with where each one's `pose` line was.
    let mut open: Vec<(usize, Option<(u32, u32)>)> = Vec::new();
    let t = lx.next_token()?;
    if t.kind != Kind::Word || lx.text(&t) != b"balljoint" {
        return Err(lx.error_at(&t, "`balljoint`"));
    }
    open.push((begin_joint(&mut lx, &mut joints, &mut named_at, None)?, None));
    while let Some(&(index, pose_at)) = open.last() {
        let t = lx.next_token()?;
        match t.kind {
            Kind::Close => {
                check_pose(&joints[index], pose_at, &mut warnings);
                open.pop();
                continue;
            }
            Kind::End => return Err(lx.error_at(&t, format!("`}}` closing joint `{}`", joints[index].name))),
            Kind::Open => return Err(lx.error_at(&t, "a joint field such as `offset` or `balljoint`")),
            Kind::Word => {}
        }
        let key = lx.text(&t).to_vec();
        match key.as_slice() {
            b"offset" => joints[index].offset = read_vec3(&mut lx, "offset")?,
            b"boxmin" => joints[index].box_min = Some(read_vec3(&mut lx, "boxmin")?),
            b"boxmax" => joints[index].box_max = Some(read_vec3(&mut lx, "boxmax")?),
            b"pose" => {
                joints[index].pose = Some(read_vec3(&mut lx, "pose")?);
                if let Some(top) = open.last_mut() {
                    top.1 = Some((t.line, t.col));
                }
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
            b"balljoint" => {
                if open.len() > MAX_DEPTH {
                    return Err(ParseError::new(
                        t.line,
                        t.col,
                        format!("at most {MAX_DEPTH} levels of nested joints"),
                        "a joint nested one level deeper",
                    ));
                }
                open.push((begin_joint(&mut lx, &mut joints, &mut named_at, Some(index))?, None));
            }
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
    let t = lx.next_token()?;
    if t.kind != Kind::End {
        return Err(lx.error_at(&t, "the end of the file after the root joint's `}`"));
    }
    for r in crate::model::names::sanitize_names(&mut joints, |j| &mut j.name) {
        let (line, col) = named_at.get(r.index).copied().unwrap_or((1, 1));
        warnings.push(Warning {
            line,
            col,
            message: format!(
                "joint name `{}` is not one every writer keeps; it is read as `{}`",
                super::printable(&r.from),
                r.to
            ),
        });
    }
    let skel = Skeleton::new(joints).map_err(|e| ParseError::new(1, 1, "a valid skeleton", e.to_string()))?;
    Ok(Parsed { value: skel, warnings })
}

fn read_vec3(lx: &mut Lexer<impl Read>, key: &str) -> Result<Vec3, ParseError> {
    let what = format!("a number after `{key}`");
    Ok(Vec3::new(lx.f32(&what)?, lx.f32(&what)?, lx.f32(&what)?))
}

/// After `balljoint`: the name (possibly empty) and `{`. Adds the joint and returns its index.
fn begin_joint(
    lx: &mut Lexer<impl Read>,
    joints: &mut Vec<Joint>,
    named_at: &mut Vec<(u32, u32)>,
    parent: Option<usize>,
) -> Result<usize, ParseError> {
    let t = lx.next_token()?;
    named_at.push((t.line, t.col));
    let name = match t.kind {
        Kind::Word => {
            let name = String::from_utf8_lossy(lx.text(&t)).into_owned();
            lx.expect_open("after the joint's name")?;
            name
        }
        Kind::Open => String::new(),
        _ => return Err(lx.error_at(&t, "a joint name or `{` after `balljoint`")),
    };
    if joints.len() >= u16::MAX as usize {
        return Err(ParseError::new(t.line, t.col, "at most 65535 joints", "one more"));
    }
    joints.push(Joint::new(name, parent, Vec3::ZERO));
    Ok(joints.len() - 1)
}

/// Warn when a joint's `pose` line lies outside its limits (it is clamped when posed).
fn check_pose(j: &Joint, pose_at: Option<(u32, u32)>, warnings: &mut Vec<Warning>) {
    if let (Some(p), Some((line, col))) = (j.pose, pose_at) {
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
}

/// How many tabs indent the deepest lines a writer emits; deeper joints line up at this indent, so the file's
/// size grows with the joint count, not with the square of the depth.
pub const MAX_INDENT: usize = 32;

/// Write a skeleton in the course layout (tab indents, LF). Only the fields the model holds are written.
pub fn write_skel(out: &mut dyn Write, skel: &Skeleton) -> io::Result<()> {
    for (i, j) in skel.joints().iter().enumerate() {
        let limits = j.limits.iter().flatten().map(|l| [l.lo, l.hi, 0.0]);
        let fields = [
            j.offset,
            j.box_min.unwrap_or_default(),
            j.box_max.unwrap_or_default(),
            j.pose.unwrap_or_default(),
        ];
        ensure_finite(fields.map(|v| v.to_array()).into_iter().chain(limits), |_| {
            format!("joint {i} (`{}`): an offset, box, pose or limit", j.name)
        })?;
    }
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
        let indent = "\t".repeat(depths[i].min(MAX_INDENT));
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
            writeln!(out, "{}}}", "\t".repeat(d.min(MAX_INDENT)))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerates_what_real_files_do() {
        // CRLF, tabs, a name against `{`, an empty name, a repeated name, swapped box corners, no final newline.
        let text = "balljoint hip{\r\n\tboxmin 1 1 1\r\n\tboxmax -1 -1 -1\r\n\tballjoint {\r\n\t}\r\n\tballjoint hip {\r\n\t}\r\n}";
        let p = read_skel(text.as_bytes(), None).unwrap();
        let s = p.value;
        assert_eq!(s.len(), 3);
        assert_eq!(s.joints()[0].name, "hip");
        assert_eq!(s.joints()[1].name, "");
        assert_eq!(s.find("hip"), vec![0, 2]);
        assert_eq!(s.joints()[0].box_min, Some(Vec3::ONE), "kept as written");
        assert_eq!(s.joints()[0].bounds(), (Vec3::NEG_ONE, Vec3::ONE));
        assert!(p.warnings.is_empty());
        let mut out = Vec::new();
        write_skel(&mut out, &s).unwrap();
        assert_eq!(read_skel(&out[..], None).unwrap().value, s);
    }

    #[test]
    fn reversed_limits_warn_and_clamp_to_hi() {
        let p = read_skel("balljoint a {\n rotxlimit 1 -1\n pose 0.5 0 0\n}".as_bytes(), None).unwrap();
        assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
        assert_eq!(p.value.joints()[0].clamp(0, 0.5), -1.0);
    }

    #[test]
    fn deep_nesting_reads_without_recursion_up_to_the_limit() {
        let depth = MAX_DEPTH + 1; // the root and MAX_DEPTH levels below it
        let text = format!("{}{}", "balljoint a {\n".repeat(depth), "}\n".repeat(depth));
        let s = read_skel(text.as_bytes(), None).unwrap().value;
        assert_eq!(s.len(), depth);
        assert_eq!(s.depths()[depth - 1], MAX_DEPTH);
        let e = read_skel("balljoint a {\n".repeat(depth).as_bytes(), None).unwrap_err();
        assert_eq!(
            (e.line, e.expected.as_str()),
            (depth as u32 + 1, "`}` closing joint `a`")
        );
        // Written back, the indent stops at MAX_INDENT tabs: the size is linear in the depth.
        let mut out = Vec::new();
        write_skel(&mut out, &s).unwrap();
        assert!(out.len() < depth * (3 * MAX_INDENT + 60), "{} bytes", out.len());
        assert_eq!(read_skel(&out[..], None).unwrap().value, s);
    }

    /// A name with a control character or Unicode whitespace is one word to the tokenizer but not a name every
    /// writer keeps: it is read under the names rule, with a warning at the name.
    #[test]
    fn a_name_outside_the_names_rule_is_renamed_with_a_warning() {
        let text = "balljoint a\u{1b}b {\n balljoint a_b {\n }\n balljoint c\u{a0}d {\n }\n}\n";
        let p = read_skel(text.as_bytes(), None).unwrap();
        let names: Vec<&str> = p.value.joints().iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["a_b.001", "a_b", "c_d"]);
        assert_eq!(p.warnings.len(), 2);
        assert_eq!((p.warnings[0].line, p.warnings[0].col), (1, 11));
        assert_eq!(
            p.warnings[0].message,
            "joint name `a\\u{1b}b` is not one every writer keeps; it is read as `a_b.001`"
        );
    }

    /// A 42 KB file nesting 3,000 joints overflowed the editor's stack; 65,535 made `info` and `convert` blow up.
    #[test]
    fn nesting_past_the_depth_limit_is_an_error_at_the_joint() {
        let depth = MAX_DEPTH + 2;
        let text = format!("{}{}", "balljoint a {\n".repeat(depth), "}\n".repeat(depth));
        let e = read_skel(text.as_bytes(), None).unwrap_err();
        assert_eq!((e.line, e.col), (MAX_DEPTH as u32 + 2, 1));
        assert_eq!(e.expected, "at most 1000 levels of nested joints");
    }
}
