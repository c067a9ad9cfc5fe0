//! Skinning palettes.

use glam::Affine3A;

use crate::SkinBinding;

/// `palette[k] = component[skin.joints[k]] * skin.inverse_bind[k]`, in component space.
/// Entries past the shortest of the slices are left untouched.
pub fn build_palette(skin: &SkinBinding, component: &[Affine3A], palette: &mut [Affine3A]) {
    for ((out, &joint), ibm) in palette.iter_mut().zip(&skin.joints).zip(&skin.inverse_bind) {
        if let Some(c) = component.get(joint as usize) {
            *out = *c * *ibm;
        }
    }
}
