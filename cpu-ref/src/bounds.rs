//! Axis-aligned bounding boxes (metres, in whatever space the points are).

use glam::{Affine3A, Vec3};

use crate::morph::{reach, target_weights, TargetWeight};
use crate::{Package, SkinBinding, SkinnedMesh};

/// An axis-aligned box; `min > max` on some axis means empty.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub min: Vec3,
    pub max: Vec3,
}

impl Bounds {
    pub const EMPTY: Bounds = Bounds {
        min: Vec3::splat(f32::INFINITY),
        max: Vec3::splat(f32::NEG_INFINITY),
    };

    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }

    /// The smallest box holding `points`.
    pub fn of_points(points: impl IntoIterator<Item = Vec3>) -> Bounds {
        points.into_iter().fold(Bounds::EMPTY, |b, p| Bounds {
            min: b.min.min(p),
            max: b.max.max(p),
        })
    }

    pub fn union(&self, other: &Bounds) -> Bounds {
        Bounds {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// The eight corners (none when empty).
    pub fn corners(&self) -> impl Iterator<Item = Vec3> + '_ {
        let n = if self.is_empty() { 0 } else { 8 };
        (0..n).map(|i| {
            Vec3::new(
                if i & 1 == 0 { self.min.x } else { self.max.x },
                if i & 2 == 0 { self.min.y } else { self.max.y },
                if i & 4 == 0 { self.min.z } else { self.max.z },
            )
        })
    }

    /// The box holding this one's corners transformed by `m`.
    pub fn transformed(&self, m: &Affine3A) -> Bounds {
        Bounds::of_points(self.corners().map(|c| m.transform_point3(c)))
    }

    pub fn centre(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    pub fn point(p: Vec3) -> Bounds {
        Bounds { min: p, max: p }
    }

    /// Whether `p` lies inside, or within `tolerance` of, the box.
    pub fn contains(&self, p: Vec3, tolerance: f32) -> bool {
        (p.cmpge(self.min - tolerance) & p.cmple(self.max + tolerance)).all()
    }

    /// The affine map of the cube `[-1, 1]³` onto this (non-empty) box.
    pub fn unit_cube_map(&self) -> Affine3A {
        Affine3A::from_scale_rotation_translation(
            (self.max - self.min) * 0.5,
            glam::Quat::IDENTITY,
            self.centre(),
        )
    }
}

/// An instance's box is padded by this times its largest coordinate, so that rounding in
/// skinning (a few ulps of the scene coordinates) never puts a vertex outside it.
pub const BOUNDS_PAD: f32 = 1e-5;

/// The cube `[-1, 1]³` under `m`: its exact axis-aligned box (the centre is `m`'s translation,
/// each half extent the sum of the absolute values of `m`'s linear row).
pub fn of_unit_cube(m: &Affine3A) -> Bounds {
    let l = m.matrix3;
    let half = l.x_axis.abs() + l.y_axis.abs() + l.z_axis.abs();
    let centre = Vec3::from(m.translation);
    Bounds {
        min: centre - Vec3::from(half),
        max: centre + Vec3::from(half),
    }
}

/// Animated bounds of one skin: per palette entry that influences a vertex, a box holding
/// those vertices in the entry's joint space (`inverse_bind · p`), kept as the affine map of
/// the cube `[-1, 1]³` onto that box in bind space.
///
/// A skinned vertex is `Σ wₖ palette[k] · p` with weights that are non-negative and sum to 1
/// (the cook normalises them), a convex combination of points `palette[k] · p`, each inside
/// `palette[k] · box[k]`; so the union of those boxes' axis-aligned boxes holds every skinned
/// vertex, whatever the pose (additives and IK included: the bound is taken from the final
/// palette). Joint space follows the bone, so limbs get boxes far tighter than a box in bind
/// space would be.
///
/// Morph targets move a vertex by `d = Σₜ wₜ δₜ` in bind space before skinning, so its skinned
/// position moves by `M d` from the unmorphed one inside the boxes: `|M d| ≤ maxₖ ‖palette[k]‖
/// · Σₜ |wₜ| reachₜ` (M a convex combination of palette entries; `reachₜ` the target's longest
/// delta, `‖·‖` the Frobenius norm, at least the spectral), and the placement scales that by
/// at most its own norm. [`SkinBounds::instance`] pads the union by that radius.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinBounds {
    /// Palette entry of each box.
    pub entries: Vec<u32>,
    /// Per box: the cube `[-1, 1]³` onto the box, bind space.
    pub boxes: Vec<Affine3A>,
    /// Per morph target of the skin's meshes (mesh order, then glTF order): what weighs it and
    /// its reach ([`crate::morph::reach`]).
    pub targets: Vec<(TargetWeight, f32)>,
}

impl SkinBounds {
    /// The boxes of `skin` over the vertices of `meshes` (the meshes bound to it). An entry
    /// whose inverse bind matrix has no finite inverse gets its box in bind space instead.
    pub fn new<'a>(
        skin: &SkinBinding,
        meshes: impl IntoIterator<Item = &'a SkinnedMesh>,
    ) -> SkinBounds {
        let n = skin.joints.len().min(skin.inverse_bind.len());
        let mut joint_space = vec![Bounds::EMPTY; n];
        let mut bind_space = vec![Bounds::EMPTY; n];
        for mesh in meshes {
            let influences = mesh.joints.iter().zip(&mesh.weights);
            for (&p, (joints, weights)) in mesh.positions.iter().zip(influences) {
                for (&k, &w) in joints.iter().zip(weights) {
                    let k = k as usize;
                    if k >= n || w.is_nan() || w <= 0.0 {
                        continue;
                    }
                    let q = skin.inverse_bind[k].transform_point3(p);
                    joint_space[k] = joint_space[k].union(&Bounds::point(q));
                    bind_space[k] = bind_space[k].union(&Bounds::point(p));
                }
            }
        }
        let mut bounds = SkinBounds::default();
        for (k, (joint, bind)) in joint_space.iter().zip(&bind_space).enumerate() {
            if joint.is_empty() {
                continue;
            }
            let bind_of_joint = skin.inverse_bind[k].inverse();
            let unit = if bind_of_joint.is_finite() {
                bind_of_joint * joint.unit_cube_map()
            } else {
                bind.unit_cube_map()
            };
            bounds.entries.push(k as u32);
            bounds.boxes.push(unit);
        }
        bounds
    }

    /// The boxes of skin `skin` of `package` over the meshes bound to it, with their morph
    /// targets.
    pub fn for_skin(package: &Package, skin: usize) -> SkinBounds {
        let Some(binding) = package.skins.get(skin) else {
            return SkinBounds::default();
        };
        let bound = |m: &&SkinnedMesh| m.skin as usize == skin;
        let mut bounds = SkinBounds::new(binding, package.meshes.iter().filter(bound));
        for (m, mesh) in package.meshes.iter().enumerate().filter(|(_, m)| bound(m)) {
            let weights = target_weights(package, m);
            bounds
                .targets
                .extend(weights.into_iter().zip(mesh.targets.iter().map(reach)));
        }
        bounds
    }

    /// How far morph targets move a vertex at most in bind space, given the instance's curve
    /// values: `Σₜ |wₜ| reachₜ`.
    pub fn morph_reach(&self, curves: &[f32]) -> f32 {
        (self.targets.iter()).fold(0.0, |r, (w, reach)| r + w.of(curves).abs() * reach)
    }

    /// The scene-space box of an instance posed with `palette`, its morph targets weighed by
    /// its `curves` and placed by `placement`, padded by [`BOUNDS_PAD`] (empty when the skin
    /// influences no vertex). The GPU's bounds pass computes the same, in the same order
    /// (shaders/src/wgsl/bounds.wgsl).
    pub fn instance(&self, palette: &[Affine3A], placement: &Affine3A, curves: &[f32]) -> Bounds {
        let mut out = Bounds::EMPTY;
        let reach = self.morph_reach(curves);
        // The largest squared Frobenius norm of a boxed entry's linear part (where it matters).
        let mut norm2 = 0.0f32;
        for (&k, unit) in self.entries.iter().zip(&self.boxes) {
            if let Some(p) = palette.get(k as usize) {
                out = out.union(&of_unit_cube(&(*placement * (*p * *unit))));
                if reach > 0.0 {
                    norm2 = norm2.max(frobenius2(&p.matrix3));
                }
            }
        }
        if out.is_empty() {
            return out;
        }
        if reach > 0.0 {
            let r = reach * norm2.sqrt() * frobenius2(&placement.matrix3).sqrt();
            out.min -= r;
            out.max += r;
        }
        let pad = BOUNDS_PAD * out.min.abs().max(out.max.abs()).max_element();
        Bounds {
            min: out.min - pad,
            max: out.max + pad,
        }
    }
}

/// The squared Frobenius norm of a linear map (its root bounds how far the map stretches a
/// vector).
fn frobenius2(m: &glam::Mat3A) -> f32 {
    m.x_axis.length_squared() + m.y_axis.length_squared() + m.z_axis.length_squared()
}

/// A view frustum as six planes `(n, d)`, inside where `n·p + d >= 0`: left, right, bottom,
/// top, near, far. From a view-projection matrix with depth in `[0, 1]` (wgpu's clip space).
///
/// Gribb & Hartmann, "Fast Extraction of Viewing Frustum Planes from the World-View-Projection
/// Matrix" (2001), https://www.gamedevs.org/uploads/fast-extraction-viewing-frustum-planes-from-world-view-projection-matrix.pdf
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frustum {
    pub planes: [glam::Vec4; 6],
}

impl Frustum {
    pub fn from_view_proj(m: &glam::Mat4) -> Frustum {
        let (r0, r1, r2, r3) = (m.row(0), m.row(1), m.row(2), m.row(3));
        Frustum {
            planes: [r3 + r0, r3 - r0, r3 + r1, r3 - r1, r2, r3 - r2],
        }
    }

    /// Whether `b` may be seen: false only when the box lies wholly outside one plane (its
    /// corner farthest along the plane's normal is behind it). An empty box is never seen. The
    /// bounds pass runs the same test, written out in the same order (bounds.wgsl `in_frustum`).
    pub fn intersects(&self, b: &Bounds) -> bool {
        if b.is_empty() {
            return false;
        }
        self.planes.iter().all(|p| {
            let far = Vec3::select(p.truncate().cmpge(Vec3::ZERO), b.max, b.min);
            p.x * far.x + p.y * far.y + p.z * far.z + p.w >= 0.0
        })
    }
}
