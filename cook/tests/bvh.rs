//! BVH import against real data: the 15 shared CMU files import, and 02_01.bvh (first frame
//! skipped, CMU's scale) matches `cmu_02_01_walk.glb`, converted from it independently, within
//! 1e-5 of the pose's extent at every frame; its clip cooks.

mod asset_support;

use std::path::Path;

use asset_support::{extent, positions};
use throng_cook::{import_bvh_file, import_file, BvhOptions, Profile};
use throng_cpu_ref::curve::sample_exact;

const CMU: BvhOptions = BvhOptions {
    scale: throng_cook::import::bvh::CMU_SCALE,
    skip: 1,
};

#[test]
fn every_shared_bvh_file_imports_and_cooks() {
    let files = throng_fixtures::shared_bvh();
    for path in &files {
        let imported = import_bvh_file(path, CMU).unwrap_or_else(|e| panic!("{e}"));
        let skeleton = &imported.package.skeletons[0];
        assert_eq!(skeleton.joint_count(), 31, "{}", path.display());
        let clip = &imported.source_clips[0];
        assert!(
            clip.duration > 1.0,
            "{}: {} s",
            path.display(),
            clip.duration
        );
        assert!(clip
            .channels
            .iter()
            .all(|c| c.values.iter().all(|v| v.is_finite())));
        let (package, _) = throng_cook::cook(&imported, &Profile::DEFAULT)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(package.clips.len(), 1);
    }
    assert!(
        files.len() == 15 || std::env::var("THRONG_REQUIRE_ASSETS").as_deref() != Ok("1"),
        "{} BVH files",
        files.len()
    );
}

#[test]
fn cmu_02_01_matches_its_independent_gltf_conversion_within_1e_5_of_its_extent() {
    let files = throng_fixtures::shared_bvh();
    let Some(bvh) = files.iter().find(|p| p.ends_with("02_01.bvh")) else {
        return;
    };
    let glb = bvh
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("cmu_02_01_walk.glb");
    assert!(glb.exists(), "{} is missing", glb.display());
    let ours = import_bvh_file(bvh, CMU).unwrap();
    let theirs = import_file(Path::new(&glb)).unwrap();
    let (a, b) = (&ours.package.skeletons[0], &theirs.package.skeletons[0]);
    // Joints by name: the conversion's skeleton may order or root them differently.
    let map: Vec<usize> = a
        .names
        .iter()
        .map(|n| {
            b.find(n)
                .unwrap_or_else(|| panic!("the glTF has no joint {n}"))
        })
        .collect();
    let (ca, cb) = (&ours.source_clips[0], &theirs.source_clips[0]);
    let keys = ca.channels[0].times.len();
    assert_eq!(keys, cb.channels[0].times.len(), "frames after the skip");
    let (mut la, mut lb) = (a.rest.clone(), b.rest.clone());
    let (mut worst, mut frames) = (0.0f32, 0);
    for k in 0..keys {
        sample_exact(ca, a, ca.channels[0].times[k], &mut la);
        sample_exact(cb, b, cb.channels[0].times[k], &mut lb);
        let (pa, pb) = (positions(a, &la), positions(b, &lb));
        let size = extent(&pb);
        for (j, p) in pa.iter().enumerate() {
            let off = (*p - pb[map[j]]).length() / size;
            worst = worst.max(off);
        }
        frames += 1;
    }
    println!("02_01.bvh against cmu_02_01_walk.glb: worst {worst:.2e} of the extent over {frames} frames");
    assert!(worst <= 1e-5, "{worst:e} of the extent");
}
