//! Joint names every writer keeps: the one rule for names, applied where names enter the model (readers,
//! renames, templates) so that no writer can emit what a reader rejects or misreads.
//!
//! The strictest writer is `.skel`, where a name is one word between `balljoint` and `{`: whitespace ends it and a
//! brace opens or closes a joint, so a glTF node named `a b` or `x {` would write a skeleton that reads back as
//! other joints. A name is kept when it is at most [`MAX_NAME_BYTES`] bytes of characters that are neither
//! whitespace (any Unicode whitespace, not only the ASCII the tokenizer splits on), nor control characters, nor
//! `{` `}`. The empty name is kept (the course files have `balljoint {`; it reads back empty). glTF and sessions
//! keep any string, so the `.skel` rule is the rule.
//!
//! A name that breaks the rule is replaced, never escaped: each character that may not appear becomes `_`, a
//! name too long is cut at a character boundary, and when the result is taken by another joint, `.001`, `.002`...
//! is appended (Blender's way) until it is unique. Names already repeated in a file (dragon.skel's 16 duplicates)
//! are left as they are: the formats allow them, and the joints are known by index.

use std::borrow::Cow;
use std::collections::HashSet;

/// The longest name kept, in bytes of UTF-8 (real rigs stay under 64; the tokenizer's own limit is 4096).
pub const MAX_NAME_BYTES: usize = 256;

/// Why a name cannot be kept as it is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("a name of {0} bytes is longer than the {MAX_NAME_BYTES} kept")]
    TooLong(usize),
    #[error("{} cannot be part of a joint name (a .skel file splits names at it)", describe(*.0))]
    Character(char),
    #[error("a joint needs a name")]
    Empty,
    #[error("`{0}` is the name of joint {1}")]
    Taken(String, usize),
}

fn describe(c: char) -> String {
    match c {
        ' ' => "a space".to_string(),
        '\t' => "a tab".to_string(),
        '{' | '}' => format!("`{c}`"),
        c => format!("the character {}", c.escape_unicode()),
    }
}

/// Whether `c` may appear in a name.
pub fn allowed(c: char) -> bool {
    !(c.is_whitespace() || c.is_control() || c == '{' || c == '}')
}

/// Whether `name` is kept as it is by every writer (the empty name is).
pub fn check(name: &str) -> Result<(), NameError> {
    if name.len() > MAX_NAME_BYTES {
        return Err(NameError::TooLong(name.len()));
    }
    match name.chars().find(|&c| !allowed(c)) {
        Some(c) => Err(NameError::Character(c)),
        None => Ok(()),
    }
}

/// `name` with every character that may not appear replaced by `_` and cut to [`MAX_NAME_BYTES`]; borrowed when
/// it is kept as it is.
pub fn sanitize(name: &str) -> Cow<'_, str> {
    if check(name).is_ok() {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len().min(MAX_NAME_BYTES));
    for c in name.chars() {
        let c = if allowed(c) { c } else { '_' };
        if out.len() + c.len_utf8() > MAX_NAME_BYTES {
            break;
        }
        out.push(c);
    }
    Cow::Owned(out)
}

/// `base`, or `base.001`, `base.002`... : the first that `taken` says is free (`base` cut so the suffix fits).
pub fn unique(base: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(base) {
        return base.to_string();
    }
    let mut n = 1u64;
    loop {
        let suffix = format!(".{n:03}");
        let mut end = base.len().min(MAX_NAME_BYTES - suffix.len());
        while !base.is_char_boundary(end) {
            end -= 1;
        }
        let candidate = format!("{}{suffix}", &base[..end]);
        // Each taken name rules out at most one candidate, so the loop ends.
        if !taken(&candidate) {
            return candidate;
        }
        n += 1;
    }
}

/// One name changed by [`sanitize_names`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Renamed {
    pub index: usize,
    pub from: String,
    pub to: String,
}

/// Replace every name that breaks the rule by its sanitised form, made unique among all the names; the names
/// that keep the rule are untouched (repeats among them included). `name` gives each item's name (a joint's, or
/// the string itself). Returns what changed, in index order.
pub fn sanitize_names<T>(items: &mut [T], name: impl Fn(&mut T) -> &mut String) -> Vec<Renamed> {
    let mut bad = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    for (i, item) in items.iter_mut().enumerate() {
        let n = name(item);
        if check(n).is_err() {
            bad.push(i);
        } else {
            taken.insert(n.clone());
        }
    }
    let mut renamed = Vec::with_capacity(bad.len());
    for i in bad {
        let n = name(&mut items[i]);
        let to = unique(&sanitize(n), |c| taken.contains(c));
        taken.insert(to.clone());
        let from = std::mem::replace(n, to.clone());
        renamed.push(Renamed { index: i, from, to });
    }
    renamed
}

/// Check a new name for joint `joint` among `names`: kept by every writer, not empty, and not another joint's.
pub fn check_rename<'a>(names: impl IntoIterator<Item = &'a str>, joint: usize, name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    check(name)?;
    match names.into_iter().enumerate().find(|&(i, n)| i != joint && n == name) {
        Some((i, _)) => Err(NameError::Taken(name.to_string(), i)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_a_skel_splits_are_refused_and_others_kept() {
        for ok in [
            "",
            "Hand.L",
            "mixamorig:LeftArm",
            "tail_01",
            "épaule",
            "腕",
            "a#b",
            "=,;",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        assert_eq!(check("a b"), Err(NameError::Character(' ')));
        assert_eq!(check("x{"), Err(NameError::Character('{')));
        assert_eq!(check("x}"), Err(NameError::Character('}')));
        assert_eq!(check("a\nballjoint"), Err(NameError::Character('\n')));
        assert_eq!(check("a\u{1b}[31m"), Err(NameError::Character('\u{1b}')));
        assert_eq!(check("no\u{a0}break"), Err(NameError::Character('\u{a0}')));
        assert_eq!(check(&"a".repeat(257)), Err(NameError::TooLong(257)));
        assert_eq!(check(&"a".repeat(256)), Ok(()));
    }

    #[test]
    fn sanitising_replaces_and_stays_unique() {
        let mut names: Vec<String> = ["a b", "a_b", "x\n{", "ok", "ok", "a b"].map(String::from).to_vec();
        let r = sanitize_names(&mut names, |s| s);
        assert_eq!(names, ["a_b.001", "a_b", "x__", "ok", "ok", "a_b.002"]);
        assert_eq!(r.len(), 3);
        assert_eq!(
            (r[0].index, r[0].from.as_str(), r[0].to.as_str()),
            (0, "a b", "a_b.001")
        );
        // A long multi-byte name is cut on a character boundary and the suffix still fits.
        let long = "é".repeat(200);
        let mut names = vec![format!("{long} "), "é".repeat(128)];
        sanitize_names(&mut names, |s| s);
        assert!(names[0].len() <= MAX_NAME_BYTES, "{}", names[0].len());
        assert_eq!(check(&names[0]), Ok(()));
        assert_ne!(names[0], names[1]);
    }

    #[test]
    fn a_rename_must_be_kept_non_empty_and_free() {
        let names = ["hip", "knee"];
        assert_eq!(check_rename(names, 1, "shin"), Ok(()));
        assert_eq!(check_rename(names, 1, "knee"), Ok(()), "its own name");
        assert_eq!(check_rename(names, 1, "hip"), Err(NameError::Taken("hip".into(), 0)));
        assert_eq!(check_rename(names, 1, ""), Err(NameError::Empty));
        assert_eq!(check_rename(names, 1, "left knee"), Err(NameError::Character(' ')));
        assert_eq!(
            NameError::Character(' ').to_string(),
            "a space cannot be part of a joint name (a .skel file splits names at it)"
        );
    }
}
