//! Fuzzing every reader on the stable toolchain: the bytes of real files (the shared course files and glTF
//! characters) and of generated rigs are mutated, and each reader must answer (a value or a located error)
//! without a panic, within a time bound and a memory bound. A value it accepts must also survive the writers:
//! written and read again, it reads, and for the skeleton, animation and morph formats it reads back equal.
//!
//! Mutations are byte edits (bit flips, interesting bytes, deletions, copies, truncation, a region repeated
//! hundreds of times), numbers swapped for interesting ones (`nan`, `1e38`, `65536`, `-1`), and for JSON (glTF
//! and sessions) edits of the parsed document: a value replaced by an interesting one (an index past the end,
//! a uri such as `../../../../etc/passwd` or `/dev/zero`, a component type of FLOAT), a key removed, an array
//! emptied or doubled. A GLB is rebuilt around its edited JSON so that the container stays readable. Inputs
//! that read are added to the corpus (up to a bound), so edits stack up run after run.
//!
//! The test suite runs each target for `SKINBIND_FUZZ_SECONDS` seconds (2 by default); the long run and what
//! it found are in docs/formats.md ("Hostile files"). `SKINBIND_FUZZ_TARGETS=gltf,skel` picks targets and
//! `SKINBIND_FUZZ_SEED` the first seed. A failing input is saved under `target/fuzz-failures/` and named in the
//! failure message; `SKINBIND_FUZZ_REPLAY=FILE` (with one target) runs that input alone and prints what happened.
#![allow(clippy::unwrap_used)]

mod common;

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use peakmem_alloc::{INSTRUMENTED_SYSTEM, PeakMemAlloc, PeakMemAllocTrait};
use serde_json::Value;
use skinbind::app::document::Document;
use skinbind::app::session::{Origin, SessionFile, ViewState};
use skinbind::formats::{anim, glb, gltf::AnimationChoice, gltf::load_gltf, load_rig, morph, obj, skel, skin};
use skinbind::sample::{SampleKind, make_sample, walk_clip};

/// The system allocator, with a counter of the peak heap (one target runs at a time, on this thread).
#[global_allocator]
static ALLOC: &PeakMemAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

/// The largest mutated input tried.
const MAX_INPUT: usize = 4 << 20;
/// Inputs that read, kept per target for further mutation.
const MAX_CORPUS: usize = 200;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "3",
    "4",
    "255",
    "256",
    "65535",
    "65536",
    "-65536",
    "2147483647",
    "4294967295",
    "4294967296",
    "1e9",
    "-1e9",
    "1e38",
    "-1e38",
    "3.5e38",
    "1e-45",
    "1e400",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "0.5",
    "99999999999999999999",
    "5126",
    "5125",
    "5123",
    "5121",
    "34962",
    "0x10",
    "1.",
    ".",
    "-",
];
const BYTES: &[u8] = b"{}[]:,\"\n\r\t -.e0189/\\#%\x00\xff";
const STRINGS: &[&str] = &[
    "../../../../etc/passwd",
    "/etc/passwd",
    "/proc/self/environ",
    "/dev/zero",
    "file:///etc/passwd",
    "%2e%2e/%2e%2e/etc/passwd",
    "data:application/octet-stream;base64,AAAA",
    "data:,xyz",
    "",
    "SCALAR",
    "VEC4",
    "MAT4",
    "\u{1b}[2J",
];

/// One byte-level edit.
fn mutate_bytes(rng: &mut Rng, data: &mut Vec<u8>) {
    let len = data.len();
    match rng.below(9) {
        0 if len > 0 => {
            let i = rng.below(len);
            data[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            data[i] = *rng.pick(BYTES);
        }
        2 if len > 0 => {
            let i = rng.below(len);
            let n = 1 + rng.below(16.min(len - i));
            data.drain(i..i + n);
        }
        3 if len > 0 => {
            let (i, j) = (rng.below(len), rng.below(len));
            let n = 1 + rng.below(64.min(len - i));
            let chunk: Vec<u8> = data[i..i + n].to_vec();
            data.splice(j..j, chunk);
        }
        4 if len > 0 => {
            data.truncate(rng.below(len));
        }
        5 if len > 0 => {
            // A region repeated many times: deep nesting, long lines, many records.
            let i = rng.below(len);
            let n = 1 + rng.below(40.min(len - i));
            let times = 1 + rng.below(2000);
            let chunk: Vec<u8> = data[i..i + n].repeat(times);
            let at = rng.below(len);
            data.splice(at..at, chunk);
        }
        6 => swap_number(rng, data),
        7 => {
            let at = rng.below(len + 1);
            let n = 1 + rng.below(8);
            let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            data.splice(at..at, bytes);
        }
        _ => swap_number(rng, data),
    }
    data.truncate(MAX_INPUT);
}

/// Replace one number in text with an interesting one.
fn swap_number(rng: &mut Rng, data: &mut Vec<u8>) {
    let len = data.len();
    if len == 0 {
        return;
    }
    let start = rng.below(len);
    let Some(i) = (start..len).chain(0..start).find(|&i| data[i].is_ascii_digit()) else {
        return;
    };
    let (mut a, mut b) = (i, i);
    let numeric = |c: u8| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b'e' | b'E' | b'+');
    while a > 0 && numeric(data[a - 1]) {
        a -= 1;
    }
    while b < len && numeric(data[b]) {
        b += 1;
    }
    data.splice(a..b, rng.pick(NUMBERS).bytes());
}

/// An interesting JSON value to put somewhere.
fn json_value(rng: &mut Rng) -> Value {
    match rng.below(6) {
        0 => Value::from(*rng.pick(&[0i64, 1, 2, 3, 4, 5, 6, 7, 8, 16, 100, 255, 65535, 65536, -1])),
        1 => Value::from(*rng.pick(&[5120i64, 5121, 5122, 5123, 5125, 5126, 34962, 34963, 4294967295, 1 << 40])),
        2 => Value::from(*rng.pick(STRINGS)),
        3 => Value::from(*rng.pick(&[0.0f64, -1.0, 1e30, 1e-30, 0.5])),
        4 => Value::Array(vec![]),
        _ => Value::Null,
    }
}

/// One edit of a parsed JSON document at a random node.
fn mutate_json(rng: &mut Rng, v: &mut Value, depth: usize) {
    let descend = depth < 12 && rng.below(4) != 0;
    match v {
        Value::Object(map) if !map.is_empty() => {
            let key = map.keys().nth(rng.below(map.len())).cloned().unwrap();
            if descend {
                mutate_json(rng, map.get_mut(&key).unwrap(), depth + 1);
            } else if rng.below(3) == 0 {
                map.remove(&key);
            } else {
                map.insert(key, json_value(rng));
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let i = rng.below(items.len());
            if descend {
                mutate_json(rng, &mut items[i], depth + 1);
            } else {
                match rng.below(4) {
                    0 => drop(items.remove(i)),
                    1 => {
                        let copy = items[i].clone();
                        items.push(copy);
                    }
                    2 => items.clear(),
                    _ => items[i] = json_value(rng),
                }
            }
        }
        _ => *v = json_value(rng),
    }
}

/// A GLB's JSON and binary chunks, when it parses as one.
fn split_glb(data: &[u8]) -> Option<(Value, Vec<u8>)> {
    let word = |at: usize| {
        data.get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    if data.get(..4) != Some(b"glTF") {
        return None;
    }
    let json_len = word(12)?;
    let json: Value = serde_json::from_slice(data.get(20..20 + json_len)?).ok()?;
    let bin_at = 20 + json_len;
    let bin = match word(bin_at) {
        Some(n) => data.get(bin_at + 8..bin_at + 8 + n)?.to_vec(),
        None => Vec::new(),
    };
    Some((json, bin))
}

fn make_glb(json: &Value, bin: &[u8]) -> Vec<u8> {
    let mut j = serde_json::to_vec(json).unwrap();
    while j.len() % 4 != 0 {
        j.push(b' ');
    }
    let total = 12 + 8 + j.len() + if bin.is_empty() { 0 } else { 8 + bin.len() };
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    if !bin.is_empty() {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(bin);
    }
    out
}

/// A mutated copy of `seed`: one to four edits, structure-aware for JSON half of the time.
fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let edits = 1 + rng.below(4);
    if rng.below(2) == 0 {
        if let Some((mut json, bin)) = split_glb(seed) {
            for _ in 0..edits {
                mutate_json(rng, &mut json, 0);
            }
            return make_glb(&json, &bin);
        }
        if let Ok(mut json) = serde_json::from_slice::<Value>(seed) {
            for _ in 0..edits {
                mutate_json(rng, &mut json, 0);
            }
            return serde_json::to_vec(&json).unwrap();
        }
    }
    let mut data = seed.to_vec();
    for _ in 0..edits {
        mutate_bytes(rng, &mut data);
    }
    data
}

/// What a target does with one input: `Ok(true)` when it read, `Ok(false)` for a clean refusal, `Err` for a
/// broken property (beside panics, which the runner catches).
type Check = fn(&[u8], &Path) -> Result<bool, String>;

fn text_target<T: PartialEq + std::fmt::Debug>(
    data: &[u8],
    read: impl Fn(&[u8]) -> Result<T, skinbind::formats::ParseError>,
    write: impl Fn(&mut Vec<u8>, &T) -> std::io::Result<()>,
    equal: bool,
) -> Result<bool, String> {
    let Ok(value) = read(data) else { return Ok(false) };
    let mut out = Vec::new();
    if let Err(e) = write(&mut out, &value) {
        // Writers refuse what they cannot write faithfully (a non-finite number); that is a clean answer.
        return if e.kind() == std::io::ErrorKind::InvalidData {
            Ok(true)
        } else {
            Err(format!("write failed: {e}"))
        };
    }
    let back = read(&out).map_err(|e| format!("what was written does not read back: {e}"))?;
    if equal && back != value {
        return Err("read -> write -> read changed the value".into());
    }
    Ok(true)
}

fn check_skel(data: &[u8], _: &Path) -> Result<bool, String> {
    text_target(
        data,
        |d| skel::read_skel(d, Some(d.len() as u64)).map(|p| p.value),
        |o, v| skel::write_skel(o, v),
        true,
    )
}

fn check_skin(data: &[u8], _: &Path) -> Result<bool, String> {
    let read = |d: &[u8]| skin::read_skin(d, Some(d.len() as u64), None).map(|p| p.value);
    text_target(data, read, |o, v| skin::write_skin(o, v), false)
}

fn check_anim(data: &[u8], _: &Path) -> Result<bool, String> {
    let read = text_target(
        data,
        |d| anim::read_anim(d, Some(d.len() as u64)).map(|p| p.value),
        |o, v| anim::write_anim(o, v),
        true,
    )?;
    // A clip that reads is sampled through the one bounded sampler and evaluated at every frame, as check and
    // export do: a hostile range or key time is an error or a value, never an allocation past the bounds.
    if let Ok(p) = anim::read_anim(data, Some(data.len() as u64)) {
        let clip = p.value;
        let budget = skinbind::model::FrameBudget {
            per_frame: clip.channels.len().max(1),
            unit: "channels",
            limit: 1e6,
            who: "the fuzz test",
        };
        if let Ok(times) = clip.sample_times(skinbind::model::SAMPLE_FPS, 1, Some(budget)) {
            for t in times {
                let values: f32 = clip.channels.iter().map(|c| c.eval(t)).sum();
                std::hint::black_box(values);
            }
        }
    }
    Ok(read)
}

fn check_morph(data: &[u8], _: &Path) -> Result<bool, String> {
    let read = |d: &[u8]| morph::read_morph(d, Some(d.len() as u64)).map(|p| p.value);
    text_target(data, read, |o, v| morph::write_morph(o, v), true)
}

fn check_obj(data: &[u8], _: &Path) -> Result<bool, String> {
    let read = |mut d: &[u8]| obj::read_obj(&mut d, None).map(|p| p.value);
    text_target(
        data,
        read,
        |o, k| obj::write_obj(o, k.positions(), k.normals(), k.texcoords(), k.triangles()),
        false,
    )
}

/// glTF: written to `dir` (beside a copy of the buffers a seed's uris name) and loaded; a rig that loads is
/// exported to .glb, which must load again.
fn check_gltf(data: &[u8], dir: &Path) -> Result<bool, String> {
    let path = dir.join(if data.starts_with(b"glTF") {
        "model.glb"
    } else {
        "model.gltf"
    });
    std::fs::write(&path, data).unwrap();
    let Ok(rig) = load_gltf(&path, None) else {
        return Ok(false);
    };
    let rig = rig.value;
    match glb::write_glb(
        &rig.skeleton,
        &rig.skin,
        None,
        glb::GlbOptions {
            unweighted_to_root: true,
        },
    ) {
        Ok(bytes) => {
            let again = dir.join("again.glb");
            std::fs::write(&again, bytes).unwrap();
            load_gltf(&again, None).map_err(|e| format!("the exported .glb does not read back: {e}"))?;
        }
        Err(glb::GlbError::NotFinite(_)) => {}
        Err(e) => return Err(format!("an imported rig does not export: {e}")),
    }
    Ok(true)
}

/// FBX: written to `dir` and loaded with every animation sampled (ufbx under our limits, then our import); a
/// rig that loads is exported to .glb with its clips, which must load again with as many clips.
fn check_fbx(data: &[u8], dir: &Path) -> Result<bool, String> {
    let path = dir.join("model.fbx");
    std::fs::write(&path, data).unwrap();
    let Ok(rig) = load_rig(&path, &AnimationChoice::All) else {
        return Ok(false);
    };
    let rig = rig.value;
    let clips: Vec<(&str, &skinbind::model::Clip)> =
        rig.animations.iter().map(|c| (c.name.as_str(), &c.clip)).collect();
    let options = glb::GlbOptions {
        unweighted_to_root: true,
    };
    match glb::write_glb_clips(&rig.skeleton, &rig.skin, &clips, options) {
        Ok(bytes) => {
            let again = dir.join("again.glb");
            std::fs::write(&again, bytes).unwrap();
            let back = load_gltf(&again, None).map_err(|e| format!("the exported .glb does not read back: {e}"))?;
            if back.value.animations.len() != clips.len() {
                return Err(format!(
                    "{} clips exported, {} read back",
                    clips.len(),
                    back.value.animations.len()
                ));
            }
        }
        // Refusals, not failures: a value glTF cannot hold, or clips whose 30 frames a second (the file's rate
        // may be lower) pass what one export takes.
        Err(
            glb::GlbError::NotFinite(_)
            | glb::GlbError::AnimationsTooLong { .. }
            | glb::GlbError::AnimationTooLong { .. }
            | glb::GlbError::Frames(_),
        ) => {}
        Err(e) => return Err(format!("an imported rig does not export: {e}")),
    }
    Ok(true)
}

/// Sessions: parsed and restored as the editor opens them; one that restores is captured and restored again.
fn check_session(data: &[u8], dir: &Path) -> Result<bool, String> {
    let path = dir.join("s.skinbind");
    let Ok(s) = serde_json::from_slice::<SessionFile>(data) else {
        return Ok(false);
    };
    let Ok((doc, view)) = s.restore(&path, Origin::Opened) else {
        return Ok(false);
    };
    let again = SessionFile::capture(&doc, view).map_err(|e| format!("capture failed: {e:#}"))?;
    let json = serde_json::to_vec(&again).unwrap();
    let back: SessionFile = serde_json::from_slice(&json).map_err(|e| format!("does not parse back: {e}"))?;
    back.restore(&path, Origin::Opened)
        .map_err(|e| format!("does not restore again: {e:#}"))?;
    Ok(true)
}

/// The seeds of a target: shared files with these extensions (when the data is there) and generated ones.
fn seeds(target: &str) -> Vec<Vec<u8>> {
    let sample = make_sample(SampleKind::Creature, 300).unwrap();
    let written = |f: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let mut v = Vec::new();
        f(&mut v).unwrap();
        v
    };
    let k = &sample.skin;
    let mut out: Vec<Vec<u8>> = match target {
        "skel" => vec![written(&|o| skel::write_skel(o, &sample.skeleton))],
        "skin" => vec![written(&|o| skin::write_skin(o, k))],
        "anim" => vec![written(&|o| anim::write_anim(o, &walk_clip(&sample.skeleton, 1.0)))],
        "obj" => vec![written(&|o| {
            obj::write_obj(o, k.positions(), k.normals(), k.texcoords(), k.triangles())
        })],
        "gltf" => vec![glb::write_glb(&sample.skeleton, k, None, glb::GlbOptions::default()).unwrap()],
        "fbx" => vec![common::fbx_build::small_rig().into_bytes()],
        "session" => {
            let mut doc = Document::new("s", sample.skeleton.clone(), Some(k.clone()), None);
            doc.clip = Some(walk_clip(&doc.skeleton, 1.0));
            let s = SessionFile::capture(&doc, ViewState::default()).unwrap();
            vec![serde_json::to_vec(&s).unwrap()]
        }
        _ => Vec::new(),
    };
    if target == "gltf" {
        // Issue 39's hostile shapes (an hour shared by every joint, empty inputs, bad targets, a node cycle, a
        // lying byteLength, an infinite position), so that mutations start from them too.
        out.extend(common::gltf_build::hostile_shapes().into_iter().map(|(_, bytes)| bytes));
    }
    // Hostile shapes (issue 39): absurd ranges and key times, a row of repeated influences, many unknown OBJ
    // keywords; mutations stack on them.
    match target {
        "anim" => {
            for range in ["0 1e9", "0 3e38", "-3e38 3e38", "5 -1e7", "0 1e7"] {
                out.push(format!("animation {{\n  range {range}\n}}\n").into_bytes());
            }
            out.push(
                b"animation {\n  range -1 1e9\n  numchannels 2\n  channel {\n    extrapolate cycle bounce\n    keys 2 {\n      \
                  -3e38 0 smooth smooth\n      3e38 1 linear linear\n    }\n  }\n  channel {\n    extrapolate linear \
                  cycle_offset\n    keys 2 {\n      0 -3e38 linear linear\n      1e-30 3e38 1e38 -1e38\n    }\n  }\n}\n"
                    .to_vec(),
            );
        }
        "skin" => {
            let row: String = (0..3000).map(|i| format!(" {} 0.5", i % 7)).collect();
            out.push(format!("positions 1 {{\n0 0 0\n}}\nskinweights 1 {{\n3000{row}\n}}\n").into_bytes());
        }
        "obj" => {
            let unknown: String = (0..3000).map(|i| format!("k{} 1\nl 1 2\n", i % 500)).collect();
            out.push(format!("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n{unknown}").into_bytes());
        }
        _ => {}
    }
    if target == "morph" {
        out.push(b"positions 2 {\n  0 0.5 0 0\n  3 0 0 1\n}\nnormals 1 {\n  0 0 1 0\n}\n".to_vec());
    }
    let ext: &[&str] = match target {
        "gltf" => &["glb", "gltf"],
        "session" | "obj" => &[],
        t => &[t][..],
    };
    if !ext.is_empty() {
        if let Some(data) = common::data_dir() {
            let mut files: Vec<PathBuf> = Vec::new();
            for sub in ["cse169", "gltf", "gltf/quaternius", "fbx"] {
                if let Ok(rd) = std::fs::read_dir(data.join(sub)) {
                    files.extend(rd.flatten().map(|e| e.path()));
                }
            }
            files.sort();
            for f in files {
                if f.extension().and_then(|e| e.to_str()).is_some_and(|e| ext.contains(&e)) {
                    out.push(std::fs::read(&f).unwrap());
                }
            }
        }
    }
    out
}

/// How long one input may take and how much it may allocate.
fn bounds(input: usize) -> (Duration, usize) {
    let time = if cfg!(debug_assertions) { 20.0 } else { 2.0 };
    (Duration::from_secs_f64(time), (512 << 20) + 64 * input)
}

/// The processor time this process has used, where Linux says (`/proc/self/stat`, in ticks of 10 ms), else
/// `None`. Time is bounded in processor time: on a busy machine a wall clock counts the time spent waiting.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // After the command name in parentheses: state is field 3; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// How long `f` takes: processor time where it can be read, else wall time.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let (wall, cpu) = (Instant::now(), cpu_time());
    let out = f();
    let took = match (cpu, cpu_time()) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => wall.elapsed(),
    };
    (out, took)
}

/// Whether `input` takes longer than `bound` once more.
fn slow_again(check: Check, input: &[u8], dir: &Path, bound: Duration) -> bool {
    let (_, took) = timed(|| std::panic::catch_unwind(AssertUnwindSafe(|| check(input, dir))));
    took > bound
}

/// Run `target` for `seconds` from `seed`; returns the inputs tried and the failures, each with the file it
/// was saved to.
fn run(target: &str, check: Check, seconds: f64, seed: u64) -> (usize, usize, Vec<String>) {
    let mut corpus = seeds(target);
    let originals = corpus.len();
    let dir = tempfile::tempdir().unwrap();
    // A glTF seed's external buffers (SimpleSkin.gltf keeps its buffer as a data uri; a file beside is for
    // uris that a mutation points at a name).
    std::fs::write(dir.path().join("buffer.bin"), vec![0u8; 4096]).unwrap();
    let saved = Path::new(env!("CARGO_TARGET_TMPDIR")).join("../fuzz-failures");
    let mut rng = Rng(seed | 1);
    let (mut tried, mut accepted) = (0, 0);
    let mut failures = Vec::new();
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < seconds && failures.len() < 10 {
        let base = rng.below(corpus.len());
        let input = mutate(&mut rng, &corpus[base]);
        let (time_bound, memory_bound) = bounds(input.len());
        ALLOC.reset_peak_memory();
        let (outcome, took) = timed(|| std::panic::catch_unwind(AssertUnwindSafe(|| check(&input, dir.path()))));
        let peak = ALLOC.get_peak_memory();
        tried += 1;
        let problem = match outcome {
            Err(_) => Some("panicked".to_string()),
            Ok(Err(e)) => Some(e),
            // A slow input is run again before it counts.
            Ok(Ok(_)) if took > time_bound && slow_again(check, &input, dir.path(), time_bound) => {
                Some(format!("took {took:?}, and again over {time_bound:?}"))
            }
            Ok(Ok(_)) if peak > memory_bound => Some(format!("peak heap {peak} bytes")),
            Ok(Ok(true)) => {
                accepted += 1;
                if corpus.len() < originals + MAX_CORPUS {
                    corpus.push(input.clone());
                } else {
                    let i = originals + rng.below(MAX_CORPUS);
                    corpus[i] = input.clone();
                }
                None
            }
            Ok(Ok(false)) => None,
        };
        if let Some(p) = problem {
            std::fs::create_dir_all(&saved).unwrap();
            let file = saved.join(format!("{target}-{seed}-{tried}.bin"));
            std::fs::write(&file, &input).unwrap();
            failures.push(format!("{target}: {p} on {}", file.display()));
        }
    }
    (tried, accepted, failures)
}

#[test]
fn every_reader_answers_mutated_files_without_panic_within_bounds() {
    let seconds: f64 = std::env::var("SKINBIND_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    let seed: u64 = std::env::var("SKINBIND_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed);
    let chosen = std::env::var("SKINBIND_FUZZ_TARGETS").ok();
    let replay = std::env::var_os("SKINBIND_FUZZ_REPLAY").map(PathBuf::from);
    let targets: [(&str, Check); 8] = [
        ("skel", check_skel),
        ("skin", check_skin),
        ("anim", check_anim),
        ("morph", check_morph),
        ("obj", check_obj),
        ("gltf", check_gltf),
        ("fbx", check_fbx),
        ("session", check_session),
    ];
    let mut failures = Vec::new();
    for (name, check) in targets {
        if chosen.as_deref().is_some_and(|c| !c.split(',').any(|t| t == name)) {
            continue;
        }
        if let Some(file) = &replay {
            // One saved input, through this target's check, with its time and peak heap.
            let input = std::fs::read(file).unwrap();
            let dir = tempfile::tempdir().unwrap();
            ALLOC.reset_peak_memory();
            let began = Instant::now();
            let outcome = check(&input, dir.path());
            println!(
                "replay {name} {}: {outcome:?} in {:?}, peak heap {} bytes",
                file.display(),
                began.elapsed(),
                ALLOC.get_peak_memory()
            );
            continue;
        }
        let (tried, accepted, mut f) = run(name, check, seconds, seed);
        println!(
            "fuzz {name}: {tried} inputs in {seconds} s, {accepted} read, {} failures",
            f.len()
        );
        assert!(tried > 0, "{name}: no input was tried");
        failures.append(&mut f);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Issue 39's hostile glTF shapes, each through the glTF target's check within the fuzzer's time and memory
/// bounds: an hour-long sampler shared by 300 joints, a sampler input of count 0, channels aiming past the nodes
/// or at `matrix`, a cycle among the joints, a `byteLength` of 1e18 (in the GLB, and naming a sparse file of
/// 20 GiB beside a `.gltf`), an infinite position.
#[test]
fn hostile_gltf_shapes_answer_within_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let mut shapes = common::gltf_build::hostile_shapes();
    let (json, bin) = common::gltf_build::model(&common::gltf_build::Spec {
        joints: 4,
        seconds: 1.0,
    });
    let big = dir.path().join("big.bin");
    std::fs::write(&big, &bin).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(20 << 30)
        .unwrap();
    let lying = common::gltf_build::with(
        json,
        "/buffers/0",
        serde_json::json!({ "uri": "big.bin", "byteLength": 1_000_000_000_000_000_000u64 }),
    );
    shapes.push((
        "a byteLength of 1e18 naming a sparse 20 GiB file",
        serde_json::to_vec(&lying).unwrap(),
    ));
    for (name, input) in shapes {
        let (time_bound, memory_bound) = bounds(input.len());
        ALLOC.reset_peak_memory();
        let (outcome, took) = timed(|| std::panic::catch_unwind(AssertUnwindSafe(|| check_gltf(&input, dir.path()))));
        let peak = ALLOC.get_peak_memory();
        println!("{name}: {outcome:?} in {took:?}, peak heap {peak} bytes");
        assert!(matches!(outcome, Ok(Ok(_))), "{name}: {outcome:?}");
        assert!(took < time_bound, "{name}: took {took:?}");
        assert!(peak < memory_bound, "{name}: peak heap {peak} bytes");
    }
}
