//! The source sampler against Khronos' InterpolationTest.glb: STEP / LINEAR / CUBICSPLINE on
//! translation, rotation and scale, checked against values computed here independently from
//! the accessor data (f64 slerp, cubic Bézier by de Casteljau).

use std::path::{Path, PathBuf};

use gltf::animation::util::ReadOutputs;
use throng_cpu_ref::{
    curve::sample_exact, Channel, ChannelPath, Interpolation, SourceClip, Trs, NO_PARENT,
};

fn asset(name: &str) -> Option<PathBuf> {
    throng_fixtures::shared_dir(name, name)
}

/// The file's channels, one per animation, as (animation name, channel on joint 0).
fn channels(path: &Path) -> Vec<(String, Channel)> {
    let (doc, buffers, _) = gltf::import(path).expect("InterpolationTest.glb imports");
    let mut out = Vec::new();
    for anim in doc.animations() {
        for ch in anim.channels() {
            let reader = ch.reader(|b| Some(&buffers[b.index()]));
            let times: Vec<f32> = reader.read_inputs().expect("inputs").collect();
            let interpolation = match ch.sampler().interpolation() {
                gltf::animation::Interpolation::Step => Interpolation::Step,
                gltf::animation::Interpolation::Linear => Interpolation::Linear,
                gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
            };
            let (path, values): (ChannelPath, Vec<f32>) = match reader
                .read_outputs()
                .expect("outputs")
            {
                ReadOutputs::Translations(v) => (ChannelPath::Translation, v.flatten().collect()),
                ReadOutputs::Scales(v) => (ChannelPath::Scale, v.flatten().collect()),
                ReadOutputs::Rotations(v) => {
                    (ChannelPath::Rotation, v.into_f32().flatten().collect())
                }
                ReadOutputs::MorphTargetWeights(_) => continue,
            };
            let name = anim.name().unwrap_or_default().to_string();
            out.push((
                name,
                Channel {
                    joint: 0,
                    path,
                    interpolation,
                    times,
                    values,
                },
            ));
        }
    }
    out
}

/// Key `k`'s (in-tangent, value, out-tangent) in f64; tangents are zero for non-cubic channels.
fn key(c: &Channel, k: usize) -> [Vec<f64>; 3] {
    let w = c.path.width();
    let get = |start: usize| {
        c.values[start..start + w]
            .iter()
            .map(|&x| x as f64)
            .collect::<Vec<_>>()
    };
    match c.interpolation {
        Interpolation::CubicSpline => [get(3 * w * k), get(3 * w * k + w), get(3 * w * k + 2 * w)],
        _ => [vec![0.0; w], get(w * k), vec![0.0; w]],
    }
}

fn lerp(a: &[f64], b: &[f64], u: f64) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x + (y - x) * u).collect()
}

fn normalize(v: Vec<f64>) -> Vec<f64> {
    let l = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.into_iter().map(|x| x / l).collect()
}

/// Textbook slerp: flip b into a's hemisphere, then sin-weighted sum.
fn slerp(a: &[f64], b: &[f64], u: f64) -> Vec<f64> {
    let (a, b) = (normalize(a.to_vec()), normalize(b.to_vec()));
    let dot: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    let (b, dot) = if dot < 0.0 {
        (b.iter().map(|x| -x).collect(), -dot)
    } else {
        (b, dot)
    };
    let theta = dot.min(1.0).acos();
    if theta < 1e-9 {
        return a;
    }
    let (wa, wb) = (
        ((1.0 - u) * theta).sin() / theta.sin(),
        (u * theta).sin() / theta.sin(),
    );
    a.iter().zip(&b).map(|(x, y)| wa * x + wb * y).collect()
}

/// The cubic Hermite segment as a Bézier curve (control points v0, v0 + dt b0 / 3,
/// v1 - dt a1 / 3, v1) evaluated by de Casteljau.
fn bezier(k0: &[Vec<f64>; 3], k1: &[Vec<f64>; 3], dt: f64, u: f64) -> Vec<f64> {
    let p0 = k0[1].clone();
    let p1: Vec<f64> = k0[1]
        .iter()
        .zip(&k0[2])
        .map(|(v, b)| v + dt * b / 3.0)
        .collect();
    let p2: Vec<f64> = k1[1]
        .iter()
        .zip(&k1[0])
        .map(|(v, a)| v - dt * a / 3.0)
        .collect();
    let p3 = k1[1].clone();
    let (q0, q1, q2) = (lerp(&p0, &p1, u), lerp(&p1, &p2, u), lerp(&p2, &p3, u));
    let (r0, r1) = (lerp(&q0, &q1, u), lerp(&q1, &q2, u));
    lerp(&r0, &r1, u)
}

/// Independent value of `c` at fraction `u` between keys `k` and `k + 1`.
fn expected(c: &Channel, k: usize, u: f64) -> Vec<f64> {
    let (k0, k1) = (key(c, k), key(c, k + 1));
    let rotation = c.path == ChannelPath::Rotation;
    match c.interpolation {
        Interpolation::Step => k0[1].clone(),
        Interpolation::Linear if rotation => slerp(&k0[1], &k1[1], u),
        Interpolation::Linear => lerp(&k0[1], &k1[1], u),
        Interpolation::CubicSpline => {
            let dt = c.times[k + 1] as f64 - c.times[k] as f64;
            let v = bezier(&k0, &k1, dt, u);
            if rotation {
                normalize(v)
            } else {
                v
            }
        }
    }
}

/// Largest difference, treating rotations q and -q as equal.
fn diff(c: &Channel, got: [f32; 4], want: &[f64]) -> f64 {
    let d = |sign: f64| {
        want.iter()
            .zip(got)
            .map(|(w, g)| (g as f64 - sign * w).abs())
            .fold(0.0, f64::max)
    };
    if c.path == ChannelPath::Rotation {
        d(1.0).min(d(-1.0))
    } else {
        d(1.0)
    }
}

#[test]
fn interpolation_test_channels_match_independent_values() {
    let Some(path) = asset("InterpolationTest.glb") else {
        return;
    };
    let channels = channels(&path);
    assert_eq!(channels.len(), 9, "3 interpolations x 3 paths");
    let mut worst = 0.0f64;
    let mut checks = 0;
    for (name, c) in &channels {
        let n = c.times.len();
        assert!(n >= 2, "{name}: needs two keys");
        let mut check = |t: f32, want: Vec<f64>, what: &str| {
            let got = c.sample(t).expect("channel is well formed");
            let e = diff(c, got, &want);
            assert!(
                e < 2e-5,
                "{name} {what} (t = {t}): got {got:?}, want {want:?}"
            );
            worst = worst.max(e);
            checks += 1;
        };
        for k in 0..n {
            check(c.times[k], key(c, k)[1].clone(), "at key");
        }
        for k in 0..n - 1 {
            for u in [0.25, 0.5, 0.8] {
                let t = (c.times[k] as f64 + u * (c.times[k + 1] - c.times[k]) as f64) as f32;
                // Recompute u from the f32 time the sampler actually sees.
                let u =
                    (t as f64 - c.times[k] as f64) / (c.times[k + 1] as f64 - c.times[k] as f64);
                check(t, expected(c, k, u), "between keys");
            }
        }
        check(
            c.times[0] - 0.5,
            key(c, 0)[1].clone(),
            "before the first key",
        );
        check(
            c.times[n - 1] + 0.5,
            key(c, n - 1)[1].clone(),
            "after the last key",
        );
    }
    println!("InterpolationTest.glb: {checks} checks, worst difference {worst:.2e}");
}

#[test]
fn interpolation_test_scale_keys_start_after_zero() {
    // The scale animations' first key is at 1/24 s: before it the first value holds.
    let Some(path) = asset("InterpolationTest.glb") else {
        return;
    };
    let skeleton = throng_cpu_ref::Skeleton::new(
        vec![NO_PARENT],
        vec![Trs::IDENTITY],
        vec!["node".into()],
        vec![0],
        glam::Affine3A::IDENTITY,
    )
    .expect("one-joint skeleton");
    let scales: Vec<Channel> = channels(&path)
        .into_iter()
        .map(|(_, c)| c)
        .filter(|c| c.path == ChannelPath::Scale)
        .collect();
    assert_eq!(scales.len(), 3);
    for c in scales {
        assert!(c.times[0] > 0.04, "first key at {}", c.times[0]);
        let first = key(&c, 0)[1].clone();
        let clip = SourceClip {
            name: "s".into(),
            skeleton: 0,
            duration: *c.times.last().unwrap(),
            channels: vec![c],
        };
        let mut local = [Trs::IDENTITY];
        sample_exact(&clip, &skeleton, 0.0, &mut local);
        let got = local[0].scale.to_array();
        for i in 0..3 {
            assert!(
                (got[i] as f64 - first[i]).abs() < 1e-6,
                "{got:?} vs {first:?}"
            );
        }
    }
}
