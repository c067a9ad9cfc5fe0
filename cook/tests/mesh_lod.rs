//! Cooked mesh LODs: one simplified triangle list per skeleton LOD level, never more triangles
//! than the level before, inside its mesh, within the level's error, kept by the package format
//! and refused by the reader when damaged.

mod asset_support;

use asset_support::cooked_skinned_assets;

use throng_cook::package::{read_package, write_package, PackageError};
use throng_cook::{cook, import_slice, Profile};
use throng_cpu_ref::Package;

fn character() -> Package {
    let imported = import_slice(&throng_fixtures::character_glb(), "character.glb").unwrap();
    cook(&imported, &Profile::DEFAULT).unwrap().0
}

/// Every mesh of `package`: one LOD per level of its skeleton (none when no level reduces it),
/// each a whole number of triangles inside the mesh, no more than the one before, its error at
/// most its level's.
fn check_mesh_lods(name: &str, package: &Package) {
    for mesh in &package.meshes {
        let skeleton = &package.skeletons[package.skins[mesh.skin as usize].skeleton as usize];
        if mesh.lods.is_empty() {
            eprintln!("{name} {}: no level reduces it", mesh.name);
        } else {
            assert_eq!(mesh.lods.len(), skeleton.lods.len(), "{name} {}", mesh.name);
            assert!(mesh.lods.iter().any(|l| l.indices != mesh.indices));
        }
        let mut previous = mesh.indices.len();
        for (lod, level) in mesh.lods.iter().zip(&skeleton.lods) {
            let n = lod.indices.len();
            assert!(
                n % 3 == 0 && n <= previous,
                "{name} {}: {n} after {previous}",
                mesh.name
            );
            assert!(lod
                .indices
                .iter()
                .all(|&i| (i as usize) < mesh.positions.len()));
            assert!(lod.error.is_finite() && lod.error >= 0.0);
            assert!(lod.error <= level.error(), "{name} {}", mesh.name);
            previous = n;
        }
    }
}

#[test]
fn every_shared_asset_cooks_one_mesh_lod_per_skeleton_level_within_its_error() {
    let mut packages = vec![("generated character".to_string(), character())];
    packages.extend(cooked_skinned_assets());
    for (name, package) in &packages {
        check_mesh_lods(name, package);
        let back = read_package(&write_package(package)).unwrap();
        assert_eq!(&back, package, "{name}: the package format keeps mesh LODs");
    }
}

#[test]
fn the_generated_characters_levels_draw_a_quarter_and_a_twentieth_of_its_triangles() {
    let package = character();
    let mesh = &package.meshes[0];
    let full = mesh.indices.len();
    let levels: Vec<usize> = mesh.lods.iter().map(|l| l.indices.len()).collect();
    eprintln!(
        "triangles: {} then {:?}",
        full / 3,
        levels.iter().map(|n| n / 3).collect::<Vec<_>>()
    );
    assert_eq!(levels.len(), 2);
    // The floors are 25 % and 5 % (MESH_LOD_FLOORS); the error bound may stop earlier.
    assert!(
        levels[0] * 100 <= full * 30,
        "level 1 keeps {} of {full}",
        levels[0]
    );
    assert!(
        levels[1] * 100 <= full * 8,
        "level 2 keeps {} of {full}",
        levels[1]
    );
}

#[test]
fn a_mesh_lod_index_outside_its_mesh_is_refused_with_the_section_named() {
    let mut package = character();
    let vertices = package.meshes[0].positions.len() as u32;
    package.meshes[0].lods[1].indices[4] = vertices;
    match read_package(&write_package(&package)) {
        Err(PackageError::Invalid {
            section: "MESH_LODS",
            field: "indices",
            what,
            ..
        }) => assert!(what.contains(&vertices.to_string()), "{what}"),
        other => panic!("expected a MESH_LODS error, got {other:?}"),
    }
}

#[test]
fn a_mesh_lod_with_more_triangles_than_the_level_before_is_refused() {
    let mut package = character();
    let coarse = package.meshes[0].lods[0].indices.clone();
    package.meshes[0].lods[1].indices = coarse.iter().chain(&coarse[..3]).copied().collect();
    assert!(matches!(
        read_package(&write_package(&package)),
        Err(PackageError::Invalid {
            section: "MESH_LODS",
            field: "index count",
            ..
        })
    ));
}

#[test]
fn mesh_lods_keep_every_vertex_a_morph_target_moves() {
    use throng_cpu_ref::morph::MorphTarget;
    let imported = throng_cook::import_slice(&throng_fixtures::character_glb(), "character")
        .expect("character imports");
    let (mut package, _) =
        throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT).expect("character cooks");
    // A target moving every 5th vertex of mesh 0 (a face's worth of a blink, spread out).
    let n = package.meshes[0].positions.len() as u32;
    let moved: Vec<u32> = (0..n).step_by(5).collect();
    package.meshes[0].targets = vec![MorphTarget {
        positions: vec![glam::Vec3::new(0.0, 0.01, 0.0); moved.len()],
        vertices: moved.clone(),
        normals: Vec::new(),
    }];
    let skeleton = package.meshes[0].skin;
    let s = package.skins[skeleton as usize].skeleton;
    let lods = package.skeletons[s as usize].lods.clone();
    let errors: Vec<f32> = lods.iter().map(|l| l.error()).collect();
    throng_cook::mesh_lod::build_mesh_lods(&mut package, s, &lods, &errors);
    let mesh = &package.meshes[0];
    assert!(!mesh.lods.is_empty(), "the character's mesh still has LODs");
    for (k, lod) in mesh.lods.iter().enumerate() {
        let mut used = vec![false; n as usize];
        lod.indices.iter().for_each(|&i| used[i as usize] = true);
        let kept = moved.iter().filter(|&&v| used[v as usize]).count();
        eprintln!(
            "level {}: {} triangles, {kept} of {} morphed vertices drawn",
            k + 1,
            lod.indices.len() / 3,
            moved.len()
        );
        assert_eq!(
            kept,
            moved.len(),
            "level {}: a morphed vertex was collapsed away",
            k + 1
        );
    }
}
