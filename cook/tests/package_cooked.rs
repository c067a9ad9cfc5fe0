//! Cooked packages of the generated character and of every real skinned asset survive the
//! round trip unchanged, and report their sizes.

mod asset_support;

use asset_support::assets;

use std::path::PathBuf;
use std::time::Instant;

use throng_cook::{cook, cook_file, import_slice, read_package, write_package, Profile};

#[test]
fn generated_character_round_trips_in_every_profile() {
    let imported = import_slice(&throng_fixtures::character_glb(), "character.glb")
        .expect("character imports");
    for profile in Profile::ALL {
        let (package, _) = cook(&imported, &profile).expect("character cooks");
        let bytes = write_package(&package);
        assert_eq!(
            read_package(&bytes).as_ref(),
            Ok(&package),
            "profile {}",
            profile.name
        );
        println!(
            "character, {}: {} clips, {} bytes",
            profile.name,
            package.clips.len(),
            bytes.len()
        );
    }
}

#[test]
fn real_assets_round_trip() {
    let Some(dir) = assets() else { return };
    let mut files: Vec<PathBuf> = [dir.clone(), dir.join("mocap")]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "glb" || e == "gltf"))
        .filter(|p| !p.ends_with("InterpolationTest.glb"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no glTF files in {}", dir.display());
    for path in files {
        let (package, _) = cook_file(&path, &Profile::DEFAULT)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let start = Instant::now();
        let bytes = write_package(&package);
        let written = start.elapsed();
        let read = read_package(&bytes);
        let elapsed = start.elapsed() - written;
        assert_eq!(read.as_ref(), Ok(&package), "{}", path.display());
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        println!(
            "{name}: {} bytes, write {written:.2?}, read {elapsed:.2?} (dev profile)",
            bytes.len()
        );
    }
}
