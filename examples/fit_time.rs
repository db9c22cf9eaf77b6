#![allow(clippy::unwrap_used)]
use skinbind::rig::fit::{FitInput, FitOptions, fit_template};
use skinbind::sample::{SampleKind, chain_tube, make_sample};
fn main() {
    let template = chain_tube(65, 20_000).unwrap();
    let world = template.skin.bindings().unwrap().to_vec();
    let mesh = make_sample(SampleKind::Creature, 100_000).unwrap();
    let input = FitInput {
        template: &template.skeleton,
        template_world: &world,
        template_mesh: Some((template.skin.positions(), template.skin.triangles())),
        template_weights: template.skin.weights(),
        template_box: None,
        template_widths: None,
        positions: mesh.skin.positions(),
        triangles: mesh.skin.triangles(),
    };
    for turn in [true, false, true, false] {
        let t = std::time::Instant::now();
        let f = fit_template(
            &input,
            &FitOptions {
                turn,
                ..FitOptions::default()
            },
        )
        .unwrap();
        println!(
            "turn {turn}: {:?} warnings {:?}",
            t.elapsed(),
            f.warnings.first().map(|w| &w[..60.min(w.len())])
        );
    }
    let t = std::time::Instant::now();
    let s = skinbind::rig::fit_solid::FitSolid::new(mesh.skin.positions(), mesh.skin.triangles(), 40).unwrap();
    println!("mesh solid at 40: {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let s2 = skinbind::rig::fit_solid::FitSolid::new(template.skin.positions(), template.skin.triangles(), 40).unwrap();
    println!("template solid at 40: {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let f = skinbind::rig::fit_orient::mesh_facing(s2.centres(), s.centres());
    println!(
        "facing: {:?} {:?} ({} and {} cells)",
        t.elapsed(),
        f.map(|f| (f.overlap, f.unturned)),
        s.centres().len(),
        s2.centres().len()
    );
}
