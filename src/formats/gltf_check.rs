//! Checks on a stranger's glTF JSON before the `gltf` crate's accessors see it.
//!
//! The crate's validation checks most indices, but not all, and some of its accessors `unwrap` what it did not
//! check: a channel's target node (`Target::node`), its path (`Target::property` on `"matrix"`, which glTF does
//! not animate) and an attribute's accessor (its own validation indexes it first). Those are checked here, on
//! the JSON, and errors and warnings name the glTF path (`animations[0].channels[2]`).
//!
//! - A mesh attribute naming a missing accessor refuses the file (the mesh is what is imported).
//! - A bad animation sampler or channel is dropped with a warning naming it; the rest of the animation, the
//!   skeleton and the skin still import. [`Checked::channel_origin`] keeps each kept channel's index in the
//!   file, so later warnings name it as the file does.
//! - A cycle in the node tree among (or above) a skin's joints refuses the import ([`joint_cycle`]): without a
//!   root the joints in it have no place in the skeleton.

use gltf::json::validation::Checked as Valid;

/// The parsed and validated file, what was dropped from it, and where its kept channels came from.
pub(super) struct Checked {
    pub gltf: gltf::Gltf,
    /// One line per sampler or channel dropped (line 0 warnings).
    pub warnings: Vec<String>,
    /// For each animation, the file's index of each kept channel, in order.
    pub channel_origin: Vec<Vec<usize>>,
}

/// Parse the JSON (and GLB container), drop what would make the crate panic, and validate the rest.
pub(super) fn parse(bytes: &[u8]) -> Result<Checked, String> {
    let gltf::Gltf { document, blob } =
        gltf::Gltf::from_slice_without_validation(bytes).map_err(|e| format!("not a valid glTF file: {e}"))?;
    let mut json = document.into_json();
    for (m, mesh) in json.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            for index in prim.attributes.values() {
                if index.value() >= json.accessors.len() {
                    return Err(format!(
                        "not a valid glTF file: meshes[{m}].primitives[{p}] names accessor {} of {}",
                        index.value(),
                        json.accessors.len()
                    ));
                }
            }
        }
    }
    let (warnings, channel_origin) = drop_bad_channels(&mut json);
    let document = gltf::Document::from_json(json).map_err(|e| format!("not a valid glTF file: {e}"))?;
    Ok(Checked {
        gltf: gltf::Gltf { document, blob },
        warnings,
        channel_origin,
    })
}

/// Remove the animation samplers and channels the crate would panic on or refuse the whole file for (an
/// accessor, sampler or node index past the end, an unknown path or interpolation), renumbering the samplers
/// that stay. Returns a warning for each and, per animation, the file's index of each kept channel.
fn drop_bad_channels(json: &mut gltf::json::Root) -> (Vec<String>, Vec<Vec<usize>>) {
    let (accessors, nodes) = (json.accessors.len(), json.nodes.len());
    let mut warnings = Vec::new();
    let mut origins = Vec::with_capacity(json.animations.len());
    for (a, anim) in json.animations.iter_mut().enumerate() {
        let label = |what: String| match anim.name.as_deref() {
            Some(n) if !n.is_empty() => format!("animations[{a}].{what} (animation `{}`)", super::printable(n)),
            _ => format!("animations[{a}].{what}"),
        };
        // The new index of each sampler, or why it was dropped.
        let mut new_index: Vec<Result<usize, String>> = Vec::with_capacity(anim.samplers.len());
        let mut kept = 0;
        for s in &anim.samplers {
            let why = if s.input.value() >= accessors {
                Some(format!(
                    "expected an input accessor below {accessors}, found {}",
                    s.input.value()
                ))
            } else if s.output.value() >= accessors {
                Some(format!(
                    "expected an output accessor below {accessors}, found {}",
                    s.output.value()
                ))
            } else if matches!(s.interpolation, Valid::Invalid) {
                Some("expected an interpolation of LINEAR, STEP or CUBICSPLINE, found another".to_string())
            } else {
                None
            };
            new_index.push(match why {
                Some(w) => Err(w),
                None => {
                    kept += 1;
                    Ok(kept - 1)
                }
            });
        }
        for (s, n) in new_index.iter().enumerate() {
            if let Err(why) = n {
                warnings.push(format!("{} was dropped: {why}", label(format!("samplers[{s}]"))));
            }
        }
        let mut index = 0;
        anim.samplers.retain(|_| {
            index += 1;
            new_index[index - 1].is_ok()
        });
        let mut origin = Vec::with_capacity(anim.channels.len());
        let mut channels = Vec::with_capacity(anim.channels.len());
        for (c, mut ch) in std::mem::take(&mut anim.channels).into_iter().enumerate() {
            let s = ch.sampler.value();
            let why = match new_index.get(s) {
                None => Some(format!("expected a sampler below {}, found {s}", new_index.len())),
                Some(Err(_)) => Some(format!("its sampler {s} was dropped")),
                Some(Ok(_)) if ch.target.node.value() >= nodes => Some(format!(
                    "expected a target node below {nodes}, found {}",
                    ch.target.node.value()
                )),
                Some(Ok(_)) if matches!(ch.target.path, Valid::Invalid) => Some(
                    "expected a target path of translation, rotation, scale or weights, found another \
                     (glTF does not animate `matrix`)"
                        .to_string(),
                ),
                Some(Ok(n)) => {
                    ch.sampler = gltf::json::Index::new(*n as u32);
                    None
                }
            };
            match why {
                Some(w) => warnings.push(format!("{} was dropped: {w}", label(format!("channels[{c}]")))),
                None => {
                    origin.push(c);
                    channels.push(ch);
                }
            }
        }
        anim.channels = channels;
        origins.push(origin);
    }
    (warnings, origins)
}

/// Refuse a skin whose joints are in, or hang below, a cycle of the node tree (`parent`: each node's parent as
/// the `children` lists give it; `joints`: the skin's joint nodes). Linear in the nodes: each is walked once.
pub(super) fn joint_cycle(parent: &[Option<usize>], joints: &[usize], skin_index: usize) -> Result<(), String> {
    // 0: not seen, 1: on the walk in progress, 2: leads to a root.
    let mut state = vec![0u8; parent.len()];
    let mut walk = Vec::new();
    for (k, &j) in joints.iter().enumerate() {
        walk.clear();
        let mut at = Some(j);
        while let Some(n) = at {
            match state.get(n) {
                Some(0) => {
                    state[n] = 1;
                    walk.push(n);
                    at = parent[n];
                }
                Some(1) => {
                    // `n` is its own ancestor: the cycle is the walk from `n` on.
                    let from = walk.iter().position(|&x| x == n).unwrap_or(0);
                    let cycle: Vec<String> = walk[from..].iter().chain([&n]).map(|x| x.to_string()).collect();
                    let last = walk.last().copied().unwrap_or(n);
                    return Err(format!(
                        "nodes[{n}].children: expected a tree, found a cycle (node {n} names node {last} as a \
                         child, which is its ancestor: nodes {}, each the child of the next); \
                         skins[{skin_index}].joints[{k}] (node {j}) is in it or below it",
                        cycle.join(" -> ")
                    ));
                }
                _ => break,
            }
        }
        for &n in &walk {
            state[n] = 2;
        }
    }
    Ok(())
}
