//! libFuzzer over [`throng_fuzz_entries::state_tree`] (its doc states the property).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| throng_fuzz_entries::state_tree(data));
