//! Peak heap while parsing a skin stays under twice the loaded model (issue 2), thanks to the streaming lexer
//! and counts that never pre-allocate beyond what the file can hold.
#![allow(clippy::unwrap_used)]

use peakmem_alloc::{INSTRUMENTED_SYSTEM, PeakMemAlloc, PeakMemAllocTrait};
use skinbind::atomic::save_atomic;
use skinbind::formats::{load_skin, skin::write_skin};
use skinbind::sample::{SampleKind, make_sample};

/// The system allocator, with a counter of the peak heap above a reset point.
#[global_allocator]
static ALLOC: &PeakMemAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

#[test]
fn parsing_peak_memory_is_under_twice_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("creature.skin");
    {
        let s = make_sample(SampleKind::Creature, 200_000).unwrap();
        save_atomic(&path, |w| write_skin(w, &s.skin)).unwrap();
    }
    let file_len = std::fs::metadata(&path).unwrap().len() as usize;
    ALLOC.reset_peak_memory();
    let skin = load_skin(&path, None).unwrap().value;
    let peak = ALLOC.get_peak_memory();
    let model = skin.heap_bytes();
    assert!(peak < 2 * model, "peak {peak} bytes for a model of {model} bytes");
    assert!(peak < file_len, "the file ({file_len} bytes) is never held whole");
}
