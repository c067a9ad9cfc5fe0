//! Scene-space poses in f64 and the small rotation helpers the retargeter shares.

use glam::{DAffine3, DQuat, DVec3};
use throng_cpu_ref::{Skeleton, Trs};

/// Scene-space placement of every joint of a pose (f64): positions and rotations. Rotations are
/// composed (parent × local) so that they stay unit; positions come from the affine FK.
#[derive(Clone, Debug, Default)]
pub(super) struct ScenePose {
    pub(super) affine: Vec<DAffine3>,
    pub(super) rotation: Vec<DQuat>,
}

impl ScenePose {
    pub(super) fn position(&self, j: usize) -> DVec3 {
        self.affine[j].translation
    }

    /// FK of `local` under the skeleton's root transform.
    pub(super) fn compute(&mut self, skeleton: &Skeleton, local: &[Trs]) {
        self.fill(skeleton, local, skeleton.root_transform.as_daffine3());
    }

    /// FK of `local` under the scene frame `root`.
    pub(super) fn fill(&mut self, skeleton: &Skeleton, local: &[Trs], root: DAffine3) {
        let n = skeleton.joint_count();
        self.affine.resize(n, DAffine3::IDENTITY);
        self.rotation.resize(n, DQuat::IDENTITY);
        let root_rotation = root.to_scale_rotation_translation().1;
        for (j, l) in local.iter().enumerate().take(n) {
            let (pa, pq) = match parent(skeleton, j) {
                Some(p) => (self.affine[p], self.rotation[p]),
                None => (root, root_rotation),
            };
            self.affine[j] = pa * affine(l);
            self.rotation[j] = (pq * l.rotation.as_dquat()).normalize();
        }
    }
}

pub(super) fn parent(skeleton: &Skeleton, j: usize) -> Option<usize> {
    let p = skeleton.parents[j] as usize;
    (p < j).then_some(p)
}

pub(super) fn affine(trs: &Trs) -> DAffine3 {
    DAffine3::from_scale_rotation_translation(
        trs.scale.as_dvec3(),
        trs.rotation.as_dquat(),
        trs.translation.as_dvec3(),
    )
}

/// Writes joint `j`'s local transform (rest scale) and its scene placement under `parent`.
pub(super) fn store(
    j: usize,
    rest: &Trs,
    rotation: DQuat,
    translation: DVec3,
    (pa, pq): (DAffine3, DQuat),
    t: &mut ScenePose,
    target_local: &mut [Trs],
) {
    let local = Trs {
        translation: translation.as_vec3(),
        rotation: rotation.as_quat(),
        scale: rest.scale,
    };
    t.affine[j] = pa * affine(&local);
    t.rotation[j] = (pq * rotation).normalize();
    target_local[j] = local;
}

/// Scene frame (affine, rotation) of `j`'s parent, or of the skeleton's root frame.
pub(super) fn parent_frame(skeleton: &Skeleton, t: &ScenePose, j: usize) -> (DAffine3, DQuat) {
    match parent(skeleton, j) {
        Some(p) => (t.affine[p], t.rotation[p]),
        None => {
            let root = skeleton.root_transform.as_daffine3();
            (root, root.to_scale_rotation_translation().1)
        }
    }
}

/// FK again over the subtree of `root` from `local`.
pub(super) fn refresh(skeleton: &Skeleton, root: usize, t: &mut ScenePose, local: &[Trs]) {
    let end = skeleton.subtree_end[root] as usize;
    for (j, l) in local.iter().enumerate().take(end).skip(root) {
        let (pa, pq) = parent_frame(skeleton, t, j);
        t.affine[j] = pa * affine(l);
        t.rotation[j] = (pq * l.rotation.as_dquat()).normalize();
    }
}

/// Shortest arc taking direction `from` onto `to`; identity when either is degenerate.
pub(super) fn arc(from: DVec3, to: DVec3) -> DQuat {
    match (from.try_normalize(), to.try_normalize()) {
        (Some(a), Some(b)) => DQuat::from_rotation_arc(a, b),
        _ => DQuat::IDENTITY,
    }
}

/// The twist of `q` about unit `axis` (swing-twist decomposition; identity for a half turn of
/// pure swing).
pub(super) fn twist(q: DQuat, axis: DVec3) -> DQuat {
    let p = axis * DVec3::new(q.x, q.y, q.z).dot(axis);
    let t = DQuat::from_xyzw(p.x, p.y, p.z, q.w);
    if t.length() > 1e-12 {
        t.normalize()
    } else {
        DQuat::IDENTITY
    }
}
