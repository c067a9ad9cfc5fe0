//! The fuzz targets' entry points. Each takes arbitrary bytes and returns normally, or panics
//! when a property of Throng's input contracts (DESIGN.md §10: bad input never panics) breaks:
//! - [`package_codec`]: a package reads or is refused with a typed error; one that reads
//!   samples every clip, in either encoding, to finite poses at any time;
//! - [`gltf_import`]: a `.glb`, or a `.gltf` with a sidecar and one external buffer, imports or
//!   is refused; one that imports cooks or is refused, and a cooked package compresses, writes
//!   and reads back equal to itself;
//! - [`program_eval`]: a pose program against the generated character validates or is refused;
//!   one that validates runs, and its pose and palette are finite;
//! - [`state_tree`]: a state-tree TOML for the generated character loads or is refused; one that
//!   loads ticks, and every program it compiles validates against the limits it declares and
//!   evaluates to finite palettes.
//!
//! `fuzz/` runs them under libFuzzer (`cargo +nightly fuzz run <name>`); this crate's test
//! replays every committed corpus file through them on stable (docs/reliability.md, "Fuzzing").

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use throng_control::instance::Controller;
use throng_control::tree::{InputType, Value};
use throng_cook::Profile;
use throng_cpu_ref::clip::sample_clip;
use throng_cpu_ref::inertialize::History;
use throng_cpu_ref::{Evaluator, Mask, Package, PoseOp, Program, ProgramLimits, Trs};

/// A fuzz target's entry point: returns, or panics on a broken property.
pub type Entry = fn(&[u8]);

/// The entry points by target name, as `fuzz/fuzz_targets/` and `fuzz/corpus/` name them.
pub const TARGETS: [(&str, Entry); 4] = [
    ("package_codec", package_codec),
    ("gltf_import", gltf_import),
    ("program_eval", program_eval),
    ("state_tree", state_tree),
];

/// Reads `data` as a package, its content hash restamped so that mutations of a seed package
/// reach the section and codec checks.
pub fn package_codec(data: &[u8]) {
    let mut bytes = data.to_vec();
    if bytes.len() >= 32 {
        let hash = xxhash_rust::xxh3::xxh3_64(&bytes[32..]);
        bytes[16..24].copy_from_slice(&hash.to_le_bytes());
    }
    let Ok(package) = throng_cook::read_package(&bytes) else {
        return;
    };
    for clip in &package.clips {
        let Some(skeleton) = package.skeletons.get(clip.skeleton as usize) else {
            continue;
        };
        let mut pose = vec![Trs::IDENTITY; skeleton.joint_count()];
        for k in 0..=16 {
            let t = clip.duration as f32 * k as f32 / 16.0;
            sample_clip(clip, skeleton, t, &mut pose);
            assert!(
                pose.iter().all(Trs::is_finite),
                "clip {} at {t} s",
                clip.name
            );
        }
    }
}

/// Separates the parts of a [`gltf_import`] input that is not a `.glb`.
pub const PART_SEPARATOR: u8 = 0;

/// A `.glb` (the input starts with its magic) is imported from memory. Anything else is
/// `JSON \0 SIDECAR \0 BUFFER`: written as `model.gltf`, `model.throng.toml` and `model.bin`
/// into a directory of this process's own and imported from there, so the sidecar and external
/// buffers are read as `throng cook` reads them.
pub fn gltf_import(data: &[u8]) {
    let imported = if data.starts_with(b"glTF") {
        throng_cook::import_slice(data, "fuzz.glb")
    } else {
        let mut parts = data.splitn(3, |&b| b == PART_SEPARATOR);
        let (json, sidecar, buffer) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        let dir = ScratchDir::new();
        let model = dir.0.join("model.gltf");
        let written = std::fs::write(&model, json)
            .and_then(|_| std::fs::write(dir.0.join("model.throng.toml"), sidecar))
            .and_then(|_| std::fs::write(dir.0.join("model.bin"), buffer));
        written.unwrap_or_else(|e| panic!("cannot write {}: {e}", dir.0.display()));
        throng_cook::import_file(&model)
    };
    let Ok(imported) = imported else { return };
    let profile = Profile::CROWD;
    let Ok((mut package, mut report)) = throng_cook::cook(&imported, &profile) else {
        return;
    };
    throng_cook::compress(&mut package, &mut report, &profile);
    let bytes = throng_cook::write_package(&package);
    match throng_cook::read_package(&bytes) {
        Ok(read) => assert!(
            read == package,
            "the package read back differs from the cooked"
        ),
        Err(e) => panic!("a cooked package does not read back: {e}"),
    }
}

/// A directory of one [`gltf_import`] call's own, removed when dropped.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> Self {
        static CALLS: AtomicU64 = AtomicU64::new(0);
        let call = CALLS.fetch_add(1, Ordering::Relaxed);
        let name = format!("throng-fuzz-{}-{call}", std::process::id());
        let dir = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        ScratchDir(dir)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The generated character, cooked and compressed as `throng demo` loads it, with two masks
/// (all joints at 0.5, and none) for Override and Additive ops to name.
fn character() -> &'static Package {
    static PACKAGE: OnceLock<Package> = OnceLock::new();
    PACKAGE.get_or_init(|| {
        let glb = throng_fixtures::character_glb();
        let imported = throng_cook::import_slice(&glb, "character.glb").expect("the character");
        let profile = Profile::STANDARD;
        let (mut package, mut report) = throng_cook::cook(&imported, &profile).expect("cooks");
        throng_cook::compress(&mut package, &mut report, &profile);
        let skeleton = &package.skeletons[0];
        let half = Mask::uniform("half", 0, skeleton, 0.5);
        let none = Mask::uniform("none", 0, skeleton, 0.0);
        package.masks.extend([half, none]);
        package
    })
}

/// Capacities of [`program_eval`]'s evaluator: twice the default op and weight counts, and two
/// history slots.
const FUZZ_LIMITS: ProgramLimits = ProgramLimits {
    max_ops: 64,
    max_registers: 8,
    max_weights: 64,
    history_slots: 2,
};

/// `data` is a weight count byte, that many little-endian f32 weights, then 32-byte ops. An
/// op's fields are taken raw when its first byte's top bit is set; otherwise its code is
/// reduced to 1..=9 and its indices below 12 (or [`throng_cpu_ref::program::NO_MASK`]), so that most
/// programs get past the cheap checks into evaluation.
pub fn program_eval(data: &[u8]) {
    let Some((&count, rest)) = data.split_first() else {
        return;
    };
    let n_weights = (count as usize).min(rest.len() / 4);
    let (weights, ops) = rest.split_at(n_weights * 4);
    let program = Program {
        weights: weights
            .chunks_exact(4)
            .map(|w| f32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect(),
        ops: ops.chunks_exact(32).map(decode_op).collect(),
    };
    let package = character();
    let assets = package.assets(0).expect("the character's skeleton");
    let joints = assets.skeleton.joint_count();
    let palette = FUZZ_LIMITS.max_ops * package.skins[0].joints.len();
    let mut evaluator = Evaluator::new(FUZZ_LIMITS, joints, palette);
    let mut history = History::new(FUZZ_LIMITS.history_slots, joints);
    let valid = program.validate(&FUZZ_LIMITS, &assets);
    let ran = evaluator.run_with_history(&program, &assets, &mut history);
    match (valid, ran) {
        (Ok(()), Ok(())) => check_outputs(&evaluator, &program),
        (Err(_), Err(_)) => {}
        (Ok(()), Err(e)) => panic!("a valid program failed to run: {e}"),
        (Err(e), Ok(())) => panic!("an invalid program ran: {e}"),
    }
}

fn decode_op(bytes: &[u8]) -> PoseOp {
    let word = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let raw = bytes[0] & 0x80 != 0;
    let index = |w: u32| match (raw, w) {
        (true, w) => w,
        (false, w) if w >= 0xFFFF_FF00 => throng_cpu_ref::program::NO_MASK,
        (false, w) => w % 12,
    };
    PoseOp {
        code: if raw { word(0) } else { 1 + word(0) % 9 },
        dst: index(word(4)),
        a: index(word(8)),
        b: index(word(12)),
        c: index(word(16)),
        d: index(word(20)),
        weight: f32::from_bits(word(24)),
        time: f32::from_bits(word(28)),
    }
}

fn check_outputs(evaluator: &Evaluator, program: &Program) {
    if let Some(local) = evaluator.final_local(program) {
        assert!(local.iter().all(Trs::is_finite), "a non-finite local pose");
    }
    let finite = |m: &glam::Affine3A| m.is_finite();
    assert!(
        evaluator.component().iter().all(finite),
        "a non-finite component pose"
    );
    assert!(
        evaluator.palette().iter().all(finite),
        "a non-finite palette"
    );
}

/// Ticks of [`state_tree`]: three seconds at 30 Hz, its inputs moved at each second.
const TREE_TICKS: u32 = 90;
const TREE_HZ: f64 = 30.0;

/// `data` is a state tree's TOML for the generated character. A tree that loads is bound and
/// one instance ticks; at each second every input moves to a value drawn from `data`'s hash.
pub fn state_tree(data: &[u8]) {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let package = character();
    let Ok(tree) = throng_control::tree::load(source, "fuzz.toml", package, 0) else {
        return;
    };
    let inputs: Vec<(String, InputType, f64, f64)> = tree
        .inputs
        .iter()
        .map(|i| (i.name.clone(), i.ty, i.min, i.max))
        .collect();
    let Ok(ctl) = Controller::new(tree, package.clone(), TREE_HZ, 16) else {
        return;
    };
    let Ok(mut s) = ctl.spawn(0) else { return };
    let (mut scratch, mut out) = (ctl.scratch(), ctl.output());
    // The history slot of an inertializing tree is the instance id: one instance, one slot.
    let limits = ProgramLimits {
        history_slots: 1,
        ..ctl.limits()
    };
    let assets = ctl.package.assets(0).expect("the character's skeleton");
    let joints = assets.skeleton.joint_count();
    let palette = ctl.package.skins[0].joints.len();
    let mut evaluator = Evaluator::new(limits, joints, palette);
    let mut history = History::new(limits.history_slots, joints);
    let mut player_weights = vec![0.0; ctl.tree.player_slots()];
    let mut program = Program {
        ops: vec![PoseOp::rest(0); limits.max_ops],
        weights: vec![0.0; limits.max_weights],
    };
    let mut draw = xxhash_rust::xxh3::xxh3_64(data);
    for tick in 0..TREE_TICKS {
        if tick % TREE_HZ as u32 == 0 {
            for (name, ty, min, max) in &inputs {
                draw = draw
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let unit = (draw >> 11) as f64 / (1u64 << 53) as f64;
                let value = match ty {
                    InputType::Bool => Value::Bool(draw & 1 == 1),
                    InputType::Int => Value::Int((min + unit * (max - min)).round() as i64),
                    InputType::Float => Value::Float(min + unit * (max - min)),
                };
                let _ = ctl.set_input(&mut s, name, value);
            }
        }
        if ctl.tick(&mut s, &mut scratch, &mut out).is_err() {
            return;
        }
        program.ops.resize(limits.max_ops, PoseOp::rest(0));
        program.weights.resize(limits.max_weights, 0.0);
        let (n, m) = throng_control::program::compile(
            &ctl,
            &s,
            &mut player_weights,
            &mut program.ops,
            &mut program.weights,
        );
        program.ops.truncate(n);
        program.weights.truncate(m);
        if let Err(e) = evaluator.run_with_history(&program, &assets, &mut history) {
            panic!("tick {tick}: the tree compiled a program that does not run: {e}");
        }
        check_outputs(&evaluator, &program);
    }
}
