//! Forward kinematics: local poses to component (skeleton-space) transforms.

use glam::Affine3A;

use crate::{Skeleton, Trs};

/// `component[root] = local[root]`, `component[j] = component[parent[j]] * local[j]`.
/// Composition keeps shear; nothing is decomposed back to TRS. Slices must hold one entry per
/// joint (checked by the caller's `validate`; shorter slices evaluate only their prefix). A parent
/// that does not come before its child (a malformed skeleton) is treated as no parent.
pub fn local_to_component(skeleton: &Skeleton, local: &[Trs], component: &mut [Affine3A]) {
    let n = skeleton.joint_count().min(local.len()).min(component.len());
    for j in 0..n {
        let m = local[j].to_affine();
        let p = skeleton.parents[j];
        // NO_PARENT (u32::MAX) is never below j.
        component[j] = if (p as usize) < j {
            component[p as usize] * m
        } else {
            m
        };
    }
}
