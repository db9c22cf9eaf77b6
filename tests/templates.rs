//! The shipped template skeletons: the files in `assets/templates/` are what `rig::templates` makes
//! (`SKINBIND_BLESS=1 cargo test --test templates` writes them again), each reads back as itself, and each,
//! placed in a shared character's bounding box by `skinbind template --mesh`, binds that mesh with no vertex
//! left without weight and goes through `.glb` and back as the same joints.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use common::cli::run;
use skinbind::formats::{self, gltf::load_gltf, skel::write_skel};
use skinbind::model::{Pose, world_from_joint};
use skinbind::rig::templates::{TemplateKind, template};

#[test]
fn shipped_templates_are_what_the_generator_makes_and_read_back_as_it() {
    let bless = std::env::var("SKINBIND_BLESS").as_deref() == Ok("1");
    for kind in TemplateKind::ALL {
        let skel = template(kind);
        let mut made = Vec::new();
        write_skel(&mut made, &skel).unwrap();
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("assets/templates/{}.skel", kind.name()));
        if bless {
            std::fs::write(&path, &made).unwrap();
            eprintln!("blessed {}", path.display());
            continue;
        }
        assert!(
            made == kind.shipped().as_bytes(),
            "assets/templates/{}.skel differs from what the generator makes; `SKINBIND_BLESS=1 cargo test --test \
             templates` writes it again",
            kind.name()
        );
        let back = formats::skel::read_skel(kind.shipped().as_bytes(), None).unwrap();
        assert!(back.warnings.is_empty());
        assert_eq!(back.value, skel, "{kind:?}");
    }
}

#[test]
fn the_template_command_writes_the_shipped_file_and_refuses_an_unknown_kind() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), &["template", "--kind", "hand", "-o", "hand.skel"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stdout, "hand.skel: hand template, 21 joints\n");
    assert_eq!(
        std::fs::read_to_string(d.path().join("hand.skel")).unwrap(),
        TemplateKind::Hand.shipped()
    );
    let o = run(d.path(), &["template", "--kind", "octopus", "-o", "x.skel"]);
    assert_eq!(o.code, 2);
}

/// `--mesh-front +x` places the template in the box of a mesh lying along x, its head at +x; a bad axis is exit 2
/// before any file is read, and the front needs a mesh.
#[test]
fn the_template_command_places_a_template_the_way_the_mesh_is_said_to_face() {
    let d = tempfile::tempdir().unwrap();
    // A box 6 long along x, 2.5 tall, 2 wide: an animal facing +X.
    let (lo, hi) = (glam::Vec3::new(-3.0, 0.0, -1.0), glam::Vec3::new(3.0, 2.5, 1.0));
    let mut obj = String::new();
    for i in 0..8 {
        let pick = |bit: usize, a: f32, b: f32| if i >> bit & 1 == 0 { a } else { b };
        obj += &format!(
            "v {} {} {}\n",
            pick(0, lo.x, hi.x),
            pick(1, lo.y, hi.y),
            pick(2, lo.z, hi.z)
        );
    }
    for f in ["1 3 4 2", "5 6 8 7", "1 2 6 5", "3 7 8 4", "1 5 7 3", "2 4 8 6"] {
        obj += &format!("f {f}\n");
    }
    std::fs::write(d.path().join("long_x.obj"), obj).unwrap();
    let place = |mesh: &str, front: &str, out: &str| {
        run(
            d.path(),
            &[
                "template",
                "--kind",
                "quadruped",
                "--mesh",
                mesh,
                "--mesh-front",
                front,
                "-o",
                out,
            ],
        )
    };
    let o = place("long_x.obj", "+x", "q.skel");
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (0, "q.skel: quadruped template, 27 joints\n"),
        "{}",
        o.stderr
    );
    let skel = formats::load_skeleton(&d.path().join("q.skel")).unwrap().value;
    let world = world_from_joint(&skel, &Pose::from_file(&skel));
    let at = |name: &str| world[skel.find(name)[0]].w_axis.truncate();
    let (head, tail) = (at("Head"), at("Tail"));
    assert!(head.x > tail.x + 3.0, "head {head}, tail {tail}");
    for m in &world {
        let p = m.w_axis.truncate();
        assert!(
            p.cmpge(lo - 1e-4).all() && p.cmple(hi + 1e-4).all(),
            "{p} outside the box"
        );
    }
    let o = place("missing.obj", "+w", "x.skel");
    assert_eq!(
        (o.code, o.stderr.as_str()),
        (
            2,
            "skinbind: --mesh-front `+w`: expected an axis: x, y or z, with an optional sign\n"
        )
    );
    let o = run(
        d.path(),
        &["template", "--kind", "quadruped", "--mesh-front", "+x", "-o", "x.skel"],
    );
    assert_eq!(o.code, 2, "{}", o.stderr);
}

/// Each template placed into a shared character's box binds it fully and survives a .glb round trip.
#[test]
fn templates_placed_in_a_shared_mesh_box_bind_every_vertex_and_round_trip_through_glb() {
    let Some(data) = common::data_dir() else { return };
    let q = data.join("gltf/quaternius");
    let cases = [
        (TemplateKind::Biped, q.join("Smooth_Male_Casual.glb")),
        (TemplateKind::Quadruped, q.join("farm/Horse.glb")),
        (TemplateKind::Bird, q.join("Frog.glb")),
        (TemplateKind::Hand, q.join("farm/Pig.glb")),
        (TemplateKind::Chain, q.join("Trex.glb")),
    ];
    let d = tempfile::tempdir().unwrap();
    for (kind, mesh) in cases {
        let name = kind.name();
        let mesh = mesh.to_str().unwrap();
        let skel_path = format!("{name}.skel");
        let o = run(
            d.path(),
            &["template", "--kind", name, "--mesh", mesh, "-o", &skel_path],
        );
        assert_eq!(o.code, 0, "{}", o.stderr);
        let bound = format!("{name}.skin");
        let o = run(d.path(), &["bind", "--skel", &skel_path, "--skin", mesh, "-o", &bound]);
        assert_eq!(o.code, 0, "{name}: {}", o.stderr);
        let skel = formats::load_skel(&d.path().join(&skel_path)).unwrap().value;
        let skin = formats::load_skin(&d.path().join(&bound), Some(skel.len()))
            .unwrap()
            .value;
        let w = skin.weights().unwrap();
        assert_eq!(w.unweighted().count(), 0, "{name} on {mesh}");
        // Through .glb: the same joints, names and pivots.
        let glb = format!("{name}.glb");
        let o = run(d.path(), &["convert", &skel_path, &bound, "-o", &glb]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        let back = load_gltf(&d.path().join(&glb), None).unwrap().value;
        let names = |s: &skinbind::model::Skeleton| s.joints().iter().map(|j| j.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&back.skeleton), names(&skel), "{name}");
        let (a, b) = (
            world_from_joint(&skel, &Pose::from_file(&skel)),
            world_from_joint(&back.skeleton, &Pose::from_file(&back.skeleton)),
        );
        for (x, y) in a.iter().zip(&b) {
            assert!(
                (x.w_axis - y.w_axis).length() < 1e-4,
                "{name}: {} vs {}",
                x.w_axis,
                y.w_axis
            );
        }
    }
}
