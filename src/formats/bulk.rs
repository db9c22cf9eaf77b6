//! Bulk reading of the big numeric blocks (positions, normals, texture coordinates, weights, triangles).
//!
//! PERF: a 1M-vertex `.skin` is some 15 million numbers. Token by token through [`Lexer`] they cost more than
//! the file takes to read, so whole entries are read here straight from the lexer's buffer
//! ([`Lexer::window`]), and a large window is cut at line breaks into pieces read in parallel (rayon), stitched
//! back in file order. A piece is read on the guess that it starts an entry; the guess is kept only when every
//! piece before it ended cleanly (whole entries, then only whitespace), else the rest is read again in order.
//!
//! The scan accepts exactly what the token reader accepts and stops, before consuming it, at the first entry it
//! does not read whole: one cut by the window's end, or a malformed one. The caller then reads that one entry
//! with the token reader, which reports errors (line, column, expected, found) as it always has. Line and
//! column are kept throughout for the positions a block reports later (the largest index, with where it is).

use std::io::Read;

use rayon::prelude::*;

use super::ParseError;
use super::lexer::{Lexer, MAX_TOKEN, is_delimiter};
use super::number::{fast_f32, parse_f32};

/// The smallest piece worth a thread (small in unit tests, so that small files split).
const MIN_PIECE: usize = if cfg!(test) { 4 << 10 } else { 256 << 10 };

/// A place in the input, 1-based, as errors give it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct At {
    pub line: u32,
    pub col: u32,
}

/// A read position in a window, with the line it is on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
    line: u32,
    /// Offset of the current line's first byte in `s` (negative: it began before `s`).
    line_start: i64,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(s: &'a [u8], line: u32, line_start: i64) -> Self {
        Self {
            s,
            i: 0,
            line,
            line_start,
        }
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(&b) = self.s.get(self.i) {
            match b {
                b'\n' => {
                    self.i += 1;
                    self.line = self.line.wrapping_add(1);
                    self.line_start = self.i as i64;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.i += 1,
                _ => break,
            }
        }
    }

    /// The next word if it is a number of at most 10 digits that fits in `u32`, with where it starts.
    #[inline]
    pub(crate) fn u32(&mut self) -> Option<(u32, At)> {
        self.skip_ws();
        let start = self.i;
        let mut v: u64 = 0;
        while let Some(&b) = self.s.get(self.i) {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v * 10 + d as u64;
            self.i += 1;
            if self.i - start > 10 {
                return None;
            }
        }
        let ends = self.s.get(self.i).is_none_or(|&b| is_delimiter(b));
        if self.i == start || !ends || v > u32::MAX as u64 {
            return None;
        }
        let at = At {
            line: self.line,
            col: (start as i64 - self.line_start + 1).clamp(0, u32::MAX as i64) as u32,
        };
        Some((v as u32, at))
    }

    /// The next word if it is a finite decimal number ([`parse_f32`]).
    #[inline]
    pub(crate) fn f32(&mut self) -> Option<f32> {
        self.skip_ws();
        let rest = &self.s[self.i..];
        if let Some((v, n)) = fast_f32(rest) {
            if n <= MAX_TOKEN && rest.get(n).is_none_or(|&b| is_delimiter(b)) {
                self.i += n;
                return Some(v);
            }
        }
        let len = rest.iter().position(|&b| is_delimiter(b)).unwrap_or(rest.len());
        if len == 0 || len > MAX_TOKEN {
            return None;
        }
        let v = parse_f32(&rest[..len])?;
        self.i += len;
        Some(v)
    }
}

/// The entries of one block as read so far.
pub(crate) trait Block: Send + Sized {
    /// Read one whole entry at the cursor; `false` (self as it was, the cursor anywhere) where there is none.
    fn entry(&mut self, c: &mut Cursor) -> bool;
    /// An empty block of the same kind and rules, for a piece read in parallel.
    fn empty(&self) -> Self;
    /// Empty this block (a piece's, to be read into again), keeping its memory.
    fn clear(&mut self);
    /// Move `later`'s entries to the end of this block's: a piece read as starting on line 0 that starts on
    /// `line`.
    fn append(&mut self, later: &mut Self, line: u32);
}

/// Entries of `N` numbers each.
pub(crate) trait FromFloats: Send + Sized {
    const N: usize;
    fn from_floats(x: [f32; 3]) -> Self;
}

impl FromFloats for glam::Vec3 {
    const N: usize = 3;
    fn from_floats(x: [f32; 3]) -> Self {
        Self::from_array(x)
    }
}

impl FromFloats for glam::Vec2 {
    const N: usize = 2;
    fn from_floats(x: [f32; 3]) -> Self {
        Self::new(x[0], x[1])
    }
}

impl<T: FromFloats> Block for Vec<T> {
    #[inline]
    fn entry(&mut self, c: &mut Cursor) -> bool {
        let mut x = [0.0f32; 3];
        for slot in x.iter_mut().take(T::N) {
            match c.f32() {
                Some(v) => *slot = v,
                None => return false,
            }
        }
        self.push(T::from_floats(x));
        true
    }

    fn empty(&self) -> Self {
        Vec::new()
    }

    fn clear(&mut self) {
        Vec::clear(self);
    }

    fn append(&mut self, later: &mut Self, _line: u32) {
        Vec::append(self, later);
    }
}

/// Triangles as read, with the largest vertex index and where it first appears.
#[derive(Default)]
pub(crate) struct Triangles {
    pub tris: Vec<[u32; 3]>,
    pub max: Option<(u32, At)>,
}

impl Block for Triangles {
    #[inline]
    fn entry(&mut self, c: &mut Cursor) -> bool {
        let mut tri = [0u32; 3];
        let mut max = self.max;
        for slot in &mut tri {
            let Some((v, at)) = c.u32() else { return false };
            *slot = v;
            if max.is_none_or(|(m, _)| v > m) {
                max = Some((v, at));
            }
        }
        self.tris.push(tri);
        self.max = max;
        true
    }

    fn empty(&self) -> Self {
        Self::default()
    }

    fn clear(&mut self) {
        self.tris.clear();
        self.max = None;
    }

    fn append(&mut self, later: &mut Self, line: u32) {
        self.tris.append(&mut later.tris);
        if let Some((v, at)) = later.max {
            if self.max.is_none_or(|(m, _)| v > m) {
                self.max = Some((
                    v,
                    At {
                        line: at.line.wrapping_add(line),
                        ..at
                    },
                ));
            }
        }
    }
}

/// How one piece's scan ended.
struct Scanned<'a> {
    entries: usize,
    end: Cursor<'a>,
    /// Only whitespace followed the last entry read.
    clean: bool,
}

/// Read whole entries from the cursor, at most `max`.
fn scan<'a, B: Block>(mut c: Cursor<'a>, max: usize, out: &mut B) -> Scanned<'a> {
    let mut entries = 0;
    while entries < max {
        let before = c;
        if !out.entry(&mut c) {
            c = before;
            break;
        }
        entries += 1;
    }
    c.skip_ws();
    Scanned {
        entries,
        end: c,
        clean: c.i == c.s.len(),
    }
}

/// Read up to `max` whole entries from the lexer's window into `out`, in parallel pieces where it is large;
/// returns how many were read. The lexer is left at the first entry not read.
fn bulk<R: Read, B: Block>(lx: &mut Lexer<R>, max: usize, out: &mut B, rest: &mut Vec<B>) -> usize {
    let w = lx.window();
    let s = w.bytes;
    if s.is_empty() {
        return 0;
    }
    let threads = rayon::current_num_threads();
    let pieces = (s.len() / MIN_PIECE).clamp(1, threads.max(1));
    // Cut after the first line break at or past each even share.
    let mut cuts = vec![0usize];
    for p in 1..pieces {
        let from = (p * s.len() / pieces).max(cuts[cuts.len() - 1]);
        match s[from..].iter().position(|&b| b == b'\n') {
            Some(k) if from + k + 1 < s.len() => cuts.push(from + k + 1),
            _ => break,
        }
    }
    cuts.push(s.len());
    let first = Cursor::new(&s[..cuts[1]], w.line, w.line_start);
    // The pieces after the first are read into blocks kept from window to window (fresh ones fault their pages
    // in again each time).
    while rest.len() < cuts.len() - 2 {
        rest.push(out.empty());
    }
    rest.iter_mut().for_each(B::clear);
    if cuts.len() == 2 {
        let head = scan(first, max, out);
        let (entries, i, line, line_start) = (head.entries, head.end.i, head.end.line, head.end.line_start);
        lx.consume(i, line, line_start);
        return entries;
    }
    let (head, tail) = rayon::join(
        || scan(first, max, out),
        || {
            rest.par_iter_mut()
                .zip(cuts[1..].par_windows(2))
                .map(|(b, r)| scan(Cursor::new(&s[r[0]..r[1]], 0, 0), max, b))
                .collect::<Vec<_>>()
        },
    );
    let mut entries = head.entries;
    let (mut i, mut line, mut line_start, mut clean) = (head.end.i, head.end.line, head.end.line_start, head.clean);
    for ((piece, b), cut) in tail.into_iter().zip(rest.iter_mut()).zip(&cuts[1..]) {
        if !clean || entries == max || entries + piece.entries > max {
            break;
        }
        out.append(b, line);
        entries += piece.entries;
        i = cut + piece.end.i;
        line = line.wrapping_add(piece.end.line);
        line_start = *cut as i64 + piece.end.line_start;
        clean = piece.clean;
    }
    lx.consume(i, line, line_start);
    entries
}

/// Read `count` entries into `out`: whole ones in bulk, and the one the bulk scan stops at with `one` (the token
/// reader, which reads an entry across the buffer's end or reports why it is malformed), given how many
/// entries came before it.
pub(crate) fn read_block<R: Read, B: Block>(
    lx: &mut Lexer<R>,
    count: usize,
    out: &mut B,
    mut one: impl FnMut(&mut Lexer<R>, &mut B, usize) -> Result<(), ParseError>,
) -> Result<(), ParseError> {
    let mut done = 0;
    let mut rest = Vec::new();
    while done < count {
        done += bulk(lx, count - done, out, &mut rest);
        if done < count {
            one(lx, out, done)?;
            done += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::skin::{read_skin_from, write_skin};
    use super::*;
    use crate::sample::{SampleKind, make_sample};

    /// A sample skin as written, some 500 KB: with the unit tests' 64 KB windows and 4 KB pieces it crosses
    /// windows and piece cuts in every block.
    fn sample_text() -> Vec<u8> {
        let s = make_sample(SampleKind::Creature, 4_000).unwrap();
        let mut out = Vec::new();
        write_skin(&mut out, &s.skin).unwrap();
        out
    }

    /// What a reading gives, comparable: the model as written back (bit for bit) and the warnings, or the error.
    fn outcome(text: &[u8], joint_count: Option<usize>, tokens_only: bool) -> Result<(Vec<u8>, String), String> {
        let mut lx = Lexer::new(text, Some(text.len() as u64));
        if tokens_only {
            lx = lx.tokens_only();
        }
        match read_skin_from(lx, joint_count) {
            Ok(p) => {
                let mut out = Vec::new();
                write_skin(&mut out, &p.value).unwrap();
                Ok((out, format!("{:?}", p.warnings)))
            }
            Err(e) => Err(e.to_string()),
        }
    }

    fn same_as_token_reader(text: &[u8], joint_count: Option<usize>, what: &str) {
        let bulk = outcome(text, joint_count, false);
        let reference = outcome(text, joint_count, true);
        assert!(
            bulk == reference,
            "{what}: bulk {:?}, token reader {:?}",
            bulk.err(),
            reference.err()
        );
    }

    #[test]
    fn layouts_read_as_the_token_reader_reads_them() {
        let text = sample_text();
        let original = String::from_utf8(text.clone()).unwrap();
        assert!(
            outcome(&text, None, false).unwrap().0 == text,
            "read -> write gives the file back"
        );
        let crlf_tabs = original.replace('\n', "\r\n").replace("  ", "\t");
        let one_per_line = original.replace(' ', "\n");
        let one_line = original.replace('\n', " ");
        // A weight row over two lines, and three positions on two lines: entries and lines disagree.
        let split_rows: String = original
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i % 3 == 0 {
                    l.replacen(' ', "\n", 3) + " "
                } else {
                    l.to_string() + "\n"
                }
            })
            .collect();
        for (what, t) in [
            ("crlf and tabs", crlf_tabs),
            ("one per line", one_per_line),
            ("one line", one_line),
            ("split rows", split_rows),
        ] {
            same_as_token_reader(t.as_bytes(), None, what);
            assert!(outcome(t.as_bytes(), Some(19), false).unwrap().0 == text, "{what}");
        }
    }

    #[test]
    fn mutated_large_skins_read_as_the_token_reader_reads_them() {
        let text = sample_text();
        let mut words: Vec<(usize, usize)> = Vec::new();
        let mut i = 0;
        while i < text.len() {
            if text[i].is_ascii_whitespace() {
                i += 1;
                continue;
            }
            let start = i;
            while i < text.len() && !text[i].is_ascii_whitespace() {
                i += 1;
            }
            words.push((start, i));
        }
        const SWAPS: [&str; 17] = [
            "x",
            "1e",
            "-1",
            "-0",
            "0",
            "99999999",
            "4294967296",
            "65536",
            "18",
            "19",
            "}",
            "{",
            "1.5",
            ".",
            "nan",
            "1e39",
            "00000000001",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let pool = rayon::ThreadPoolBuilder::new().num_threads(5).build().unwrap();
        // Words evenly through the file made out of range (a vertex or joint index: reported after the block,
        // where its largest value first appears) or not a number.
        for k in 0..40 {
            let (start, end) = words[k * words.len() / 40 + 7];
            for swap in ["99999", "x"] {
                let mut t = text.clone();
                t.splice(start..end, swap.bytes());
                pool.install(|| same_as_token_reader(&t, None, &format!("{swap} at byte {start}")));
            }
        }
        for case in 0..120 {
            let (start, end) = words[rnd(words.len())];
            let mut t = text.clone();
            match rnd(4) {
                0 => {
                    t.splice(start..end, SWAPS[rnd(SWAPS.len())].bytes());
                }
                1 => {
                    t.drain(start..end);
                }
                2 => {
                    t.splice(end..end, format!(" {}", SWAPS[rnd(SWAPS.len())]).bytes());
                }
                _ => {
                    t.splice(end..end + 1, ["\r\n", "\t", "", "\n\n"][rnd(4)].bytes());
                }
            }
            let joint_count = [None, Some(19), Some(3)][case % 3];
            let what = format!("case {case} at byte {start}");
            if case % 2 == 0 {
                same_as_token_reader(&t, joint_count, &what);
            } else {
                pool.install(|| same_as_token_reader(&t, joint_count, &what));
            }
        }
    }
}
