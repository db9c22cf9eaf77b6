//! Bad input never panics and always says where it is bad: each broken file below (made from a valid one) gives
//! an error at the right line and column that names what was expected and what was found; and random
//! mutations of valid files never panic.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use skinbind::formats::{ParseError, anim::read_anim, morph::read_morph, skel::read_skel, skin::read_skin};

const SKIN: &str = "positions 3 {
  0 0 0
  1 0 0
  0 1 0
}
normals 3 {
  0 0 1
  0 0 1
  0 0 1
}
skinweights 3 {
  1 0 1
  2 0 0.5 1 0.5
  1 1 1
}
triangles 1 {
  0 1 2
}
bindings 2 {
  matrix {
    1 0 0
    0 1 0
    0 0 1
    0 0 0
  }
  matrix {
    1 0 0
    0 1 0
    0 0 1
    0 1 0
  }
}
";

const SKEL: &str = "balljoint root {
\toffset 0 0 0
\tboxmin -1 -1 -1
\tboxmax 1 1 1
\trotxlimit -1 1
\tpose 0 0 0
\tballjoint child {
\t\toffset 0 1 0
\t}
}
";

const ANIM: &str = "animation {
  range 0 2
  numchannels 2
  channel {
    extrapolate constant linear
    keys 2 {
      0 0 flat flat
      1 1 smooth smooth
    }
  }
  channel {
    extrapolate cycle bounce
    keys 1 {
      0 5 linear linear
    }
  }
}
";

const MORPH: &str = "positions 2 {
  0 1 2 3
  2 1 1 1
}
normals 1 {
  1 0 0 1
}
";

#[derive(Clone, Copy, Debug)]
enum Fmt {
    Skel,
    Skin,
    /// A skin read with a skeleton of this many joints.
    SkinWith(usize),
    Anim,
    Morph,
}

fn parse(fmt: Fmt, text: &str) -> Result<(), ParseError> {
    let b = text.as_bytes();
    let len = Some(b.len() as u64);
    match fmt {
        Fmt::Skel => read_skel(b, len).map(|_| ()),
        Fmt::Skin => read_skin(b, len, None).map(|_| ()),
        Fmt::SkinWith(j) => read_skin(b, len, Some(j)).map(|_| ()),
        Fmt::Anim => read_anim(b, len).map(|_| ()),
        Fmt::Morph => read_morph(b, len).map(|_| ()),
    }
}

/// Replace the `nth` (0-based) occurrence of `from` in `base` with `to`.
fn edit(base: &str, from: &str, nth: usize, to: &str) -> String {
    let (i, _) = base
        .match_indices(from)
        .nth(nth)
        .unwrap_or_else(|| panic!("`{from}` #{nth} not in base"));
    format!("{}{}{}", &base[..i], to, &base[i + from.len()..])
}

struct Case {
    name: &'static str,
    fmt: Fmt,
    text: String,
    line: u32,
    col: u32,
    expected: &'static str,
    found: &'static str,
}

fn cases() -> Vec<Case> {
    let c = |name, fmt, text: String, line, col, expected, found| Case {
        name,
        fmt,
        text,
        line,
        col,
        expected,
        found,
    };
    use Fmt::*;
    vec![
        // .skin
        c(
            "too few positions",
            Skin,
            edit(SKIN, "positions 3", 0, "positions 4"),
            5,
            1,
            "4 entries in `positions`",
            "`}` after 3",
        ),
        c(
            "too many positions",
            Skin,
            edit(SKIN, "positions 3", 0, "positions 2"),
            4,
            3,
            "`}` after 2 entries in `positions`",
            "the block holds 3 entries",
        ),
        c(
            "a word for a number",
            Skin,
            edit(SKIN, "1 0 0", 0, "1 x 0"),
            3,
            5,
            "a finite number",
            "`x`",
        ),
        c(
            "nan",
            Skin,
            edit(SKIN, "1 0 0", 0, "nan 0 0"),
            3,
            3,
            "a finite number",
            "`nan`",
        ),
        c(
            "inf",
            Skin,
            edit(SKIN, "0 1 0", 0, "0 inf 0"),
            4,
            5,
            "a finite number",
            "`inf`",
        ),
        c(
            "overflowing number",
            Skin,
            edit(SKIN, "0 1 0", 0, "0 1e39 0"),
            4,
            5,
            "a finite number",
            "`1e39`",
        ),
        c(
            "missing open brace",
            Skin,
            edit(SKIN, "positions 3 {", 0, "positions 3"),
            2,
            3,
            "`{` after `positions 3`",
            "`0`",
        ),
        c(
            "truncated in a block",
            Skin,
            SKIN[..SKIN.find("0 1 0").unwrap()].to_string(),
            4,
            3,
            "a finite number",
            "the end of the file",
        ),
        c(
            "triangle index out of range",
            Skin,
            edit(SKIN, "0 1 2", 0, "0 1 3"),
            17,
            7,
            "a vertex index below 3",
            "`3`",
        ),
        c(
            "joint index beyond the bindings",
            Skin,
            edit(SKIN, "1 1 1", 0, "1 2 1"),
            14,
            5,
            "a joint index below 2 (the bindings count)",
            "`2`",
        ),
        c(
            "joint index beyond the skeleton",
            SkinWith(1),
            edit(SKIN, "bindings 2", 0, "unused 2"),
            13,
            11,
            "a joint index below 1 (the skeleton's joint count)",
            "`1`",
        ),
        c(
            "bindings not one per joint",
            SkinWith(3),
            SKIN.to_string(),
            19,
            1,
            "3 bindings, one per joint",
            "2 bindings",
        ),
        c(
            "negative count",
            Skin,
            edit(SKIN, "positions 3", 0, "positions -3"),
            1,
            11,
            "an entry count after `positions`",
            "`-3`",
        ),
        c(
            "count beyond u32",
            Skin,
            edit(SKIN, "positions 3", 0, "positions 99999999999"),
            1,
            11,
            "an entry count",
            "`99999999999`",
        ),
        c(
            "absurd count allocates nothing",
            Skin,
            edit(SKIN, "positions 3", 0, "positions 4000000000"),
            5,
            1,
            "4000000000 entries in `positions`",
            "`}` after 3",
        ),
        c(
            "normals count differs",
            Skin,
            edit(SKIN, "normals 3", 0, "normals 2"),
            6,
            9,
            "3 entries, as `positions` declares",
            "2 declared by `normals`",
        ),
        c(
            "negative weight",
            Skin,
            edit(SKIN, "1 0 1", 0, "1 0 -1"),
            12,
            7,
            "a non-negative finite weight",
            "`-1`",
        ),
        c(
            "influence count too large",
            Skin,
            edit(SKIN, "1 0 1", 0, "70000 0 1"),
            12,
            3,
            "an influence count",
            "`70000`",
        ),
        c(
            "missing final brace",
            Skin,
            SKIN.trim_end().trim_end_matches('}').to_string(),
            32,
            1,
            "`}` closing `bindings`",
            "the end of the file",
        ),
        c(
            "matrix of 11 numbers",
            Skin,
            edit(SKIN, "0 1 0\n  }", 0, "0 1\n  }"),
            31,
            3,
            "a finite number (12 per matrix)",
            "`}`",
        ),
        c(
            "brace where a block starts",
            Skin,
            format!("{{\n{SKIN}"),
            1,
            1,
            "a block keyword",
            "`{`",
        ),
        c(
            "second positions block",
            Skin,
            format!("{SKIN}positions 1 {{ 0 0 0 }}\n"),
            33,
            1,
            "one block of each kind",
            "a second `positions` block",
        ),
        c(
            "no positions",
            Skin,
            "triangles 0 {\n}\n".to_string(),
            3,
            1,
            "a `positions` block",
            "the end of the file",
        ),
        // .skel
        c(
            "not a balljoint",
            Skel,
            edit(SKEL, "balljoint root", 0, "joint root"),
            1,
            1,
            "`balljoint`",
            "`joint`",
        ),
        c(
            "short offset",
            Skel,
            edit(SKEL, "offset 0 1 0", 0, "offset 0 1"),
            9,
            2,
            "a number after `offset`",
            "`}`",
        ),
        c(
            "word in offset",
            Skel,
            edit(SKEL, "offset 0 0 0", 0, "offset 0 x 0"),
            2,
            11,
            "a number after `offset`",
            "`x`",
        ),
        c(
            "unclosed root",
            Skel,
            SKEL.trim_end().trim_end_matches('}').to_string(),
            10,
            1,
            "`}` closing joint `root`",
            "the end of the file",
        ),
        c(
            "a second root",
            Skel,
            format!("{SKEL}balljoint other {{\n}}\n"),
            11,
            1,
            "the end of the file after the root joint's `}`",
            "`balljoint`",
        ),
        c(
            "brace as a field",
            Skel,
            edit(SKEL, "\tpose 0 0 0", 0, "\t{"),
            6,
            2,
            "a joint field",
            "`{`",
        ),
        c(
            "nan pose",
            Skel,
            edit(SKEL, "pose 0 0 0", 0, "pose nan 0 0"),
            6,
            7,
            "a number after `pose`",
            "`nan`",
        ),
        c(
            "one-number limit",
            Skel,
            edit(SKEL, "rotxlimit -1 1", 0, "rotxlimit -1"),
            6,
            2,
            "a number after `rotxlimit`",
            "`pose`",
        ),
        c(
            "empty file",
            Skel,
            String::new(),
            1,
            1,
            "`balljoint`",
            "the end of the file",
        ),
        // .anim
        c(
            "channel count differs",
            Anim,
            edit(ANIM, "numchannels 2", 0, "numchannels 3"),
            3,
            3,
            "3 channels (the declared count)",
            "2 channels",
        ),
        c(
            "unknown extrapolation",
            Anim,
            edit(ANIM, "constant linear", 0, "constant sideways"),
            5,
            26,
            "an extrapolation",
            "`sideways`",
        ),
        c(
            "unknown tangent",
            Anim,
            edit(ANIM, "0 0 flat flat", 0, "0 0 curvy flat"),
            7,
            11,
            "a tangent",
            "`curvy`",
        ),
        c(
            "too few keys",
            Anim,
            edit(ANIM, "keys 2", 0, "keys 3"),
            9,
            5,
            "3 keys (the declared count)",
            "`}` after 2",
        ),
        c(
            "too many keys",
            Anim,
            edit(ANIM, "keys 2", 0, "keys 1"),
            8,
            7,
            "`}` after 1 keys",
            "the block holds 2 keys",
        ),
        c(
            "time going back",
            Anim,
            edit(ANIM, "1 1 smooth", 0, "-1 1 smooth"),
            8,
            7,
            "a key time after 0",
            "`-1`",
        ),
        c(
            "not an animation",
            Anim,
            edit(ANIM, "animation", 0, "animaton"),
            1,
            1,
            "`animation`",
            "`animaton`",
        ),
        c(
            "channel without keys",
            Anim,
            edit(ANIM, "keys 1 {\n      0 5 linear linear\n    }\n", 0, ""),
            11,
            11,
            "a `keys` block",
            "none",
        ),
        // .morph
        c(
            "too few morph entries",
            Morph,
            edit(MORPH, "positions 2", 0, "positions 3"),
            4,
            1,
            "3 entries in `positions`",
            "`}` after 2",
        ),
        c(
            "negative morph index",
            Morph,
            edit(MORPH, "2 1 1 1", 0, "-2 1 1 1"),
            3,
            3,
            "a vertex index",
            "`-2`",
        ),
    ]
}

#[test]
fn the_bases_are_valid() {
    parse(Fmt::Skin, SKIN).unwrap();
    parse(Fmt::SkinWith(2), SKIN).unwrap();
    parse(Fmt::Skel, SKEL).unwrap();
    parse(Fmt::Anim, ANIM).unwrap();
    parse(Fmt::Morph, MORPH).unwrap();
}

#[test]
fn each_malformed_input_names_line_column_expected_and_found() {
    let cases = cases();
    assert!(cases.len() >= 30);
    let mut failures = Vec::new();
    for c in &cases {
        match parse(c.fmt, &c.text) {
            Ok(()) => failures.push(format!("{}: parsed without error", c.name)),
            Err(e) => {
                let ok =
                    e.line == c.line && e.col == c.col && e.expected.contains(c.expected) && e.found.contains(c.found);
                if !ok {
                    failures.push(format!(
                        "{}: got {e}\n    want {}:{}: expected ..{}.., found ..{}..",
                        c.name, c.line, c.col, c.expected, c.found
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// One random edit of a text: delete a range, insert a token, replace a byte, duplicate a range, or truncate.
fn mutate(base: &str, op: u8, a: usize, b: usize, token: &str) -> String {
    let bytes = base.as_bytes();
    let n = bytes.len().max(1);
    let (i, j) = ((a % n).min(bytes.len()), (b % n).min(bytes.len()));
    let (lo, hi) = (i.min(j), i.max(j));
    let mut out: Vec<u8> = match op % 5 {
        0 => [&bytes[..lo], &bytes[hi..]].concat(),
        1 => [&bytes[..lo], token.as_bytes(), &bytes[lo..]].concat(),
        2 => {
            let mut v = bytes.to_vec();
            if lo < v.len() {
                v[lo] = token.as_bytes().first().copied().unwrap_or(b'x');
            }
            v
        }
        3 => [&bytes[..hi], &bytes[lo..hi], &bytes[hi..]].concat(),
        _ => bytes[..lo].to_vec(),
    };
    out.truncate(1 << 20);
    String::from_utf8_lossy(&out).into_owned()
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("{".to_string()),
        Just("}".to_string()),
        Just(" ".to_string()),
        Just("\n".to_string()),
        Just("-".to_string()),
        Just("nan".to_string()),
        Just("4294967295".to_string()),
        Just("99999999999999999999".to_string()),
        Just("balljoint".to_string()),
        Just("matrix {".to_string()),
        Just("keys 1000000 {".to_string()),
        "[ -~\t\r\n]{0,8}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn mutated_files_never_panic(
        which in 0usize..4,
        edits in proptest::collection::vec((any::<u8>(), any::<usize>(), any::<usize>(), token()), 1..4),
    ) {
        let (fmt, base) = [(Fmt::Skin, SKIN), (Fmt::Skel, SKEL), (Fmt::Anim, ANIM), (Fmt::Morph, MORPH)][which];
        let mut text = base.to_string();
        for (op, a, b, t) in &edits {
            text = mutate(&text, *op, *a, *b, t);
        }
        // Errors are fine; panics are not. Every error has a 1-based place.
        if let Err(e) = parse(fmt, &text) {
            prop_assert!(e.line >= 1 && e.col >= 1);
        }
        if let Fmt::Skin = fmt {
            let _ = parse(Fmt::SkinWith(2), &text);
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes);
        for fmt in [Fmt::Skin, Fmt::Skel, Fmt::Anim, Fmt::Morph] {
            let _ = parse(fmt, &text);
        }
    }
}
