//! Writing a skeleton over the `.skel` file it came from, keeping that file's layout: every line whose value did
//! not change is kept as it was (indents, spacing, number style, field order, line endings), a changed line keeps
//! its indent and columns with its numbers written in the line's own style (as many decimals, right edges where
//! they were), a field the joint gained is added after its last field, and one it lost is removed. So a small
//! change is a small diff, as a person editing the file by hand would make it.
//!
//! Only files of the plain shape are kept: one statement a line (`balljoint NAME {`, `KEY numbers`, `}`, blank
//! lines), each field at most once a joint, and the same joints in the same tree as the skeleton written. Anything
//! else (a renamed or added joint, two statements on a line, an unknown keyword) gives `None`, and the caller
//! writes the whole file in the course layout ([`super::skel::write_skel`]).

use glam::Vec3;

use super::fmt_f32;
use super::skel::read_skel;
use crate::model::{Joint, Skeleton};

/// The fields a joint may have, in the order a new one is written.
const KEYS: [&str; 7] = [
    "offset",
    "boxmin",
    "boxmax",
    "rotxlimit",
    "rotylimit",
    "rotzlimit",
    "pose",
];

/// The numbers of field `key` of `joint`, or `None` when the joint does not have it.
fn field(joint: &Joint, key: &str) -> Option<Vec<f32>> {
    let v3 = |v: Vec3| v.to_array().to_vec();
    match key {
        "offset" => Some(v3(joint.offset)),
        "boxmin" => joint.box_min.map(v3),
        "boxmax" => joint.box_max.map(v3),
        "pose" => joint.pose.map(v3),
        _ => {
            let axis = KEYS.iter().position(|k| *k == key)?.checked_sub(3)?;
            joint.limits.get(axis).copied().flatten().map(|l| vec![l.lo, l.hi])
        }
    }
}

/// A number in the style of `old` (a token of the file): as many decimals when that reads back exactly, else the
/// shortest text that does.
fn styled(old: &str, v: f32) -> String {
    let mut buf = ryu::Buffer::new();
    let shortest = fmt_f32(&mut buf, v).to_owned();
    let Some((_, decimals)) = old.split_once('.') else {
        return shortest;
    };
    if decimals.is_empty() || !decimals.bytes().all(|b| b.is_ascii_digit()) {
        return shortest;
    }
    let fixed = format!("{v:.*}", decimals.len());
    if fixed.parse::<f32>().ok() == Some(v) {
        fixed
    } else {
        shortest
    }
}

/// `line` (indent, key, numbers) with its numbers replaced by `values` in its style: a number after a run of
/// spaces keeps its right edge (columns), one after a single space stays one space after the previous text.
fn rewrite(line: &str, values: &[f32]) -> Option<String> {
    let body = line.trim_start();
    let mut out = line[..line.len() - body.len()].to_owned();
    let mut rest = body;
    let key_end = rest.find(char::is_whitespace)?;
    out.push_str(&rest[..key_end]);
    rest = &rest[key_end..];
    for v in values {
        let token_at = rest.find(|c: char| !c.is_whitespace())?;
        let gap = &rest[..token_at];
        let after = &rest[token_at..];
        let token_len = after.find(char::is_whitespace).unwrap_or(after.len());
        let new = styled(&after[..token_len], *v);
        let spaces = if gap.len() > 1 && !gap.contains('\t') {
            (gap.len() + token_len).saturating_sub(new.len()).max(1)
        } else {
            0
        };
        if spaces > 0 {
            out.push_str(&" ".repeat(spaces));
        } else {
            out.push_str(gap);
        }
        out.push_str(&new);
        rest = &after[token_len..];
    }
    if !rest.trim().is_empty() {
        return None;
    }
    out.push_str(rest);
    Some(out)
}

/// A new field line: the joint's field indent, the key, the numbers shortest.
fn new_line(indent: &str, key: &str, values: &[f32]) -> String {
    let mut buf = ryu::Buffer::new();
    let mut s = format!("{indent}{key}");
    for v in values {
        s.push(' ');
        s.push_str(fmt_f32(&mut buf, *v));
    }
    s
}

/// One joint's place in the old text.
#[derive(Default)]
struct JointLines {
    /// The indent of its field lines (the first one's), if any.
    field_indent: Option<String>,
    /// Field key -> line index.
    fields: Vec<(&'static str, usize)>,
    /// The line after which a new field goes: its last field, else its header.
    last: usize,
}

/// `skel` written over `old` (the text of the `.skel` file being replaced) in `old`'s layout, or `None` when
/// `old` is not of the plain shape or does not hold the same joints in the same tree.
pub fn write_skel_over(old: &str, skel: &Skeleton) -> Option<String> {
    let before = read_skel(old.as_bytes(), None).ok()?.value;
    let same_tree = before.len() == skel.len()
        && before
            .joints()
            .iter()
            .zip(skel.joints())
            .all(|(a, b)| a.parent == b.parent && a.name == b.name);
    if !same_tree {
        return None;
    }
    let crlf = old.contains("\r\n");
    let mut lines: Vec<String> = old.lines().map(str::to_owned).collect();
    let mut joints: Vec<JointLines> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            ["}"] => {
                open.pop()?;
            }
            ["balljoint", name, "{"] if !name.contains(['{', '}']) => {
                open.push(joints.len());
                joints.push(JointLines {
                    last: i,
                    ..Default::default()
                });
            }
            [key, numbers @ ..] => {
                let key = KEYS.iter().copied().find(|k| k == key)?;
                let wanted = if key.starts_with("rot") { 2 } else { 3 };
                if numbers.len() != wanted || numbers.iter().any(|n| n.parse::<f32>().is_err()) {
                    return None;
                }
                let j = joints.get_mut(*open.last()?)?;
                if j.fields.iter().any(|(k, _)| *k == key) {
                    return None;
                }
                j.fields.push((key, i));
                j.last = i;
                j.field_indent
                    .get_or_insert_with(|| line[..line.len() - line.trim_start().len()].to_owned());
            }
        }
    }
    if joints.len() != skel.len() || !open.is_empty() {
        return None;
    }
    // Changes per line: replaced (Some) or removed (None); new lines after a line.
    let mut removed = vec![false; lines.len()];
    let mut inserted: Vec<Vec<String>> = vec![Vec::new(); lines.len()];
    for ((j, was), now) in joints.iter().zip(before.joints()).zip(skel.joints()) {
        for key in KEYS {
            let (old_value, new_value) = (field(was, key), field(now, key));
            let at = j.fields.iter().find(|(k, _)| *k == key).map(|(_, i)| *i);
            match (at, new_value) {
                (Some(i), None) => removed[i] = true,
                (Some(i), Some(v)) if old_value.as_deref() != Some(v.as_slice()) => {
                    lines[i] = rewrite(&lines[i], &v)?;
                }
                (None, Some(v)) if old_value.as_deref() != Some(v.as_slice()) => {
                    let indent = match &j.field_indent {
                        Some(s) => s.clone(),
                        None => {
                            let header = &lines[j.last];
                            format!("{}\t", &header[..header.len() - header.trim_start().len()])
                        }
                    };
                    inserted[j.last].push(new_line(&indent, key, &v));
                }
                _ => {}
            }
        }
    }
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut out = String::with_capacity(old.len() + 64);
    for (i, line) in lines.iter().enumerate() {
        if !removed[i] {
            out.push_str(line.trim_end_matches('\r'));
            out.push_str(eol);
        }
        for l in &inserted[i] {
            out.push_str(l);
            out.push_str(eol);
        }
    }
    if !old.ends_with('\n') {
        out.truncate(out.len() - eol.len());
    }
    // What is written must read back as the skeleton.
    (read_skel(out.as_bytes(), None).ok()?.value == *skel).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns of six decimals and a box in another style, as the course's wasp.skel mixes them.
    const WASP_LIKE: &str = "balljoint root {\n  offset     0.000000     0.000000     0.000000\n  pose       \
                             0.000000     0.000000     0.000000\n  boxmin -0.2 -0.3 -0.3\n  balljoint head {\n    \
                             offset     0.000000     0.000000    -0.400000\n    pose       0.000000     0.000000     \
                             0.000000\n  }\n}\n";

    fn read(text: &str) -> Skeleton {
        read_skel(text.as_bytes(), None).unwrap().value
    }

    fn changed_lines(a: &str, b: &str) -> Vec<(String, String)> {
        a.lines()
            .zip(b.lines())
            .filter(|(x, y)| x != y)
            .map(|(x, y)| (x.to_owned(), y.to_owned()))
            .collect()
    }

    #[test]
    fn an_unchanged_skeleton_is_written_back_byte_for_byte() {
        assert_eq!(write_skel_over(WASP_LIKE, &read(WASP_LIKE)).as_deref(), Some(WASP_LIKE));
        let crlf = WASP_LIKE.replace('\n', "\r\n");
        assert_eq!(write_skel_over(&crlf, &read(&crlf)).as_deref(), Some(crlf.as_str()));
    }

    #[test]
    fn a_changed_pose_changes_one_line_in_its_own_columns_and_decimals() {
        let mut joints = read(WASP_LIKE).joints().to_vec();
        joints[1].pose = Some(Vec3::new(0.25, -1.5, 0.0));
        let skel = Skeleton::new(joints).unwrap();
        let out = write_skel_over(WASP_LIKE, &skel).unwrap();
        assert_eq!(
            changed_lines(WASP_LIKE, &out),
            vec![(
                "    pose       0.000000     0.000000     0.000000".to_owned(),
                "    pose       0.250000    -1.500000     0.000000".to_owned()
            )]
        );
        assert_eq!(read(&out), skel);
    }

    #[test]
    fn a_value_the_style_would_round_is_written_whole_and_fields_come_and_go_by_one_line() {
        let mut joints = read(WASP_LIKE).joints().to_vec();
        joints[1].offset.x = 0.123_456_79;
        joints[0].box_min = None;
        joints[1].limits[0] = Some(crate::model::Limit { lo: -1.0, hi: 0.5 });
        let skel = Skeleton::new(joints).unwrap();
        let out = write_skel_over(WASP_LIKE, &skel).unwrap();
        assert!(
            out.contains("    offset   0.12345679     0.000000    -0.400000\n"),
            "{out}"
        );
        assert!(!out.contains("boxmin"));
        assert!(
            out.contains("    pose       0.000000     0.000000     0.000000\n    rotxlimit -1 0.5\n"),
            "{out}"
        );
        assert_eq!(out.lines().count(), WASP_LIKE.lines().count());
        assert_eq!(read(&out), skel);
    }

    #[test]
    fn another_tree_or_a_file_not_of_the_plain_shape_is_not_kept() {
        let mut joints = read(WASP_LIKE).joints().to_vec();
        joints[1].name = "skull".into();
        assert_eq!(write_skel_over(WASP_LIKE, &Skeleton::new(joints).unwrap()), None);
        let two_on_a_line = "balljoint root { offset 0 0 0\n}\n";
        assert_eq!(write_skel_over(two_on_a_line, &read(two_on_a_line)), None);
    }
}
