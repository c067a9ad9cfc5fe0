//! Shared by the cook tests that read `../shared/assets/`.

use std::path::PathBuf;

/// The shared assets folder, or `None` (with a printed reason) when it is absent and not
/// required (`THRONG_REQUIRE_ASSETS=1` makes its absence a failure).
pub fn assets() -> Option<PathBuf> {
    throng_fixtures::shared_dir("", "the shared assets' cook tests")
}

/// The skinned shared assets the LOD tests cook, by file name.
#[allow(dead_code)] // Not every test crate that shares this module cooks them.
pub const SKINNED_ASSETS: [&str; 6] = [
    "Fox.glb",
    "CesiumMan.glb",
    "KnightCharacter.glb",
    "RiggedFigure.glb",
    "RiggedSimple.glb",
    "SimpleSkin.gltf",
];

/// Each of [`SKINNED_ASSETS`] cooked with the default profile, by name (none without the
/// assets folder).
#[allow(dead_code)]
pub fn cooked_skinned_assets() -> Vec<(String, throng_cpu_ref::Package)> {
    let Some(dir) = assets() else {
        return Vec::new();
    };
    SKINNED_ASSETS
        .iter()
        .map(|name| {
            let imported = throng_cook::import_file(&dir.join(name)).unwrap();
            let package = throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)
                .unwrap()
                .0;
            (name.to_string(), package)
        })
        .collect()
}

/// Scene positions of every joint of `skeleton` posed by `local` (`root_transform` applied).
#[allow(dead_code)]
pub fn positions(
    skeleton: &throng_cpu_ref::Skeleton,
    local: &[throng_cpu_ref::Trs],
) -> Vec<glam::Vec3A> {
    let mut component = vec![glam::Affine3A::IDENTITY; skeleton.joint_count()];
    throng_cpu_ref::fk::local_to_component(skeleton, local, &mut component);
    component
        .iter()
        .map(|c| (skeleton.root_transform * *c).translation)
        .collect()
}

/// The diagonal of the points' bounding box.
#[allow(dead_code)]
pub fn extent(points: &[glam::Vec3A]) -> f32 {
    let lo = points
        .iter()
        .fold(glam::Vec3A::splat(f32::MAX), |a, p| a.min(*p));
    let hi = points
        .iter()
        .fold(glam::Vec3A::splat(f32::MIN), |a, p| a.max(*p));
    (hi - lo).length()
}
