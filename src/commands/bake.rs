//! `throng bake-impostors`: a skin's clips rendered on the GPU from views around the up axis
//! into an impostor atlas PNG, and the impostor describing it written into the package
//! (docs/gpu.md "Far tier", docs/package-format.md IMPOSTORS).

use std::io::Write;
use std::path::PathBuf;

use throng_gpu::impostor::{bake, BakeOptions};
use throng_gpu::GpuContext;

use super::{load_any, print_json, write_file, CliError};

#[derive(clap::Args)]
pub struct Args {
    /// The package (.throng) to bake from and write the impostor into; a .glb / .gltf is cooked
    /// with the default profile first (then give --package-out).
    package: PathBuf,
    /// A clip to bake, by name; repeatable (default: every clip of the skin's skeleton).
    #[arg(long = "clip", value_name = "NAME")]
    clips: Vec<String>,
    /// Views around the up axis per elevation row.
    #[arg(long, default_value_t = 8)]
    views: u32,
    /// Elevation of a row of views above the horizon, degrees; repeatable (default: 0 and 30).
    #[arg(long = "elevation", value_name = "DEGREES")]
    elevations: Vec<f32>,
    /// Frames per second of clip time.
    #[arg(long, default_value_t = 10.0)]
    fps: f32,
    /// Cell side in pixels.
    #[arg(long, default_value_t = 64)]
    cell: u32,
    /// The skin to bake (package index).
    #[arg(long, default_value_t = 0)]
    skin: u32,
    /// The atlas PNG to write: per texel the component-space normal (rgb) and coverage (alpha).
    #[arg(short, long, value_name = "ATLAS.png")]
    out: PathBuf,
    /// Where to write the package with its impostor (default: over PACKAGE, a .throng).
    #[arg(long, value_name = "FILE.throng")]
    package_out: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let package_out = match (&args.package_out, args.package.extension()) {
        (Some(p), _) => p.clone(),
        (None, Some(e)) if e == "throng" => args.package.clone(),
        (None, _) => {
            return Err(CliError::Usage(format!(
                "{} is not a .throng package; give --package-out FILE.throng for the result",
                args.package.display()
            )))
        }
    };
    let mut package = load_any(&args.package)?;
    let skin = package.skins.get(args.skin as usize).ok_or_else(|| {
        CliError::Usage(format!(
            "{} has {} skins; --skin {} names none",
            args.package.display(),
            package.skins.len(),
            args.skin
        ))
    })?;
    let clips = match args.clips.is_empty() {
        true => (0..package.clips.len() as u32)
            .filter(|&c| package.clips[c as usize].skeleton == skin.skeleton)
            .collect(),
        false => (args.clips.iter())
            .map(|name| {
                package.find_clip(name).map(|c| c as u32).ok_or_else(|| {
                    let names: Vec<&str> = package.clips.iter().map(|c| c.name.as_str()).collect();
                    CliError::Usage(format!(
                        "no clip {name:?}; the package has {}",
                        names.join(", ")
                    ))
                })
            })
            .collect::<Result<Vec<u32>, CliError>>()?,
    };
    let elevations = match args.elevations.is_empty() {
        true => vec![0.0, 30.0],
        false => args.elevations.clone(),
    };
    let options = BakeOptions {
        clips,
        views: args.views,
        elevations: elevations.iter().map(|d| d.to_radians()).collect(),
        fps: args.fps,
        cell: args.cell,
    };
    let ctx = GpuContext::new()?;
    let quiet = args.json;
    let baked = bake(&ctx, &package, args.skin, &options, |done, total| {
        if !quiet && (done % 64 == 0 || done == total) {
            eprint!("\rbaking cell {done} of {total}");
            let _ = std::io::stderr().flush();
        }
    })
    .map_err(|e| match e {
        throng_gpu::GpuError::BadPackage { what, .. } => {
            CliError::Usage(format!("{}: {what}", args.package.display()))
        }
        e => CliError::Gpu(e),
    })?;
    if !quiet {
        eprintln!();
    }
    throng::write_png(&args.out, &baked.atlas).map_err(|e| CliError::Io {
        path: args.out.clone(),
        source: std::io::Error::other(e),
    })?;
    let i = &baked.impostor;
    package.impostors.retain(|x| x.skin != i.skin);
    package.impostors.push(i.clone());
    package.impostors.sort_by_key(|x| x.skin);
    let bytes = throng_cook::write_package(&package);
    write_file(&package_out, &bytes)?;
    let clips: Vec<serde_json::Value> = (i.clips.iter())
        .map(|c| {
            serde_json::json!({
                "clip": package.clips[c.clip as usize].name,
                "frames": c.frames,
                "cells": c.frames * i.cells_per_frame(),
            })
        })
        .collect();
    if args.json {
        print_json(&serde_json::json!({
            "atlas": { "path": args.out, "width": i.width, "height": i.height, "cell": i.cell },
            "views": i.views,
            "elevations_deg": elevations,
            "card": { "centre": i.centre.to_array(), "radius": i.radius },
            "clips": clips,
            "package": { "path": package_out, "bytes": bytes.len() },
        }));
    } else {
        println!(
            "atlas {}: {}x{} px, {} px cells, {} views x {} rows; card radius {:.3} m",
            args.out.display(),
            i.width,
            i.height,
            i.cell,
            i.views,
            i.rows(),
            i.radius
        );
        for (c, v) in i.clips.iter().zip(&clips) {
            println!(
                "  {}: {} frames, {} cells",
                package.clips[c.clip as usize].name, c.frames, v["cells"]
            );
        }
        println!(
            "package {} ({} bytes) holds the impostor",
            package_out.display(),
            bytes.len()
        );
    }
    Ok(())
}
