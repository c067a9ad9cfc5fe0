//! Every committed corpus file (`fuzz/corpus/<target>/`), and every regression input
//! (`fuzz/regressions/<target>/`, one per bug a fuzzer found), replayed through the entry point
//! libFuzzer ran it with: none may panic.

use std::path::{Path, PathBuf};

use throng_fuzz_entries::TARGETS;

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("a directory entry").path())
        .collect();
    files.sort();
    files
}

fn replay(kind: &str, target: &str, entry: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz")
        .join(kind)
        .join(target);
    let files = files(&dir);
    for file in &files {
        let data = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let run = std::panic::catch_unwind(|| entry(&data));
        assert!(run.is_ok(), "{} panics in {target}", file.display());
    }
    println!("{kind}/{target}: {} files replayed", files.len());
    files.len()
}

#[test]
fn every_corpus_file_replays_without_a_panic() {
    for (target, entry) in TARGETS {
        let n = replay("corpus", target, entry);
        assert!(
            n > 0,
            "fuzz/corpus/{target} is empty: run scripts/fuzz-seed.sh"
        );
    }
}

#[test]
fn every_regression_input_replays_without_a_panic() {
    let replayed: usize = TARGETS
        .iter()
        .map(|&(target, entry)| replay("regressions", target, entry))
        .sum();
    assert!(
        replayed >= 4,
        "fuzz/regressions holds the bugs the campaign found"
    );
}
