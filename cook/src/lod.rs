//! Skeleton LODs, cooked (throng-cpu-ref `lod`): per skeleton up to two reduced levels, keeping
//! about a half and a quarter of its joints, each ancestor-closed and nested in the one before.
//!
//! A dropped joint holds its *held pose*: the mean of its local pose over every sample of the
//! skeleton's clips (rotations summed in one hemisphere and normalised; the rest pose without
//! clips), so a joint that only ever sits away from rest (arms down from a T-pose) keeps that.
//! Joints are dropped one at a time, always a leaf of what is left, never a pinned joint (a root,
//! a joint the caller names, or an ancestor of one), cheapest first, and a joint whose name has
//! a mirror (`_l`/`_r`, `.L`/`.R`, `Left`/`Right`, …) together with it, so levels stay
//! symmetric. A joint's cost estimates how far its vertices move when it and the joints already
//! dropped below it hold their held pose: `c(j) = ρ(j) · θ(j) + τ(j)`, with θ the largest
//! rotation of its local pose away from the held pose over the samples (radians; scale changes
//! count as `max |s / s_held − 1|`), τ the largest translation away from it, and ρ the farthest
//! rest-posed vertex that `j` or a joint below it influences, from `j`'s rest position; dropping
//! `j` costs `c(j)` plus the largest cost among its dropped children. A joint no clip moves
//! costs nothing, whatever it carries, and so does one that carries no vertex (an IK target, a
//! socket); a skeleton no skin binds counts its joints as its vertices. The error each level really has is then measured
//! ([`LodReport`]).

use glam::{Affine3A, Quat, Vec3, Vec4};
use serde::Serialize;
use throng_cpu_ref::clip::sample_clip;
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::lod::{check_levels, MAX_LOD_LEVELS};
use throng_cpu_ref::palette::build_palette;
use throng_cpu_ref::skinning::skin_mesh;
use throng_cpu_ref::{Package, Skeleton, SkeletonLod, Trs, NO_PARENT};

use crate::mesh_lod::build_mesh_lods;
use crate::CookError;

/// Per reduced level: the fraction of a skeleton's joints it keeps at least (rounded up), and
/// the largest estimated cost of a removal, as a fraction of the skeleton's rest extent (the
/// diagonal of its joints' box), past which it keeps more.
pub const LOD_LEVELS: [(f32, f32); MAX_LOD_LEVELS] = [(0.5, 0.01), (0.25, 0.05)];

/// One cooked level of a skeleton.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LodReport {
    /// LOD level (1, 2, …).
    pub level: u8,
    /// Joints retained.
    pub joints: usize,
    /// The level's error: `pose_error + mesh_error`, a bound on how far a point of the surface
    /// drawn at this level lies from full detail (scene units); what the level is chosen by.
    pub max_error: f32,
    /// Largest distance, over every sample of the skeleton's clips, between a skinned vertex
    /// (or, without a skin, a joint) at full detail and at this level (scene units).
    pub pose_error: f32,
    /// Triangles of the meshes the skeleton's skins bind at this level (crate::mesh_lod).
    pub triangles: usize,
    /// Largest error of those meshes: the simplification's plus the shell (scene units; 0
    /// without meshes).
    pub mesh_error: f32,
    /// Largest shell of those meshes: how far the level's surface is pushed out along its
    /// normals when drawn so that it covers what full detail does (scene units; part of
    /// `mesh_error`).
    pub shell: f32,
}

/// Builds every skeleton's LOD levels into `package` (replacing any it had), pinning the roots
/// and the joints named in `pins` (each must name a joint of some skeleton), and measures them.
/// Returns the levels of each skeleton, in package order.
pub fn build_lods(
    package: &mut Package,
    pins: &[String],
) -> Result<Vec<Vec<LodReport>>, CookError> {
    if let Some(name) = pins
        .iter()
        .find(|n| package.skeletons.iter().all(|s| s.find(n).is_none()))
    {
        return Err(CookError::Lod(format!(
            "--lod-pin '{name}' names no joint of any skeleton in the package"
        )));
    }
    let mut reports = Vec::with_capacity(package.skeletons.len());
    for s in 0..package.skeletons.len() {
        let skeleton = &package.skeletons[s];
        let held = held_pose(package, s as u32);
        let cost = costs(package, s as u32, &held);
        let extent = component_extent(skeleton);
        let lods = levels(skeleton, &cost, &pinned(skeleton, pins), &held, extent)
            .map_err(|e| CookError::Lod(format!("skeleton {s}: {e}")))?;
        let errors: Vec<f32> = lods.iter().map(|l| measure(package, s as u32, l)).collect();
        let meshes = build_mesh_lods(package, s as u32, &lods, &errors);
        let mut measured = Vec::with_capacity(lods.len());
        let mut report = Vec::with_capacity(lods.len());
        for (i, lod) in lods.iter().enumerate() {
            let (triangles, mesh_error, shell) = meshes[i];
            let error = errors[i] + mesh_error;
            let dropped: Vec<Trs> = lod.dropped_pose().copied().collect();
            let skeleton = &package.skeletons[s];
            measured.push(
                SkeletonLod::new(skeleton, lod.joints().to_vec(), &dropped, error)
                    .map_err(|e| CookError::Lod(format!("skeleton {s}: {e}")))?,
            );
            report.push(LodReport {
                level: i as u8 + 1,
                joints: lod.joints().len(),
                max_error: error,
                pose_error: errors[i],
                triangles,
                mesh_error,
                shell,
            });
        }
        package.skeletons[s].lods = measured;
        reports.push(report);
    }
    Ok(reports)
}

/// Roots, the joints named in `pins`, and their ancestors.
fn pinned(skeleton: &Skeleton, pins: &[String]) -> Vec<bool> {
    let mut pinned: Vec<bool> = skeleton.parents.iter().map(|&p| p == NO_PARENT).collect();
    for j in pins.iter().filter_map(|n| skeleton.find(n)) {
        let mut j = j as u32;
        while j != NO_PARENT {
            pinned[j as usize] = true;
            j = skeleton.parents[j as usize];
        }
    }
    pinned
}

/// Calls `f` with the local pose of every sample of skeleton `s`'s clips.
fn for_each_sample(package: &Package, s: u32, mut f: impl FnMut(&[Trs])) {
    let skeleton = &package.skeletons[s as usize];
    let mut local = vec![Trs::IDENTITY; skeleton.joint_count()];
    for clip in package.clips.iter().filter(|c| c.skeleton == s) {
        for k in 0..clip.sample_count {
            sample_clip(clip, skeleton, k as f32 / clip.sample_rate, &mut local);
            f(&local);
        }
    }
}

/// The held pose of the module doc for each joint of skeleton `s`.
fn held_pose(package: &Package, s: u32) -> Vec<Trs> {
    let skeleton = &package.skeletons[s as usize];
    let n = skeleton.joint_count();
    let (mut t, mut q, mut sc) = (
        vec![Vec3::ZERO; n],
        vec![Vec4::ZERO; n],
        vec![Vec3::ZERO; n],
    );
    let mut samples = 0u32;
    for_each_sample(package, s, |local| {
        for (j, x) in local.iter().enumerate() {
            let v = Vec4::from(x.rotation);
            let first = Vec4::from(skeleton.rest[j].rotation);
            q[j] += if v.dot(first) < 0.0 { -v } else { v };
            t[j] += x.translation;
            sc[j] += x.scale;
        }
        samples += 1;
    });
    if samples == 0 {
        return skeleton.rest.clone();
    }
    let k = samples as f32;
    (0..n)
        .map(|j| match q[j].try_normalize() {
            Some(rotation) => Trs {
                translation: t[j] / k,
                rotation: Quat::from_vec4(rotation),
                scale: sc[j] / k,
            },
            None => skeleton.rest[j],
        })
        .collect()
}

/// `c(j)` of the module doc for each joint of skeleton `s`.
fn costs(package: &Package, s: u32, held: &[Trs]) -> Vec<f32> {
    let n = held.len();
    let (mut theta, mut tau) = (vec![0f32; n], vec![0f32; n]);
    for_each_sample(package, s, |local| {
        for (j, (x, h)) in local.iter().zip(held).enumerate() {
            let angle = h.rotation.angle_between(x.rotation);
            let scale = (x.scale / h.scale - Vec3::ONE).abs().max_element();
            theta[j] = theta[j].max(angle + scale);
            tau[j] = tau[j].max((x.translation - h.translation).length());
        }
    });
    let rho = reach(package, s);
    (0..n)
        .map(|j| rho[j].map_or(0.0, |r| r * theta[j] + tau[j]))
        .collect()
}

/// `ρ(j)` of the module doc: per joint, the farthest rest-posed vertex it or a joint below it
/// influences, from its rest position (component space); `None` when there is none, so moving
/// the joint moves nothing. A skeleton no skin binds counts its joints as its vertices.
fn reach(package: &Package, s: u32) -> Vec<Option<f32>> {
    let skeleton = &package.skeletons[s as usize];
    let rest = rest_components(skeleton);
    let mut rho = vec![None; skeleton.joint_count()];
    let mut carry = |joint: u32, v: Vec3| {
        let mut j = joint;
        while (j as usize) < rho.len() {
            let d = (v - Vec3::from(rest[j as usize].translation)).length();
            let r: &mut Option<f32> = &mut rho[j as usize];
            *r = Some(r.map_or(d, |r| r.max(d)));
            j = skeleton.parents[j as usize];
        }
    };
    let mut skinned = false;
    for (k, skin) in package.skins.iter().enumerate() {
        if skin.skeleton != s {
            continue;
        }
        skinned = true;
        let mut palette = vec![Affine3A::IDENTITY; skin.joints.len()];
        build_palette(skin, &rest, &mut palette);
        for mesh in package.meshes.iter().filter(|m| m.skin as usize == k) {
            let mut posed = vec![Vec3::ZERO; mesh.positions.len()];
            skin_mesh(mesh, &palette, &mut posed, &mut []);
            for ((v, joints), weights) in posed.iter().zip(&mesh.joints).zip(&mesh.weights) {
                for (&e, &w) in joints.iter().zip(weights) {
                    if let Some(&joint) = skin.joints.get(e as usize).filter(|_| w > 0.0) {
                        carry(joint, *v);
                    }
                }
            }
        }
    }
    if !skinned {
        for (j, c) in rest.iter().enumerate() {
            carry(j as u32, c.translation.into());
        }
    }
    rho
}

/// Diagonal of the box of the rest-pose joint positions in component space (the costs' space).
fn component_extent(skeleton: &Skeleton) -> f32 {
    let points = rest_components(skeleton)
        .into_iter()
        .map(|c| Vec3::from(c.translation));
    let (lo, hi) = points.fold((Vec3::MAX, Vec3::MIN), |(lo, hi), p| (lo.min(p), hi.max(p)));
    (hi - lo).length()
}

fn rest_components(skeleton: &Skeleton) -> Vec<Affine3A> {
    let mut component = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    local_to_component(skeleton, &skeleton.rest, &mut component);
    component
}

/// The joint whose name is `j`'s with its side swapped, if the skeleton has one.
fn mirror(skeleton: &Skeleton, j: usize) -> Option<usize> {
    const SUFFIXES: [(&str, &str); 4] = [("_l", "_r"), ("_L", "_R"), (".L", ".R"), (".l", ".r")];
    const INFIXES: [(&str, &str); 4] = [
        ("Left", "Right"),
        ("left", "right"),
        ("_L_", "_R_"),
        ("_l_", "_r_"),
    ];
    let name = &skeleton.names[j];
    let swapped = SUFFIXES.iter().find_map(|&(a, b)| {
        let stem = name.strip_suffix(a).map(|x| (x, b));
        stem.or_else(|| name.strip_suffix(b).map(|x| (x, a)))
            .map(|(stem, side)| format!("{stem}{side}"))
    });
    let swapped = swapped
        .into_iter()
        .chain(INFIXES.iter().filter_map(|&(a, b)| {
            if name.contains(a) {
                Some(name.replacen(a, b, 1))
            } else if name.contains(b) {
                Some(name.replacen(b, a, 1))
            } else {
                None
            }
        }));
    let mirrors = |a: usize, b: usize| {
        let (pa, pb) = (skeleton.parents[a], skeleton.parents[b]);
        skeleton.depth[a] == skeleton.depth[b]
            && (pa == pb || (pa != NO_PARENT && mirror(skeleton, pa as usize) == Some(pb as usize)))
    };
    // Only a structural mirror: same depth, parents the same joint or mirrors themselves.
    swapped
        .filter_map(|m| skeleton.find(&m))
        .find(|&m| m != j && mirrors(j, m))
}

/// The reduced levels of `skeleton`: greedy removal of the cheapest unpinned leaf with its
/// mirror (module doc) towards each of [`LOD_LEVELS`], stopping early where the next removal
/// would cost more than the level's share of `extent`; dropped joints hold `held`. A level that
/// would not be coarser than the one before is not built. Errors are left at 0 (measured later).
fn levels(
    skeleton: &Skeleton,
    cost: &[f32],
    pinned: &[bool],
    held: &[Trs],
    extent: f32,
) -> Result<Vec<SkeletonLod>, String> {
    let n = skeleton.joint_count();
    let mirrors: Vec<Option<usize>> = (0..n).map(|j| mirror(skeleton, j)).collect();
    let mut retained = vec![true; n];
    let mut children = vec![0u32; n];
    for &p in skeleton.parents.iter().filter(|&&p| p != NO_PARENT) {
        children[p as usize] += 1;
    }
    // Cost of dropping each joint: its own plus its costliest dropped child's.
    let mut below = vec![0f32; n];
    let mut count = n;
    let mut lods = Vec::new();
    for (fraction, budget) in LOD_LEVELS {
        let target = ((n as f32 * fraction).ceil() as usize).max(1);
        while count > target {
            let leaf = |j: usize| retained[j] && children[j] == 0 && !pinned[j];
            // A joint goes with its retained mirror once both are leaves; a mirror that is not
            // a leaf yet does not block a joint when no pair can go.
            let pair = |j: usize| mirrors[j].filter(|&m| retained[m] && leaf(m));
            let paired = |j: usize| mirrors[j].is_none_or(|m| !retained[m] || leaf(m));
            let drop_cost = |j: &usize| {
                let own = |d: usize| cost[d] + below[d];
                pair(*j).map_or(own(*j), |m| own(*j).max(own(m)))
            };
            let cheapest = |ok: &dyn Fn(usize) -> bool| {
                (0..n)
                    .filter(|&j| leaf(j) && ok(j))
                    .min_by(|a, b| drop_cost(a).total_cmp(&drop_cost(b)).then(b.cmp(a)))
            };
            let Some(j) = cheapest(&paired).or_else(|| cheapest(&|_| true)) else {
                break;
            };
            if drop_cost(&j) > budget * extent {
                break;
            }
            for d in std::iter::once(j).chain(pair(j)) {
                retained[d] = false;
                count -= 1;
                let p = skeleton.parents[d];
                if p != NO_PARENT {
                    children[p as usize] -= 1;
                    below[p as usize] = below[p as usize].max(cost[d] + below[d]);
                }
            }
        }
        if count >= lods.last().map_or(n, |l: &SkeletonLod| l.joints().len()) {
            continue;
        }
        let joints = (0..n as u32).filter(|&j| retained[j as usize]).collect();
        let dropped: Vec<Trs> = (0..n).filter(|&j| !retained[j]).map(|j| held[j]).collect();
        lods.push(SkeletonLod::new(skeleton, joints, &dropped, 0.0).map_err(|e| e.to_string())?);
    }
    check_levels(skeleton, &lods).map_err(|e| e.to_string())?;
    Ok(lods)
}

/// The largest distance between full detail and `lod` over every sample of skeleton `s`'s
/// clips: of its skinned vertices when a skin binds it, else of its joints (scene units).
fn measure(package: &Package, s: u32, lod: &SkeletonLod) -> f32 {
    let skeleton = &package.skeletons[s as usize];
    let n = skeleton.joint_count();
    let mut local = vec![Trs::IDENTITY; n];
    let (mut full, mut reduced) = (vec![Affine3A::IDENTITY; n], vec![Affine3A::IDENTITY; n]);
    let skins: Vec<usize> = (0..package.skins.len())
        .filter(|&k| package.skins[k].skeleton == s)
        .collect();
    let mut worst = 0f32;
    for clip in package.clips.iter().filter(|c| c.skeleton == s) {
        for k in 0..clip.sample_count {
            sample_clip(clip, skeleton, k as f32 / clip.sample_rate, &mut local);
            local_to_component(skeleton, &local, &mut full);
            for (j, (x, held)) in local.iter_mut().zip(lod.pose()).enumerate() {
                if !lod.retains(j) {
                    *x = *held;
                }
            }
            local_to_component(skeleton, &local, &mut reduced);
            let at_root = |c: &Affine3A| skeleton.root_transform * *c;
            if skins.is_empty() {
                for (a, b) in full.iter().zip(&reduced) {
                    let d = at_root(a).translation - at_root(b).translation;
                    worst = worst.max(d.length());
                }
            }
            for &k in &skins {
                worst = worst.max(skin_distance(package, k, skeleton, &full, &reduced));
            }
        }
    }
    worst
}

/// Largest distance between the vertices of skin `k`'s meshes skinned by two poses (scene units).
fn skin_distance(
    package: &Package,
    k: usize,
    skeleton: &Skeleton,
    a: &[Affine3A],
    b: &[Affine3A],
) -> f32 {
    let skin = &package.skins[k];
    let (mut pa, mut pb) = (
        vec![Affine3A::IDENTITY; skin.joints.len()],
        vec![Affine3A::IDENTITY; skin.joints.len()],
    );
    build_palette(skin, a, &mut pa);
    build_palette(skin, b, &mut pb);
    let mut worst = 0f32;
    for mesh in package.meshes.iter().filter(|m| m.skin as usize == k) {
        let (mut va, mut vb) = (
            vec![Vec3::ZERO; mesh.positions.len()],
            vec![Vec3::ZERO; mesh.positions.len()],
        );
        skin_mesh(mesh, &pa, &mut va, &mut []);
        skin_mesh(mesh, &pb, &mut vb, &mut []);
        for (x, y) in va.iter().zip(&vb) {
            let d = skeleton.root_transform.transform_vector3(*x - *y);
            worst = worst.max(d.length());
        }
    }
    worst
}
