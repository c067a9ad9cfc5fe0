//! `throng inspect`: what a package holds.

use std::path::PathBuf;

use serde_json::json;
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
        "{}: {} skeletons, {} skins, {} meshes, {} clips",
        path.display(),
        p.skeletons.len(),
        p.skins.len(),
        p.meshes.len(),
        p.clips.len()
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

fn to_json(p: &Package) -> serde_json::Value {
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
        "clips": p.clips.iter().map(|c| {
            let counts = kind_counts(c);
            json!({
                "name": c.name, "skeleton": c.skeleton, "duration_s": c.duration, "sample_rate": c.sample_rate,
                "samples": c.sample_count, "loop": format!("{:?}", c.loop_policy), "profile": c.profile,
                "animated": counts[SubTrackKind::Animated as usize], "constant": counts[SubTrackKind::Constant as usize],
                "default": counts[SubTrackKind::Default as usize], "bytes": throng_cook::report::clip_bytes(c),
                "events": c.events.len(), "markers": c.markers.len(),
            })
        }).collect::<Vec<_>>(),
        "motion_databases": p.motion_databases.iter().map(|d| json!({
            "skeleton": d.skeleton, "frames": d.rows.len(), "rate": d.rate, "horizons_s": d.horizons,
            "clips": d.clips.iter().map(|c| json!({"clip": c.clip, "frames": c.frames, "playable": c.playable})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}
