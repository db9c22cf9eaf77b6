//! The rotation control of the Properties panel: a joint's rotation about one axis shown in degrees (the document
//! keeps radians), dragged at [`DEGREES_PER_POINT`] (a full turn over 720 points, not the 40 a slider across a
//! narrow panel gave), Shift for a tenth of that, Ctrl to snap to 5°, Ctrl+Shift to 15°; a click types a value,
//! Up and Down step by half a degree.

use egui::Modifiers;

use super::*;

/// Degrees a one-point drag turns a joint.
pub(crate) const DEGREES_PER_POINT: f64 = 0.5;

/// Where a value lands with these modifiers held: Ctrl snaps to 5°, Ctrl+Shift to 15°; otherwise as it is.
pub(crate) fn snap_degrees(degrees: f64, modifiers: Modifiers) -> f64 {
    let step = match (modifiers.command || modifiers.ctrl, modifiers.shift) {
        (true, false) => 5.0,
        (true, true) => 15.0,
        (false, _) => return degrees,
    };
    (degrees / step).round() * step
}

/// One axis of the selected joint's rotation: the name, then the value in degrees. Changes go through
/// `field_response` (live while dragging, one edit on release).
pub(super) fn rotation_row(
    ui: &mut egui::Ui,
    joint_index: usize,
    joint: &crate::model::Joint,
    axis: usize,
    radians: f32,
    drag: &mut Option<(Field, f32)>,
    cmds: &mut Vec<Command>,
) {
    let name = AXIS_NAMES[axis];
    let limit = joint.limits[axis];
    let (lo, hi) = slider_range(joint, axis);
    let fixed = limit.is_some() && lo >= hi;
    let tip = match limit {
        Some(l) => format!(
            "Rotation about {name} in degrees, limited to {:.1}° .. {:.1}°: drag sideways (Shift: finer; Ctrl: \
             snap to 5°, Ctrl+Shift: to 15°), or click and type",
            l.lo.min(l.hi).to_degrees(),
            l.hi.to_degrees()
        ),
        None => format!(
            "Rotation about {name} in degrees, unlimited: drag sideways (Shift: finer; Ctrl: snap to 5°, \
             Ctrl+Shift: to 15°), or click and type"
        ),
    };
    let modifiers = ui.input(|i| i.modifiers);
    let mut degrees = f64::from(radians).to_degrees();
    let mut set = false;
    ui.horizontal(|ui| {
        let label = ui.label(format!("Rotation {name}"));
        let mut value = egui::DragValue::from_get_set(|new| {
            if let Some(d) = new {
                degrees = snap_degrees(d, modifiers);
                set = true;
            }
            degrees
        })
        .speed(DEGREES_PER_POINT)
        .suffix("°")
        .max_decimals(2)
        .update_while_editing(false);
        if limit.is_some() {
            value = value
                .range(f64::from(lo).to_degrees()..=f64::from(hi).to_degrees())
                .clamp_existing_to_range(false);
        }
        let r = ui
            .add_enabled(!fixed, value)
            .on_hover_text(&tip)
            .on_disabled_hover_text(format!(
                "Rotation about {name} is fixed at {:.1}° by its limits",
                hi.to_degrees()
            ))
            .labelled_by(label.id);
        let after = if set { degrees.to_radians() as f32 } else { radians };
        super::joints::field_response(
            Field::Dof {
                joint: joint_index,
                axis,
            },
            radians,
            after,
            &r,
            drag,
            cmds,
        );
    });
    let limit_text = match limit {
        Some(l) => format!(
            "{name} limits: {:.1}° to {:.1}°",
            l.lo.min(l.hi).to_degrees(),
            l.hi.to_degrees()
        ),
        None => format!("{name}: no limits"),
    };
    ui.small(limit_text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctrl_snaps_to_5_degrees_and_ctrl_shift_to_15_and_nothing_else_snaps() {
        assert_eq!(snap_degrees(37.3, Modifiers::NONE), 37.3);
        assert_eq!(snap_degrees(37.3, Modifiers::SHIFT), 37.3);
        assert_eq!(snap_degrees(37.3, Modifiers::COMMAND), 35.0);
        assert_eq!(snap_degrees(-38.0, Modifiers::CTRL), -40.0);
        assert_eq!(snap_degrees(37.3, Modifiers::COMMAND | Modifiers::SHIFT), 30.0);
        assert_eq!(snap_degrees(38.0, Modifiers::COMMAND | Modifiers::SHIFT), 45.0);
    }
}
