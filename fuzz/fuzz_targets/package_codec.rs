//! Fuzz target over the package reader and the codec decoder: arbitrary bytes (the content hash
//! restamped, so mutations of a seed package reach the section and codec checks) must read as a
//! package or a typed error, never a panic; a package that reads must sample every clip, in
//! either encoding, to finite poses at any time.

#![no_main]

use libfuzzer_sys::fuzz_target;
use throng_cpu_ref::clip::sample_clip;
use throng_cpu_ref::Trs;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    if bytes.len() >= 32 {
        let hash = xxhash_rust::xxh3::xxh3_64(&bytes[32..]);
        bytes[16..24].copy_from_slice(&hash.to_le_bytes());
    }
    let Ok(package) = throng_cook::read_package(&bytes) else { return };
    for clip in &package.clips {
        let Some(skeleton) = package.skeletons.get(clip.skeleton as usize) else { continue };
        let mut pose = vec![Trs::IDENTITY; skeleton.joint_count()];
        for k in 0..=16 {
            let t = clip.duration as f32 * k as f32 / 16.0;
            sample_clip(clip, skeleton, t, &mut pose);
            assert!(pose.iter().all(Trs::is_finite), "clip {} at {t} s", clip.name);
        }
    }
});
