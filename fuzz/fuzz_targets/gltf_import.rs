//! libFuzzer over [`throng_fuzz_entries::gltf_import`] (its doc states the property).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| throng_fuzz_entries::gltf_import(data));
