//! Helpers for driving the editor through egui_kittest (shared by the GUI test files).

use egui::Modifiers;
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use skinbind::app::document::Document;
use skinbind::app::{FileDialog, SkinbindApp};
use skinbind::model::Pose;
use skinbind::sample::SampleKind;

/// The editor on `doc` in a `size` window, one frame drawn.
pub fn harness_with(doc: Document, dialog: impl FileDialog + 'static, size: [f32; 2]) -> Harness<'static, SkinbindApp> {
    let app = SkinbindApp::new_for_test(doc, Box::new(dialog));
    let mut h = Harness::builder()
        .with_size(size)
        .with_step_dt(0.05)
        .build_ui_state(|ui, app: &mut SkinbindApp| app.show(ui), app);
    h.run();
    h
}

/// Step frames until no load, weight operation or check runs (each finished one applied), for at most `secs`.
pub fn wait_for_idle(h: &mut Harness<'_, SkinbindApp>, secs: f32) {
    let start = std::time::Instant::now();
    while start.elapsed().as_secs_f32() < secs {
        h.step();
        if h.state().is_idle() {
            h.run();
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    panic!("still busy after {secs} s: {:?}", h.state().status());
}

/// The arm sample: shoulder 0, elbow 1 (x in [-1.2, 1.2], y fixed at 0, z in [0, 2.6]), wrist 2, hand 3, ...
pub fn arm() -> Document {
    Document::sample(SampleKind::Arm, 300).unwrap()
}

pub fn harness(doc: Document, dialog: impl FileDialog + 'static) -> Harness<'static, SkinbindApp> {
    harness_with(doc, dialog, [1400.0, 900.0])
}

pub fn select(h: &mut Harness<'_, SkinbindApp>, name: &str) {
    h.get_by_label(name).click();
    h.run();
}

/// Set the selected joint's rotation about an axis ("Rotation X") the way a screen reader does, in radians: the
/// control shows and takes degrees.
pub fn set_rotation(h: &Harness<'_, SkinbindApp>, label: &str, radians: f64) {
    h.get_by_label(label).set_value_accesskit(radians.to_degrees());
}

pub fn slider<'t>(h: &'t Harness<'_, SkinbindApp>, label: &'t str) -> egui_kittest::Node<'t> {
    h.get_by_role_and_label(Role::Slider, label)
}

/// The label nodes showing `text` (without their text runs, which hold the same text).
pub fn labels<'t>(h: &'t Harness<'_, SkinbindApp>, text: &'t str) -> impl Iterator<Item = egui_kittest::Node<'t>> {
    use egui_kittest::kittest::NodeT;
    h.query_all_by_value(text)
        .filter(|n| n.accesskit_node().role() == Role::Label)
}

/// Step frames until every background load has finished and been applied.
pub fn wait_for_loads(h: &mut Harness<'_, SkinbindApp>) {
    wait_for_idle(h, 60.0);
}

pub fn menu(h: &mut Harness<'_, SkinbindApp>, menu: &str, item: &str) {
    h.get_by_label(menu).click();
    h.run();
    h.get_by_label(item).click();
    // Not `run`: a load started by the item keeps the spinner repainting.
    h.run_steps(3);
}

pub fn bits(p: &Pose) -> Vec<u32> {
    let mut v: Vec<u32> = p.root_translation.to_array().iter().map(|x| x.to_bits()).collect();
    v.extend(p.dofs.iter().flat_map(|d| d.to_array()).map(f32::to_bits));
    v
}

pub fn weights_of(h: &Harness<'_, SkinbindApp>) -> skinbind::model::Weights {
    h.state().document().skin.as_ref().unwrap().weights().unwrap().clone()
}

/// Click a button in the Weights panel and wait for its worker thread.
pub fn run_tool(h: &mut Harness<'_, SkinbindApp>, button: &str) {
    h.get_by_label(button).click();
    h.run_steps(2);
    wait_for_loads(h);
}

/// Press the primary button at `from`, move to `to` in steps, release: a drag in the window.
pub fn drag(h: &mut Harness<'_, SkinbindApp>, from: egui::Pos2, to: egui::Pos2, modifiers: Modifiers) {
    drag_in_steps(h, from, to, modifiers, 5);
}

/// A primary-button drag from `from` to `to` in `steps` frames, with `modifiers` held.
pub fn drag_in_steps(
    h: &mut Harness<'_, SkinbindApp>,
    from: egui::Pos2,
    to: egui::Pos2,
    modifiers: Modifiers,
    steps: usize,
) {
    press_and_move(h, from, to, modifiers, steps);
    release(h, to, modifiers);
}

fn primary(pos: egui::Pos2, pressed: bool, modifiers: Modifiers) -> egui::Event {
    egui::Event::PointerButton {
        pos,
        button: egui::PointerButton::Primary,
        pressed,
        modifiers,
    }
}

/// The first half of a drag: press at `from` with `modifiers` held, move to `to` in `steps` frames.
pub fn press_and_move(
    h: &mut Harness<'_, SkinbindApp>,
    from: egui::Pos2,
    to: egui::Pos2,
    modifiers: Modifiers,
    steps: usize,
) {
    h.event(egui::Event::ModifiersChanged(modifiers));
    h.event(egui::Event::PointerMoved(from));
    h.event(primary(from, true, modifiers));
    h.run();
    for k in 1..=steps {
        let t = k as f32 / steps as f32;
        h.event(egui::Event::PointerMoved(from + (to - from) * t));
        h.step();
    }
}

/// The second half: release at `to`, then let go of the modifiers.
pub fn release(h: &mut Harness<'_, SkinbindApp>, to: egui::Pos2, modifiers: Modifiers) {
    h.event(primary(to, false, modifiers));
    h.run();
    h.event(egui::Event::ModifiersChanged(Modifiers::NONE));
    h.run();
}

/// Text that a side panel cuts, as `panel: "text"` lines: every labelled node drawn in a side panel must end
/// inside the panel's margin (a slider's text, drawn right of its value box, included), and a one-word label must
/// fit one line (egui breaks a word that does not fit: "Meth od").
pub fn cut_text(h: &Harness<'_, SkinbindApp>) -> Vec<String> {
    cut_text_except(h, |_| false)
}

/// [`cut_text`] without the nodes whose text `skip` takes (a table that scrolls sideways, checked by scrolling).
pub fn cut_text_except(h: &Harness<'_, SkinbindApp>, skip: impl Fn(&str) -> bool) -> Vec<String> {
    use egui_kittest::kittest::NodeT;
    let style = h.ctx.global_style();
    let font = egui::TextStyle::Body.resolve(&style);
    let line = h.ctx.fonts_mut(|f| f.row_height(&font));
    let margin = egui::Frame::side_top_panel(&style).inner_margin.right as f32;
    let panels = h.state().panel_rects().to_vec();
    let mut cut = Vec::new();
    for node in h.query_all(egui_kittest::kittest::By::new().include_labels().recursive(true)) {
        let n = node.accesskit_node();
        let text = if n.role() == Role::Label { n.value() } else { n.label() };
        // egui's handle on a panel's edge is not text.
        let Some(text) = text.filter(|t| !t.trim().is_empty() && t != "Resize panel" && !skip(t)) else {
            continue;
        };
        let Some(bounds) = n.bounding_box() else { continue };
        let rect = node.rect();
        if bounds.width() <= 0.0 || rect.width() <= 0.0 {
            continue;
        }
        let start = rect.left_top() + egui::vec2(0.5, 0.5);
        let Some((name, panel)) = panels.iter().find(|(_, p)| p.contains(start)) else {
            continue;
        };
        let right = if n.role() == Role::Slider {
            let width = h.ctx.fonts_mut(|f| {
                f.layout_no_wrap(text.clone(), font.clone(), egui::Color32::WHITE)
                    .size()
                    .x
            });
            rect.right() + style.spacing.item_spacing.x + width
        } else {
            rect.right()
        };
        if right > panel.right() - margin + 0.5 {
            cut.push(format!(
                "{name}: {text:?} ends at {right:.1}, past {:.1}",
                panel.right() - margin
            ));
        } else if !text.contains(char::is_whitespace) && n.role() == Role::Label && rect.height() > 1.8 * line {
            cut.push(format!(
                "{name}: {text:?} is broken over lines ({:.0} points high)",
                rect.height()
            ));
        }
    }
    cut
}
