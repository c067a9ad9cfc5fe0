//! Motion-matching databases (throng_cook::motion_db, throng_cpu_ref::motion_db) built from the
//! generated character's walk and run: features that say where the clip goes and how its feet
//! move, the fast search giving the exhaustive answer near every frame, a package round trip,
//! and a record of another layout version refused.

use glam::Vec3;
use throng_cook::motion_db::{build_database, DatabaseSettings};
use throng_cook::{read_package, write_package, PackageError, Profile};
use throng_cpu_ref::motion_db::{tag, Filter, MotionDatabase, FEATURES};
use throng_cpu_ref::Package;

fn character() -> Package {
    let imported =
        throng_cook::import_slice(&throng_fixtures::character_glb(), "character").unwrap();
    throng_cook::cook(&imported, &Profile::DEFAULT).unwrap().0
}

fn locomotion(package: &Package) -> MotionDatabase {
    let clips = ["walk", "run"].map(|n| package.find_clip(n).unwrap() as u32);
    build_database(package, 0, &clips, &[], &DatabaseSettings::default()).unwrap()
}

/// The clip's mean horizontal root speed (m/s), from its root motion.
fn speed(package: &Package, name: &str) -> f32 {
    let clip = &package.clips[package.find_clip(name).unwrap()];
    let (p, _) = throng_cpu_ref::clip::sample_root_motion(clip, clip.duration as f32).unwrap();
    Vec3::new(p.x, 0.0, p.z).length() / clip.duration as f32
}

#[test]
fn a_walk_s_features_point_where_it_goes_and_its_tags_say_walk_or_run() {
    let package = character();
    let db = locomotion(&package);
    assert_eq!(db.clips.len(), 2);
    let (walk, run) = (speed(&package, "walk"), speed(&package, "run"));
    for (entry, v, kind) in [(db.clips[0], walk, tag::WALK), (db.clips[1], run, tag::RUN)] {
        for row in entry.first..entry.first + entry.playable {
            let raw = db.raw(row as usize).unwrap();
            // Straight ahead: one second on, the trajectory is v metres along +Z, facing +Z.
            let (x, z) = (raw[4], raw[5]);
            assert!(
                x.abs() < 0.05 * v && (z - v).abs() < 0.1 * v,
                "row {row}: ({x}, {z}) at {v} m/s"
            );
            assert!(
                (raw[11] - 1.0).abs() < 1e-3,
                "row {row}: facing z {}",
                raw[11]
            );
            // The hips move forward at about the clip's speed.
            assert!(
                (raw[26] - v).abs() < 0.5 * v,
                "row {row}: hip {} at {v}",
                raw[26]
            );
            assert_eq!(
                db.tags[row as usize] & (tag::WALK | tag::RUN),
                kind,
                "row {row}"
            );
        }
        // Over a cycle, each foot spends time nearly still on the ground (the planted phase).
        let still = (entry.first..entry.first + entry.frames)
            .filter(|&r| {
                let raw = db.raw(r as usize).unwrap();
                Vec3::from_slice(&raw[18..21]).length() < 0.35 * v
            })
            .count();
        assert!(
            still > 0,
            "the left foot never stands still in clip {}",
            entry.clip
        );
    }
}

#[test]
fn the_fast_search_agrees_with_the_exhaustive_one_near_every_frame() {
    let package = character();
    let db = locomotion(&package);
    let mut disagreements = 0;
    for r in 0..db.rows.len() {
        let raw = db.raw(r).unwrap();
        let query = db.normalize(&std::array::from_fn(|f| {
            raw[f] + 0.05 * ((r * 7 + f * 13) as f32).sin()
        }));
        for tags in [0, tag::WALK, tag::RUN] {
            let filter = Filter::tags(tags);
            let want = db.search_exhaustive(&query, &filter);
            if db.search(&query, &filter, Some(r as u32)) != want
                || db.search(&query, &filter, None) != want
            {
                disagreements += 1;
            }
        }
    }
    assert_eq!(disagreements, 0);
}

#[test]
fn a_database_survives_the_package_round_trip_and_another_version_is_refused() {
    let mut package = character();
    package.motion_databases = vec![locomotion(&package)];
    let bytes = write_package(&package);
    let read = read_package(&bytes).unwrap();
    assert_eq!(read.motion_databases, package.motion_databases);
    assert_eq!(read.motion_databases[0].rows[5].len(), FEATURES);

    // The record's version word follows its skeleton word, after the section's 8-byte header.
    let kind = throng_cook::package::SectionKind::MotionDatabases as u32;
    let count = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let entry = (0..count)
        .map(|i| 32 + i * 24)
        .find(|&e| u32::from_le_bytes(bytes[e..e + 4].try_into().unwrap()) == kind)
        .expect("a MOTION_DATABASES section");
    let offset = u64::from_le_bytes(bytes[entry + 8..entry + 16].try_into().unwrap()) as usize;
    let mut changed = bytes.clone();
    changed[offset + 12..offset + 16].copy_from_slice(&7u32.to_le_bytes());
    let hash = xxhash_rust::xxh3::xxh3_64(&changed[32..]);
    changed[16..24].copy_from_slice(&hash.to_le_bytes());
    match read_package(&changed) {
        Err(PackageError::Invalid {
            section,
            field,
            what,
            ..
        }) => {
            assert_eq!((section, field), ("MOTION_DATABASES", "version"));
            assert!(what.contains("throng motion-database"), "{what}");
        }
        other => panic!("expected the version refused, got {:?}", other.map(|_| ())),
    }
}
