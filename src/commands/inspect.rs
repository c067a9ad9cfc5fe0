//! `throng inspect`: what a package holds.

use std::path::PathBuf;

use serde_json::json;
use throng_cpu_ref::morph::{MeshRef, MorphTarget, WeightClip};
use throng_cpu_ref::{Clip, Package, SubTrackKind};

use super::{load_package, print_json, CliError};

#[derive(clap::Args)]
pub struct Args {
    /// A .throng package (with --instance: the package the tree drives; default: the generated
    /// character).
    #[arg(required_unless_present = "instance")]
    input: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Dump one state-tree instance instead: its state path, players and compiled pose program.
    #[arg(long)]
    instance: bool,
    /// With --instance: the state tree (default: fixtures/trees/crowd.toml).
    #[arg(long, requires = "instance")]
    tree: Option<PathBuf>,
    /// With --instance: scripted inputs (docs/state-tree.md).
    #[arg(long, requires = "instance")]
    inputs: Option<PathBuf>,
    /// With --instance: ticks (60 Hz) to run before the dump.
    #[arg(long, requires = "instance", default_value_t = 0)]
    ticks: u64,
}

pub fn run(args: Args) -> Result<(), CliError> {
    if args.instance {
        return super::simulate::dump_instance(args.input, args.tree, args.inputs, args.ticks);
    }
    let Some(input) = args.input else {
        return Err(CliError::Usage(
            "inspect needs a .throng package (or --instance)".into(),
        ));
    };
    let package = load_package(&input)?;
    if args.json {
        print_json(&to_json(&package));
    } else {
        print_text(&input, &package);
    }
    Ok(())
}

/// Distinct vertices a triangle list uses.
fn used_vertices(indices: &[u32]) -> usize {
    let mut v = indices.to_vec();
    v.sort_unstable();
    v.dedup();
    v.len()
}

fn kind_counts(clip: &Clip) -> [usize; 3] {
    let mut counts = [0; 3];
    for t in &clip.sub_tracks {
        counts[t.kind as usize] += 1;
    }
    counts
}

fn print_text(path: &std::path::Path, p: &Package) {
    println!(
        "{}: {} skeletons, {} skins, {} meshes, {} clips, {} static meshes, {} mesh nodes, {} morph-weight clips",
        path.display(),
        p.skeletons.len(),
        p.skins.len(),
        p.meshes.len(),
        p.clips.len(),
        p.scene.meshes.len(),
        p.scene.nodes.len(),
        p.scene.clips.len()
    );
    for (i, s) in p.skeletons.iter().enumerate() {
        let depth = s.depth.iter().max().copied().unwrap_or(0);
        println!(
            "skeleton {i}: {} joints, depth {depth}, root '{}', identity {:016x}",
            s.joint_count(),
            s.names[0],
            s.identity_hash()
        );
        for (l, lod) in s.lods.iter().enumerate() {
            let names: Vec<&str> = lod
                .joints()
                .iter()
                .map(|&j| s.names[j as usize].as_str())
                .collect();
            println!(
                "  LOD {}: {} joints, error {:.4}: {}",
                l + 1,
                names.len(),
                lod.error(),
                names.join(" ")
            );
        }
    }
    for (i, s) in p.skins.iter().enumerate() {
        println!(
            "skin {i} '{}': skeleton {}, {} palette entries",
            s.name,
            s.skeleton,
            s.joints.len()
        );
    }
    for (i, m) in p.meshes.iter().enumerate() {
        println!(
            "mesh {i} '{}': skin {}, {} vertices, {} triangles, normals {}, bounds diagonal {:.4}",
            m.name,
            m.skin,
            m.positions.len(),
            m.indices.len() / 3,
            if m.normals.is_empty() { "no" } else { "yes" },
            m.bounds_diagonal()
        );
        for (l, lod) in m.lods.iter().enumerate() {
            println!(
                "  LOD {}: {} triangles, {} vertices used, simplification error {:.4}",
                l + 1,
                lod.indices.len() / 3,
                used_vertices(&lod.indices),
                lod.error
            );
        }
        print_targets(&m.targets);
    }
    for (i, m) in p.scene.meshes.iter().enumerate() {
        println!(
            "static mesh {i} '{}': {} vertices, {} triangles, normals {}",
            m.name,
            m.positions.len(),
            m.indices.len() / 3,
            if m.normals.is_empty() { "no" } else { "yes" },
        );
        print_targets(&m.targets);
    }
    for n in &p.scene.nodes {
        let prims: Vec<String> = n
            .primitives
            .iter()
            .map(|q| match q.mesh {
                MeshRef::Skinned(m) => format!("{}: mesh {m}", q.primitive),
                MeshRef::Static(m) => format!("{}: static mesh {m}", q.primitive),
            })
            .collect();
        println!(
            "mesh node {} '{}': {}, primitives [{}], default weights {:?}",
            n.node,
            n.name,
            n.skin
                .map_or("no skin".to_string(), |s| format!("skin {s}")),
            prims.join(", "),
            n.weights
        );
    }
    println!(
        "{:<4} {:<32} {:>4} {:>9} {:>6} {:>7} {:>22} {:>9} {:>6}",
        "clip",
        "name",
        "skel",
        "duration",
        "rate",
        "samples",
        "animated/const/default",
        "bytes",
        "events"
    );
    for (i, c) in p.clips.iter().enumerate() {
        let [d, k, a] = kind_counts(c);
        println!(
            "{i:<4} {:<32} {:>4} {:>8.3}s {:>6.1} {:>7} {:>22} {:>9} {:>6}",
            c.name,
            c.skeleton,
            c.duration,
            c.sample_rate,
            c.sample_count,
            format!("{a}/{k}/{d}"),
            throng_cook::report::clip_bytes(c),
            c.events.len() + c.markers.len()
        );
        for w in p.scene.clips.iter().filter(|w| w.name == c.name) {
            print_weight_channels(p, w);
        }
        for t in p.curves.tracks_of(i as u32) {
            println!(
                "     curve: '{}' ({} bytes uncompressed)",
                p.curves
                    .channels
                    .get(t.channel as usize)
                    .map_or("?", |c| &c.name),
                4 * t.values.len()
            );
        }
    }
    for (i, c) in p.curves.channels.iter().enumerate() {
        println!(
            "curve channel {i}: '{}' on skeleton {}, {}, default {} in [{}, {}]",
            c.name,
            c.skeleton,
            c.composition.name(),
            c.default,
            c.min,
            c.max
        );
    }
    // Morph-weight clips of animations that move no joint (files without skins).
    for w in p
        .scene
        .clips
        .iter()
        .filter(|w| p.find_clip(&w.name).is_none())
    {
        println!(
            "weights clip '{}': {:.3}s, {:.1} Hz, {} samples",
            w.name, w.duration, w.sample_rate, w.sample_count
        );
        print_weight_channels(p, w);
    }
    for d in &p.motion_databases {
        println!(
            "motion database: skeleton {}, {} frames at {} Hz from {} clips, horizons {:?} s",
            d.skeleton,
            d.rows.len(),
            d.rate,
            d.clips.len(),
            d.horizons
        );
    }
}

/// One line per morph target: vertices moved, and whether it moves normals.
fn print_targets(targets: &[MorphTarget]) {
    for (t, target) in targets.iter().enumerate() {
        println!(
            "  morph target {t}: {} vertices moved, normal deltas {}",
            target.vertices.len(),
            if target.normals.is_empty() {
                "no"
            } else {
                "yes"
            }
        );
    }
}

/// The morph-weight channels of a clip: one per mesh node, its weight count and bytes.
fn print_weight_channels(p: &Package, w: &WeightClip) {
    for t in &w.tracks {
        let node = p.scene.nodes.get(t.node as usize);
        println!(
            "     channel: weights of mesh node {} '{}' ({} targets, {} bytes uncompressed)",
            node.map_or(0, |n| n.node),
            node.map_or("?", |n| n.name.as_str()),
            node.map_or(0, |n| n.weights.len()),
            4 * t.values.len()
        );
    }
}

/// The channels of clip `name` (package clip `clip`): per joint its animated or constant
/// sub-tracks, then its scalar curves, then the morph weights of each mesh node the clip
/// animates.
fn channels_json(p: &Package, name: &str, clip: Option<(usize, &Clip)>) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    if let Some((index, c)) = clip {
        let skeleton = &p.skeletons[c.skeleton as usize];
        for (k, t) in c.sub_tracks.iter().enumerate() {
            if t.kind == SubTrackKind::Default {
                continue;
            }
            let path = ["translation", "rotation", "scale"][k % 3];
            out.push(json!({
                "joint": skeleton.names.get(k / 3),
                "path": path,
                "kind": if t.kind == SubTrackKind::Animated { "animated" } else { "constant" },
            }));
        }
        for t in p.curves.tracks_of(index as u32) {
            out.push(json!({
                "curve": p.curves.channels.get(t.channel as usize).map(|c| &c.name),
                "path": "curve",
                "bytes": 4 * t.values.len(),
            }));
        }
    }
    for w in p.scene.clips.iter().filter(|w| w.name == name) {
        for t in &w.tracks {
            let node = p.scene.nodes.get(t.node as usize);
            out.push(json!({
                "node": node.map(|n| n.node),
                "path": "weights",
                "weights": node.map_or(0, |n| n.weights.len()),
                "bytes": 4 * t.values.len(),
            }));
        }
    }
    out
}

fn to_json(p: &Package) -> serde_json::Value {
    let targets = |ts: &[MorphTarget]| {
        ts.iter()
            .map(|t| json!({"vertices": t.vertices.len(), "normals": !t.normals.is_empty()}))
            .collect::<Vec<_>>()
    };
    json!({
        "skeletons": p.skeletons.iter().map(|s| json!({
            "joints": s.joint_count(),
            "names": s.names,
            "parents": s.parents.iter().map(|&x| if x == throng_cpu_ref::NO_PARENT { -1 } else { x as i64 }).collect::<Vec<_>>(),
            "identity_hash": format!("{:016x}", s.identity_hash()),
            "lods": s.lods.iter().map(|l| l.joints()).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "skins": p.skins.iter().map(|s| json!({"name": s.name, "skeleton": s.skeleton, "palette": s.joints.len()})).collect::<Vec<_>>(),
        "meshes": p.meshes.iter().map(|m| json!({"name": m.name, "skin": m.skin, "vertices": m.positions.len(), "triangles": m.indices.len() / 3,
            "lods": m.lods.iter().map(|l| json!({"triangles": l.indices.len() / 3, "vertices": used_vertices(&l.indices), "error": l.error})).collect::<Vec<_>>()})).collect::<Vec<_>>(),
        "curves": p.curves.channels.iter().map(|c| json!({"name": c.name, "skeleton": c.skeleton,
            "composition": c.composition.name(), "default": c.default,
            "min": c.min.is_finite().then_some(c.min), "max": c.max.is_finite().then_some(c.max)})).collect::<Vec<_>>(),
        "clips": p.clips.iter().enumerate().map(|(i, c)| {
            let counts = kind_counts(c);
            json!({
                "name": c.name, "skeleton": c.skeleton, "duration_s": c.duration, "sample_rate": c.sample_rate,
                "samples": c.sample_count, "loop": format!("{:?}", c.loop_policy), "profile": c.profile,
                "animated": counts[SubTrackKind::Animated as usize], "constant": counts[SubTrackKind::Constant as usize],
                "default": counts[SubTrackKind::Default as usize], "bytes": throng_cook::report::clip_bytes(c),
                "events": c.events.len(), "markers": c.markers.len(),
                "channels": channels_json(p, &c.name, Some((i, c))),
            })
        }).collect::<Vec<_>>(),
        "motion_databases": p.motion_databases.iter().map(|d| json!({
            "skeleton": d.skeleton, "frames": d.rows.len(), "rate": d.rate, "horizons_s": d.horizons,
            "clips": d.clips.iter().map(|c| json!({"clip": c.clip, "frames": c.frames, "playable": c.playable})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "static_meshes": p.scene.meshes.iter().map(|m| json!({"name": m.name, "vertices": m.positions.len(),
            "triangles": m.indices.len() / 3, "targets": targets(&m.targets)})).collect::<Vec<_>>(),
        "mesh_targets": p.meshes.iter().map(|m| targets(&m.targets)).collect::<Vec<_>>(),
        "mesh_nodes": p.scene.nodes.iter().map(|n| json!({"node": n.node, "name": n.name, "skin": n.skin,
            "primitives": n.primitives.iter().map(|q| match q.mesh {
                MeshRef::Skinned(m) => json!({"primitive": q.primitive, "mesh": m}),
                MeshRef::Static(m) => json!({"primitive": q.primitive, "static_mesh": m}),
            }).collect::<Vec<_>>(),
            "weights": n.weights})).collect::<Vec<_>>(),
        "weight_clips": p.scene.clips.iter().map(|w| json!({"name": w.name, "duration_s": w.duration,
            "sample_rate": w.sample_rate, "samples": w.sample_count,
            "channels": channels_json(p, &w.name, None)})).collect::<Vec<_>>(),
    })
}
