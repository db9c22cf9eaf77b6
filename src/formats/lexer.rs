//! The one tokenizer under every CSE169 text reader (.skel, .skin, .anim, .morph).
//!
//! The formats are whitespace-separated words and the braces `{` `}`; a brace is a token of its own even when
//! written against a word (`balljoint hip{`). The lexer streams from any [`Read`] through a fixed buffer, so
//! parsing a 120 MB skin never holds the whole file in memory, and it tracks the 1-based line and column (in
//! bytes; a tab is one column) of every token so that errors can say where they are. CR, LF, CRLF, tabs and a
//! missing final newline are all plain whitespace.
//!
//! Numbers: [`Lexer::f32`] accepts decimal numbers with an optional sign, fraction and exponent (`-1.5`, `.5`,
//! `3e-2`); it rejects NaN, infinity, hexadecimal and trailing characters (which C's `atof` would read or
//! ignore), and rounds correctly ([`super::number`]).
//! A token longer than 4096 bytes is an error.

use std::io::Read;

use super::ParseError;
pub use super::number::{parse_f32, parse_u32};

const CHUNK: usize = 256 * 1024;
/// The buffer size once a bulk reader asks for a [`Lexer::window`]: large enough to split over threads. Unit
/// tests take small windows, so that small files cross many of them.
pub(crate) const BULK: usize = if cfg!(test) { 64 << 10 } else { 4 << 20 };
/// Longest token we accept; anything longer is not a number, keyword or name of any real file.
pub(crate) const MAX_TOKEN: usize = 4096;

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Word,
    Open,
    Close,
    End,
}

/// A token's place: its bytes are `buf[start..end]` until the next call that advances the lexer.
#[derive(Clone, Copy, Debug)]
pub struct Token {
    pub kind: Kind,
    start: usize,
    end: usize,
    pub line: u32,
    pub col: u32,
}

/// Whole tokens of unread input, for the bulk readers.
pub(crate) struct Window<'a> {
    pub bytes: &'a [u8],
    /// The line of `bytes[0]`.
    pub line: u32,
    /// Where that line starts, relative to `bytes[0]` (zero or less).
    pub line_start: i64,
}

/// A buffer for `left` more bytes of input: all of them and one more (to see the end), at most `most`.
fn buffer_for(left: u64, most: usize) -> usize {
    usize::try_from(left).map_or(most, |n| n.saturating_add(1).min(most))
}

/// Whether `b` ends a word: whitespace or a brace.
#[inline]
pub(crate) fn is_delimiter(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c | b'{' | b'}')
}

/// Streaming tokenizer with one token of look-ahead.
pub struct Lexer<R> {
    src: R,
    buf: Vec<u8>,
    pos: usize,
    filled: usize,
    eof: bool,
    /// Absolute offset of `buf[0]` in the input.
    base: u64,
    line: u32,
    /// Absolute offset of the first byte of the current line.
    line_start: u64,
    peeked: Option<Token>,
    io_error: Option<std::io::Error>,
    /// Bytes of input not yet consumed, when the length is known; bounds allocations from declared counts.
    total_len: Option<u64>,
    /// No bulk reading: [`Lexer::window`] is always empty, so readers go token by token (the reference that
    /// tests compare the bulk readers to).
    tokens_only: bool,
}

impl<R: Read> Lexer<R> {
    /// `total_len` is the input's length when known (a file's size); it caps allocations from declared counts.
    pub fn new(src: R, total_len: Option<u64>) -> Self {
        Self {
            src,
            // A small file gets a buffer its size (one more byte sees the end), not a zeroed 256 KiB.
            buf: vec![0; total_len.map_or(CHUNK, |len| buffer_for(len, CHUNK).max(4096))],
            pos: 0,
            filled: 0,
            eof: false,
            base: 0,
            line: 1,
            line_start: 0,
            peeked: None,
            io_error: None,
            total_len,
            tokens_only: false,
        }
    }

    /// This lexer without bulk reading ([`Lexer::window`] always empty).
    #[cfg(test)]
    pub(crate) fn tokens_only(mut self) -> Self {
        self.tokens_only = true;
        self
    }

    /// Refill: keep `buf[keep..filled]`, moved to the front, and read more. Returns bytes shifted.
    fn refill(&mut self, keep: usize) -> usize {
        if self.eof {
            return 0;
        }
        let shift = keep;
        self.buf.copy_within(keep..self.filled, 0);
        self.filled -= keep;
        self.pos -= keep;
        self.base += keep as u64;
        if self.filled == self.buf.len() {
            // Only a token as long as the whole buffer gets here: in a small file's buffer, or past MAX_TOKEN.
            self.buf.resize(self.buf.len() * 2, 0);
        }
        loop {
            match self.src.read(&mut self.buf[self.filled..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => {
                    self.filled += n;
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.io_error = Some(e);
                    self.eof = true;
                    break;
                }
            }
        }
        shift
    }

    fn col_at(&self, abs: u64) -> u32 {
        (abs - self.line_start + 1).min(u32::MAX as u64) as u32
    }

    fn scan(&mut self) -> Result<Token, ParseError> {
        // Skip whitespace, counting lines.
        loop {
            if self.pos == self.filled {
                self.refill(self.pos);
                if self.pos == self.filled {
                    if let Some(e) = self.io_error.take() {
                        return Err(ParseError::new(
                            self.line,
                            self.col_at(self.base + self.pos as u64),
                            "more input",
                            format!("a read error: {e}"),
                        ));
                    }
                    let abs = self.base + self.pos as u64;
                    return Ok(Token {
                        kind: Kind::End,
                        start: self.pos,
                        end: self.pos,
                        line: self.line,
                        col: self.col_at(abs),
                    });
                }
            }
            let b = self.buf[self.pos];
            match b {
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                    self.line_start = self.base + self.pos as u64;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                _ => break,
            }
        }
        let start = self.pos;
        let line = self.line;
        let col = self.col_at(self.base + start as u64);
        let kind = match self.buf[start] {
            b'{' => Kind::Open,
            b'}' => Kind::Close,
            _ => Kind::Word,
        };
        if kind != Kind::Word {
            self.pos += 1;
            return Ok(Token {
                kind,
                start,
                end: start + 1,
                line,
                col,
            });
        }
        let mut start = start;
        loop {
            while self.pos < self.filled {
                match self.buf[self.pos] {
                    b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c | b'{' | b'}' => {
                        if self.pos - start > MAX_TOKEN {
                            break;
                        }
                        return Ok(Token {
                            kind,
                            start,
                            end: self.pos,
                            line,
                            col,
                        });
                    }
                    _ => self.pos += 1,
                }
            }
            if self.pos - start > MAX_TOKEN {
                return Err(ParseError::new(
                    line,
                    col,
                    "a token",
                    format!("a token of more than {MAX_TOKEN} characters"),
                ));
            }
            if self.eof {
                return Ok(Token {
                    kind,
                    start,
                    end: self.pos,
                    line,
                    col,
                });
            }
            let shift = self.refill(start);
            start -= shift;
            if self.pos == self.filled && self.eof {
                if let Some(e) = self.io_error.take() {
                    return Err(ParseError::new(line, col, "more input", format!("a read error: {e}")));
                }
            }
        }
    }

    /// For bulk readers ([`super::bulk`]): the unread input up to its last token boundary in the buffer (all of
    /// it at the end of input), so that it holds whole tokens only. The buffer grows to [`BULK`] bytes and is
    /// refilled first when less than half of it is unread. Empty while a token is peeked.
    pub(crate) fn window(&mut self) -> Window<'_> {
        if self.peeked.is_some() || self.tokens_only {
            return Window {
                bytes: &[],
                line: self.line,
                line_start: 0,
            };
        }
        if !self.eof && self.filled - self.pos < BULK / 2 {
            let want = self
                .total_len
                .map_or(BULK, |len| buffer_for(len.saturating_sub(self.base), BULK));
            if self.buf.len() < want {
                self.buf.resize(want, 0);
            }
            // Read until the buffer is full: one read may return little (the head `load` sniffed, a pipe).
            self.refill(self.pos);
            while !self.eof && self.filled < self.buf.len() {
                self.refill(0);
            }
        }
        let unread = &self.buf[self.pos..self.filled.min(self.pos + BULK)];
        let end = if self.eof && self.pos + unread.len() == self.filled {
            unread.len()
        } else {
            unread.iter().rposition(|&b| is_delimiter(b)).map_or(0, |i| i + 1)
        };
        let here = self.base + self.pos as u64;
        Window {
            bytes: &unread[..end],
            line: self.line,
            line_start: self.line_start as i64 - here as i64,
        }
    }

    /// Consume the first `n` bytes of the last [`Lexer::window`], which end on line `line`, whose first byte is
    /// at `line_start` (relative to the window's first byte, as [`Window::line_start`]).
    pub(crate) fn consume(&mut self, n: usize, line: u32, line_start: i64) {
        debug_assert!(self.peeked.is_none() && self.pos + n <= self.filled);
        let here = self.base + self.pos as u64;
        self.pos += n;
        self.line = line;
        self.line_start = (here as i64 + line_start) as u64;
    }

    /// Next token, consuming it. Its text stays readable through [`Lexer::text`] until the next advance.
    pub fn next_token(&mut self) -> Result<Token, ParseError> {
        match self.peeked.take() {
            Some(t) => Ok(t),
            None => self.scan(),
        }
    }

    /// The next token without consuming it.
    pub fn peek(&mut self) -> Result<Token, ParseError> {
        if let Some(t) = self.peeked {
            return Ok(t);
        }
        let t = self.scan()?;
        self.peeked = Some(t);
        Ok(t)
    }

    pub fn text(&self, t: &Token) -> &[u8] {
        &self.buf[t.start..t.end]
    }

    /// How a token reads in an error message.
    pub fn describe(&self, t: &Token) -> String {
        match t.kind {
            Kind::End => "the end of the file".to_string(),
            Kind::Open => "`{`".to_string(),
            Kind::Close => "`}`".to_string(),
            Kind::Word => format!("`{}`", String::from_utf8_lossy(self.text(t))),
        }
    }

    pub fn error_at(&self, t: &Token, expected: impl Into<String>) -> ParseError {
        ParseError::new(t.line, t.col, expected, self.describe(t))
    }

    /// Upper bound on how many items of at least `min_bytes` each the rest of the input can hold.
    pub fn capacity_for(&self, declared: usize, min_bytes: usize) -> usize {
        match self.total_len {
            Some(len) => {
                let consumed = self.base + self.pos as u64;
                let left = len.saturating_sub(consumed) / min_bytes.max(1) as u64;
                declared.min(left.min(usize::MAX as u64) as usize)
            }
            None => declared.min(1 << 16),
        }
    }

    pub fn expect_open(&mut self, context: &str) -> Result<Token, ParseError> {
        let t = self.next_token()?;
        if t.kind != Kind::Open {
            return Err(self.error_at(&t, format!("`{{` {context}")));
        }
        Ok(t)
    }

    pub fn expect_close(&mut self, context: &str) -> Result<Token, ParseError> {
        let t = self.next_token()?;
        if t.kind != Kind::Close {
            return Err(self.error_at(&t, format!("`}}` {context}")));
        }
        Ok(t)
    }

    /// A word (a keyword or name); `what` says what it should be.
    pub fn word(&mut self, what: &str) -> Result<(Token, String), ParseError> {
        let t = self.next_token()?;
        if t.kind != Kind::Word {
            return Err(self.error_at(&t, what));
        }
        Ok((t, String::from_utf8_lossy(self.text(&t)).into_owned()))
    }

    /// A finite decimal number.
    pub fn f32(&mut self, what: &str) -> Result<f32, ParseError> {
        let t = self.next_token()?;
        if t.kind == Kind::Word {
            if let Some(v) = parse_f32(self.text(&t)) {
                return Ok(v);
            }
        }
        Err(self.error_at(&t, what))
    }

    /// A non-negative integer that fits in `u32`.
    pub fn u32(&mut self, what: &str) -> Result<u32, ParseError> {
        let t = self.next_token()?;
        if t.kind == Kind::Word {
            if let Some(v) = parse_u32(self.text(&t)) {
                return Ok(v);
            }
        }
        Err(self.error_at(&t, what))
    }

    /// Skip the rest of the current line's words (after an unknown keyword, as the course loaders do); a brace
    /// ends the skip early and is left to be read.
    pub fn skip_line(&mut self, from_line: u32) -> Result<(), ParseError> {
        loop {
            let t = self.peek()?;
            if t.kind != Kind::Word || t.line != from_line {
                return Ok(());
            }
            self.next_token()?;
        }
    }

    /// Count the entries left before the closing brace of a block (for a "declared N, found M" message).
    /// Consumes tokens; only used on the way to an error.
    pub fn count_words_to_close(&mut self) -> usize {
        let mut n = 0;
        while let Ok(t) = self.next_token() {
            match t.kind {
                Kind::Word => n += 1,
                _ => break,
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(src: &str) -> Vec<(Kind, String, u32, u32)> {
        let mut lx = Lexer::new(src.as_bytes(), Some(src.len() as u64));
        let mut out = Vec::new();
        loop {
            let t = lx.next_token().unwrap();
            out.push((t.kind, String::from_utf8_lossy(lx.text(&t)).into_owned(), t.line, t.col));
            if t.kind == Kind::End {
                return out;
            }
        }
    }

    #[test]
    fn braces_split_from_words_and_positions_are_one_based() {
        let t = tokens("balljoint hip{\r\n\toffset 1 2}");
        let words: Vec<_> = t.iter().map(|x| x.1.as_str()).collect();
        assert_eq!(words, ["balljoint", "hip", "{", "offset", "1", "2", "}", ""]);
        assert_eq!((t[2].2, t[2].3), (1, 14));
        assert_eq!((t[3].2, t[3].3), (2, 2));
        assert_eq!((t[6].2, t[6].3), (2, 12));
    }

    #[test]
    fn tokens_across_chunk_boundaries_keep_text_and_position() {
        // A long first line pushes later tokens across the 256 KiB refill boundary.
        let mut s = " ".repeat(CHUNK - 3);
        s.push_str("12345.5\nabc");
        let t = tokens(&s);
        assert_eq!(t[0].1, "12345.5");
        assert_eq!((t[0].2, t[0].3), (1, CHUNK as u32 - 2));
        assert_eq!((t[1].1.as_str(), t[1].2, t[1].3), ("abc", 2, 1));
    }

    #[test]
    fn overlong_tokens_are_errors_wherever_they_fall() {
        for name in ["x".repeat(MAX_TOKEN + 1), "x".repeat(CHUNK + 10)] {
            let text = format!("balljoint {name} {{ }}");
            let mut lx = Lexer::new(text.as_bytes(), None);
            lx.next_token().unwrap();
            let e = lx.next_token().unwrap_err();
            assert_eq!((e.line, e.col), (1, 11));
        }
        let ok = format!("balljoint {} {{ }}", "x".repeat(MAX_TOKEN));
        let mut lx = Lexer::new(ok.as_bytes(), None);
        lx.next_token().unwrap();
        assert_eq!(lx.next_token().unwrap().kind, Kind::Word);
    }
}
