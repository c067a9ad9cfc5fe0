//! Cooked mesh LODs: one simplified triangle list per skeleton LOD level, never more triangles
//! than the level before, inside its mesh, within the level's error, with a shell that gives its
//! silhouette full detail's area, kept by the package format and refused by the reader when
//! damaged.

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
            assert!(
                (0.0..=lod.error).contains(&lod.shell),
                "{name} {}: shell {} of error {}",
                mesh.name,
                lod.shell,
                lod.error
            );
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

/// Pixel centres of a `size`² image covered by `mesh`'s triangles at `level`, its vertices
/// pushed `shell` out along their normals, seen orthographically along the horizontal direction
/// at `azimuth` (radians) over the square `[lo, lo + side]²` of the view plane. The test's own
/// raster (point-in-triangle at pixel centres), not the cook's.
fn pixels(
    mesh: &throng_cpu_ref::SkinnedMesh,
    level: usize,
    shell: f32,
    view: (f32, [f32; 2], f32),
) -> usize {
    use glam::{Vec2, Vec3};
    let (azimuth, lo, side) = view;
    let size = 200usize;
    let right = Vec3::new(azimuth.cos(), 0.0, -azimuth.sin());
    let to_pixels = |v: u32| {
        let p = mesh.positions[v as usize] + mesh.normals[v as usize] * shell;
        (Vec2::new(p.dot(right), p.y) - Vec2::from(lo)) / side * size as f32
    };
    let mut covered = vec![false; size * size];
    for t in mesh.level_indices(level).chunks_exact(3) {
        let [a, b, c] = [to_pixels(t[0]), to_pixels(t[1]), to_pixels(t[2])];
        let cross = |u: Vec2, v: Vec2| u.x * v.y - u.y * v.x;
        let area = cross(b - a, c - a);
        if area == 0.0 {
            continue;
        }
        let (min, max) = (a.min(b).min(c), a.max(b).max(c));
        for y in (min.y.floor().max(0.0) as usize)..(max.y.ceil().min(size as f32) as usize) {
            for x in (min.x.floor().max(0.0) as usize)..(max.x.ceil().min(size as f32) as usize) {
                let p = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
                let inside = [
                    cross(b - a, p - a),
                    cross(c - b, p - b),
                    cross(a - c, p - c),
                ]
                .iter()
                .all(|w| w * area >= 0.0);
                covered[y * size + x] |= inside;
            }
        }
    }
    covered.iter().filter(|&&c| c).count()
}

#[test]
fn a_coarse_levels_shell_gives_its_silhouette_the_area_of_full_detail() {
    let package = character();
    let mesh = &package.meshes[0];
    let (lo, hi) = mesh.positions.iter().fold(
        (
            glam::Vec3::splat(f32::INFINITY),
            glam::Vec3::splat(f32::NEG_INFINITY),
        ),
        |(lo, hi), p| (lo.min(*p), hi.max(*p)),
    );
    let side = (hi - lo).max_element() * 1.5;
    let centre = (lo + hi) * 0.5;
    // Views the cook does not measure from: 7 azimuths 10° off its eight.
    let views: Vec<(f32, [f32; 2], f32)> = (0..7)
        .map(|k| {
            let azimuth = (10.0 + 51.0 * k as f32).to_radians();
            let c = glam::Vec3::new(azimuth.cos(), 0.0, -azimuth.sin()).dot(centre);
            (azimuth, [c - side / 2.0, centre.y - side / 2.0], side)
        })
        .collect();
    let area = |level: usize, shell: f32| -> usize {
        views.iter().map(|&v| pixels(mesh, level, shell, v)).sum()
    };
    let full = area(0, 0.0) as f64;
    for level in 1..=mesh.lods.len() {
        let shell = mesh.lods[level - 1].shell;
        let (bare, shelled) = (
            area(level, 0.0) as f64 / full,
            area(level, shell) as f64 / full,
        );
        eprintln!("level {level}: shell {shell:.4}, area {bare:.3} bare, {shelled:.3} with it");
        assert!(
            (0.97..=1.03).contains(&shelled),
            "level {level}: {shelled:.3} of full detail's area with its shell {shell}"
        );
    }
    // The coarsest level is thinner without its shell: the shell is what restores it.
    let last = mesh.lods.len();
    assert!(area(last, 0.0) as f64 / full < 0.95);
    assert!(mesh.lods[last - 1].shell > 0.0);
}

#[test]
fn a_mesh_lod_shell_past_its_error_or_not_finite_is_refused() {
    for shell in [-0.01, f32::NAN, 10.0] {
        let mut package = character();
        package.meshes[0].lods[1].shell = shell;
        assert!(
            matches!(
                read_package(&write_package(&package)),
                Err(PackageError::Invalid {
                    section: "MESH_LODS",
                    field: "shell",
                    ..
                })
            ),
            "shell {shell}"
        );
    }
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
    // The pose errors the cook simplified within: a level's error less its meshes' (the
    // simplification's and the shell's).
    let errors: Vec<f32> = (lods.iter().enumerate())
        .map(|(k, l)| l.error() - package.meshes[0].lods[k].error)
        .collect();
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
