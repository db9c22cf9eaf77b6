//! Small skinned glTF models built in code, for the hostile-file tests and the fuzzer's seeds: a chain of
//! joints, one triangle bound to the first, and one animation whose single two-key rotation sampler every
//! joint's channel shares. Tests edit the JSON (`with`) to make each hostile shape.

use serde_json::{Value, json};

/// The shape of a generated model.
pub struct Spec {
    /// Joints in a chain (node 0 the root, node i the parent of node i + 1); the mesh node comes after them.
    pub joints: usize,
    /// The animation's last key time, in seconds (its first is 0).
    pub seconds: f32,
}

/// Byte ranges in the binary buffer, in order: positions, joints, weights, indices, inverse bind matrices,
/// key times, rotations.
const POSITIONS: usize = 0;
const JOINTS: usize = 36;
const WEIGHTS: usize = 48;
const INDICES: usize = 96;
const IBMS: usize = 104;

/// The model's JSON (its one buffer in the GLB chunk, `byteLength` set) and binary buffer.
pub fn model(spec: &Spec) -> (Value, Vec<u8>) {
    let mut b = Vec::new();
    let floats = |b: &mut Vec<u8>, v: &[f32]| b.extend(v.iter().flat_map(|x| x.to_le_bytes()));
    floats(&mut b, &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    b.extend_from_slice(&[0u8; 12]);
    for _ in 0..3 {
        floats(&mut b, &[1.0, 0.0, 0.0, 0.0]);
    }
    b.extend([0u16, 1, 2, 0].iter().flat_map(|i| i.to_le_bytes()));
    assert_eq!(b.len(), IBMS);
    for j in 0..spec.joints {
        // Joint j sits at (0, j, 0): its inverse bind matrix moves it back to the origin.
        let m = glam::Mat4::from_translation(glam::Vec3::new(0.0, -(j as f32), 0.0));
        floats(&mut b, &m.to_cols_array());
    }
    let times = b.len();
    floats(&mut b, &[0.0, spec.seconds]);
    let rotations = b.len();
    let turned = glam::Quat::from_rotation_z(1.0);
    floats(&mut b, &[0.0, 0.0, 0.0, 1.0]);
    floats(&mut b, &turned.to_array());
    let view = |offset: usize, length: usize| json!({ "buffer": 0, "byteOffset": offset, "byteLength": length });
    let n = spec.joints;
    let nodes: Vec<Value> = (0..n)
        .map(|j| {
            let mut node =
                json!({ "name": format!("j{j}"), "translation": [0.0, if j == 0 { 0.0 } else { 1.0 }, 0.0] });
            if j + 1 < n {
                node["children"] = json!([j + 1]);
            }
            node
        })
        .chain([json!({ "name": "mesh", "mesh": 0, "skin": 0 })])
        .collect();
    let channels: Vec<Value> = (0..n)
        .map(|j| json!({ "sampler": 0, "target": { "node": j, "path": "rotation" } }))
        .collect();
    let json = json!({
        "asset": { "version": "2.0" },
        "scene": 0,
        "scenes": [{ "nodes": [0, n] }],
        "nodes": nodes,
        "skins": [{ "joints": (0..n).collect::<Vec<_>>(), "inverseBindMatrices": 4 }],
        "meshes": [{ "primitives": [{ "attributes": { "POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2 }, "indices": 3 }] }],
        "animations": [{ "name": "long", "samplers": [{ "input": 5, "output": 6, "interpolation": "LINEAR" }], "channels": channels }],
        "buffers": [{ "byteLength": b.len() }],
        "bufferViews": [
            view(POSITIONS, 36), view(JOINTS, 12), view(WEIGHTS, 48), view(INDICES, 6), view(IBMS, 64 * n),
            view(times, 8), view(rotations, 32)
        ],
        "accessors": [
            { "bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0] },
            { "bufferView": 1, "componentType": 5121, "count": 3, "type": "VEC4" },
            { "bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC4" },
            { "bufferView": 3, "componentType": 5123, "count": 3, "type": "SCALAR" },
            { "bufferView": 4, "componentType": 5126, "count": n, "type": "MAT4" },
            { "bufferView": 5, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0.0], "max": [spec.seconds] },
            { "bufferView": 6, "componentType": 5126, "count": 2, "type": "VEC4" }
        ]
    });
    (json, b)
}

/// `json` with the member at `pointer` (a JSON pointer; its parent must exist) set to `value`.
pub fn with(mut json: Value, pointer: &str, value: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    match json.pointer_mut(parent).unwrap() {
        Value::Array(items) => items[key.parse::<usize>().unwrap()] = value,
        Value::Object(map) => drop(map.insert(key.to_string(), value)),
        _ => panic!("{pointer}: the parent is neither an object nor an array"),
    }
    json
}

/// The GLB container around `json` and `bin` (the binary chunk padded to 4 bytes).
pub fn glb(json: &Value, bin: &[u8]) -> Vec<u8> {
    let mut j = serde_json::to_vec(json).unwrap();
    while j.len() % 4 != 0 {
        j.push(b' ');
    }
    let mut bin = bin.to_vec();
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let total = 12 + 8 + j.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}

/// The hostile shapes of issue 39 as GLB files, each named: an hour-long animation shared by every joint,
/// a sampler input of count 0, channels aiming past the nodes or at `matrix`, a cycle among the joints, a
/// buffer whose `byteLength` lies, and a position that is not finite.
pub fn hostile_shapes() -> Vec<(&'static str, Vec<u8>)> {
    let (base, bin) = model(&Spec {
        joints: 300,
        seconds: 3600.0,
    });
    let (small, small_bin) = model(&Spec {
        joints: 4,
        seconds: 1.0,
    });
    let mut inf_bin = small_bin.clone();
    inf_bin[0..4].copy_from_slice(&f32::INFINITY.to_le_bytes());
    vec![
        ("an hour shared by 300 joints", glb(&base, &bin)),
        (
            "a sampler input of count 0",
            glb(&with(small.clone(), "/accessors/5/count", json!(0)), &small_bin),
        ),
        (
            "a channel past the nodes",
            glb(
                &with(small.clone(), "/animations/0/channels/1/target/node", json!(99)),
                &small_bin,
            ),
        ),
        (
            "a matrix channel",
            glb(
                &with(small.clone(), "/animations/0/channels/1/target/path", json!("matrix")),
                &small_bin,
            ),
        ),
        (
            "a cycle among the joints",
            glb(&with(small.clone(), "/nodes/2/children", json!([1])), &small_bin),
        ),
        (
            "a byteLength of 1e18",
            glb(
                &with(
                    small.clone(),
                    "/buffers/0/byteLength",
                    json!(1_000_000_000_000_000_000u64),
                ),
                &small_bin,
            ),
        ),
        ("an infinite position", glb(&small, &inf_bin)),
    ]
}
