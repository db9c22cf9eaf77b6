//! Helpers for driving the editor through egui_kittest (shared by the GUI test files).

use egui_kittest::Harness;
use skinbind::app::document::Document;
use skinbind::app::{FileDialog, SkinbindApp};

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
