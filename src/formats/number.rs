//! Numbers in the text formats: decimal `f32`s read as the standard library reads them (correctly rounded,
//! bit for bit), without `inf` and `nan`, and `u32` indices and counts.
//!
//! PERF: a 1M-vertex `.skin` holds some 7 million decimals, most with 8 to 10 digits, so the common case is read
//! here without the standard library (which checks UTF-8 and parses again): the digits into one integer, then
//! one exact division or multiplication (Clinger, "How to read floating point numbers accurately", 1990).
//! Whatever that cannot answer exactly goes to `str::parse`.

/// `[+-]? (d+ | d+ . d* | . d+) ([eE] [+-]? d+)?`, as `str::parse::<f32>` reads it, finite; `None` for
/// anything else (NaN, infinity, hexadecimal, trailing characters).
pub fn parse_f32(s: &[u8]) -> Option<f32> {
    if let Some((v, n)) = fast_f32(s) {
        if n == s.len() {
            return Some(v);
        }
    }
    // Reject what Rust accepts but the format does not: inf, nan, infinity.
    let first_alpha = s.iter().find(|b| !matches!(b, b'+' | b'-')).copied();
    if !matches!(first_alpha, Some(b'0'..=b'9' | b'.')) {
        return None;
    }
    let text = std::str::from_utf8(s).ok()?;
    let v: f32 = text.parse().ok()?;
    v.is_finite().then_some(v)
}

/// The largest mantissa that is exact in an `f64`.
const MAX_EXACT: u64 = 1 << 53;

/// The decimal number that `s` starts with, and its length in bytes, when an exact answer is cheap; `None`
/// otherwise (then [`parse_f32`] asks the standard library). The grammar is [`parse_f32`]'s; the caller checks
/// what follows.
///
/// Exact by Clinger's fast path: an integer mantissa `m` and a power of ten that are both exact in a float make
/// one correctly rounded multiplication or division. In `f32` that needs `m <= 2^24` and a power up to 10^10;
/// beyond that, `m <= 2^53` and up to 10^22 give the correctly rounded `f64`, which rounds on to the correctly
/// rounded `f32` unless it lies exactly halfway between two `f32`s (every such halfway point is an `f64`, so
/// rounding to `f64` cannot carry a value across one, only onto one; those go to the standard library).
#[inline]
pub fn fast_f32(s: &[u8]) -> Option<(f32, usize)> {
    const POW10_F64: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ];
    // PERF: signs, the point and the number of digits vary from number to number, so this reads them with as
    // few branches as it can (mispredicted branches were a third of a 1M-vertex read's time here).
    let first = s.first().copied().unwrap_or(0);
    let neg = first == b'-';
    let int_start = usize::from(neg | (first == b'+'));
    let (mut i, mut m) = integer(s, int_start)?;
    let mut count = i - int_start;
    let mut e10: i64 = 0;
    if s.get(i) == Some(&b'.') {
        let frac_start = i + 1;
        (i, m) = fraction(s, frac_start, m, count)?;
        count += i - frac_start;
        e10 = -((i - frac_start) as i64);
    }
    if count == 0 {
        return None;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        let exp_neg = match s.get(i) {
            Some(&b) if b == b'-' || b == b'+' => {
                i += 1;
                b == b'-'
            }
            _ => false,
        };
        let exp_start = i;
        let mut exp: i64 = 0;
        while let Some(d) = s.get(i).map(|b| b.wrapping_sub(b'0')).filter(|d| *d <= 9) {
            exp = (exp * 10 + d as i64).min(1 << 20);
            i += 1;
        }
        if i == exp_start {
            return None;
        }
        e10 += if exp_neg { -exp } else { exp };
    }
    let v = if (-22..=22).contains(&e10) {
        let p = POW10_F64[e10.unsigned_abs() as usize];
        let m = m as i64 as f64;
        let x = if e10 < 0 { m / p } else { m * p };
        // 2^53 * 10^22 and 10^-22 are well inside f32's normal range, where an f32 keeps 29 fewer bits than an
        // f64: halfway is a one followed by 28 zeros there.
        if x.to_bits() & ((1 << 29) - 1) == 1 << 28 {
            return None;
        }
        x as f32
    } else if m == 0 {
        0.0
    } else {
        return None;
    };
    // `v` is not negative: setting the sign bit negates it exactly (zero too, as `-0` reads).
    Some((f32::from_bits(v.to_bits() | u32::from(neg) << 31), i))
}

/// The decimal digits from `s[i..]` appended to the mantissa `m`, which holds `before` digits: the index after
/// them and the new mantissa; `None` past 19 digits in all (where a `u64` could overflow) or past 2^53.
#[inline]
fn digits(s: &[u8], mut i: usize, mut m: u64, before: usize) -> Option<(usize, u64)> {
    let start = i;
    while let Some(d) = s.get(i).map(|b| b.wrapping_sub(b'0')).filter(|d| *d <= 9) {
        m = m.wrapping_mul(10).wrapping_add(d as u64);
        i += 1;
    }
    (before + (i - start) <= 19 && m <= MAX_EXACT).then_some((i, m))
}

/// [`digits`] for the digits before the point: fewer than eight from one 64-bit load.
#[inline]
fn integer(s: &[u8], i: usize) -> Option<(usize, u64)> {
    if let Some(b) = s.get(i..i + 8) {
        let v = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        let n = leading_digits(v);
        if n < 8 {
            return Some((i + n, eight_digits(v, n)));
        }
    }
    digits(s, i, 0, 0)
}

/// [`digits`] for the digits after the point, up to 16 of them from two 64-bit loads without a branch per
/// digit (SWAR, as in Lemire's fast_float): where a number's digits end is what a branch predictor cannot learn.
#[inline]
fn fraction(s: &[u8], i: usize, m: u64, before: usize) -> Option<(usize, u64)> {
    const POW10: [u64; 9] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];
    let Some(b) = s.get(i..i + 16) else {
        return digits(s, i, m, before);
    };
    let lo = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    let hi = u64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
    let n_lo = leading_digits(lo);
    let n_hi = leading_digits(hi) * usize::from(n_lo == 8);
    if n_hi == 8 || before + n_lo + n_hi > 19 {
        return digits(s, i, m, before);
    }
    let m = (m * POW10[n_lo] + eight_digits(lo, n_lo)) * POW10[n_hi] + eight_digits(hi, n_hi);
    (m <= MAX_EXACT).then_some((i + n_lo + n_hi, m))
}

/// How many of the eight bytes (first byte lowest) are ASCII digits before the first that is not.
#[inline]
fn leading_digits(v: u64) -> usize {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    // A digit is 0x3_ and stays 0x3_ when 6 is added. A carry out of a byte reaches only the bytes after it,
    // never the first one that is not a digit.
    let not_digit = ((v & HIGH) | ((v.wrapping_add(0x0606_0606_0606_0606) & HIGH) >> 4)) ^ 0x3333_3333_3333_3333;
    (not_digit.trailing_zeros() / 8) as usize
}

/// The value of the first `n` (0 to 8) bytes of `v`, all digits.
#[inline]
fn eight_digits(v: u64, n: usize) -> u64 {
    // Subtracting '0' borrows only from the bytes at or after the first non-digit; shifting them out (in two
    // steps, as `n` may be 0) leaves `n` digits after 8 - n zeros.
    let shift = 4 * (8 - n as u32);
    let d = (v.wrapping_sub(0x3030_3030_3030_3030) << shift) << shift;
    let d = d.wrapping_mul(10).wrapping_add(d >> 8);
    let low = (d & 0x0000_00FF_0000_00FF).wrapping_mul(100 + (1_000_000 << 32));
    let high = ((d >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32));
    low.wrapping_add(high) >> 32
}

/// A count or index: at most 10 digits, no sign, fitting in `u32`.
pub fn parse_u32(s: &[u8]) -> Option<u32> {
    if s.is_empty() || s.len() > 10 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (b - b'0') as u64;
    }
    u32::try_from(v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reader before the fast path: the standard library's, finite, without `inf` and `nan`.
    fn reference(s: &str) -> Option<u32> {
        let first = s.bytes().find(|b| !matches!(b, b'+' | b'-'));
        if !matches!(first, Some(b'0'..=b'9' | b'.')) {
            return None;
        }
        s.parse::<f32>().ok().filter(|v| v.is_finite()).map(f32::to_bits)
    }

    fn same(s: &str) {
        assert_eq!(parse_f32(s.as_bytes()).map(f32::to_bits), reference(s), "{s:?}");
        // As the bulk reader sees a number: followed by more of the file, so that the digits after the point
        // are read eight at a time.
        for after in [" 0.123456789012345678", "\n}\n", "\t9999999999999999"] {
            let text = format!("{s}{after}");
            if let Some((v, n)) = fast_f32(text.as_bytes()) {
                if n == s.len() {
                    assert_eq!(Some(v.to_bits()), reference(s), "{s:?} before {after:?}");
                } else {
                    assert!(reference(s).is_none(), "{s:?} before {after:?} read as {n} bytes");
                }
            }
        }
    }

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            self.0 >> 33
        }
        fn below(&mut self, n: u64) -> usize {
            (self.next() % n) as usize
        }
    }

    #[test]
    fn eight_byte_groups_read_their_leading_digits() {
        for (text, n, value) in [
            ("12345678", 8, 12_345_678),
            ("1234 678", 4, 1234),
            ("00000009", 8, 9),
            ("9}000000", 1, 9),
            ("x2345678", 0, 0),
            ("0123456/", 7, 123_456),
            ("0123456:", 7, 123_456),
            ("01\u{ff}45678", 2, 1),
        ] {
            let v = u64::from_le_bytes(text.as_bytes()[..8].try_into().unwrap());
            assert_eq!(
                (leading_digits(v), eight_digits(v, leading_digits(v))),
                (n, value),
                "{text}"
            );
        }
    }

    #[test]
    fn numbers_round_like_the_standard_library() {
        for s in [
            "0.12623",
            "-0.000001",
            "0.950000",
            "1",
            "-0",
            "+0.",
            "123.456789",
            "1e-7",
            ".5",
            "5.",
            "3.4028235e38",
            "3.40282356e38",
            "1.17549435e-38",
            "1e-45",
            "0e999999",
            "12345678901234567890123",
            "0.00000000000000000000001",
            "-99999999999999999999.5",
            "9007199254740993",
            "9007199254740992e-22",
            "16777217",
            "16777219",
            "33554434",
            "1677721.7e1",
            "0.16777217E8",
            "1.00000005960464477539062",
            "0.0019927425",
            "-0.000019779724",
            "0.78001165",
        ] {
            same(s);
            assert!(parse_f32(s.as_bytes()).is_some(), "{s}");
        }
        for s in [
            "nan",
            "inf",
            "-inf",
            "infinity",
            "1e39",
            "3.4028236e38",
            "1.2.3",
            "--1",
            "",
            "0x10",
            "1,5",
            ".",
            "-",
            "e5",
            "1e",
            "1e+",
            "1.5e-",
            "+-1",
            "1_0",
            "١",
        ] {
            same(s);
            assert_eq!(parse_f32(s.as_bytes()), None, "{s}");
        }
    }

    #[test]
    fn fast_path_matches_std_on_many_short_decimals() {
        let mut x: u32 = 12345;
        for _ in 0..200_000 {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let digits = (x >> 8) % 20_000_000;
            let frac = (x % 9) as usize;
            let mut s = digits.to_string();
            if frac > 0 && frac < s.len() {
                s.insert(s.len() - frac, '.');
            }
            same(&s);
        }
    }

    /// Random strings in and around the grammar: signs, leading zeros, up to 25 digits on either side of the
    /// point, exponents of either case and sign, and a stray character now and then.
    #[test]
    fn random_decimals_read_bit_for_bit_as_the_standard_library_reads_them() {
        let mut rng = Lcg(7);
        for _ in 0..400_000 {
            let mut s = String::new();
            s.push_str(["", "", "-", "+"][rng.below(4)]);
            for _ in 0..[0, 0, 1, 2, 3][rng.below(5)] {
                s.push('0');
            }
            let int_digits = [0, 1, 1, 2, 5, 8, 9, 12, 17, 20, 25][rng.below(11)];
            for _ in 0..int_digits {
                s.push(char::from(b'0' + rng.below(10) as u8));
            }
            if rng.below(4) > 0 {
                s.push('.');
                for _ in 0..[0, 1, 3, 6, 7, 8, 9, 10, 11, 16, 17, 25][rng.below(12)] {
                    s.push(char::from(b'0' + rng.below(10) as u8));
                }
            }
            if rng.below(3) == 0 {
                s.push(['e', 'E'][rng.below(2)]);
                s.push_str(["", "-", "+"][rng.below(3)]);
                let most = [3, 25, 50, 400][rng.below(4)];
                s.push_str(&rng.below(most).to_string());
            }
            if rng.below(50) == 0 {
                let at = rng.below(s.len() as u64 + 1);
                s.insert(at, ['.', 'e', '-', 'x', ' ', '}', '9'][rng.below(7)]);
            }
            same(&s);
        }
    }

    /// Every way writers print an `f32`: the shortest form, 9 and 17 significant digits, fixed, and the
    /// decimals exactly halfway between neighbours (ties go to the even one).
    #[test]
    fn printed_floats_and_halfway_points_read_back_exactly() {
        let mut rng = Lcg(11);
        for _ in 0..100_000 {
            let bits = (rng.next() << 1 | rng.next() & 1) as u32;
            let v = f32::from_bits(bits);
            if !v.is_finite() {
                continue;
            }
            for s in [
                format!("{v}"),
                format!("{v:e}"),
                format!("{v:.8e}"),
                format!("{v:.16e}"),
                format!("{v:.9}"),
            ] {
                same(&s);
            }
            let next = f32::from_bits(bits.wrapping_add(1));
            if next.is_finite() {
                let mid = (v as f64 + next as f64) / 2.0;
                same(&format!("{mid:e}"));
                same(&format!("{mid:.15e}"));
            }
        }
        for k in 0..20_000u64 {
            // Integers halfway between f32 neighbours: 2^24 + odd, 2^25 + 2 * odd.
            same(&((1 << 24) + 2 * k + 1).to_string());
            same(&((1 << 25) + 4 * k + 2).to_string());
            same(&format!("{}e-3", (1u64 << 24) + 2 * k + 1));
        }
    }
}
