//! Our codec beside the Animation Compression Library on the same clips, judged by the same
//! metric (issue 13; docs/codec.md, "ACL itself on the six clips"). `scripts/acl-peer.sh` runs
//! the whole comparison; this example is its Rust side:
//!
//! - `acl_peer dump DIR [--rate HZ] FILE.glb...` cooks each file (the `standard` profile, clips
//!   at HZ, default 60) and writes every clip's reference samples, skeleton and measurement
//!   times as `DIR/<k>.bin` for `scripts/acl-peer.cpp`, which writes ACL's decompressed poses as
//!   `DIR/<k>.out`;
//! - `acl_peer measure DIR [--rate HZ] FILE.glb...` compresses each clip with our codec as the
//!   cook does and measures both against the reference clip: object-space error at virtual
//!   vertices 3 cm out, at every sample and halfway between (the cook report's metric). Prints
//!   a row per clip and the totals.
//!
//! Both sides count a clip's whole animation data: ours its payload as written, ACL's its
//! compressed buffer (`compressed_tracks::get_size`).

use std::path::Path;

use glam::{Affine3A, Quat, Vec3};
use throng_cook::codec::{encode_clip, measure, percentile, times};
use throng_cook::package::payload_bytes;
use throng_cook::profile::{CodecSettings, IMPORTANT_JOINTS};
use throng_cook::report::{rest_extent, RAW_JOINT_SAMPLE_BYTES};
use throng_cook::{cook, import_file, Profile};
use throng_cpu_ref::clip::sample_clip;
use throng_cpu_ref::error_metric::{virtual_vertex_errors_cm, VERTICES_PER_JOINT};
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::skeleton::NO_PARENT;
use throng_cpu_ref::transform::mean_column_scale;
use throng_cpu_ref::{Clip, Package, Skeleton, Trs};

/// f32s per transform in the exchange files: translation xyz, rotation xyzw, scale xyz.
const FLOATS: usize = 10;

fn main() {
    if let Err(e) = run() {
        eprintln!("acl_peer: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let usage = "usage: acl_peer dump|measure DIR [--rate HZ] FILE.glb...";
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        return Err(usage.into());
    }
    let mode = args.remove(0);
    let dir = args.remove(0);
    let mut rate = 60.0;
    if args.first().is_some_and(|a| a == "--rate") && args.len() > 1 {
        rate = args[1]
            .parse()
            .map_err(|e| format!("--rate {}: {e}", args[1]))?;
        args.drain(..2);
    }
    let profile = Profile {
        max_rate: rate,
        sample_rate: rate,
        ..Profile::STANDARD
    };
    let mut packages = Vec::new();
    for path in &args {
        let imported = import_file(path.as_ref()).map_err(|e| format!("{path}: {e}"))?;
        let (package, _) = cook(&imported, &profile).map_err(|e| format!("{path}: {e}"))?;
        packages.push(package);
    }
    let dir = Path::new(&dir);
    match mode.as_str() {
        "dump" => dump(dir, &packages),
        "measure" => compare(dir, &packages),
        _ => Err(usage.into()),
    }
}

/// Each clip with its skeleton, numbered across the packages.
fn clips(packages: &[Package]) -> impl Iterator<Item = Result<(usize, &Clip, &Skeleton), String>> {
    let all = packages
        .iter()
        .flat_map(|p| p.clips.iter().map(move |c| (p, c)));
    all.enumerate().map(|(k, (p, clip))| {
        let skeleton = p.skeletons.get(clip.skeleton as usize);
        let skeleton =
            skeleton.ok_or(format!("clip {}: no skeleton {}", clip.name, clip.skeleton))?;
        Ok((k, clip, skeleton))
    })
}

/// The times of [`times`] on ACL's clock: sample `i` at `i / rate`.
fn acl_times(clip: &Clip) -> Vec<f32> {
    let at = |i: u32| (f64::from(i) / f64::from(clip.sample_rate)) as f32;
    let mut times = Vec::with_capacity(2 * clip.sample_count as usize);
    for i in 0..clip.sample_count {
        times.push(at(i));
        if i + 1 < clip.sample_count {
            times.push(0.5 * (at(i) + at(i + 1)));
        }
    }
    times
}

fn put(out: &mut Vec<u8>, x: &Trs) {
    let (t, q, s) = (x.translation, x.rotation, x.scale);
    for f in [t.x, t.y, t.z, q.x, q.y, q.z, q.w, s.x, s.y, s.z] {
        out.extend_from_slice(&f.to_le_bytes());
    }
}

fn dump(dir: &Path, packages: &[Package]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for item in clips(packages) {
        let (k, clip, skeleton) = item?;
        let n = skeleton.joint_count();
        let mut out = Vec::new();
        out.extend_from_slice(&(n as u32).to_le_bytes());
        out.extend_from_slice(&clip.sample_count.to_le_bytes());
        out.extend_from_slice(&clip.sample_rate.to_le_bytes());
        out.extend_from_slice(&mean_column_scale(&skeleton.root_transform).to_le_bytes());
        for &p in &skeleton.parents {
            let p = if p == NO_PARENT { -1 } else { p as i32 };
            out.extend_from_slice(&p.to_le_bytes());
        }
        skeleton.rest.iter().for_each(|r| put(&mut out, r));
        let mut local = vec![Trs::IDENTITY; n];
        for i in 0..clip.sample_count {
            sample_clip(clip, skeleton, clip.sample_time(i) as f32, &mut local);
            local.iter().for_each(|x| put(&mut out, x));
        }
        // ACL's own sample times: the cook's last sample time may lie a hair past
        // `(sample_count - 1) / rate`, where ACL would already be past its last sample.
        let times = acl_times(clip);
        out.extend_from_slice(&(times.len() as u32).to_le_bytes());
        times
            .iter()
            .for_each(|t| out.extend_from_slice(&t.to_le_bytes()));
        let path = dir.join(format!("{k}.bin"));
        std::fs::write(&path, out).map_err(|e| format!("{}: {e}", path.display()))?;
        println!(
            "{}: {} ({n} joints, {} samples)",
            path.display(),
            clip.name,
            clip.sample_count
        );
    }
    Ok(())
}

/// ACL's decompressed poses of clip `k`: its compressed bytes and a transform per joint per time.
fn read_acl(dir: &Path, k: usize, joints: usize, times: usize) -> Result<(u64, Vec<Trs>), String> {
    let path = dir.join(format!("{k}.out"));
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    let expected = 2 + times * joints * FLOATS;
    if words.len() != expected || words[1] as usize != times {
        return Err(format!(
            "{}: {} words for {times} times of {joints} joints (expected {expected}); rerun dump",
            path.display(),
            words.len()
        ));
    }
    let f = |i: usize| f32::from_bits(words[2 + i]);
    let poses = (0..times * joints)
        .map(|x| {
            let b = x * FLOATS;
            Trs {
                translation: Vec3::new(f(b), f(b + 1), f(b + 2)),
                rotation: Quat::from_xyzw(f(b + 3), f(b + 4), f(b + 5), f(b + 6)),
                scale: Vec3::new(f(b + 7), f(b + 8), f(b + 9)),
            }
        })
        .collect();
    Ok((u64::from(words[0]), poses))
}

/// Vertex errors of `poses` (one pose per time of [`times`]) against the reference clip, in cm.
fn acl_errors(clip: &Clip, skeleton: &Skeleton, poses: &[Trs], errors: &mut Vec<f32>) -> f32 {
    let n = skeleton.joint_count();
    let mut local = vec![Trs::IDENTITY; n];
    let (mut exact, mut approx) = (vec![Affine3A::IDENTITY; n], vec![Affine3A::IDENTITY; n]);
    let mut errs = vec![0.0; n * VERTICES_PER_JOINT];
    let mut max = 0f32;
    for (&t, pose) in times(clip).iter().zip(poses.chunks_exact(n)) {
        sample_clip(clip, skeleton, t, &mut local);
        local_to_component(skeleton, &local, &mut exact);
        local_to_component(skeleton, pose, &mut approx);
        virtual_vertex_errors_cm(&skeleton.root_transform, &exact, &approx, &mut errs);
        max = errs.iter().fold(
            max,
            |m, &e| if e.is_nan() { f32::INFINITY } else { m.max(e) },
        );
        errors.extend_from_slice(&errs);
    }
    max
}

fn compare(dir: &Path, packages: &[Package]) -> Result<(), String> {
    let settings = CodecSettings {
        threshold_cm: 0.01,
        important_cm: 0.01,
        important: IMPORTANT_JOINTS,
    };
    println!("| clip | raw bytes | ours | ours max (cm) | ACL | ACL max (cm) |");
    println!("|---|---|---|---|---|---|");
    let (mut raw, mut ours, mut acl) = (0u64, 0u64, 0u64);
    let (mut our_errors, mut acl_errors_all) = (Vec::new(), Vec::new());
    let (mut our_max, mut acl_max) = (0f32, 0f32);
    for item in clips(packages) {
        let (k, clip, skeleton) = item?;
        let n = skeleton.joint_count();
        let (settings, _) = settings.for_extent(rest_extent(skeleton));
        let encoded = encode_clip(clip, skeleton, &settings)
            .map_err(|e| format!("clip {}: {e}", clip.name))?;
        let fidelity = measure(skeleton, clip, &encoded.clip, &mut our_errors);
        let (acl_bytes, poses) = read_acl(dir, k, n, times(clip).len())?;
        let max = acl_errors(clip, skeleton, &poses, &mut acl_errors_all);
        let clip_raw = RAW_JOINT_SAMPLE_BYTES * n as u64 * u64::from(clip.sample_count);
        let our_bytes = payload_bytes(&encoded.clip) as u64;
        println!(
            "| {} | {clip_raw} | {our_bytes} ({:.2} : 1) | {:.4} | {acl_bytes} ({:.2} : 1) | {max:.4} |",
            clip.name,
            clip_raw as f64 / our_bytes.max(1) as f64,
            fidelity.max_cm,
            clip_raw as f64 / acl_bytes.max(1) as f64,
        );
        (raw, ours, acl) = (raw + clip_raw, ours + our_bytes, acl + acl_bytes);
        our_max = our_max.max(fidelity.max_cm);
        acl_max = acl_max.max(max);
    }
    let within =
        |e: &[f32]| 100.0 * e.iter().filter(|&&x| x <= 0.01).count() as f64 / e.len().max(1) as f64;
    println!(
        "\nours: {:.2} : 1, max {our_max:.4} cm, p99 {:.4} cm, {:.2} % of errors ≤ 0.01 cm",
        raw as f64 / ours.max(1) as f64,
        percentile(&mut our_errors.clone(), 0.99),
        within(&our_errors),
    );
    println!(
        "ACL:  {:.2} : 1, max {acl_max:.4} cm, p99 {:.4} cm, {:.2} % of errors ≤ 0.01 cm",
        raw as f64 / acl.max(1) as f64,
        percentile(&mut acl_errors_all.clone(), 0.99),
        within(&acl_errors_all),
    );
    Ok(())
}
