//! The invariants the evaluator and control rely on, checked on a decoded package: every
//! cross-reference in range, every float finite, rotations unit, scales positive, clip timing
//! consistent, events and markers sorted and canonical, trajectories well-formed.
//! Structure (array lengths, skeleton order) is already settled by decoding.

use throng_cpu_ref::{
    Clip, LoopPolicy, Package, RootMotionPolicy, Skeleton, SkinBinding, SkinnedMesh, SubTrackKind,
};

use throng_cpu_ref::morph::MeshRef;

use super::{codec, PackageError, UNIT_TOLERANCE};

pub(super) fn validate_package(p: &Package) -> Result<(), PackageError> {
    for (i, s) in p.skeletons.iter().enumerate() {
        validate_skeleton(i, s)?;
    }
    for (i, skin) in p.skins.iter().enumerate() {
        validate_skin(i, skin, &p.skeletons)?;
    }
    for (i, mesh) in p.meshes.iter().enumerate() {
        validate_mesh(i, mesh, &p.skins)?;
    }
    for (i, clip) in p.clips.iter().enumerate() {
        validate_clip(i, clip, &p.skeletons)?;
    }
    validate_scene(p)?;
    p.curves.validate(&p.clips, p.skeletons.len()).map_err(|e| {
        use throng_cpu_ref::scalar::CurveError;
        let (index, field) = match &e {
            CurveError::Channel { channel, .. } => (*channel, "channel"),
            CurveError::Track { track, .. } => (*track, "track"),
            CurveError::Selection { selection, .. } => (*selection, "selection"),
        };
        invalid("CURVES", index, field, e.to_string())
    })
}

/// The SCENE section's invariants: static meshes like skinned ones (finite, whole triangles in
/// range), every target's vertices strictly increasing inside its mesh with finite deltas, mesh
/// nodes ascending by glTF node with primitives that exist and agree with the node's skin and
/// one finite weight per target, and weight clips with a consistent sample grid whose tracks
/// name nodes in ascending order and hold `sample_count × weights` finite values.
fn validate_scene(p: &Package) -> Result<(), PackageError> {
    let err = |index, field, what| invalid("SCENE", index, field, what);
    for (i, m) in p.scene.meshes.iter().enumerate() {
        if let Some(v) = m.positions.iter().position(|x| !x.is_finite()) {
            return Err(err(
                i,
                "static mesh positions",
                format!("vertex {v} is not finite"),
            ));
        }
        if let Some(v) = m.normals.iter().position(|x| !x.is_finite()) {
            return Err(err(
                i,
                "static mesh normals",
                format!("vertex {v} is not finite"),
            ));
        }
        if m.indices.len() % 3 != 0 {
            return Err(err(
                i,
                "static mesh indices",
                format!(
                    "{} indices is not a whole number of triangles",
                    m.indices.len()
                ),
            ));
        }
        if let Some(x) = m.indices.iter().find(|&&x| x as usize >= m.positions.len()) {
            return Err(err(
                i,
                "static mesh indices",
                format!("index {x} is past the {} vertices", m.positions.len()),
            ));
        }
    }
    let sets = (p.meshes.iter().map(|m| (&m.targets, m.positions.len()))).chain(
        p.scene
            .meshes
            .iter()
            .map(|m| (&m.targets, m.positions.len())),
    );
    for (i, (targets, n)) in sets.enumerate() {
        for (t, target) in targets.iter().enumerate() {
            let bad = |what: String| err(i, "morph target", format!("target {t}: {what}"));
            if let Some(w) = target.vertices.windows(2).find(|w| w[0] >= w[1]) {
                return Err(bad(format!(
                    "vertex {} follows {}; vertices are strictly increasing",
                    w[1], w[0]
                )));
            }
            if let Some(v) = target.vertices.last().filter(|&&v| v as usize >= n) {
                return Err(bad(format!("vertex {v} is past the mesh's {n} vertices")));
            }
            let finite = |d: &[glam::Vec3]| d.iter().all(|d| d.is_finite());
            if !finite(&target.positions) || !finite(&target.normals) {
                return Err(bad("a delta is not finite".into()));
            }
        }
    }
    for (i, node) in p.scene.nodes.iter().enumerate() {
        let bad = |field, what: String| err(i, field, format!("mesh node {}: {what}", node.node));
        if i > 0 && p.scene.nodes[i - 1].node >= node.node {
            return Err(bad(
                "node",
                "mesh nodes are strictly ascending by glTF node".into(),
            ));
        }
        if !node.world.is_finite() {
            return Err(bad("world", "is not finite".into()));
        }
        if let Some(s) = node.skin.filter(|&s| s as usize >= p.skins.len()) {
            return Err(bad("skin", format!("skin {s} does not exist")));
        }
        if node.weights.iter().any(|w| !w.is_finite()) {
            return Err(bad("weights", "a default weight is not finite".into()));
        }
        for prim in &node.primitives {
            let (targets, skin) = match prim.mesh {
                MeshRef::Skinned(m) => match p.meshes.get(m as usize) {
                    Some(mesh) => (mesh.targets.len(), Some(mesh.skin)),
                    None => {
                        return Err(bad(
                            "primitives",
                            format!("skinned mesh {m} does not exist"),
                        ))
                    }
                },
                MeshRef::Static(m) => match p.scene.meshes.get(m as usize) {
                    Some(mesh) => (mesh.targets.len(), None),
                    None => {
                        return Err(bad("primitives", format!("static mesh {m} does not exist")))
                    }
                },
            };
            if skin != node.skin {
                return Err(bad(
                    "primitives",
                    format!(
                        "primitive {} is bound to skin {skin:?}, the node to {:?}",
                        prim.primitive, node.skin
                    ),
                ));
            }
            if targets != node.weights.len() {
                return Err(bad(
                    "weights",
                    format!(
                        "{} weights, but primitive {} has {targets} morph targets",
                        node.weights.len(),
                        prim.primitive
                    ),
                ));
            }
        }
    }
    for (i, c) in p.scene.clips.iter().enumerate() {
        let bad = |field, what: String| err(i, field, format!("weight clip '{}': {what}", c.name));
        if !(c.sample_rate.is_finite() && c.sample_rate > 0.0) {
            return Err(bad(
                "sample_rate",
                format!("{} Hz is not a positive rate", c.sample_rate),
            ));
        }
        if !(c.duration.is_finite() && c.duration >= 0.0) || c.sample_count == 0 {
            return Err(bad(
                "duration",
                format!("{} s with {} samples", c.duration, c.sample_count),
            ));
        }
        grid(c.duration, c.sample_rate, c.sample_count)
            .map_err(|what| bad("sample_count", what))?;
        for (k, t) in c.tracks.iter().enumerate() {
            if k > 0 && c.tracks[k - 1].node >= t.node {
                return Err(bad(
                    "tracks",
                    "tracks are strictly ascending by mesh node".into(),
                ));
            }
            let Some(node) = p.scene.nodes.get(t.node as usize) else {
                return Err(bad(
                    "tracks",
                    format!("mesh node {} does not exist", t.node),
                ));
            };
            let expected = c.sample_count as usize * node.weights.len();
            if node.weights.is_empty() || t.values.len() != expected {
                return Err(bad(
                    "tracks",
                    format!(
                        "track of mesh node {} holds {} values, expected {} samples × {} weights (and at least one)",
                        t.node,
                        t.values.len(),
                        c.sample_count,
                        node.weights.len()
                    ),
                ));
            }
            if t.values.iter().any(|v| !v.is_finite()) {
                return Err(bad(
                    "tracks",
                    format!("a weight of mesh node {} is not finite", t.node),
                ));
            }
        }
    }
    Ok(())
}

/// [`check_sample_grid`] for any duration, rate and count.
fn grid(duration: f64, rate: f32, count: u32) -> Result<(), String> {
    let period = 1.0 / f64::from(rate);
    let tolerance = 1e-6 * duration.max(period);
    let last = f64::from(count - 1) * period;
    let before_last = f64::from(count.saturating_sub(2)) * period;
    if duration > last + tolerance || (count >= 2 && before_last >= duration + tolerance) {
        return Err(format!(
            "{duration} s does not match {count} samples at {rate} Hz (the last sample lies at the duration)"
        ));
    }
    Ok(())
}

fn invalid(section: &'static str, index: usize, field: &'static str, what: String) -> PackageError {
    PackageError::Invalid {
        section,
        index,
        field,
        what,
    }
}

fn is_unit(q: &[f32]) -> bool {
    (q.iter().map(|x| x * x).sum::<f32>().sqrt() - 1.0).abs() <= UNIT_TOLERANCE
}

/// `Skeleton::new` already checked order, finiteness and positive scale.
fn validate_skeleton(i: usize, s: &Skeleton) -> Result<(), PackageError> {
    let err = |field, what| invalid("SKELETONS", i, field, what);
    if !s.root_transform.is_finite() {
        return Err(err("root_transform", "is not finite".into()));
    }
    match s.rest.iter().position(|t| !is_unit(&t.rotation.to_array())) {
        Some(j) => Err(err(
            "rest",
            format!("joint {j} rotation {} is not unit", s.rest[j].rotation),
        )),
        None => Ok(()),
    }
}

fn validate_skin(i: usize, skin: &SkinBinding, skeletons: &[Skeleton]) -> Result<(), PackageError> {
    let err = |field, what| invalid("SKINS", i, field, what);
    let joint_count = skeletons
        .get(skin.skeleton as usize)
        .ok_or_else(|| {
            err(
                "skeleton",
                format!(
                    "skeleton {} does not exist ({} in package)",
                    skin.skeleton,
                    skeletons.len()
                ),
            )
        })?
        .joint_count();
    if let Some((k, j)) = skin
        .joints
        .iter()
        .enumerate()
        .find(|(_, &j)| j as usize >= joint_count)
    {
        let what = format!(
            "palette entry {k} names joint {j}, but skeleton {} has {joint_count}",
            skin.skeleton
        );
        return Err(err("joints", what));
    }
    match skin.inverse_bind.iter().position(|m| !m.is_finite()) {
        Some(k) => Err(err("inverse_bind", format!("matrix {k} is not finite"))),
        None => Ok(()),
    }
}

fn validate_mesh(i: usize, m: &SkinnedMesh, skins: &[SkinBinding]) -> Result<(), PackageError> {
    let err = |field, what| invalid("MESHES", i, field, what);
    let palette = skins
        .get(m.skin as usize)
        .ok_or_else(|| {
            err(
                "skin",
                format!(
                    "skin {} does not exist ({} in package)",
                    m.skin,
                    skins.len()
                ),
            )
        })?
        .joints
        .len();
    if let Some(v) = m.positions.iter().position(|p| !p.is_finite()) {
        return Err(err("positions", format!("vertex {v} is not finite")));
    }
    if let Some(v) = m.normals.iter().position(|n| !n.is_finite()) {
        return Err(err("normals", format!("vertex {v} is not finite")));
    }
    if let Some((v, j)) = m
        .joints
        .iter()
        .enumerate()
        .find(|(_, j)| j.iter().any(|&j| j as usize >= palette))
    {
        let what = format!(
            "vertex {v} uses palette entries {j:?}, but skin {} has {palette}",
            m.skin
        );
        return Err(err("joints", what));
    }
    if let Some((v, w)) = m
        .weights
        .iter()
        .enumerate()
        .find(|(_, w)| w.iter().any(|&w| !(w.is_finite() && w >= 0.0)))
    {
        return Err(err(
            "weights",
            format!("vertex {v} has weights {w:?}; weights are finite and non-negative"),
        ));
    }
    if !m.indices.chunks_exact(3).remainder().is_empty() {
        return Err(err(
            "indices",
            format!(
                "{} indices is not a whole number of triangles",
                m.indices.len()
            ),
        ));
    }
    match m
        .indices
        .iter()
        .enumerate()
        .find(|(_, &x)| x as usize >= m.positions.len())
    {
        Some((k, x)) => Err(err(
            "indices",
            format!("index {k} is {x}, past the {} vertices", m.positions.len()),
        )),
        None => Ok(()),
    }
}

fn validate_clip(i: usize, c: &Clip, skeletons: &[Skeleton]) -> Result<(), PackageError> {
    let err = |field, what| invalid("CLIPS", i, field, what);
    let skeleton = skeletons.get(c.skeleton as usize).ok_or_else(|| {
        err(
            "skeleton",
            format!(
                "skeleton {} does not exist ({} in package)",
                c.skeleton,
                skeletons.len()
            ),
        )
    })?;
    let hash = skeleton.identity_hash();
    if c.skeleton_hash != hash {
        let what = format!(
            "{:#018x} is not skeleton {}'s identity hash {hash:#018x}",
            c.skeleton_hash, c.skeleton
        );
        return Err(err("skeleton_hash", what));
    }
    if !(c.sample_rate.is_finite() && c.sample_rate > 0.0) {
        return Err(err(
            "sample_rate",
            format!("{} is not a finite positive rate", c.sample_rate),
        ));
    }
    if c.sample_count == 0 {
        return Err(err(
            "sample_count",
            "is 0; a clip has at least one sample".into(),
        ));
    }
    if !(c.duration.is_finite() && c.duration >= 0.0) {
        return Err(err(
            "duration",
            format!("{} s is not finite and non-negative", c.duration),
        ));
    }
    check_sample_grid(c).map_err(|what| err("duration", what))?;
    let expected = 3 * skeleton.joint_count();
    if c.sub_tracks.len() != expected {
        return Err(err(
            "sub_tracks",
            format!(
                "{} sub-tracks for {expected} (3 per joint)",
                c.sub_tracks.len()
            ),
        ));
    }
    if let Some(compressed) = &c.compressed {
        codec::check(c, compressed).map_err(|fault| PackageError::Codec { clip: i, fault })?;
    } else {
        if let Some(k) = c.values.iter().position(|v| !v.is_finite()) {
            return Err(err("values", format!("value {k} is not finite")));
        }
        for t in 0..c.sub_tracks.len() {
            check_sub_track(c, t).map_err(|what| err("sub_tracks", what))?;
        }
    }
    let events: Vec<(f64, &str)> = c.events.iter().map(|e| (e.time, e.name.as_str())).collect();
    check_times(c, &events, false).map_err(|what| err("events", what))?;
    let markers: Vec<(f64, &str)> = c
        .markers
        .iter()
        .map(|m| (m.time, m.name.as_str()))
        .collect();
    let canonical = c.loop_policy == LoopPolicy::Loop;
    check_times(c, &markers, canonical).map_err(|what| err("markers", what))?;
    check_root_motion(c, skeleton.joint_count()).map_err(|what| err("root_motion", what))
}

/// Sample `i` lies at `min(i / rate, duration)` and the last one at the duration, so the duration
/// lies in `((n - 2) / rate, (n - 1) / rate]`, or is 0 for one sample; within a relative tolerance.
fn check_sample_grid(c: &Clip) -> Result<(), String> {
    let period = 1.0 / f64::from(c.sample_rate);
    let tolerance = 1e-6 * c.duration.max(period);
    let last = f64::from(c.sample_count - 1) * period;
    let before_last = f64::from(c.sample_count.saturating_sub(2)) * period;
    let too_long = c.duration > last + tolerance;
    let too_short = c.sample_count >= 2 && before_last >= c.duration + tolerance;
    if too_long || too_short {
        return Err(format!(
            "{} s does not match {} samples at {} Hz (the last sample lies at the duration)",
            c.duration, c.sample_count, c.sample_rate
        ));
    }
    Ok(())
}

/// Sub-track `t` reads its samples inside `values`; rotations are unit and scales positive.
fn check_sub_track(c: &Clip, t: usize) -> Result<(), String> {
    let Some(track) = c.sub_tracks.get(t) else {
        return Ok(());
    };
    let component = t % 3;
    let width = if component == 1 { 4 } else { 3 };
    let count = match track.kind {
        SubTrackKind::Default => return Ok(()),
        SubTrackKind::Constant => 1,
        SubTrackKind::Animated => c.sample_count as usize,
    };
    let start = track.offset as usize;
    let end = start.saturating_add(width * count);
    let place = format!(
        "sub-track {t} (joint {}, {})",
        t / 3,
        ["translation", "rotation", "scale"][component]
    );
    let values = c.values.get(start..end).ok_or_else(|| {
        format!(
            "{place} reads values {start}..{end}, past the {} stored",
            c.values.len()
        )
    })?;
    for (k, v) in values.chunks_exact(width).enumerate() {
        if component == 1 && !is_unit(v) {
            return Err(format!(
                "{place} sample {k} is not a unit quaternion: {v:?}"
            ));
        }
        if component == 2 && v.iter().any(|&s| s <= 0.0) {
            return Err(format!(
                "{place} sample {k} has a non-positive scale: {v:?}"
            ));
        }
    }
    Ok(())
}

/// Times `(time, name)` lie in [0, duration] (or [0, duration) when `canonical`, a looping clip's
/// markers) and strictly increase by (time, name); a clip of zero duration has none.
fn check_times(c: &Clip, list: &[(f64, &str)], canonical: bool) -> Result<(), String> {
    if c.duration == 0.0 && !list.is_empty() {
        return Err(format!("{} on a clip of zero duration", list.len()));
    }
    let end = if canonical { "[0, {d})" } else { "[0, {d}]" };
    for (k, &(time, name)) in list.iter().enumerate() {
        let inside = time >= 0.0 && (time < c.duration || (!canonical && time == c.duration));
        if !inside {
            return Err(format!(
                "{k} ('{name}') at {time} s lies outside {} s",
                end.replace("{d}", &c.duration.to_string())
            ));
        }
    }
    match list.windows(2).position(|w| {
        w[0].0.total_cmp(&w[1].0).then_with(|| w[0].1.cmp(w[1].1)) != std::cmp::Ordering::Less
    }) {
        Some(k) => Err(format!(
            "{} ('{}' at {} s) does not come after {k} ('{}' at {} s) in (time, name) order",
            k + 1,
            list[k + 1].1,
            list[k + 1].0,
            list[k].1,
            list[k].0
        )),
        None => Ok(()),
    }
}

/// The motion joint exists; the trajectory is finite with unit rotations; a planar one lies in the
/// ground plane (translation y = 0, rotation about +Y only). Lengths equal the sample count by
/// construction of the record.
fn check_root_motion(c: &Clip, joint_count: usize) -> Result<(), String> {
    let Some(m) = &c.root_motion else {
        return Ok(());
    };
    if m.joint as usize >= joint_count {
        return Err(format!(
            "joint {} does not exist (the skeleton has {joint_count})",
            m.joint
        ));
    }
    let samples = c.sample_count as usize;
    if m.translations.len() != samples || m.rotations.len() != samples {
        return Err(format!(
            "{} translations and {} rotations for {samples} samples",
            m.translations.len(),
            m.rotations.len()
        ));
    }
    let planar = m.policy == RootMotionPolicy::Planar;
    for (i, (t, q)) in m.translations.iter().zip(&m.rotations).enumerate() {
        if !t.is_finite() || !q.is_finite() {
            return Err(format!("sample {i} is not finite: {t}, {q}"));
        }
        if !is_unit(&q.to_array()) {
            return Err(format!("sample {i} rotation {q} is not unit"));
        }
        if planar && (t.y != 0.0 || q.x != 0.0 || q.z != 0.0) {
            return Err(format!(
                "sample {i} ({t}, {q}) leaves the ground plane of a planar trajectory"
            ));
        }
    }
    Ok(())
}
