//! The CPU decoder of the compressed encoding (docs/codec.md): a hand-built stream decodes to
//! values computed independently from the documented layout; sampling a compressed clip is
//! random access (any joint, any time, any order, no state) and stays close to the reference;
//! a malformed stream samples as rest instead of panicking.

use glam::{Affine3A, Quat, Vec3};
use proptest::prelude::*;
use throng_cpu_ref::clip::{sample_clip, sample_joint, sample_joints};
use throng_cpu_ref::codec::bits::Writer;
use throng_cpu_ref::codec::{
    decode_components, decode_pair, sample_quat, sample_vec3, CompressedClip, PosePlan,
};
use throng_cpu_ref::{Clip, LoopPolicy, Package, Skeleton, SubTrack, SubTrackKind, Trs, NO_PARENT};

/// The sub-track table of `(kind, offset)`s.
fn sub_tracks(table: &[(SubTrackKind, u32)]) -> Vec<SubTrack> {
    (table.iter())
        .map(|&(kind, offset)| SubTrack { kind, offset })
        .collect()
}

/// The sub-tracks of [`hand_built`]'s joint.
const HAND_BUILT: [(SubTrackKind, u32); 3] = [
    (SubTrackKind::Animated, 0),
    (SubTrackKind::Animated, 1),
    (SubTrackKind::Constant, 16),
];

/// One joint: translation animated (sub-track 0), rotation animated rebuilding x (sub-track 1),
/// scale constant (sub-track 2, words 14..17). Three samples in segments of two.
fn hand_built() -> (CompressedClip, [[f64; 3]; 3], [[f64; 3]; 3]) {
    let t_range = [
        (-1.0f32, 2f32.powi(-10)),
        (0.5, 2f32.powi(-8)),
        (3.0, 2f32.powi(-12)),
    ];
    let q_range = [
        (-0.25f32, 2f32.powi(-20)),
        (0.0, 2f32.powi(-20)),
        (-0.5, 2f32.powi(-21)),
    ];
    let mut words = Vec::new();
    for r in t_range {
        words.extend([r.0.to_bits(), r.1.to_bits()]);
    }
    words.push(0);
    for r in q_range {
        words.extend([r.0.to_bits(), r.1.to_bits()]);
    }
    words.push(0); // rebuild x
    let table = words.len();
    words.extend([0, 0]); // segment table, filled below
    words.extend([1.0f32, 2.0, 0.5].map(f32::to_bits)); // the constant scale
                                                        // Per segment and track: shift, widths, hi, and the stored k of each sample.
    struct Part {
        shift: u32,
        widths: [u32; 3],
        hi: [u32; 3],
        ks: Vec<[u32; 3]>,
    }
    let segments = [
        [
            Part {
                shift: 3,
                widths: [4, 0, 7],
                hi: [1, 2, 3],
                ks: vec![[9, 0, 100], [15, 0, 0]],
            },
            Part {
                shift: 0,
                widths: [16, 12, 1],
                hi: [0, 0, 255],
                ks: vec![[65535, 4095, 1], [1, 2, 0]],
            },
        ],
        [
            Part {
                shift: 24,
                widths: [1, 1, 1],
                hi: [0, 0, 0],
                ks: vec![[0, 1, 0]],
            },
            Part {
                shift: 8,
                widths: [8, 8, 8],
                hi: [7, 8, 9],
                ks: vec![[200, 100, 50]],
            },
        ],
    ];
    let mut expected_t = [[0.0; 3]; 3];
    let mut expected_q = [[0.0; 3]; 3];
    for (s, parts) in segments.iter().enumerate() {
        words[table + s] = words.len() as u32;
        let mut data = Writer::default();
        let mut headers = Vec::new();
        for (a, p) in parts.iter().enumerate() {
            let header = data.len
                | u64::from(p.shift) << 20
                | (0..3)
                    .map(|c| {
                        u64::from(p.widths[c]) << (25 + 5 * c) | u64::from(p.hi[c]) << (40 + 8 * c)
                    })
                    .sum::<u64>();
            headers.extend([header as u32, (header >> 32) as u32]);
            for (i, k) in p.ks.iter().enumerate() {
                for c in 0..3 {
                    data.write(k[c], p.widths[c]);
                    // Independent: K = hi · 65536 + k · 2^shift, value = base + K · step in f64.
                    let big_k =
                        f64::from(p.hi[c]) * 65536.0 + f64::from(k[c]) * 2f64.powi(p.shift as i32);
                    let (base, step) = if a == 0 { t_range[c] } else { q_range[c] };
                    let value = f64::from(base) + big_k * f64::from(step);
                    let out = if a == 0 {
                        &mut expected_t
                    } else {
                        &mut expected_q
                    };
                    out[2 * s + i][c] = value;
                }
            }
        }
        words.extend(headers);
        words.extend(data.words);
    }
    (
        CompressedClip::new(2, 2, words, &sub_tracks(&HAND_BUILT)),
        expected_t,
        expected_q,
    )
}

#[test]
fn a_hand_built_stream_decodes_to_the_documented_values() {
    let (clip, expected_t, expected_q) = hand_built();
    for i in 0..3u32 {
        let t = decode_components(&clip, 0, i).unwrap();
        let q = decode_components(&clip, 1, i).unwrap();
        for c in 0..3 {
            // One f32 rounding of the exact sum.
            assert_eq!(
                t[c], expected_t[i as usize][c] as f32,
                "t sample {i} component {c}"
            );
            assert_eq!(
                q[c], expected_q[i as usize][c] as f32,
                "q sample {i} component {c}"
            );
        }
        let st = |kind, offset| SubTrack { kind, offset };
        let v = sample_vec3(&clip, st(SubTrackKind::Animated, 0), i).unwrap();
        assert_eq!(v.to_array(), t);
        let rotation = sample_quat(&clip, st(SubTrackKind::Animated, 1), i).unwrap();
        let [y, z, w] = q;
        let x = (1.0 - (y * y + z * z + w * w)).max(0.0).sqrt();
        assert_eq!(
            rotation,
            Quat::from_xyzw(x, y, z, w),
            "x rebuilt, non-negative"
        );
        assert_eq!(
            sample_vec3(&clip, st(SubTrackKind::Constant, 16), i),
            Some(Vec3::new(1.0, 2.0, 0.5))
        );
        assert_eq!(sample_vec3(&clip, st(SubTrackKind::Default, 0), i), None);
    }
    // Past the last sample, and past the stream.
    assert_eq!(decode_components(&clip, 0, 4), None);
    assert_eq!(decode_components(&clip, 2, 0), None);
}

#[test]
fn a_truncated_stream_samples_as_rest_without_panicking() {
    let (mut compressed, _, _) = hand_built();
    let skeleton = Skeleton::new(
        vec![NO_PARENT],
        vec![Trs::IDENTITY],
        vec!["j".into()],
        vec![0],
        Affine3A::IDENTITY,
    )
    .unwrap();
    let mut clip = Clip {
        name: "hand".into(),
        skeleton: 0,
        skeleton_hash: skeleton.identity_hash(),
        duration: 2.0,
        sample_rate: 1.0,
        sample_count: 3,
        loop_policy: LoopPolicy::Once,
        profile: "test".into(),
        sub_tracks: sub_tracks(&HAND_BUILT),
        values: Vec::new(),
        events: Vec::new(),
        markers: Vec::new(),
        root_motion: None,
        compressed: Some(compressed.clone()),
    };
    let mut pose = [Trs::IDENTITY];
    sample_clip(&clip, &skeleton, 0.0, &mut pose);
    assert_eq!(pose[0].scale, Vec3::new(1.0, 2.0, 0.5));
    assert_ne!(pose[0].translation, Vec3::ZERO);
    for len in (0..compressed.words.len()).rev() {
        compressed.words.truncate(len);
        clip.compressed = Some(compressed.clone());
        for t in [0.0, 0.5, 1.0, 1.5, 2.0] {
            sample_clip(&clip, &skeleton, t, &mut pose);
            assert!(pose[0].is_finite(), "{len} words at {t} s");
        }
    }
    sample_clip(&clip, &skeleton, 1.0, &mut pose);
    assert_eq!(pose[0], Trs::IDENTITY, "nothing left to read: rest");
}

/// Decoding the two samples an interpolation brackets at once (one header read when they share
/// a segment) gives the two single decodes bit for bit, within a segment and across one, on the
/// hand-built stream and on every animated sub-track of the character's clips.
#[test]
fn a_pair_decodes_as_two_single_samples_within_and_across_segments() {
    let (hand, _, _) = hand_built();
    let (_, compressed) = character();
    let clips = compressed.clips.iter();
    let streams: Vec<(&CompressedClip, u32)> = std::iter::once((&hand, 3))
        .chain(clips.filter_map(|c| Some((c.compressed.as_ref()?, c.sample_count))))
        .collect();
    let mut pairs = 0;
    for (c, samples) in streams {
        for a in 0..c.animated {
            for i0 in 0..samples {
                let i1 = (i0 + 1).min(samples - 1);
                let single = (decode_components(c, a, i0), decode_components(c, a, i1));
                let bits = |v: [f32; 3]| v.map(f32::to_bits);
                let pair = decode_pair(c, a, i0, i1).expect("both samples exist");
                assert_eq!(
                    bits(pair.0),
                    bits(single.0.unwrap()),
                    "sub-track {a} at {i0}"
                );
                assert_eq!(
                    bits(pair.1),
                    bits(single.1.unwrap()),
                    "sub-track {a} at {i1}"
                );
                pairs += 1;
            }
            assert_eq!(
                decode_pair(c, a, 0, u32::MAX),
                None,
                "past the segment table"
            );
        }
    }
    assert!(pairs > 1000, "{pairs} pairs");
}

/// A whole pose decodes its animated rotations together (eight to a vector with AVX2, the
/// segment headers, bits and nlerp of every lane at once) by the clip's plan; a single joint
/// decodes alone, and so does every joint of a clip whose plan is not its table's. All give the
/// same pose bit for bit on every shared clip and the generated character's, at every sample,
/// halfway between samples (both samples in one segment, or the two in neighbouring segments)
/// and at the end.
#[cfg(target_arch = "x86_64")]
#[test]
fn whole_poses_decode_their_rotations_together_to_the_joint_by_joint_values() {
    assert!(
        throng_cpu_ref::codec::batch::available(),
        "this x86-64 CPU has no AVX2: the batched decoder cannot be tested here"
    );
    let mut packages = vec![character().1.clone()];
    // Every shared asset with a skin (InterpolationTest has none).
    for path in throng_fixtures::shared_assets() {
        let Ok(imported) = throng_cook::import_file(&path) else {
            continue;
        };
        let profile = throng_cook::Profile::STANDARD;
        let (mut package, mut report) = throng_cook::cook(&imported, &profile).unwrap();
        throng_cook::compress(&mut package, &mut report, &profile);
        packages.push(package);
    }
    let (mut poses, mut clips) = (0, 0);
    for package in &packages {
        for clip in package.clips.iter().filter(|c| c.compressed.is_some()) {
            clips += 1;
            let skeleton = &package.skeletons[clip.skeleton as usize];
            let n = skeleton.joint_count();
            let joints: Vec<usize> = (0..n).collect();
            let (mut whole, mut alone) = (vec![Trs::IDENTITY; n], vec![Trs::IDENTITY; n]);
            let mut unplanned = clip.clone();
            if let Some(c) = unplanned.compressed.as_mut() {
                c.plan = PosePlan::default();
            }
            let mut by_joint = vec![Trs::IDENTITY; n];
            let dt = 1.0 / clip.sample_rate;
            let times = (0..clip.sample_count)
                .flat_map(|i| [i as f32 * dt, (i as f32 + 0.5) * dt])
                .chain([clip.duration as f32]);
            for t in times {
                sample_clip(clip, skeleton, t, &mut whole);
                sample_joints(clip, skeleton, &joints, t, &mut alone);
                sample_clip(&unplanned, skeleton, t, &mut by_joint);
                let bits = |p: &[Trs]| -> Vec<u32> {
                    p.iter()
                        .flat_map(|j| {
                            j.rotation
                                .to_array()
                                .into_iter()
                                .chain(j.translation.to_array())
                                .chain(j.scale.to_array())
                        })
                        .map(f32::to_bits)
                        .collect()
                };
                assert_eq!(bits(&whole), bits(&alone), "{} at {t} s", clip.name);
                assert_eq!(bits(&whole), bits(&by_joint), "{} unplanned", clip.name);
                poses += 1;
            }
        }
    }
    eprintln!(
        "{poses} poses of {clips} clips, {} packages",
        packages.len()
    );
    // Every sample, half-sample and end of each compressed clip: the character's five clips
    // give 477 poses; with the shared assets, their clips too.
    let character_clips = packages[0].clips.iter().filter(|c| c.compressed.is_some());
    assert!(
        character_clips.count() >= 5,
        "the character's clips compress"
    );
    assert!(poses > 400, "{poses} poses");
    if packages.len() > 1 {
        assert!(
            poses > 1000 && clips >= 20,
            "{poses} poses of {clips} clips"
        );
    }
}

/// The generated character cooked with `standard`, in both encodings.
fn character() -> &'static (Package, Package) {
    static CELL: std::sync::OnceLock<(Package, Package)> = std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        let imported =
            throng_cook::import_slice(&throng_fixtures::character_glb(), "character").unwrap();
        let (reference, _) = throng_cook::cook(&imported, &throng_cook::Profile::STANDARD).unwrap();
        let mut compressed = reference.clone();
        throng_cook::compress(
            &mut compressed,
            &mut Default::default(),
            &throng_cook::Profile::STANDARD,
        );
        (reference, compressed)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any joint at any time, in any order: `sample_joint` equals `sample_clip`'s entry bit for
    /// bit, whatever was sampled before, and the compressed pose is within a hair of the reference.
    #[test]
    fn random_access_equals_the_whole_pose_and_tracks_the_reference(
        clip in 0usize..5, times in prop::collection::vec(-0.2f32..3.0, 1..6), joint_seed in any::<u64>(),
    ) {
        let (reference, compressed) = character();
        let skeleton = &compressed.skeletons[0];
        let clip_index = clip % compressed.clips.len();
        let (c, r) = (&compressed.clips[clip_index], &reference.clips[clip_index]);
        prop_assert!(c.compressed.is_some());
        let n = skeleton.joint_count();
        let (mut pose, mut exact) = (vec![Trs::IDENTITY; n], vec![Trs::IDENTITY; n]);
        for (k, &t) in times.iter().enumerate() {
            sample_clip(c, skeleton, t, &mut pose);
            sample_clip(r, skeleton, t, &mut exact);
            for step in 0..n {
                let j = (joint_seed as usize).wrapping_add(step * 7 + k) % n;
                prop_assert_eq!(sample_joint(c, skeleton, j, t), pose[j], "joint {} at {} s", j, t);
                let (a, b) = (pose[j], exact[j]);
                prop_assert!((a.translation - b.translation).length() < 1e-3, "joint {} t {} vs {}", j, a.translation, b.translation);
                prop_assert!(a.rotation.angle_between(b.rotation) < 1e-2, "joint {} q {} vs {}", j, a.rotation, b.rotation);
                prop_assert!((a.scale - b.scale).length() < 1e-3);
            }
        }
    }
}
