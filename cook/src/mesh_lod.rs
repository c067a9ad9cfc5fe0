//! Mesh LODs, cooked: per skinned mesh, one simplified triangle list for each skeleton LOD level
//! of its skin's skeleton, drawn with that level (throng-cpu-ref `MeshLod`).
//!
//! Level `k` simplifies level `k − 1`'s triangles with meshoptimizer's attribute-aware edge
//! collapse (Arseny Kapoulkine, meshoptimizer, `meshopt_simplifyWithAttributes`,
//! https://github.com/zeux/meshoptimizer), in bind space, until the next collapse would move the
//! surface further than the skeleton level's own measured error, or the level keeps
//! [`MESH_LOD_FLOORS`] of the full mesh's triangles. The two attributes it weighs beside
//! position keep what skinning needs:
//! - the normal, so shading does not crease;
//! - a *skin signature*: the weighted mean of the rest positions (in bind space) of the joints
//!   the vertex follows at that level (a dropped joint replaced by its nearest retained ancestor), so an
//!   edge between vertices that follow different joints collapses only where the signatures
//!   agree, and a limb never fuses with the body it bends against.
//!
//! Edge collapse shrinks what is thin: an arm's cross-section folds toward a strip while every
//! point of the surface stays within the error bound, so a coarse level covers fewer pixels than
//! full detail (the generated character's level 2 about 0.7 of them in a crowd), and a member
//! switching level pops. Each level therefore gets a *shell* ([`MeshLod::shell`]): the distance
//! its surface is pushed out along the skinned normals when drawn, the smallest that gives its
//! bind-pose silhouettes the area of full detail's (summed over [`SHELL_VIEWS`], rasterised
//! at [`SHELL_RESOLUTION`] cells across), measured over all the meshes of a skin together (they
//! are drawn together). The shell joins the level's error, so the bound still holds.
//!
//! Morph targets are kept at every level: a level's triangles index the full mesh's vertices,
//! whose sparse deltas ([`throng_cpu_ref::morph`]) apply unchanged, and every vertex a target
//! moves is locked in the simplifier, so no morphed vertex is collapsed away. The simplification
//! error is measured at rest (all weights zero).

use glam::{Affine3A, Vec3};
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::lod::MAX_LOD_LEVELS;
use throng_cpu_ref::{MeshLod, Package, SkeletonLod, SkinnedMesh, NO_PARENT};

/// Per reduced level, the fewest triangles it keeps, as a fraction of the full mesh's.
pub const MESH_LOD_FLOORS: [f32; MAX_LOD_LEVELS] = [0.25, 0.05];

/// Weight of a unit normal's difference against a bind-space distance.
const NORMAL_WEIGHT: f32 = 0.05;
/// Weight of the skin signature's difference against a bind-space distance.
const SKIN_WEIGHT: f32 = 1.0;

/// Views a level's shell is measured from: (elevation, azimuth) in degrees, around the vertical
/// axis of bind space at eye height and from above (a crowd is seen from both).
pub const SHELL_VIEWS: [(f32, f32); 16] = [
    (0.0, 0.0),
    (0.0, 45.0),
    (0.0, 90.0),
    (0.0, 135.0),
    (0.0, 180.0),
    (0.0, 225.0),
    (0.0, 270.0),
    (0.0, 315.0),
    (35.0, 0.0),
    (35.0, 45.0),
    (35.0, 90.0),
    (35.0, 135.0),
    (35.0, 180.0),
    (35.0, 225.0),
    (35.0, 270.0),
    (35.0, 315.0),
];
/// Raster cells across the full mesh's projected extent when a shell is measured.
pub const SHELL_RESOLUTION: usize = 128;
/// Halvings of the shell's search interval.
const SHELL_STEPS: usize = 14;

/// Builds the mesh LODs of every mesh bound to a skin of skeleton `s`, one per level of `lods`
/// (replacing any the meshes had; none for a mesh no level reduces), each within the level's
/// error `errors[k]` (scene units).
/// Returns, per level, the triangles of those meshes, their largest error (simplification and
/// shell) and their largest shell (scene units).
pub fn build_mesh_lods(
    package: &mut Package,
    s: u32,
    lods: &[SkeletonLod],
    errors: &[f32],
) -> Vec<(usize, f32, f32)> {
    let skeleton = &package.skeletons[s as usize];
    let scale = scene_scale(&skeleton.root_transform);
    let mut rest = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    local_to_component(skeleton, &skeleton.rest, &mut rest);
    let mut levels = vec![(0usize, 0f32, 0f32); lods.len()];
    for m in 0..package.meshes.len() {
        let Some(skin) = package.skins.get(package.meshes[m].skin as usize) else {
            continue;
        };
        if skin.skeleton != s {
            continue;
        }
        let mesh = &package.meshes[m];
        let full = mesh.indices.len();
        let mut built = Vec::with_capacity(lods.len());
        for (k, lod) in lods.iter().enumerate() {
            // Per palette entry, where the joint it follows at this level stands at rest, in
            // the entry's bind space (so its scale is the vertices').
            let anchor: Vec<Vec3> = (skin.joints.iter().zip(&skin.inverse_bind))
                .map(|(&j, ibm)| {
                    let to_bind = (rest[j as usize] * *ibm).inverse();
                    let at = rest[retained_ancestor(skeleton, lod, j) as usize].translation;
                    to_bind.transform_point3(at.into())
                })
                .collect();
            let source = built.last().map_or(&mesh.indices, |l: &MeshLod| &l.indices);
            let floor = ((full / 3) as f32 * MESH_LOD_FLOORS[k]).ceil() as usize * 3;
            let target = errors[k] / scale;
            let (indices, error) = match simplify(mesh, source, &anchor, floor, target) {
                (indices, error) if (error * scale).is_finite() => (indices, error * scale),
                // A NaN or infinite error (degenerate bind matrices make the skin signature
                // non-finite; a fuzzer found one: fuzz/regressions/gltf_import/mesh-lod-nan) is
                // no measured reduction: the level keeps the level before.
                _ => (source.to_vec(), 0.0),
            };
            levels[k].0 += indices.len() / 3;
            built.push(MeshLod {
                indices,
                error,
                shell: 0.0,
            });
        }
        // A mesh no level reduces keeps none: it draws its full list at every level, and the
        // runtime then shares level 0's vertices instead of copying them per level.
        if built.iter().all(|l| l.indices == package.meshes[m].indices) {
            built.clear();
        }
        package.meshes[m].lods = built;
    }
    for skin in 0..package.skins.len() {
        if package.skins[skin].skeleton != s {
            continue;
        }
        let meshes: Vec<usize> = (0..package.meshes.len())
            .filter(|&m| {
                package.meshes[m].skin as usize == skin && !package.meshes[m].lods.is_empty()
            })
            .collect();
        for (k, &error) in errors.iter().enumerate().take(levels.len()) {
            let shell = scale * measure_shell(package, &meshes, k + 1, error / scale);
            for &m in &meshes {
                if let Some(lod) = package.meshes[m].lods.get_mut(k) {
                    lod.shell = shell;
                    lod.error += shell;
                }
            }
        }
        for &m in &meshes {
            for (k, lod) in package.meshes[m].lods.iter().enumerate() {
                levels[k].1 = levels[k].1.max(lod.error);
                levels[k].2 = levels[k].2.max(lod.shell);
            }
        }
    }
    levels
}

/// The shell (bind space) of level `level` of `meshes` (drawn together): the smallest distance,
/// at most `limit`, that pushing the level's vertices out along their bind normals must cover
/// so that its silhouettes over [`SHELL_VIEWS`] sum to full detail's area; 0 when the level
/// already covers it, or without normals.
fn measure_shell(package: &Package, meshes: &[usize], level: usize, limit: f32) -> f32 {
    let meshes: Vec<&SkinnedMesh> = meshes.iter().map(|&m| &package.meshes[m]).collect();
    if meshes.iter().any(|m| m.normals.len() != m.positions.len()) || limit.is_nan() || limit <= 0.0
    {
        return 0.0;
    }
    // The grids are those of full detail, grown by the largest shell tried: the same for every
    // area compared.
    let views: Vec<View> = (SHELL_VIEWS.iter())
        .map(|&(elevation, azimuth)| View::new(elevation, azimuth, &meshes, limit))
        .collect();
    let area = |level: usize, shell: f32| -> usize {
        views
            .iter()
            .map(|view| {
                meshes
                    .iter()
                    .fold(Coverage::new(), |mut c, mesh| {
                        let at = |v: u32| {
                            let v = v as usize;
                            mesh.positions[v] + mesh.normals[v] * shell
                        };
                        for t in mesh.level_indices(level).chunks_exact(3) {
                            c.triangle(view, [at(t[0]), at(t[1]), at(t[2])]);
                        }
                        c
                    })
                    .count()
            })
            .sum()
    };
    let full = area(0, 0.0);
    if area(level, 0.0) >= full {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0f32, limit);
    for _ in 0..SHELL_STEPS {
        let mid = 0.5 * (lo + hi);
        if area(level, mid) >= full {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// An orthographic view of bind space and the raster grid it is measured on: cells over the
/// meshes' projected box, grown by `margin` on every side.
struct View {
    right: Vec3,
    up: Vec3,
    origin: (f32, f32),
    cell: f32,
}

impl View {
    fn new(elevation: f32, azimuth: f32, meshes: &[&SkinnedMesh], margin: f32) -> View {
        let (e, a) = (elevation.to_radians(), azimuth.to_radians());
        let toward = Vec3::new(e.cos() * a.sin(), e.sin(), e.cos() * a.cos());
        let right = Vec3::Y.cross(toward).normalize();
        let up = toward.cross(right);
        let (mut lo, mut hi) = (
            (f32::INFINITY, f32::INFINITY),
            (f32::NEG_INFINITY, f32::NEG_INFINITY),
        );
        for p in meshes.iter().flat_map(|m| &m.positions) {
            let (x, y) = (p.dot(right), p.dot(up));
            lo = (lo.0.min(x), lo.1.min(y));
            hi = (hi.0.max(x), hi.1.max(y));
        }
        let extent = (hi.0 - lo.0).max(hi.1 - lo.1) + 2.0 * margin;
        View {
            right,
            up,
            origin: (lo.0 - margin, lo.1 - margin),
            cell: (extent / SHELL_RESOLUTION as f32).max(f32::MIN_POSITIVE),
        }
    }

    /// `p` in cells from the grid's corner.
    fn project(&self, p: Vec3) -> (f32, f32) {
        (
            (p.dot(self.right) - self.origin.0) / self.cell,
            (p.dot(self.up) - self.origin.1) / self.cell,
        )
    }
}

/// Covered cell centres of a [`View`]'s grid.
struct Coverage(Vec<u64>);

impl Coverage {
    fn new() -> Coverage {
        Coverage(vec![0; (SHELL_RESOLUTION * SHELL_RESOLUTION).div_ceil(64)])
    }

    /// Marks the cells whose centres triangle `t` covers (either winding; edges included).
    fn triangle(&mut self, view: &View, t: [Vec3; 3]) {
        let [a, b, c] = t.map(|p| view.project(p));
        let edge = |p: (f32, f32), q: (f32, f32), x: f32, y: f32| {
            (q.0 - p.0) * (y - p.1) - (q.1 - p.1) * (x - p.0)
        };
        let area = edge(a, b, c.0, c.1);
        // Degenerate (or not finite): covers nothing.
        if area == 0.0 || !area.is_finite() {
            return;
        }
        let n = SHELL_RESOLUTION as f32;
        let span = |lo: f32, hi: f32| {
            let first = (lo - 0.5).ceil().clamp(0.0, n) as usize;
            let last = (hi - 0.5).floor().clamp(-1.0, n - 1.0);
            (first, if last < 0.0 { 0 } else { last as usize + 1 })
        };
        let (x0, x1) = span(a.0.min(b.0).min(c.0), a.0.max(b.0).max(c.0));
        let (y0, y1) = span(a.1.min(b.1).min(c.1), a.1.max(b.1).max(c.1));
        for y in y0..y1 {
            for x in x0..x1 {
                let (px, py) = (x as f32 + 0.5, y as f32 + 0.5);
                let w = [edge(b, c, px, py), edge(c, a, px, py), edge(a, b, px, py)];
                if w.iter().all(|&w| w * area >= 0.0) {
                    let i = y * SHELL_RESOLUTION + x;
                    self.0[i / 64] |= 1 << (i % 64);
                }
            }
        }
    }

    fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// `source` simplified towards `floor` indices within `target_error` (bind space); returns the
/// indices and the error reached (bind space).
fn simplify(
    mesh: &SkinnedMesh,
    source: &[u32],
    anchor: &[Vec3],
    floor: usize,
    target_error: f32,
) -> (Vec<u32>, f32) {
    if source.is_empty() || !(target_error.is_finite() && target_error > 0.0) {
        return (source.to_vec(), 0.0);
    }
    let positions: &[u8] = bytemuck::cast_slice(&mesh.positions);
    let Ok(adapter) = meshopt::VertexDataAdapter::new(positions, 12, 0) else {
        return (source.to_vec(), 0.0);
    };
    let mut attributes = Vec::with_capacity(6 * mesh.positions.len());
    for v in 0..mesh.positions.len() {
        let normal = mesh.normals.get(v).copied().unwrap_or(Vec3::ZERO);
        let signature = (mesh.joints[v].iter().zip(&mesh.weights[v]))
            .filter_map(|(&e, &w)| anchor.get(e as usize).map(|a| *a * w))
            .sum::<Vec3>();
        attributes.extend(normal.to_array());
        attributes.extend(signature.to_array());
    }
    let weights = [
        NORMAL_WEIGHT,
        NORMAL_WEIGHT,
        NORMAL_WEIGHT,
        SKIN_WEIGHT,
        SKIN_WEIGHT,
        SKIN_WEIGHT,
    ];
    // Every vertex a morph target moves is locked: the simplifier never collapses it away, so
    // each level keeps the morphed shapes (its indices address the same vertices, and so the same
    // sparse deltas). Other vertices may still collapse onto locked ones.
    let mut locks = vec![false; mesh.positions.len()];
    for &v in mesh.targets.iter().flat_map(|t| &t.vertices) {
        if let Some(lock) = locks.get_mut(v as usize) {
            *lock = true;
        }
    }
    let run = |indices: &[u32]| {
        let mut error = 0f32;
        let simplified = meshopt::simplify_with_attributes_and_locks(
            indices,
            &adapter,
            &attributes,
            &weights,
            6 * std::mem::size_of::<f32>(),
            &locks,
            floor,
            target_error,
            meshopt::SimplifyOptions::ErrorAbsolute,
            Some(&mut error),
        );
        (simplified, error)
    };
    let (indices, error) = run(source);
    if indices.len() * 10 <= source.len() * 9 {
        return (indices, error);
    }
    // Hardly any edge collapsed: a faceted mesh (every corner its own vertex) has only seams.
    // Welded by position it simplifies, each corner drawn with the vertex that stands for its
    // position (its normal and weights).
    let welded = run(&meshopt::generate_shadow_indices(source, &adapter));
    if welded.0.len() < indices.len() {
        welded
    } else {
        (indices, error)
    }
}

/// `joint`, or its nearest ancestor `lod` retains.
fn retained_ancestor(skeleton: &throng_cpu_ref::Skeleton, lod: &SkeletonLod, joint: u32) -> u32 {
    let mut j = joint;
    while j != NO_PARENT && !lod.retains(j as usize) {
        j = skeleton.parents[j as usize];
    }
    if j == NO_PARENT {
        joint
    } else {
        j
    }
}

/// Largest length a unit vector takes under `m`'s linear part: bind-space lengths to scene units.
fn scene_scale(m: &Affine3A) -> f32 {
    let columns = [m.matrix3.x_axis, m.matrix3.y_axis, m.matrix3.z_axis].map(|c| c.length());
    let scale = columns.into_iter().fold(0f32, f32::max);
    if scale.is_finite() && scale > 0.0 {
        scale
    } else {
        1.0
    }
}
