//! Cook-time retargeting (docs/retargeting.md): the identity retarget reproduces its source, every
//! shared CMU clip lands on the generated character and on the Knight within the bars
//! (bone directions 2° mean, feet sliding 1 cm during still contacts, no NaN, codec within its
//! threshold), and bad profiles fail with the line and what to do.

use std::path::{Path, PathBuf};

use glam::Vec3A;
use throng_cook::retarget::{self, report, Binding, RetargetError, RetargetProfile, Source};
use throng_cook::{import_file, Imported, Profile};
use throng_cpu_ref::curve::sample_exact;
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::Skeleton;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/retarget")).join(name)
}

fn character() -> Imported {
    throng_cook::import_slice(&throng_fixtures::character_glb(), "character.glb").unwrap()
}

fn knight() -> Option<Imported> {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/assets/KnightCharacter.glb"
    ));
    if !path.exists() {
        assert!(
            std::env::var("THRONG_REQUIRE_ASSETS").as_deref() != Ok("1"),
            "{} is missing and THRONG_REQUIRE_ASSETS=1",
            path.display()
        );
        eprintln!("skipping the Knight: {} is missing", path.display());
        return None;
    }
    Some(import_file(path).unwrap())
}

/// Scene positions of every joint of `skeleton` posed by `local`.
fn positions(skeleton: &Skeleton, local: &[throng_cpu_ref::Trs]) -> Vec<Vec3A> {
    let mut component = vec![glam::Affine3A::IDENTITY; skeleton.joint_count()];
    local_to_component(skeleton, local, &mut component);
    component
        .iter()
        .map(|c| (skeleton.root_transform * *c).translation)
        .collect()
}

fn extent(points: &[Vec3A]) -> f32 {
    let lo = points.iter().fold(Vec3A::splat(f32::MAX), |a, p| a.min(*p));
    let hi = points.iter().fold(Vec3A::splat(f32::MIN), |a, p| a.max(*p));
    (hi - lo).length()
}

/// A profile mapping every joint of `skeleton` onto itself, translations copied.
fn identity_profile(skeleton: &Skeleton) -> String {
    let mut text = format!(
        "version = 1\n[source]\n[target]\n[translation]\npolicy = \"all\"\njoint = \"{}\"\nscale = 1.0\n",
        skeleton.names[0]
    );
    for (k, name) in skeleton.names.iter().enumerate() {
        text +=
            &format!("[[chains]]\nname = \"j{k}\"\nsource = [\"{name}\"]\ntarget = [\"{name}\"]\n");
    }
    text
}

#[test]
fn the_identity_retarget_reproduces_the_source_within_1e_5_of_its_extent() {
    let mut checked = 0;
    for path in throng_fixtures::shared_mocap() {
        let imported = import_file(&path).unwrap();
        let source = Source::from_imported(&imported);
        let skeleton = &imported.package.skeletons[0];
        let profile = RetargetProfile::parse(&identity_profile(skeleton), "identity.toml").unwrap();
        let binding = Binding::new(&profile, &source, &imported).unwrap();
        let (motion, _) = &source.clips[0];
        let clip = retarget::retarget_clip(&binding, skeleton, motion, skeleton);
        let mut a = skeleton.rest.clone();
        let mut b = skeleton.rest.clone();
        let mut worst = 0.0f32;
        let mut size = 0.0f32;
        for time in motion.times().into_iter().step_by(7) {
            motion.sample(skeleton, time, &mut a);
            sample_exact(&clip, skeleton, time as f32, &mut b);
            let (pa, pb) = (positions(skeleton, &a), positions(skeleton, &b));
            size = size.max(extent(&pa));
            for (x, y) in pa.iter().zip(&pb) {
                worst = worst.max((*x - *y).length());
            }
            for (x, y) in a.iter().zip(&b) {
                let (p, q) = (x.rotation, y.rotation);
                let off = (p - q).length().min((p + q).length());
                assert!(
                    off < 1e-5,
                    "{}: rotation off by {off} at {time}",
                    path.display()
                );
            }
        }
        println!(
            "{}: identity error {:.2e} of extent {size:.3}",
            path.display(),
            worst / size
        );
        assert!(
            worst <= 1e-5 * size,
            "{}: {worst} > 1e-5 × {size}",
            path.display()
        );
        checked += 1;
    }
    assert!(checked > 0 || std::env::var("THRONG_REQUIRE_ASSETS").as_deref() != Ok("1"));
}

/// Retargets, cooks and compresses every clip of `source` onto `target`; the report.
fn run(profile: &Path, source: &Path, target: &Imported) -> report::RetargetReport {
    let profile = RetargetProfile::load(profile).unwrap();
    let source = Source::from_imported(&import_file(source).unwrap());
    let (imported, binding) = retarget::retarget(&profile, &source, target, &[]).unwrap();
    let (mut package, mut cooked) = throng_cook::cook(&imported, &Profile::STANDARD).unwrap();
    throng_cook::compress(&mut package, &mut cooked, &Profile::STANDARD);
    report::measure(&binding, &source, &package, &cooked, &profile.file)
}

/// Holds every clip of `report` to the bars: every chain to 2° mean direction error, the feet to
/// the 1 cm slide bar in the source's still contacts, no non-finite value, the codec within its
/// contract; returns the clips' still contacts.
fn assert_bars(report: &report::RetargetReport) -> usize {
    print!("{report}");
    assert!(!report.clips.is_empty(), "no clip was retargeted");
    for c in &report.clips {
        let what = format!("{} on {}", c.name, report.target);
        assert_eq!(c.non_finite, 0, "{what}: non-finite pose values");
        assert!(
            c.direction_error_deg.mean <= 2.0,
            "{what}: direction error {:?}",
            c.direction_error_deg
        );
        for chain in &c.chains {
            let d = &chain.direction_error_deg;
            assert!(
                d.mean <= 2.0,
                "{what}: chain {} direction error {d:?} over 2°",
                chain.name
            );
        }
        assert!(
            c.foot_slide_cm <= 1.0,
            "{what}: feet slide {} cm in still contacts",
            c.foot_slide_cm
        );
        if let (Some(e), Some(t)) = (c.codec_error_cm, c.codec_threshold_cm) {
            // The codec's contract on mocap: p99 within the threshold, max under ten times it.
            assert!(
                e <= t * 10.0,
                "{what}: codec error {e} cm against threshold {t} cm"
            );
        }
    }
    report.clips.iter().map(|c| c.still_contacts).sum()
}

/// Every shared mocap clip retargeted onto `target` by `profile` within the bars, with at least
/// one still contact among them to hold the feet to (when the clips are there).
fn assert_every_clip_within_the_bars(profile: &str, target: &Imported) {
    let clips = throng_fixtures::shared_mocap();
    let still: usize = clips
        .iter()
        .map(|path| assert_bars(&run(&fixture(profile), path, target)))
        .sum();
    println!("{profile}: {still} still contacts held to the 1 cm slide bar");
    assert!(
        still > 0 || clips.is_empty(),
        "{profile}: no still contact held to the bar"
    );
}

#[test]
fn every_mocap_clip_lands_on_the_generated_character_within_the_bars() {
    // Every chain within 2° mean, the planted legs too: the hips follow the planted feet, and
    // IK takes out only what they cannot.
    assert_every_clip_within_the_bars("cmu-to-character.toml", &character());
}

#[test]
fn every_mocap_clip_lands_on_the_knight_within_the_bars() {
    let Some(target) = knight() else { return };
    // The Knight's hips are three times as wide as the source's (scaled) and its legs of other
    // proportions: its feet stay planted because its hips move and turn to keep them, not its
    // legs (docs/retargeting.md, "Planted feet").
    assert_every_clip_within_the_bars("cmu-to-knight.toml", &target);
}

fn profile_error(text: &str) -> String {
    match RetargetProfile::parse(text, "p.toml") {
        Err(e) => e.to_string(),
        Ok(p) => {
            let path = throng_fixtures::shared_mocap();
            let Some(first) = path.first() else {
                return "no mocap".into();
            };
            let source = Source::from_imported(&import_file(first).unwrap());
            match Binding::new(&p, &source, &character()) {
                Err(e) => e.to_string(),
                Ok(_) => "accepted".into(),
            }
        }
    }
}

const HEAD: &str = "version = 1\n[source]\n[target]\n[translation]\npolicy = \"root\"\njoint = \"pelvis\"\nscale = 1.0\n";

#[test]
fn a_profile_naming_a_joint_the_rig_lacks_fails_with_its_line_and_the_joints_it_has() {
    let text = format!(
        "{HEAD}[[chains]]\nname = \"spine\"\nsource = [\"Hips\"]\ntarget = [\"pelvis_x\"]\n"
    );
    let e = profile_error(&text);
    if e == "no mocap" {
        return;
    }
    assert!(e.contains("p.toml line 8"), "{e}");
    assert!(
        e.contains("'pelvis_x' is not in the target skeleton"),
        "{e}"
    );
    assert!(
        e.contains("spine_01"),
        "the error lists the joints there are: {e}"
    );
}

#[test]
fn malformed_profiles_fail_with_the_key_and_what_is_allowed() {
    let cases = [
        (HEAD.replace("\"root\"", "\"hips\""), "not a translation policy"),
        (HEAD.replace("version = 1", "version = 9"), "9 is not supported"),
        (format!("{HEAD}[[chains]]\nname = \"a\"\nsource = [\"Hips\", \"Spine\"]\ntarget = [\"pelvis\"]\n"), "maps joints one to one"),
        (format!("{HEAD}[[chains]]\nname = \"a\"\nsource = [\"Hips\"]\ntarget = [\"pelvis\"]\ntwist = 2.0\n"), "twist 2 must lie in [0, 1]"),
        (HEAD.replace("scale = 1.0", "scale = \"arms\""), "not a scale"),
        (HEAD.replace("scale = 1.0\n", ""), "needs `legs"),
        (format!("{HEAD}[source2]\n"), "unknown field"),
    ];
    for (text, expected) in cases {
        let e = RetargetProfile::parse(&text, "p.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(expected), "{expected:?} not in {e:?}");
        assert!(e.starts_with("p.toml line "), "{e}");
    }
}

#[test]
fn a_non_positive_scale_falls_back_to_1_with_a_warning() {
    let text = format!(
        "{}[[chains]]\nname = \"spine\"\nsource = [\"Hips\"]\ntarget = [\"pelvis\"]\n",
        HEAD.replace("1.0", "-2.0")
    );
    let Some(first) = throng_fixtures::shared_mocap().into_iter().next() else {
        return;
    };
    let source = Source::from_imported(&import_file(&first).unwrap());
    let p = RetargetProfile::parse(&text, "p.toml").unwrap();
    let binding = Binding::new(&p, &source, &character()).unwrap();
    assert_eq!(binding.scale, 1.0);
    assert!(
        binding
            .warnings
            .iter()
            .any(|w| w.contains("-2") && w.contains("using 1")),
        "{:?}",
        binding.warnings
    );
}

#[test]
fn a_cooked_source_whose_root_motion_was_extracted_is_refused() {
    let (package, _) = throng_cook::cook(&character(), &Profile::STANDARD).unwrap();
    assert!(
        package.clips.iter().any(|c| c.root_motion.is_some()),
        "the character has a root-motion clip"
    );
    match Source::from_package(package, "character.throng") {
        Err(RetargetError::Source { reason, .. }) => {
            assert!(reason.contains("retarget from the glTF"), "{reason}")
        }
        other => panic!("accepted: {:?}", other.map(|s| s.clips.len())),
    }
}
