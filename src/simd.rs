//! Which instruction set the hot loops run with, chosen once at run time.
//!
//! The crate is compiled for the x86-64 baseline (SSE2), so that the binary runs on any x86-64 processor. A few
//! hot functions (the visibility traversal, the linear BVH build, the near-bone and end distances,
//! a grid cell's weights pass) are also compiled a second time for x86-64-v3 (AVX2, BMI1/2, LZCNT, POPCNT: every
//! x86-64 processor since 2013-2015) from the same source (the body is one `#[inline(always)]` function, wrapped
//! twice: [`two_copies!`]), and the function callers use calls that copy when the processor has those features.
//! What such a body hands to rayon as a closure is a function of its own, compiled for the baseline only
//! (closures do not take the enclosing function's features), so the copies are of sequential loops. Why: the VEX
//! encoding's three-operand forms and the wider bit instructions make a `line` bind about a tenth faster, most of
//! what compiling the whole crate for x86-64-v3 would give (docs/binding.md, "Speed").
//!
//! Both copies compute the same values bit for bit: no fused multiply-add is enabled (Rust never contracts a
//! multiply and an add by itself), and every operation used is IEEE-exact in either encoding. The tests run the
//! two copies side by side.
//!
//! `SKINBIND_SIMD=portable` in the environment (read once), or [`set_portable`], keeps to the baseline copies.

use std::sync::atomic::{AtomicU8, Ordering};

const UNKNOWN: u8 = 0;
const PORTABLE: u8 = 1;
const V3: u8 = 2;

static CHOICE: AtomicU8 = AtomicU8::new(UNKNOWN);

/// `$name`, a copy of the function `$body` (which should be `#[inline(always)]`) compiled for x86-64-v3, to be
/// called through [`dispatch!`]. The feature list here and in `detect` must agree.
///
/// The copy is an `unsafe fn` (a safe function with `target_feature` needs Rust 1.86; the crate supports 1.85):
/// calling it on a processor without the features is undefined behaviour, which [`dispatch!`] rules out.
macro_rules! v3_clone {
    ($(#[$m:meta])* $vis:vis fn $name:ident $(<$($lt:lifetime),*>)? ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? => $body:path) => {
        $(#[$m])*
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx,avx2,bmi1,bmi2,lzcnt,popcnt,sse3,ssse3,sse4.1,sse4.2")]
        #[allow(unsafe_code)]
        $vis unsafe fn $name $(<$($lt),*>)? ($($arg: $ty),*) $(-> $ret)? {
            $body($($arg),*)
        }
    };
}
pub(crate) use v3_clone;

/// Whether this processor has every feature of the x86-64-v3 copies.
pub(crate) fn detect() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx")
            && std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("lzcnt")
            && std::arch::is_x86_feature_detected!("popcnt")
            && std::arch::is_x86_feature_detected!("sse3")
            && std::arch::is_x86_feature_detected!("ssse3")
            && std::arch::is_x86_feature_detected!("sse4.1")
            && std::arch::is_x86_feature_detected!("sse4.2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the x86-64-v3 copies run: the processor has their features, and neither `SKINBIND_SIMD=portable` nor
/// [`set_portable`] asked for the baseline. Only ever true where those copies exist and the features are there.
#[inline]
pub fn v3() -> bool {
    match CHOICE.load(Ordering::Relaxed) {
        V3 => true,
        PORTABLE => false,
        _ => {
            let portable = std::env::var_os("SKINBIND_SIMD").is_some_and(|v| v == "portable");
            let choice = if !portable && detect() { V3 } else { PORTABLE };
            // Only a first choice is stored: a `set_portable` made meanwhile stands.
            match CHOICE.compare_exchange(UNKNOWN, choice, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => choice == V3,
                Err(now) => now == V3,
            }
        }
    }
}

/// Keep to the baseline copies (`true`), or use the x86-64-v3 ones where the processor has their features
/// (`false`). The answers are the same either way; this is for comparing the two.
pub fn set_portable(portable: bool) {
    let choice = if !portable && detect() { V3 } else { PORTABLE };
    CHOICE.store(choice, Ordering::Relaxed);
}

/// `$v3(args)` when [`v3`] says so, else `$portable(args)`: `$v3` must be made by [`v3_clone!`] from
/// `$portable`, so that the only difference is the encoding. Used through [`two_copies!`].
macro_rules! dispatch {
    ($v3:path, $portable:path, ($($arg:ident),* $(,)?)) => {
        match () {
            #[cfg(target_arch = "x86_64")]
            #[allow(unsafe_code)]
            // SAFETY: `v3()` is true only when the processor has every feature `$v3` is compiled with; the
            // arguments are plain variables, so nothing else runs inside the block.
            () if $crate::simd::v3() => unsafe { $v3($($arg),*) },
            () => $portable($($arg),*),
        }
    };
}
pub(crate) use dispatch;

/// A function `$name` whose body is the `#[inline(always)]` function `$body` (same parameters), run as
/// compiled for x86-64-v3 when the processor has those features ([`v3()`]), else as compiled for the baseline;
/// `$v3` names the x86-64-v3 copy ([`v3_clone!`], called through [`dispatch!`]). `$name` may take `&self` or
/// `&mut self`; in an `impl`, both paths begin with `Self::`. A free function may name a second body for the
/// x86-64-v3 copy (`= v3_name / baseline_body, v3_body`), the same source with wider SIMD steps.
macro_rules! two_copies {
    // An associated function.
    ($(#[$m:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?
        = Self::$v3:ident / $body:path) => {
        $(#[$m])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            $crate::simd::dispatch!(Self::$v3, $body, ($($arg),*))
        }
        $crate::simd::v3_clone! { fn $v3($($arg: $ty),*) $(-> $ret)? => $body }
    };
    // A free function whose x86-64-v3 copy runs another body, `$v3_body` (the same function with wider SIMD
    // steps, say, as a generic instantiated twice): `= v3_name / baseline_body, v3_body`.
    ($(#[$m:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?
        = $v3:ident / $body:path, $v3_body:path) => {
        $(#[$m])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            $crate::simd::dispatch!($v3, $body, ($($arg),*))
        }
        $crate::simd::v3_clone! { fn $v3($($arg: $ty),*) $(-> $ret)? => $v3_body }
    };
    // A free function: both copies run `$body`.
    ($(#[$m:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?
        = $v3:ident / $body:path) => {
        $crate::simd::two_copies! {
            $(#[$m])* $vis fn $name($($arg: $ty),*) $(-> $ret)? = $v3 / $body, $body
        }
    };
    ($(#[$m:meta])* $vis:vis fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) $(-> $ret:ty)?
        = Self::$v3:ident / $body:path) => {
        $(#[$m])*
        $vis fn $name(&self $(, $arg: $ty)*) $(-> $ret)? {
            $crate::simd::dispatch!(Self::$v3, $body, (self $(, $arg)*))
        }
        $crate::simd::v3_clone! { fn $v3(this: &Self $(, $arg: $ty)*) $(-> $ret)? => $body }
    };
    ($(#[$m:meta])* $vis:vis fn $name:ident(&mut self $(, $arg:ident: $ty:ty)* $(,)?) $(-> $ret:ty)?
        = Self::$v3:ident / $body:path) => {
        $(#[$m])*
        $vis fn $name(&mut self $(, $arg: $ty)*) $(-> $ret)? {
            $crate::simd::dispatch!(Self::$v3, $body, (self $(, $arg)*))
        }
        $crate::simd::v3_clone! { fn $v3(this: &mut Self $(, $arg: $ty)*) $(-> $ret)? => $body }
    };
}
pub(crate) use two_copies;

/// Held by the tests that switch between the copies, so that each sees the copy it asks for.
#[cfg(test)]
pub(crate) static SWITCH: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_follows_the_processor_and_the_override() {
        let _switch = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
        set_portable(true);
        assert!(!v3());
        set_portable(false);
        assert_eq!(v3(), detect());
    }
}
