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
