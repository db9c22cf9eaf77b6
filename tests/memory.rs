//! Peak heap while parsing a skin stays under twice the loaded model (issue 2), thanks to the streaming lexer
//! and counts that never pre-allocate beyond what the file can hold.
#![allow(clippy::unwrap_used)]

use peak_alloc::PeakAlloc;
use skinbind::formats::{load_skin, save_atomic, skin::write_skin};
use skinbind::sample::{SampleKind, make_sample};

#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

#[test]
fn parsing_peak_memory_is_under_twice_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("creature.skin");
    {
        let s = make_sample(SampleKind::Creature, 200_000).unwrap();
        save_atomic(&path, |w| write_skin(w, &s.skin)).unwrap();
    }
    let file_len = std::fs::metadata(&path).unwrap().len() as usize;
    let base = ALLOC.current_usage();
    ALLOC.reset_peak_usage();
    let skin = load_skin(&path, None).unwrap().value;
    let peak = ALLOC.peak_usage() - base;
    let model = skin.heap_bytes();
    assert!(peak < 2 * model, "peak {peak} bytes for a model of {model} bytes");
    assert!(peak < file_len, "the file ({file_len} bytes) is never held whole");
}
