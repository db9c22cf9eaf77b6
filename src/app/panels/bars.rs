//! The timeline, the status bar and the history panel.

use egui::{Color32, RichText, Slider, SliderClamping};

use super::*;

/// Play/pause, the time slider, loop and speed.
pub(crate) fn timeline(ui: &mut egui::Ui, doc: &Document, playback: &Playback, cmds: &mut Vec<Command>) {
    let Some(clip) = &doc.clip else {
        ui.label("No animation: open an .anim file, or a glTF model with animations, to play it");
        return;
    };
    let (lo, hi) = (clip.range.0.min(clip.range.1), clip.range.0.max(clip.range.1));
    ui.horizontal(|ui| {
        if !doc.clips.is_empty() {
            let current = doc
                .clip_choice
                .and_then(|i| doc.clips.get(i))
                .map_or("(from an .anim file)", |c| c.name.as_str());
            egui::ComboBox::from_label("Clip")
                .selected_text(current)
                .show_ui(ui, |ui| {
                    for (i, c) in doc.clips.iter().enumerate() {
                        if ui.selectable_label(doc.clip_choice == Some(i), &c.name).clicked() {
                            cmds.push(Command::ChooseClip(i));
                        }
                    }
                })
                .response
                .on_hover_text("The model's own animations: choose one to play");
        }
        if playback.playing {
            if ui.button("Pause").on_hover_text("Stop at the current time").clicked() {
                cmds.push(Command::Pause);
            }
        } else if ui.button("Play").on_hover_text("Play the animation").clicked() {
            cmds.push(Command::Play);
        }
        let mut looping = playback.looping;
        if ui
            .checkbox(&mut looping, "Loop")
            .on_hover_text("Wrap around at the end of the range instead of stopping")
            .changed()
        {
            cmds.push(Command::SetLooping(looping));
        }
        let mut speed = playback.speed;
        if ui
            .add(Slider::new(&mut speed, -2.0..=4.0).text("Speed").max_decimals(2))
            .on_hover_text("Playback speed; negative plays backwards")
            .changed()
        {
            cmds.push(Command::SetSpeed(speed));
        }
        let mut t = playback.time;
        ui.spacing_mut().slider_width = (ui.available_width() - 120.0).max(80.0);
        if ui
            .add(
                Slider::new(&mut t, lo..=hi)
                    .text("Time")
                    .clamping(SliderClamping::Always)
                    .max_decimals(3),
            )
            .on_hover_text(format!("Scrub through the clip's range [{lo}, {hi}]"))
            .changed()
        {
            cmds.push(Command::SetTime(t));
        }
    });
}

/// Loading spinner, the last message or error, counts and the document's files.
pub(crate) fn status_bar(ui: &mut egui::Ui, view: &View<'_>, cmds: &mut Vec<Command>) {
    // Right side first (counts, then the files' names), so the message on the left gets what is left and
    // truncates instead of running under them; hovering shows it whole.
    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
        let doc = view.doc;
        let names: Vec<String> = doc
            .paths
            .all()
            .map(|p| {
                p.file_name()
                    .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
            })
            .collect();
        if !names.is_empty() {
            let full: Vec<String> = doc.paths.all().map(|p| p.display().to_string()).collect();
            ui.label(RichText::new(names.join(", ")).color(Color32::GRAY))
                .on_hover_text(full.join("\n"));
            ui.separator();
        }
        if !view.hidden_panels.is_empty() {
            ui.label(
                RichText::new(format!("{} hidden: window too narrow", view.hidden_panels.join(", ")))
                    .color(Color32::GRAY),
            )
            .on_hover_text("Widen the window to show them: the 3D view keeps at least half of it");
            ui.separator();
        }
        if view.moved_joints > 0 {
            let text = format!("Bind again around {} moved joints", view.moved_joints);
            if ui
                .button(text)
                .on_hover_text(
                    "The skin's weights were made for the joints where they were: bind again the vertices weighted \
                     to the moved joints, their parents and children (one edit; the rest of the skin stays)",
                )
                .clicked()
            {
                cmds.push(Command::RebindMoved);
            }
            ui.separator();
        }
        let mut counts = format!("{} joints", doc.skeleton.len());
        if let Some(k) = &doc.skin {
            counts += &format!(", {} vertices, {} triangles", k.vertex_count(), k.triangles().len());
        }
        if let Some(c) = &doc.clip {
            counts += &format!(", {} channels", c.channels.len());
        }
        ui.label(counts);
        ui.separator();
        ui.with_layout(egui::Layout::left_to_right(egui::Align::Center), |ui| {
            if let Some(paths) = view.loading {
                ui.spinner().on_hover_text("Reading files in the background");
                let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                ui.add(egui::Label::new(format!("Loading {}...", names.join(", "))).truncate());
            }
            let s = view.status;
            if !s.text.is_empty() {
                let color = if s.is_error {
                    ui.visuals().error_fg_color
                } else {
                    ui.visuals().text_color()
                };
                let mut tip = s.text.clone();
                for d in &s.details {
                    tip.push('\n');
                    tip.push_str(d);
                }
                ui.add(egui::Label::new(RichText::new(&s.text).color(color)).truncate())
                    .on_hover_text(tip);
            }
        });
    });
}

/// The edit history: every edit by name, oldest first, the current state marked; clicking an entry undoes or
/// redoes up to it (`Command::GoTo`). "Original" is the state before the first edit.
pub fn history(ui: &mut egui::Ui, entries: &[String], head: usize, saved: Option<usize>, cmds: &mut Vec<Command>) {
    egui::ScrollArea::vertical().show(ui, |ui| {
        for (i, name) in std::iter::once("Original")
            .chain(entries.iter().map(String::as_str))
            .enumerate()
        {
            let mark = if saved == Some(i) { " (saved)" } else { "" };
            let label = format!("{name}{mark}");
            let resp = ui.selectable_label(i == head, label).on_hover_text(if i == head {
                "The current state"
            } else {
                "Go to the state after this edit"
            });
            if resp.clicked() && i != head {
                cmds.push(Command::GoTo(i));
            }
        }
    });
}
