//! `.anim`: the CSE169 animation format.
//!
//! ```text
//! animation {
//!     range t0 t1
//!     numchannels N
//!     channel {
//!         extrapolate IN OUT                  constant | linear | cycle | cycle_offset | bounce
//!         keys K {
//!             time value TANIN TANOUT         flat | linear | smooth | a number (a slope)
//!         }
//!     }
//! }
//! ```
//!
//! Evaluation rules are in [`crate::model::anim`]. Key times must increase strictly within a channel. A range
//! of more than [`crate::model::MAX_FRAMES`] frames at [`SAMPLE_FPS`] is read with a warning at the `range`
//! line: playing and posing take it, sampling it (check, compare, export) is refused.

use std::io::{self, Read, Write};

use super::lexer::{Kind, Lexer};
use super::{ParseError, Parsed, Warning, ensure_finite, fmt_f32};
use crate::model::{Channel, Clip, Extrapolation, Key, SAMPLE_FPS, Tangent};

pub fn read_anim(src: impl Read, len: Option<u64>) -> Result<Parsed<Clip>, ParseError> {
    let mut lx = Lexer::new(src, len);
    let (t, w) = lx.word("`animation`")?;
    if w != "animation" {
        return Err(lx_error(t.line, t.col, "`animation`", &w));
    }
    lx.expect_open("after `animation`")?;
    let mut range = None;
    let mut range_at = (0, 0);
    let mut declared: Option<(usize, u32, u32)> = None;
    let mut channels = Vec::new();
    loop {
        let t = lx.next_token()?;
        match t.kind {
            Kind::Close => break,
            Kind::Word => {}
            _ => return Err(lx.error_at(&t, "`range`, `numchannels`, `channel` or `}`")),
        }
        match lx.text(&t) {
            b"range" => {
                let a = lx.f32("a number after `range`")?;
                let b = lx.f32("a number after `range`")?;
                range = Some((a, b));
                range_at = (t.line, t.col);
            }
            b"numchannels" => {
                let n = lx.u32("a channel count after `numchannels`")? as usize;
                declared = Some((n, t.line, t.col));
                channels.reserve(lx.capacity_for(n, 20));
            }
            b"channel" => channels.push(read_channel(&mut lx)?),
            _ => return Err(lx.error_at(&t, "`range`, `numchannels`, `channel` or `}`")),
        }
    }
    let t = lx.next_token()?;
    if t.kind != Kind::End {
        return Err(lx.error_at(&t, "the end of the file after the animation's `}`"));
    }
    if let Some((n, line, col)) = declared {
        if n != channels.len() {
            return Err(ParseError::new(
                line,
                col,
                format!("{n} channels (the declared count)"),
                format!("{} channels", channels.len()),
            ));
        }
    }
    let range = match range {
        Some(r) => r,
        None => {
            // No `range` line: the span of the keys.
            let mut times = channels.iter().flat_map(|c: &Channel| c.keys().iter().map(|k| k.time));
            let first = times.next().unwrap_or(0.0);
            times.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t)))
        }
    };
    let clip = Clip::new(range, channels);
    // Playing and posing take any range; sampling it (check, compare, export) is refused past the frame limit,
    // which the reader says at once, where the range is.
    let mut warnings = Vec::new();
    if let Err(e) = clip.checked_frames(SAMPLE_FPS, 1, None) {
        warnings.push(Warning {
            line: range_at.0,
            col: range_at.1,
            message: format!("{e}: check, compare and export refuse it; playing and posing take it"),
        });
    }
    Ok(Parsed { value: clip, warnings })
}

fn lx_error(line: u32, col: u32, expected: &str, found: &str) -> ParseError {
    ParseError::new(line, col, expected, format!("`{found}`"))
}

fn read_extrapolation(lx: &mut Lexer<impl Read>) -> Result<Extrapolation, ParseError> {
    const WHAT: &str = "an extrapolation (constant, linear, cycle, cycle_offset or bounce)";
    let (t, w) = lx.word(WHAT)?;
    Extrapolation::from_name(&w).ok_or_else(|| lx_error(t.line, t.col, WHAT, &w))
}

fn read_tangent(lx: &mut Lexer<impl Read>) -> Result<Tangent, ParseError> {
    const WHAT: &str = "a tangent (flat, linear, smooth or a number)";
    let (t, w) = lx.word(WHAT)?;
    Ok(match w.as_str() {
        "flat" => Tangent::Flat,
        "linear" => Tangent::Linear,
        "smooth" => Tangent::Smooth,
        _ => Tangent::Fixed(super::lexer::parse_f32(w.as_bytes()).ok_or_else(|| lx_error(t.line, t.col, WHAT, &w))?),
    })
}

fn read_channel(lx: &mut Lexer<impl Read>) -> Result<Channel, ParseError> {
    let open = lx.expect_open("after `channel`")?;
    let mut extrap = (Extrapolation::Constant, Extrapolation::Constant);
    let mut keys: Option<Vec<Key>> = None;
    loop {
        let t = lx.next_token()?;
        match t.kind {
            Kind::Close => break,
            Kind::Word => {}
            _ => return Err(lx.error_at(&t, "`extrapolate`, `keys` or `}`")),
        }
        match lx.text(&t) {
            b"extrapolate" => extrap = (read_extrapolation(lx)?, read_extrapolation(lx)?),
            b"keys" => {
                let n = lx.u32("a key count after `keys`")? as usize;
                lx.expect_open("after `keys N`")?;
                let mut k = Vec::with_capacity(lx.capacity_for(n, 8));
                for i in 0..n {
                    let t = lx.peek()?;
                    if t.kind == Kind::Close {
                        return Err(lx
                            .error_at(&t, format!("{n} keys (the declared count)"))
                            .with_found_after(i));
                    }
                    let time_tok = t;
                    let time = lx.f32("a key time")?;
                    let value = lx.f32("a key value")?;
                    let tangent_in = read_tangent(lx)?;
                    let tangent_out = read_tangent(lx)?;
                    if let Some(prev) = k.last().map(|p: &Key| p.time) {
                        if time <= prev {
                            return Err(ParseError::new(
                                time_tok.line,
                                time_tok.col,
                                format!("a key time after {prev}"),
                                format!("`{time}`"),
                            ));
                        }
                    }
                    k.push(Key {
                        time,
                        value,
                        tangent_in,
                        tangent_out,
                    });
                }
                let t = lx.next_token()?;
                if t.kind != Kind::Close {
                    let first = lx.describe(&t);
                    let more = 1 + lx.count_words_to_close();
                    return Err(ParseError::new(
                        t.line,
                        t.col,
                        format!("`}}` after {n} keys (the declared count)"),
                        format!("{first}: the block holds {} keys", n + more.div_ceil(4)),
                    ));
                }
                keys = Some(k);
            }
            _ => return Err(lx.error_at(&t, "`extrapolate`, `keys` or `}`")),
        }
    }
    let keys = keys.ok_or_else(|| ParseError::new(open.line, open.col, "a `keys` block in the channel", "none"))?;
    Channel::new(extrap.0, extrap.1, keys)
        .map_err(|e| ParseError::new(open.line, open.col, "a valid channel", e.to_string()))
}

impl ParseError {
    fn with_found_after(mut self, n: usize) -> Self {
        self.found = format!("{} after {n}", self.found);
        self
    }
}

fn tangent_text(buf: &mut ryu::Buffer, t: Tangent) -> String {
    match t {
        Tangent::Flat => "flat".into(),
        Tangent::Linear => "linear".into(),
        Tangent::Smooth => "smooth".into(),
        Tangent::Fixed(v) => fmt_f32(buf, v).into(),
    }
}

/// Write a clip. Refuses (before writing anything) a non-finite range, key or tangent, naming it.
pub fn write_anim(out: &mut dyn Write, clip: &Clip) -> io::Result<()> {
    ensure_finite([[clip.range.0, clip.range.1]], |_| "the range".into())?;
    for (c, ch) in clip.channels.iter().enumerate() {
        let slope = |t: Tangent| if let Tangent::Fixed(v) = t { v } else { 0.0 };
        ensure_finite(
            ch.keys()
                .iter()
                .map(|k| [k.time, k.value, slope(k.tangent_in), slope(k.tangent_out)]),
            |k| format!("channel {c}'s key {k}"),
        )?;
    }
    let mut b = ryu::Buffer::new();
    writeln!(out, "animation {{")?;
    let r0 = fmt_f32(&mut b, clip.range.0).to_string();
    writeln!(out, "  range {r0} {}", fmt_f32(&mut b, clip.range.1))?;
    writeln!(out, "  numchannels {}", clip.channels.len())?;
    for c in &clip.channels {
        writeln!(out, "  channel {{")?;
        writeln!(
            out,
            "    extrapolate {} {}",
            c.extrapolate_in.name(),
            c.extrapolate_out.name()
        )?;
        writeln!(out, "    keys {} {{", c.keys().len())?;
        for k in c.keys() {
            let time = fmt_f32(&mut b, k.time).to_string();
            let value = fmt_f32(&mut b, k.value).to_string();
            let tin = tangent_text(&mut b, k.tangent_in);
            let tout = tangent_text(&mut b, k.tangent_out);
            writeln!(out, "      {time} {value} {tin} {tout}")?;
        }
        writeln!(out, "    }}\n  }}")?;
    }
    writeln!(out, "}}")
}
