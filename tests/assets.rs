//! The files in `assets/` are what the program ships: the sample rig must be byte for byte what the project's own
//! generator makes (`SKINBIND_BLESS=1` writes them again), and the editor opens on exactly that rig.

use std::path::Path;

use skinbind::assets;
use skinbind::formats::{anim::write_anim, skel::write_skel, skin::write_skin};
use skinbind::sample::{make_sample, walk_clip};

fn generated() -> [(&'static str, Vec<u8>, &'static str); 3] {
    let s = make_sample(assets::SAMPLE.0, assets::SAMPLE.1).expect("sample");
    let clip = walk_clip(&s.skeleton, assets::SAMPLE_WALK_PERIOD);
    let text = |f: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let mut out = Vec::new();
        f(&mut out).expect("write");
        out
    };
    [
        (
            "creature.skel",
            text(&|w| write_skel(w, &s.skeleton)),
            assets::SAMPLE_SKEL,
        ),
        ("creature.skin", text(&|w| write_skin(w, &s.skin)), assets::SAMPLE_SKIN),
        (
            "creature_walk.anim",
            text(&|w| write_anim(w, &clip)),
            assets::SAMPLE_ANIM,
        ),
    ]
}

#[test]
fn the_shipped_sample_rig_is_what_the_generator_makes() {
    let bless = std::env::var("SKINBIND_BLESS").as_deref() == Ok("1");
    for (name, made, shipped) in generated() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets").join(name);
        if bless {
            std::fs::write(&path, &made).expect("write asset");
            eprintln!("blessed {}", path.display());
            continue;
        }
        assert!(
            made == shipped.as_bytes(),
            "assets/{name} differs from what the generator makes; `SKINBIND_BLESS=1 cargo test --test assets` \
             writes it again"
        );
    }
}

#[test]
fn the_shipped_rig_reads_back_as_the_generated_one_and_the_icon_decodes() {
    let (skel, skin, clip) = assets::sample_rig().expect("the shipped rig reads");
    let s = make_sample(assets::SAMPLE.0, assets::SAMPLE.1).expect("sample");
    assert_eq!(skel, s.skeleton);
    assert!(skin == s.skin, "the skin read back differs from the generated one");
    assert_eq!(clip, walk_clip(&s.skeleton, assets::SAMPLE_WALK_PERIOD));
    let (rgba, w, h) = assets::icon_rgba().expect("icon");
    assert_eq!((w, h), (256, 256));
    assert_eq!(rgba.len(), 256 * 256 * 4);
    // The corners are transparent (a rounded square) and the middle is not.
    assert_eq!(rgba[3], 0);
    assert_eq!(rgba[(128 * 256 + 128) * 4 + 3], 255);
}
