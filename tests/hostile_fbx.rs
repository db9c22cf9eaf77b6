//! FBX files from strangers: each hostile shape is an error naming the file, or a rig with a warning, within a
//! second, never a panic or an allocation the file does not justify (ufbx's limits and ours: docs/formats.md,
//! "FBX"). Built from the small FBX of `common::fbx_build`.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Instant;

use common::cli::run;

/// `info` on `text` written as `name`: exit status, stderr, and the seconds it took.
fn info(name: &str, text: &[u8]) -> (i32, String, f64) {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join(name), text).unwrap();
    let began = Instant::now();
    let o = run(d.path(), &["info", name]);
    (o.code, o.stderr, began.elapsed().as_secs_f64())
}

#[test]
fn hostile_fbx_shapes_are_errors_or_warnings_within_a_second() {
    let small = common::fbx_build::small_rig();
    let chain: String = {
        // A chain of 3,000 nodes: deeper than ufbx is allowed to read.
        let mut s = String::from("; FBX 7.4.0 project file\nObjects:  {\n");
        for i in 0..3000 {
            s += &format!("\tModel: {}, \"Model::n{i}\", \"Null\" {{\n\t}}\n", 1000 + i);
        }
        s += "}\nConnections:  {\n\tC: \"OO\",1000,0\n";
        for i in 1..3000 {
            s += &format!("\tC: \"OO\",{},{}\n", 1000 + i, 999 + i);
        }
        s + "}\n"
    };
    let polygon: String = {
        // One polygon of 5,000 corners beside the triangle: left out, counted.
        let n = 5000;
        let verts: Vec<String> = (0..n).map(|i| format!("{i},{},0", (i * 7) % 13)).collect();
        let mut idx: Vec<String> = (0..n - 1).map(|i| i.to_string()).collect();
        idx.push(format!("{}", -(n as i64)));
        small
            .replace(
                "Vertices: *9 {\n\t\t\ta: 0,0,0,100,0,0,0,100,0",
                &format!("Vertices: *{} {{\n\t\t\ta: {}", 3 * n, verts.join(",")),
            )
            .replace(
                "PolygonVertexIndex: *3 {\n\t\t\ta: 0,1,-3",
                &format!("PolygonVertexIndex: *{} {{\n\t\t\ta: {},0,1,-3", n + 3, idx.join(",")),
            )
    };
    let cases: Vec<(&str, Vec<u8>, i32, String)> = vec![
        (
            "empty.fbx",
            Vec::new(),
            1,
            "empty.fbx: expected an FBX file (binary or ASCII), found something else\n".into(),
        ),
        (
            "skel.fbx",
            b"balljoint root {\n}\n".to_vec(),
            1,
            "skel.fbx: not a readable FBX file: Truncated file\n".into(),
        ),
        (
            "deep.fbx",
            chain.into_bytes(),
            1,
            "deep.fbx: not a readable FBX file: its node tree is deeper than 512\n".into(),
        ),
        (
            "unskinned.fbx",
            small.replace("\tC: \"OO\",500,100\n", "").into_bytes(),
            1,
            "unskinned.fbx: has no skinned mesh (no mesh with a skin deformer) to import\n".into(),
        ),
        (
            // A count of two billion before nine values: read as the nine, nothing reserved for the count.
            "count.fbx",
            small.replace("Vertices: *9 {", "Vertices: *2000000000 {").into_bytes(),
            0,
            String::new(),
        ),
        (
            "polygon.fbx",
            polygon.into_bytes(),
            0,
            "polygon.fbx: warning: not imported: 1 polygons of more than 1024 corners\n".into(),
        ),
    ];
    for (name, bytes, code, stderr) in cases {
        let (got, err, seconds) = info(name, &bytes);
        assert_eq!((got, err.as_str()), (code, stderr.as_str()), "{name}");
        assert!(seconds < 1.0, "{name}: {seconds} s");
    }
}

/// A binary FBX cut short is an error naming the file (the shared files' first 100 kB).
#[test]
fn a_truncated_binary_fbx_is_an_error() {
    let Some(data) = common::data_dir() else { return };
    let bytes = std::fs::read(data.join("fbx/Wolf.fbx")).unwrap();
    for cut in [30, 1000, 100_000] {
        let (code, stderr, _) = info("cut.fbx", &bytes[..cut]);
        assert_eq!(code, 1, "{cut}: {stderr}");
        assert!(
            stderr.starts_with("cut.fbx: not a readable FBX file: "),
            "{cut}: {stderr}"
        );
    }
}
