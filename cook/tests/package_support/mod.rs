//! Shared by the package tests: a hand-built package that uses every field, and byte-level
//! helpers that follow docs/package-format.md independently of the reader.
#![allow(dead_code)] // each test binary uses a different subset

use glam::{Affine3A, Quat, Vec3};
use throng_cpu_ref::{
    Clip, ClipEvent, LoopPolicy, Package, RootMotion, RootMotionPolicy, Skeleton, SkeletonLod,
    SkinBinding, SkinnedMesh, SubTrack, SubTrackKind, SyncMarker, Trs, NO_PARENT,
};
use xxhash_rust::xxh3::xxh3_64;

/// Six joints, two levels of branching, non-uniform scale in the rest pose.
pub fn branching_skeleton() -> Skeleton {
    let parents = vec![NO_PARENT, 0, 1, 1, 3, 0];
    let rest = vec![
        trs([0.0, 1.0, 0.0], Quat::from_rotation_y(0.3), [1.0, 1.0, 1.0]),
        trs(
            [0.0, 0.25, 0.01],
            Quat::from_rotation_x(-0.1),
            [1.0, 2.0, 0.5],
        ),
        trs([0.0, 0.3, 0.0], Quat::IDENTITY, [1.0, 1.0, 1.0]),
        trs([0.2, 0.1, 0.0], Quat::from_rotation_z(1.2), [0.9, 1.1, 1.3]),
        trs(
            [0.3, 0.0, 0.0],
            Quat::from_euler(glam::EulerRot::XYZ, 0.1, 0.2, 0.3),
            [1.0, 1.0, 1.0],
        ),
        trs(
            [-0.1, -0.1, 0.0],
            Quat::from_rotation_x(0.7),
            [1.0, 1.0, 1.0],
        ),
    ];
    let names = ["root", "spine", "head", "arm.L", "hand.L", "leg"]
        .map(String::from)
        .to_vec();
    let root = Affine3A::from_scale_rotation_translation(
        Vec3::splat(0.01),
        Quat::from_rotation_x(-0.5),
        Vec3::new(1.0, 2.0, 3.0),
    );
    Skeleton::new(parents, rest, names, vec![3, 4, 5, 7, 8, 9], root).expect("valid skeleton")
}

/// Two joints, one shared name with the first skeleton, a synthetic root.
pub fn small_skeleton() -> Skeleton {
    let rest = vec![
        Trs::IDENTITY,
        trs(
            [0.0, 0.5, 0.0],
            Quat::from_rotation_z(0.25),
            [1.0, 1.0, 1.0],
        ),
    ];
    let names = ["root", "tip ✓"].map(String::from).to_vec();
    Skeleton::new(
        vec![NO_PARENT, 0],
        rest,
        names,
        vec![u32::MAX, 0],
        Affine3A::IDENTITY,
    )
    .expect("valid skeleton")
}

fn trs(t: [f32; 3], q: Quat, s: [f32; 3]) -> Trs {
    Trs {
        translation: Vec3::from_array(t),
        rotation: q.normalize(),
        scale: Vec3::from_array(s),
    }
}

/// Component-space rest transforms by plain parent-first composition.
fn rest_component(s: &Skeleton) -> Vec<Affine3A> {
    let mut out: Vec<Affine3A> = Vec::new();
    for (j, t) in s.rest.iter().enumerate() {
        let parent = if s.parents[j] == NO_PARENT {
            Affine3A::IDENTITY
        } else {
            out[s.parents[j] as usize]
        };
        out.push(parent * t.to_affine());
    }
    out
}

/// Appends `count` samples of `width` floats derived from `seed` and returns the sub-track.
/// Rotation samples (width 4) are unit; others are positive so they also serve as scales.
fn push(
    values: &mut Vec<f32>,
    kind: SubTrackKind,
    width: usize,
    count: u32,
    seed: f32,
) -> SubTrack {
    let offset = values.len() as u32;
    for i in 0..count {
        let x = seed + 0.1 * i as f32;
        if width == 4 {
            values.extend_from_slice(
                &Quat::from_euler(glam::EulerRot::YXZ, x, 0.5 * x, -0.25 * x).to_array(),
            );
        } else {
            values.extend_from_slice(&[0.5 + x, 1.0 + 0.3 * x, 0.75 + x * x]);
        }
    }
    SubTrack { kind, offset }
}

/// A clip on `skeleton` (index `index`) using `kinds[3 * joint + k]` for each sub-track.
fn clip(
    name: &str,
    index: u32,
    skeleton: &Skeleton,
    kinds: &[SubTrackKind],
    duration: f64,
    rate: f32,
    count: u32,
) -> Clip {
    let mut values = Vec::new();
    let sub_tracks = kinds
        .iter()
        .enumerate()
        .map(|(t, &kind)| {
            let width = if t % 3 == 1 { 4 } else { 3 };
            let n = match kind {
                SubTrackKind::Default => 0,
                SubTrackKind::Constant => 1,
                SubTrackKind::Animated => count,
            };
            push(&mut values, kind, width, n, t as f32 * 0.37)
        })
        .collect();
    Clip {
        name: name.into(),
        skeleton: index,
        skeleton_hash: skeleton.identity_hash(),
        duration,
        sample_rate: rate,
        sample_count: count,
        loop_policy: LoopPolicy::Loop,
        profile: "standard".into(),
        sub_tracks,
        values,
        events: vec![],
        markers: vec![],
        root_motion: None,
        compressed: None,
    }
}

/// Two skeletons (the first with two LOD levels), two skins, two meshes (with and without
/// normals), two clips using all three sub-track kinds, events (reversible and not), markers,
/// and a planar trajectory on one.
pub fn sample_package() -> Package {
    use SubTrackKind::{Animated as A, Constant as C, Default as D};
    let big = branching_skeleton();
    let small = small_skeleton();
    let component = rest_component(&big);
    let palette = [1u32, 2, 3, 4];
    let skins = vec![
        SkinBinding {
            name: "body".into(),
            skeleton: 0,
            joints: palette.to_vec(),
            inverse_bind: palette
                .iter()
                .map(|&j| component[j as usize].inverse())
                .collect(),
        },
        SkinBinding {
            name: "skin1".into(),
            skeleton: 1,
            joints: vec![0, 1],
            inverse_bind: vec![Affine3A::IDENTITY; 2],
        },
    ];
    let meshes = vec![
        SkinnedMesh {
            name: "body/0".into(),
            skin: 0,
            positions: vec![
                Vec3::new(0.0, 1.2, 0.0),
                Vec3::new(0.1, 1.5, 0.0),
                Vec3::new(0.4, 1.3, 0.1),
                Vec3::new(0.6, 1.3, -0.1),
            ],
            normals: vec![Vec3::X, Vec3::Y, Vec3::Z, Vec3::new(0.0, 0.6, 0.8)],
            joints: vec![[0, 1, 0, 0], [1, 0, 0, 0], [2, 3, 0, 0], [3, 0, 0, 0]],
            weights: vec![
                [0.5, 0.5, 0.0, 0.0],
                [1.0, 0.0, 0.0, 0.0],
                [0.25, 0.75, 0.0, 0.0],
                [1.0, 0.0, 0.0, 0.0],
            ],
            indices: vec![0, 1, 2, 2, 1, 3],
            lods: vec![],
            targets: Vec::new(),
        },
        SkinnedMesh {
            name: "stick/0".into(),
            skin: 1,
            positions: vec![
                Vec3::ZERO,
                Vec3::new(0.0, 0.5, 0.0),
                Vec3::new(0.1, 1.0, 0.0),
            ],
            normals: vec![],
            joints: vec![[0, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0]],
            weights: vec![
                [1.0, 0.0, 0.0, 0.0],
                [0.5, 0.5, 0.0, 0.0],
                [1.0, 0.0, 0.0, 0.0],
            ],
            indices: vec![0, 1, 2],
            lods: vec![],
            targets: Vec::new(),
        },
    ];
    // 0.09 s at 30 Hz: samples at 0, 1/30, 2/30 and the last clamped to 0.09.
    let mut walk = clip(
        "walk",
        0,
        &big,
        &[A, A, D, C, C, A, D, D, D, A, A, A, C, D, C, D, A, D],
        0.09,
        30.0,
        4,
    );
    walk.events = vec![
        ClipEvent {
            name: "footstep".into(),
            time: 0.03,
            reversible: true,
        },
        ClipEvent {
            name: "land".into(),
            time: 0.09,
            reversible: false,
        },
    ];
    walk.markers = vec![
        SyncMarker {
            name: "left".into(),
            time: 0.0,
        },
        SyncMarker {
            name: "right".into(),
            time: 0.045,
        },
    ];
    // A planar trajectory: forward along z while turning about +Y.
    walk.root_motion = Some(RootMotion {
        joint: 0,
        policy: RootMotionPolicy::Planar,
        translations: (0..4)
            .map(|i| Vec3::new(0.01 * i as f32, 0.0, 0.1 * i as f32))
            .collect(),
        rotations: (0..4)
            .map(|i| Quat::from_rotation_y(0.2 * i as f32))
            .collect(),
    });
    let mut pose = clip("pose", 1, &small, &[D, C, D, C, D, C], 0.0, 60.0, 1);
    pose.loop_policy = LoopPolicy::Once;
    pose.profile = "hero".into();
    let mut big = big;
    let held = |k: usize| {
        trs(
            [0.1, 0.2 * k as f32, 0.0],
            Quat::from_rotation_y(0.4),
            [1.0, 1.2, 1.0],
        )
    };
    big.lods = vec![
        SkeletonLod::new(&big, vec![0, 1, 3, 5], &[held(2), held(4)], 0.02).expect("valid level"),
        SkeletonLod::new(
            &big,
            vec![0, 1],
            &[held(2), held(3), held(4), held(5)],
            0.25,
        )
        .expect("valid level"),
    ];
    Package {
        skeletons: vec![big, small],
        skins,
        meshes,
        clips: vec![walk, pose],
        masks: Vec::new(),
        impostors: Vec::new(),
        motion_databases: Vec::new(),
        scene: Default::default(),
        curves: Default::default(),
    }
}

pub fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

pub fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

pub fn put_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

pub fn put_u64(bytes: &mut [u8], at: usize, v: u64) {
    bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Recomputes the content hash (bytes 16..24: xxh3-64 of everything after the 32-byte header),
/// so a modification reaches the structural checks instead of stopping at the hash.
pub fn restamp(bytes: &mut [u8]) {
    let hash = xxh3_64(&bytes[32..]);
    put_u64(bytes, 16, hash);
}

/// Reads `bytes` again with each byte of `range` rewritten (to 0, 0xff, its low bit flipped and
/// 8 added; unchanged values skipped), restamped; returns how many were refused and how many
/// read. Any panic fails the caller.
pub fn rewrite_each_byte(bytes: &[u8], range: std::ops::Range<usize>) -> (usize, usize) {
    let (mut refused, mut read) = (0, 0);
    for at in range {
        for value in [0u8, 0xff, bytes[at] ^ 1, bytes[at].wrapping_add(8)] {
            if value == bytes[at] {
                continue;
            }
            let mut damaged = bytes.to_vec();
            damaged[at] = value;
            restamp(&mut damaged);
            match throng_cook::read_package(&damaged) {
                Ok(_) => read += 1,
                Err(_) => refused += 1,
            }
        }
    }
    (refused, read)
}

/// (offset, size) of the section of `kind`, read from the table as documented.
pub fn section(bytes: &[u8], kind: u32) -> (usize, usize) {
    let count = u32_at(bytes, 12) as usize;
    (0..count)
        .map(|i| 32 + 24 * i)
        .find(|&e| u32_at(bytes, e) == kind)
        .map(|e| {
            (
                u64_at(bytes, e + 8) as usize,
                u64_at(bytes, e + 16) as usize,
            )
        })
        .expect("section present")
}

pub const STRINGS: u32 = 1;
pub const SKELETONS: u32 = 2;
pub const SKINS: u32 = 3;
pub const MESHES: u32 = 4;
pub const CLIPS: u32 = 5;
pub const LODS: u32 = 6;

/// Whether the package's table lists a section of `kind`.
pub fn has_section(bytes: &[u8], kind: u32) -> bool {
    (0..u32_at(bytes, 12) as usize).any(|i| u32_at(bytes, 32 + 24 * i) == kind)
}

/// Byte ranges of every count, size, reserved word, padding byte and encoding field of a
/// package, found by walking the documented layout. Each walk must end exactly at its section's
/// end, which checks the documentation against the writer.
pub fn structural_ranges(bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = vec![0..16, 24..32]; // header without the hash
    let count = u32_at(bytes, 12) as usize;
    let table_end = 32 + 24 * count;
    // The whole table, but the kind of an optional section: another kind makes it an unknown
    // optional section, which a reader skips by design (docs/package-format.md).
    for e in (32..table_end).step_by(24) {
        let optional = u32_at(bytes, e + 4) & 1 != 0;
        out.push(if optional { e + 4..e + 24 } else { e..e + 24 });
    }
    let mut prev_end = table_end;
    let mut sections: Vec<(usize, usize)> = (1..=6)
        .filter(|&k| has_section(bytes, k))
        .map(|k| section(bytes, k))
        .collect();
    sections.sort();
    for &(offset, size) in &sections {
        out.push(prev_end..offset); // padding
        prev_end = offset + size;
    }
    out.push(prev_end..bytes.len());

    let walk_table =
        |kind: u32,
         out: &mut Vec<std::ops::Range<usize>>,
         item: &dyn Fn(usize, &mut Vec<std::ops::Range<usize>>) -> usize| {
            let (offset, size) = section(bytes, kind);
            out.push(offset..offset + 8);
            let mut at = offset + 8;
            for _ in 0..u32_at(bytes, offset) {
                at = item(at, out);
            }
            assert_eq!(
                at,
                offset + size,
                "documented layout of section {kind} does not end at its end"
            );
        };
    walk_table(SKELETONS, &mut out, &|at, out| {
        let n = u32_at(bytes, at) as usize;
        out.push(at..at + 8); // joint_count, reserved
        at + 64 + 56 * n
    });
    walk_table(SKINS, &mut out, &|at, out| {
        let n = u32_at(bytes, at + 12) as usize;
        out.push(at + 12..at + 16);
        at + 16 + 52 * n
    });
    walk_table(MESHES, &mut out, &|at, out| {
        let v = u32_at(bytes, at + 12) as usize;
        let normals = u32_at(bytes, at + 16) as usize;
        let indices = u32_at(bytes, at + 20) as usize;
        out.push(at + 12..at + 24);
        at + 24 + 12 * v + 12 * normals + 8 * v + 16 * v + 4 * indices
    });
    walk_table(CLIPS, &mut out, &|at, out| {
        // sample_count, encoding, codec_version, event/marker counts, payload_size, root-motion policy
        out.push(at + 44..at + 76);
        let sample_count = u32_at(bytes, at + 44) as usize;
        let events = u32_at(bytes, at + 56) as usize;
        let markers = u32_at(bytes, at + 60) as usize;
        let payload_size = u64_at(bytes, at + 64) as usize;
        let policy = u32_at(bytes, at + 72);
        if policy == 0 {
            out.push(at + 76..at + 80); // the joint is reserved without root motion
        }
        let mut cursor = at + 80;
        for _ in 0..events {
            // flags: bit 0 is the reversible flag, every other bit is reserved; then a reserved word
            out.push(cursor + 17..cursor + 24);
            cursor += 24;
        }
        cursor += 16 * markers;
        if policy != 0 {
            cursor += 28 * sample_count;
        }
        let payload = cursor;
        out.push(payload..payload + 8); // sub_track_count, value_count
        let sub_tracks = u32_at(bytes, payload) as usize;
        let values = u32_at(bytes, payload + 4) as usize;
        assert_eq!(payload_size, 8 + 8 * sub_tracks + 4 * values);
        let end = payload + payload_size;
        let padded = end.next_multiple_of(8);
        out.push(end..padded);
        padded
    });
    if has_section(bytes, LODS) {
        walk_table(LODS, &mut out, &|at, out| {
            out.push(at..at + 8); // skeleton, level count
            let skeleton = u32_at(bytes, at) as usize;
            let n = skeleton_joints(bytes, skeleton);
            let mut cursor = at + 8;
            for _ in 0..u32_at(bytes, at + 4) {
                out.push(cursor..cursor + 4); // joint count (then the error, a value)
                let count = u32_at(bytes, cursor) as usize;
                cursor += 8 + 4 * count + 40 * (n - count);
            }
            cursor
        });
    }
    out
}

/// Joint count of skeleton record `index`, walking SKELETONS as documented.
fn skeleton_joints(bytes: &[u8], index: usize) -> usize {
    let (offset, _) = section(bytes, SKELETONS);
    let mut at = offset + 8;
    for _ in 0..index {
        at += 64 + 56 * u32_at(bytes, at) as usize;
    }
    u32_at(bytes, at) as usize
}

/// The table entries of a package as (kind, flags, body), in table order.
pub fn split(bytes: &[u8]) -> Vec<(u32, u32, Vec<u8>)> {
    (0..u32_at(bytes, 12) as usize)
        .map(|i| 32 + 24 * i)
        .map(|e| {
            let (offset, size) = (
                u64_at(bytes, e + 8) as usize,
                u64_at(bytes, e + 16) as usize,
            );
            (
                u32_at(bytes, e),
                u32_at(bytes, e + 4),
                bytes[offset..offset + size].to_vec(),
            )
        })
        .collect()
}

/// Lays sections out as documented: header, table, bodies at 16-byte boundaries, zero padding,
/// then stamps size and hash. Independent of the crate's writer.
pub fn assemble(sections: &[(u32, u32, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"THRNGPKG");
    out.extend_from_slice(&throng_cook::package::FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    out.extend_from_slice(&[0; 16]);
    let mut offset = (32 + 24 * sections.len()).next_multiple_of(16);
    for (kind, flags, body) in sections {
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&flags.to_le_bytes());
        out.extend_from_slice(&(offset as u64).to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        offset = (offset + body.len()).next_multiple_of(16);
    }
    for (_, _, body) in sections {
        out.resize(out.len().next_multiple_of(16), 0);
        out.extend_from_slice(body);
    }
    out.resize(out.len().next_multiple_of(16), 0);
    let total = out.len() as u64;
    put_u64(&mut out, 24, total);
    restamp(&mut out);
    out
}
