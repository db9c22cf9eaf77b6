//! The Check panel driven through egui_kittest: run a check, click a problem, fix it, undo.
#![allow(clippy::unwrap_used)]

mod common;

use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;
use skinbind::app::document::Document;
use skinbind::app::{FakeDialog, SkinbindApp};
use skinbind::check::Kind;
use skinbind::model::Row;
use skinbind::render::Shading;
use skinbind::sample::SampleKind;

/// The creature with half of each row on the left ankle over a small patch of the head (the 8 vertices nearest
/// its frontmost head vertex): a stray island of a far joint's weight.
fn creature_with_island() -> (Document, Vec<u32>, u16) {
    let mut doc = Document::sample(SampleKind::Creature, 4000).unwrap();
    let skel = &doc.skeleton;
    let ankle = skel.find("ankle_l")[0] as u16;
    let head = skel.find("head")[0] as u16;
    let skin = doc.skin.as_mut().unwrap();
    let w = skin.weights().unwrap().clone();
    let p = skin.positions().to_vec();
    let front = (0..p.len())
        .filter(|&v| w.row(v).0 == [head])
        .max_by(|&a, &b| p[a].z.total_cmp(&p[b].z))
        .unwrap();
    let mut near: Vec<u32> = (0..p.len() as u32).filter(|&v| w.row(v as usize).0 == [head]).collect();
    near.sort_by(|&a, &b| {
        p[a as usize]
            .distance(p[front])
            .total_cmp(&p[b as usize].distance(p[front]))
    });
    near.truncate(8);
    near.sort_unstable();
    let rows: Vec<(u32, Row)> = near.iter().map(|&v| (v, vec![(head, 0.5), (ankle, 0.5)])).collect();
    skin.set_weights(Some(w.with_rows(&rows).unwrap())).unwrap();
    (doc, near, ankle)
}

fn ankle_weight(h: &egui_kittest::Harness<'_, SkinbindApp>, island: &[u32], ankle: u16) -> f32 {
    let w = h.state().document().skin.as_ref().unwrap().weights().unwrap();
    island
        .iter()
        .map(|&v| {
            let (js, ws) = w.row(v as usize);
            js.iter().position(|&j| j == ankle).map_or(0.0, |k| ws[k])
        })
        .sum()
}

#[test]
fn a_check_finds_a_stray_island_a_click_shows_it_and_its_fix_is_one_undoable_edit() {
    let (doc, island, ankle) = creature_with_island();
    let planted = doc.skin.as_ref().unwrap().weights().unwrap().clone();
    let rest = doc.pose.clone();
    let mut h = common::gui::harness_with(doc, FakeDialog::new(), [1800.0, 1000.0]);
    h.get_by_label("View").click();
    h.run();
    h.get_by_label("Check panel").click();
    h.run();
    // Close the menu.
    h.key_press(Key::Escape);
    h.run();
    h.get_by_label("Run check").click();
    h.run_steps(2);
    common::gui::wait_for_idle(&mut h, 120.0);
    let (report, current) = h.state().check_report().expect("a report");
    assert!(current);
    let first = report.clone();
    assert!(
        h.state().status().text.starts_with("Check: "),
        "{:?}",
        h.state().status()
    );
    assert_eq!(h.state().viewport().settings.shading, Shading::Check);
    let jump = report
        .findings
        .iter()
        .find(|f| f.kind == Kind::Jump && f.joint == Some(ankle as usize))
        .expect("a jump when the ankle moves");
    assert!(
        jump.region.vertices.iter().all(|v| island.contains(v)),
        "{:?}",
        jump.region.vertices
    );
    let region = jump.region.vertices.clone();
    let label = format!("{:.2}  jump · ankle_l", jump.severity);
    assert!(region.iter().all(|&v| report.vertex_worst[v as usize] >= 1.0));
    // The filters: hiding jumps hides its row; one joint's row in "Worst joints" lists that joint's problems only.
    let rows = |h: &egui_kittest::Harness<'_, SkinbindApp>| h.query_all_by_label_contains(" vertices").count();
    let all = report.findings.len().min(200);
    let jumps = report.counts[Kind::Jump.index()];
    let of_ankle = report
        .findings
        .iter()
        .filter(|f| f.joint == Some(ankle as usize))
        .count();
    let ankle_row = report
        .joints
        .iter()
        .find(|s| s.joint == ankle as usize)
        .map(|s| format!("{:.2}  ankle_l · {} problems", s.worst, s.findings))
        .unwrap();
    // Other labels name vertices too (the status bar's counts): the list's rows are what changes.
    let others = rows(&h) - all;
    assert!(others <= 3, "{others}");
    h.get_by_label(&format!("jump {jumps}")).click();
    h.run();
    assert_eq!(rows(&h) - others, all - jumps);
    h.get_by_label(&format!("jump {jumps}")).click();
    h.run();
    h.get_by_label("Worst joints").click();
    h.run();
    h.get_by_label(&ankle_row).click();
    h.run();
    assert_eq!(rows(&h) - others, of_ankle);
    // The list shows it; a click poses the rig where it is worst, as one edit, and selects the region.
    h.get_by_label_contains(&label).click();
    h.run();
    let doc = h.state().document();
    assert_ne!(doc.pose, rest, "the rig is posed at the problem");
    assert_eq!(doc.selected, Some(ankle as usize));
    assert_eq!(doc.selected_vertices, region);
    assert!(
        h.state().history_names().last().unwrap().starts_with("pose at ankle_l"),
        "{:?}",
        h.state().history_names()
    );
    // The suggested fix removes the stray ankle weight as one edit; the ankle is checked again.
    assert!(ankle_weight(&h, &island, ankle) > 3.9);
    h.get_by_label("Remove stray weight").click();
    h.run_steps(2);
    common::gui::wait_for_idle(&mut h, 120.0);
    assert_eq!(ankle_weight(&h, &island, ankle), 0.0, "{:?}", h.state().status());
    let names = h.state().history_names();
    assert_eq!(
        names.last().unwrap(),
        "remove stray weight (jump at ankle_l)",
        "{names:?}"
    );
    assert!(
        h.state().status().text.starts_with("Checked again:"),
        "{:?}",
        h.state().status()
    );
    let (report, current) = h.state().check_report().unwrap();
    assert!(current, "the report follows the fix");
    assert!(
        !report
            .findings
            .iter()
            .any(|f| f.kind == Kind::Jump && f.joint == Some(ankle as usize)),
        "{:?}",
        report
            .findings
            .iter()
            .filter(|f| f.kind == Kind::Jump)
            .collect::<Vec<_>>()
    );
    // Undo gives back the planted weights bit for bit; the report is then out of date and says so.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert!(*h.state().document().skin.as_ref().unwrap().weights().unwrap() == planted);
    assert!(!h.state().check_report().unwrap().1);
    h.get_by_label_contains("The rig changed since this check");
    // "Check what changed" checks again only the joints the undo can alter, and the report is then what a whole
    // check of the planted weights gives: the jump is back, and so is every other finding.
    let whole = first.clone();
    h.get_by_label("Check what changed").click();
    h.run_steps(2);
    common::gui::wait_for_idle(&mut h, 120.0);
    assert!(
        h.state().status().text.starts_with("Checked again:"),
        "{:?}",
        h.state().status()
    );
    let (again, current) = h.state().check_report().unwrap();
    assert!(current);
    assert_eq!(again.findings, whole.findings);
    assert_eq!(again.vertex_worst, whole.vertex_worst);
}

/// The panel's report and `skinbind check --json`'s on the same files: the same poses, findings and worst.
fn same_findings(h: &egui_kittest::Harness<'_, skinbind::app::SkinbindApp>, dir: &std::path::Path, flags: &[&str]) {
    let mut args = vec!["check", "--skel", "rig.skel", "--skin", "rig.skin", "--json"];
    args.extend_from_slice(flags);
    let o = common::cli::run(dir, &args);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let cli: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let (panel, _) = h.state().check_report().expect("a report");
    let panel: serde_json::Value = serde_json::from_str(&serde_json::to_string(panel).unwrap()).unwrap();
    for field in ["poses", "vertices", "triangles", "worst", "counts", "findings"] {
        assert_eq!(
            panel[field],
            cli[field],
            "{field} differs from `skinbind {}`",
            args.join(" ")
        );
    }
}

/// Issue 43 item 4: the Check panel and `skinbind check` on the same rig agree (the panel measured the clip's
/// frames and the command line did not): the panel shows its options as the command's flags, and with the same
/// options both give the same poses and findings, without the animation and with it.
#[test]
fn the_check_panel_and_the_cli_agree_on_the_same_rig_and_options() {
    use skinbind::formats::{anim::write_anim, skel::write_skel, skin::write_skin};
    let d = tempfile::tempdir().unwrap();
    let doc = Document::sample(SampleKind::Creature, 1500).unwrap();
    let paths = ["rig.skel", "rig.skin", "rig.anim"].map(|n| d.path().join(n));
    let write = |p: &std::path::Path, f: &dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>| {
        let mut file = std::fs::File::create(p).unwrap();
        f(&mut file).unwrap();
    };
    write(&paths[0], &|w| write_skel(w, &doc.skeleton));
    write(&paths[1], &|w| write_skin(w, doc.skin.as_ref().unwrap()));
    write(&paths[2], &|w| write_anim(w, doc.clip.as_ref().unwrap()));
    let dialog = FakeDialog::new().with_open(paths.to_vec());
    let mut h = common::gui::harness_with(doc, dialog, [1280.0, 800.0]);
    common::gui::menu(&mut h, "File", "Open... Ctrl+O");
    common::gui::wait_for_loads(&mut h);
    common::gui::menu(&mut h, "View", "Check panel");
    h.key_press(Key::Escape);
    h.run();
    let shown = |h: &egui_kittest::Harness<'_, skinbind::app::SkinbindApp>, text: &str| {
        let by = egui_kittest::kittest::By::new().include_labels().label_contains(text);
        h.query_all(by).count() == 1
    };
    assert!(shown(
        &h,
        "no animation frames. The same findings as `skinbind check --degrees 90 --steps 3`."
    ));
    h.get_by_label("Run check").click();
    h.run_steps(2);
    common::gui::wait_for_idle(&mut h, 120.0);
    same_findings(&h, d.path(), &[]);
    // With the animation's frames: --anim.
    h.get_by_label("Options").click();
    h.run();
    h.get_by_label("Animation frames").click();
    h.run();
    assert!(shown(
        &h,
        "the animation's frames too. The same findings as `skinbind check --degrees 90 --steps 3 --anim rig.anim`."
    ));
    h.get_by_label("Run check").click();
    h.run_steps(2);
    common::gui::wait_for_idle(&mut h, 120.0);
    same_findings(&h, d.path(), &["--anim", "rig.anim"]);
}
