//! The warning `info`, `convert` and `bind` print when a skeleton has as many joints as a skin's bindings but its
//! joints do not sit where the bindings put them (`deform::bind_match`): the weights follow joint numbers, so they
//! would move other joints.

use std::path::Path;

use crate::deform::bind_match::{describe_misplaced, match_bindings};
use crate::model::{Skeleton, Skin};

/// The warning line for `skin` (read from `skin_path`) posed by `skel` (from `skel_path`), if its joints are not
/// where the skin's bindings put them.
pub(crate) fn misplaced_warning(skel_path: &Path, skel: &Skeleton, skin_path: &Path, skin: &Skin) -> Option<String> {
    let m = match_bindings(skel, skin.bindings()?)?;
    if m.fits() {
        return None;
    }
    let remedy = if m.by_place.is_some() {
        "every joint has a binding at its place: `skinbind open` both files to renumber the weights"
    } else {
        "it looks like another rig's skeleton"
    };
    Some(format!(
        "{}: warning: in {}, {}: the weights follow joint numbers and would move other joints; {remedy}",
        skin_path.display(),
        skel_path.display(),
        describe_misplaced(skel, &m)
    ))
}
