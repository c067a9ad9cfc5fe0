//! Morph targets, mesh nodes and morph-weight curves (glTF 2.0 §3.7.2.2 "Morph Targets",
//! https://registry.khronos.org/glTF/specs/2.0/glTF-2.0.html#morph-targets).
//!
//! A morphed attribute is `base + Σᵢ wᵢ · deltaᵢ` over the primitive's targets, applied before
//! skinning (glTF 2.0 §3.7.2.2: "after applying morph targets to vertex positions, skinning is
//! applied"). POSITION and NORMAL deltas are kept; morphed normals are normalised after the sum,
//! as renderers do before lighting. TANGENT deltas are not read (Throng cooks no tangents).
//!
//! A target is stored sparsely: only the vertices whose POSITION or NORMAL delta is not exactly
//! zero, in increasing order. Skipping a zero delta changes nothing (`p + w · 0 = p` for every
//! finite `w`), so the sparse sum is the dense one bit for bit.
//!
//! The weights of a mesh node come from, in order: the clip's weight track for that node (a
//! glTF `weights` animation channel), the node's `weights`, the mesh's `weights`, zero
//! (glTF 2.0 §3.7.2.2 and §5.17, `node.weights` "overrides the mesh's").
//!
//! Weight curves keep glTF semantics exactly ([`WeightChannel::sample`]): STEP holds, LINEAR
//! lerps each weight (glTF 2.0 Appendix C: only rotations slerp), CUBICSPLINE is the Hermite
//! basis with the in/out tangents scaled by the key interval. Cooked weight tracks
//! ([`WeightClip`]) are uniform samples at the clip's rate, lerped between the two bracketing
//! samples, like cooked translations.

use glam::{Affine3A, Vec3};

use crate::curve::Interpolation;

/// One morph target of one primitive, sparse.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MorphTarget {
    /// Vertices the target moves, strictly increasing, each below the primitive's vertex count.
    pub vertices: Vec<u32>,
    /// POSITION delta of each entry of `vertices`.
    pub positions: Vec<Vec3>,
    /// NORMAL delta of each entry of `vertices`; empty when the target has no NORMAL.
    pub normals: Vec<Vec3>,
}

/// One triangle primitive of a mesh node that has no skin. Positions and normals are in the
/// node's local space (the node's [`MeshNode::world`] takes them to the scene).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StaticMesh {
    /// Debug name: `mesh_name/primitive_index`.
    pub name: String,
    pub positions: Vec<Vec3>,
    /// Unit normals; empty when the source has none.
    pub normals: Vec<Vec3>,
    /// Triangle list indices into the vertex arrays.
    pub indices: Vec<u32>,
    /// Morph targets, in glTF order (as many as the node's weights).
    pub targets: Vec<MorphTarget>,
}

/// Which cooked mesh a primitive of a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshRef {
    /// Index into `Package::meshes` (the node is skinned).
    Skinned(u32),
    /// Index into [`Scene::meshes`] (the node has no skin).
    Static(u32),
}

/// One cooked triangle primitive of a mesh node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodePrimitive {
    /// The primitive's index in its glTF mesh.
    pub primitive: u32,
    pub mesh: MeshRef,
}

/// A glTF node that instantiates a mesh: where its primitives went and its default weights. A
/// package lists every unskinned mesh node it cooked and every skinned one whose mesh has morph
/// targets (a skinned node without targets is fully described by its skinned meshes).
#[derive(Clone, Debug, PartialEq)]
pub struct MeshNode {
    /// The glTF node index.
    pub node: u32,
    /// The node's name, or `node{index}`.
    pub name: String,
    /// Scene-space transform of the node at rest: its ancestors' local matrices and its own.
    /// Unused for a skinned node (glTF 2.0 §3.7.3.2: the skinned mesh node's transform is
    /// ignored; skinned vertices are in scene space through the skeleton).
    pub world: Affine3A,
    /// The skin binding that deforms it, when skinned.
    pub skin: Option<u32>,
    /// The cooked triangle primitives, in glTF primitive order.
    pub primitives: Vec<NodePrimitive>,
    /// Default morph weights (node's, else mesh's, else zero), one per target; empty when the
    /// mesh has no targets.
    pub weights: Vec<f32>,
}

/// The cooked weights of one mesh node in one clip: `sample_count × weights` values, sample-major.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WeightTrack {
    /// Index into [`Scene::nodes`].
    pub node: u32,
    pub values: Vec<f32>,
}

/// The morph-weight tracks of one glTF animation, uniformly sampled (stored uncompressed).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WeightClip {
    /// The animation's name (the skeleton clips of the same animation share it).
    pub name: String,
    /// Seconds: the last key time over all the animation's channels (every path), so it agrees
    /// with the skeleton clips of the same animation.
    pub duration: f64,
    pub sample_rate: f32,
    /// Uniform samples (at least 1); sample i is at `min(i / rate, duration)`, the last at the
    /// duration.
    pub sample_count: u32,
    /// At most one per node, ascending by node.
    pub tracks: Vec<WeightTrack>,
}

/// Mesh nodes, the primitives of the unskinned ones, and the clips' weight tracks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scene {
    pub meshes: Vec<StaticMesh>,
    pub nodes: Vec<MeshNode>,
    pub clips: Vec<WeightClip>,
}

impl Scene {
    pub fn is_empty(&self) -> bool {
        self.meshes.is_empty() && self.nodes.is_empty() && self.clips.is_empty()
    }

    /// Index of the first weight clip with this name.
    pub fn find_clip(&self, name: &str) -> Option<usize> {
        self.clips.iter().position(|c| c.name == name)
    }
}

impl WeightClip {
    /// Time of sample `i` in seconds (the last sample is at the duration).
    pub fn sample_time(&self, i: u32) -> f64 {
        if i + 1 >= self.sample_count {
            self.duration
        } else {
            (i as f64 / self.sample_rate as f64).min(self.duration)
        }
    }

    /// The weights of node `node` (an index into [`Scene::nodes`]) at `time`, clamped to the
    /// clip, lerped between the bracketing samples, into `out` (one per target). Returns false,
    /// leaving `out` as it was, when the clip has no track for the node or `out` has another
    /// length than the track's width.
    pub fn sample(&self, node: u32, time: f64, out: &mut [f32]) -> bool {
        let Some(track) = self.tracks.iter().find(|t| t.node == node) else {
            return false;
        };
        let width = out.len();
        let n = self.sample_count as usize;
        if width == 0 || n == 0 || track.values.len() != n * width {
            return false;
        }
        let (i0, i1, u) = self.bracket(time);
        let (a, b) = (
            &track.values[i0 * width..(i0 + 1) * width],
            &track.values[i1 * width..(i1 + 1) * width],
        );
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            *o = x + (y - x) * u;
        }
        true
    }

    /// The samples around `time` and the fraction between them.
    fn bracket(&self, time: f64) -> (usize, usize, f32) {
        let last = self.sample_count.saturating_sub(1) as usize;
        let t = if time.is_nan() {
            0.0
        } else {
            time.clamp(0.0, self.duration)
        };
        if last == 0 || t >= self.duration {
            return (last, last, 0.0);
        }
        let x = t * f64::from(self.sample_rate);
        let i0 = (x.floor() as usize).min(last - 1);
        let t0 = self.sample_time(i0 as u32);
        let t1 = self.sample_time(i0 as u32 + 1);
        let u = if t1 > t0 { (t - t0) / (t1 - t0) } else { 0.0 };
        (i0, i0 + 1, u.clamp(0.0, 1.0) as f32)
    }
}

/// A glTF `weights` animation channel on one mesh node, exact (source) form.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightChannel {
    /// Index into [`Scene::nodes`].
    pub node: u32,
    /// Weights per key (the node's target count).
    pub width: u32,
    pub interpolation: Interpolation,
    /// Strictly increasing key times in seconds.
    pub times: Vec<f32>,
    /// `times.len() * width` floats, or for CUBICSPLINE `times.len() * 3 * width` laid out per
    /// key as (in-tangents, values, out-tangents), glTF's layout.
    pub values: Vec<f32>,
}

/// The `weights` channels of one glTF animation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceWeightClip {
    pub name: String,
    /// Last key time over all the animation's channels, in seconds.
    pub duration: f32,
    pub channels: Vec<WeightChannel>,
}

impl WeightChannel {
    fn key_stride(&self) -> usize {
        let w = self.width as usize;
        match self.interpolation {
            Interpolation::CubicSpline => 3 * w,
            _ => w,
        }
    }

    /// The weights at absolute clip `time` (seconds, f64: the interpolation fraction is taken in
    /// f64, so a late clip time loses no precision to f32), glTF semantics, into `out` (`width`
    /// floats); before the first key the first value holds, after the last the last. Returns
    /// false, leaving `out` as it was, when the channel has no keys, its values do not hold
    /// `times.len()` keys or `out` is not `width` long.
    pub fn sample(&self, time: f64, out: &mut [f32]) -> bool {
        let w = self.width as usize;
        let n = self.times.len();
        let stride = self.key_stride();
        if n == 0 || w == 0 || out.len() != w || self.values.len() != n * stride {
            return false;
        }
        // The value of key k starts here (the middle third of a CUBICSPLINE triple).
        let value = |k: usize| match self.interpolation {
            Interpolation::CubicSpline => k * stride + w,
            _ => k * stride,
        };
        // Keys at or before `time`; NaN compares false, so it holds the first key.
        let after = self.times.partition_point(|&k| f64::from(k) <= time);
        if after == 0 || after == n {
            let at = value(if after == 0 { 0 } else { n - 1 });
            out.copy_from_slice(&self.values[at..at + w]);
            return true;
        }
        let k = after - 1;
        let t0 = f64::from(self.times[k]);
        let dt = f64::from(self.times[k + 1]) - t0;
        let u = (time - t0) / dt;
        let v = |i: usize| f64::from(self.values[i]);
        match self.interpolation {
            Interpolation::Step => {
                out.copy_from_slice(&self.values[value(k)..value(k) + w]);
            }
            Interpolation::Linear => {
                // glTF 2.0 Appendix C: LINEAR on weights is a plain lerp (only rotations slerp).
                let (a, b) = (value(k), value(k + 1));
                for (i, o) in out.iter_mut().enumerate() {
                    *o = (v(a + i) + (v(b + i) - v(a + i)) * u) as f32;
                }
            }
            Interpolation::CubicSpline => {
                // glTF 2.0 Appendix C "Cubic Spline Interpolation": p(t) = h00·v_k + h10·Δ·b_k +
                // h01·v_k+1 + h11·Δ·a_k+1 with b_k the out-tangent of key k, a_k+1 the in-tangent
                // of key k + 1 and Δ the key interval.
                let (u2, u3) = (u * u, u * u * u);
                let h00 = 2.0 * u3 - 3.0 * u2 + 1.0;
                let h10 = (u3 - 2.0 * u2 + u) * dt;
                let h01 = -2.0 * u3 + 3.0 * u2;
                let h11 = (u3 - u2) * dt;
                for (i, o) in out.iter_mut().enumerate() {
                    let v0 = v(k * stride + w + i);
                    let b0 = v(k * stride + 2 * w + i);
                    let a1 = v((k + 1) * stride + i);
                    let v1 = v((k + 1) * stride + w + i);
                    *o = (h00 * v0 + h10 * b0 + h01 * v1 + h11 * a1) as f32;
                }
            }
        }
        true
    }
}

/// What weighs one morph target of a skinned mesh in a posed frame: the curve `morph/NODE/i` of
/// the mesh's node, as the instance's program evaluates it, when the package has that channel
/// (`channel`: its index among the skeleton's channels); else the node's default weight,
/// constant (the cook makes the channel only where a clip animates the node's weights).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TargetWeight {
    pub channel: Option<u32>,
    pub default: f32,
}

impl TargetWeight {
    /// The weight, given the instance's curve values (its skeleton's channels in id order; a
    /// channel past their end reads the default).
    pub fn of(&self, curves: &[f32]) -> f32 {
        self.channel
            .and_then(|c| curves.get(c as usize).copied())
            .unwrap_or(self.default)
    }
}

/// Per morph target of skinned mesh `mesh` of `package` (glTF order), what weighs it
/// ([`TargetWeight`]); empty for a mesh without targets or one no mesh node lists.
pub fn target_weights(package: &crate::Package, mesh: usize) -> Vec<TargetWeight> {
    let Some(m) = package.meshes.get(mesh) else {
        return Vec::new();
    };
    let node = (package.scene.nodes.iter()).find(|n| {
        n.primitives
            .iter()
            .any(|p| p.mesh == MeshRef::Skinned(mesh as u32))
    });
    let skeleton = package.skins.get(m.skin as usize).map(|s| s.skeleton);
    let (Some(node), Some(skeleton)) = (node, skeleton) else {
        return Vec::new();
    };
    let first = package.curves.range(skeleton).start as u32;
    (0..m.targets.len())
        .map(|i| TargetWeight {
            channel: (package.curves)
                .find(skeleton, &format!("morph/{}/{i}", node.name))
                .map(|id| id - first),
            default: node.weights.get(i).copied().unwrap_or(0.0),
        })
        .collect()
}

/// The longest POSITION delta of `target`: no vertex moves further at weight 1 (animated bounds
/// widen by it, `crate::bounds`).
pub fn reach(target: &MorphTarget) -> f32 {
    target
        .positions
        .iter()
        .map(|d| d.length())
        .fold(0.0, f32::max)
}

/// Morphs positions (and normals, when both `normals` and `out_normals` are given) into
/// caller-owned outputs: `base + Σᵢ weights[i] · targets[i]`, normals normalised after (a zero
/// sum stays zero). Targets past the end of `weights`, zero weights and vertices past the end
/// of an output are skipped. Allocates nothing.
pub fn morph(
    positions: &[Vec3],
    normals: &[Vec3],
    targets: &[MorphTarget],
    weights: &[f32],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    for (o, p) in out_positions.iter_mut().zip(positions) {
        *o = *p;
    }
    for (o, n) in out_normals.iter_mut().zip(normals) {
        *o = *n;
    }
    for (target, &w) in targets.iter().zip(weights) {
        if w == 0.0 {
            continue;
        }
        for (&v, &d) in target.vertices.iter().zip(&target.positions) {
            if let Some(o) = out_positions.get_mut(v as usize) {
                *o += w * d;
            }
        }
        for (&v, &d) in target.vertices.iter().zip(&target.normals) {
            if let Some(o) = out_normals.get_mut(v as usize) {
                *o += w * d;
            }
        }
    }
    if targets.iter().any(|t| !t.normals.is_empty()) {
        for n in out_normals.iter_mut() {
            *n = n.normalize_or_zero();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(interpolation: Interpolation, values: Vec<f32>) -> WeightChannel {
        WeightChannel {
            node: 0,
            width: 2,
            interpolation,
            times: vec![1.0, 3.0],
            values,
        }
    }

    fn at(c: &WeightChannel, t: f64) -> [f32; 2] {
        let mut out = [f32::NAN; 2];
        assert!(c.sample(t, &mut out));
        out
    }

    #[test]
    fn step_linear_and_cubic_follow_gltf() {
        let step = channel(Interpolation::Step, vec![0.0, 1.0, 1.0, 0.5]);
        assert_eq!(at(&step, 0.0), [0.0, 1.0]);
        assert_eq!(at(&step, 2.9), [0.0, 1.0]);
        assert_eq!(at(&step, 3.0), [1.0, 0.5]);
        let linear = channel(Interpolation::Linear, vec![0.0, 1.0, 1.0, 0.5]);
        assert_eq!(at(&linear, 2.0), [0.5, 0.75]);
        assert_eq!(at(&linear, 9.0), [1.0, 0.5]);
        // (in, value, out) per key; out-tangent 1/s of key 0 over an interval of 2 s, in-tangent
        // 0 at key 1: at u = 0.5, h00 = 0.5, h10 = 0.125 · 2, h01 = 0.5.
        let cubic = channel(
            Interpolation::CubicSpline,
            vec![0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0],
        );
        let v = at(&cubic, 2.0);
        assert!(
            (v[0] - (0.5 * 0.0 + 0.25 * 1.0 + 0.5 * 1.0)).abs() < 1e-6,
            "{v:?}"
        );
        assert!((v[1] - 1.0).abs() < 1e-6, "{v:?}");
        let mut wrong = [0.0; 3];
        assert!(!cubic.sample(2.0, &mut wrong));
    }

    #[test]
    fn sparse_morph_is_base_plus_weighted_deltas() {
        let base = [Vec3::ZERO, Vec3::X, Vec3::Y];
        let normals = [Vec3::Z; 3];
        let targets = [
            MorphTarget {
                vertices: vec![1],
                positions: vec![Vec3::new(0.0, 2.0, 0.0)],
                normals: vec![Vec3::new(0.0, 0.0, -2.0)],
            },
            MorphTarget {
                vertices: vec![0, 2],
                positions: vec![Vec3::ONE, Vec3::ONE],
                normals: Vec::new(),
            },
        ];
        let mut p = [Vec3::NAN; 3];
        let mut n = [Vec3::NAN; 3];
        morph(&base, &normals, &targets, &[0.5, 0.25], &mut p, &mut n);
        assert_eq!(
            p,
            [
                Vec3::splat(0.25),
                Vec3::new(1.0, 1.0, 0.0),
                Vec3::new(0.25, 1.25, 0.25)
            ]
        );
        assert_eq!(n[0], Vec3::Z);
        assert_eq!(n[1], Vec3::ZERO, "z + 0.5 · (-2z) is zero and stays zero");
    }

    #[test]
    fn cooked_weights_lerp_between_samples() {
        let clip = WeightClip {
            name: "a".into(),
            duration: 1.0,
            sample_rate: 2.0,
            sample_count: 3,
            tracks: vec![WeightTrack {
                node: 4,
                values: vec![0.0, 1.0, 1.0, 0.0, 0.0, 1.0],
            }],
        };
        let mut w = [0.0; 2];
        assert!(clip.sample(4, 0.25, &mut w));
        assert_eq!(w, [0.5, 0.5]);
        assert!(clip.sample(4, 5.0, &mut w));
        assert_eq!(w, [0.0, 1.0]);
        assert!(!clip.sample(3, 0.25, &mut w));
    }
}
