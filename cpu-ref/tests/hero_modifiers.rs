//! Game modifiers in a hero's pipeline (throng_cpu_ref::hero::modifier): descriptors checked and
//! undeclared writes refused at registration with typed errors, stages run in order whatever the
//! registration order, failures handled as their policies say (rejected, passed through, last
//! valid pose kept) with bounded diagnostics, and nothing allocated per frame.

mod ik_support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use glam::{Affine3A, Quat, Vec3};
use ik_support::character;
use throng_cpu_ref::hero::{
    Action, FailurePolicy, Fallback, FlatGround, Hero, HeroError, HeroFrame, HeroOutcome, Modifier,
    ModifierDescriptor, ModifierError, ModifierFrame, ModifierPose, RegisterError, Stage,
    DIAGNOSTICS,
};
use throng_cpu_ref::ik::TwoBone;
use throng_cpu_ref::{Package, PoseOp, Program, ProgramLimits, Trs};
use throng_fixtures::alloc::{allocations, Counting};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn joint(package: &Package, name: &str) -> usize {
    package.skeletons[0].find(name).unwrap()
}

/// What a test modifier does when it runs.
#[derive(Clone, Copy, PartialEq)]
enum Does {
    /// Turns its first written joint by 0.3 rad about X, then writes `extra` (if any).
    Turn { extra: Option<usize> },
    /// Fails with its own reason from `from_frame` on (frame counted by its own runs).
    FailFrom(u32),
    /// Writes a NaN rotation.
    Nan,
    /// Puts the right hand at a point circling in front of the shoulder (two-bone IK).
    Reach,
}

struct Test {
    name: &'static str,
    stage: Stage,
    reads: Vec<usize>,
    writes: Vec<usize>,
    failure: FailurePolicy,
    does: Does,
    runs: u32,
    /// Stamped with the global order counter each time it runs (stage-order checks).
    order: Option<(Arc<AtomicU32>, Arc<AtomicU32>)>,
}

impl Test {
    fn new(name: &'static str, stage: Stage, writes: Vec<usize>, does: Does) -> Test {
        Test {
            name,
            stage,
            reads: vec![],
            writes,
            failure: FailurePolicy::Critical,
            does,
            runs: 0,
            order: None,
        }
    }
}

impl Modifier for Test {
    fn descriptor(&self) -> ModifierDescriptor {
        ModifierDescriptor {
            name: self.name,
            stage: self.stage,
            reads: self.reads.clone(),
            writes: self.writes.clone(),
            bounds_expansion: 0.1,
            failure: self.failure,
        }
    }

    fn run(&mut self, pose: &mut ModifierPose, frame: &ModifierFrame) -> Result<(), ModifierError> {
        self.runs += 1;
        if let Some((clock, mine)) = &self.order {
            mine.store(clock.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
        }
        let first = self.writes[0];
        match self.does {
            Does::Turn { extra } => {
                let mut t = pose.local(first)?;
                t.rotation = Quat::from_rotation_x(0.3) * t.rotation;
                pose.set_local(first, t)?;
                if let Some(j) = extra {
                    let t = pose.local(first)?;
                    pose.set_local(j, t)?;
                }
                Ok(())
            }
            Does::FailFrom(k) if self.runs > k => Err(ModifierError::Failed("the rail is gone")),
            Does::FailFrom(_) => {
                let t = pose.local(first)?;
                pose.set_local(
                    first,
                    Trs {
                        rotation: Quat::from_rotation_z(0.2) * t.rotation,
                        ..t
                    },
                )?;
                Ok(())
            }
            Does::Nan => {
                let t = pose.local(first)?;
                pose.set_local(
                    first,
                    Trs {
                        translation: Vec3::NAN,
                        ..t
                    },
                )?;
                Ok(())
            }
            Does::Reach => {
                let [upper, lower, hand] = [self.writes[0], self.writes[1], self.reads[0]];
                let shoulder = Vec3::from(pose.component(upper)?.translation);
                let a = frame.time as f32 * 2.0;
                let target = shoulder + Vec3::new(0.25 * a.cos(), 0.1 * a.sin(), 0.3);
                pose.two_bone(&TwoBone::new(upper, lower, hand, target))?;
                Ok(())
            }
        }
    }

    /// Registration probes the modifier, then resets it: frames count from the first real one.
    fn reset(&mut self) {
        self.runs = 0;
    }
}

struct Rig {
    package: &'static Package,
    hero: Hero,
    program: Program,
    walk: u32,
    time: f64,
}

impl Rig {
    fn new() -> Rig {
        let package = character();
        let walk = package.find_clip("walk").unwrap() as u32;
        Rig {
            package,
            hero: Hero::new(
                &package.skeletons[0],
                0,
                package.skins[0].joints.len(),
                ProgramLimits::default(),
            ),
            program: Program {
                ops: vec![PoseOp::sample(0, walk, 0.0), PoseOp::to_component(0)],
                weights: vec![],
            },
            walk,
            time: 0.0,
        }
    }

    fn register(&mut self, m: Test) -> Result<(), RegisterError> {
        self.hero.register(&self.package.skeletons[0], Box::new(m))
    }

    fn frame(&mut self) -> Result<HeroOutcome, HeroError> {
        self.time += 1.0 / 30.0;
        self.program.ops[0] = PoseOp::sample(0, self.walk, (self.time % 1.0) as f32);
        let assets = self.package.assets(0).unwrap();
        self.hero.run(&HeroFrame {
            program: &self.program,
            assets: &assets,
            placement: Affine3A::IDENTITY,
            time: self.time,
            dt: 1.0 / 30.0,
            ground: &FlatGround(0.0),
            contact_values: None,
        })
    }
}

#[test]
fn a_modifier_writing_a_joint_it_does_not_declare_is_refused_at_registration() {
    let mut rig = Rig::new();
    let (neck, head) = (joint(rig.package, "neck"), joint(rig.package, "head"));
    let sneaky = Test::new(
        "sneaky",
        Stage::Aim,
        vec![neck],
        Does::Turn { extra: Some(head) },
    );
    assert_eq!(
        rig.register(sneaky),
        Err(RegisterError::Undeclared {
            modifier: "sneaky",
            error: ModifierError::UndeclaredWrite { joint: head },
        })
    );
    assert_eq!(rig.hero.descriptors().count(), 0);
    let err = rig
        .register(Test::new(
            "sneaky",
            Stage::Aim,
            vec![neck],
            Does::Turn { extra: Some(head) },
        ))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("wrote joint") && err.contains("declare it"),
        "{err}"
    );
}

#[test]
fn bad_descriptors_are_refused_with_what_is_wrong() {
    let mut rig = Rig::new();
    let neck = joint(rig.package, "neck");
    let joints = rig.package.skeletons[0].joint_count();
    let turn = Does::Turn { extra: None };
    assert_eq!(
        rig.register(Test::new("far", Stage::Aim, vec![joints + 3], turn)),
        Err(RegisterError::UnknownJoint {
            modifier: "far",
            joint: joints + 3,
            joints
        })
    );
    assert_eq!(
        rig.register(Test::new("idle", Stage::Aim, vec![], turn)),
        Err(RegisterError::NothingWritten { modifier: "idle" })
    );
    rig.register(Test::new("look", Stage::Aim, vec![neck], turn))
        .unwrap();
    assert_eq!(
        rig.register(Test::new("gun", Stage::Aim, vec![neck], turn)),
        Err(RegisterError::Conflict {
            modifier: "gun",
            other: "look",
            joint: neck,
            stage: "aim"
        })
    );
    // The same joint in another stage is a later correction, not a conflict.
    rig.register(Test::new("twist", Stage::Secondary, vec![neck], turn))
        .unwrap();
    assert_eq!(rig.hero.descriptors().count(), 2);
    assert!((rig.hero.bounds_expansion() - 0.2).abs() < 1e-6);
}

#[test]
fn an_undeclared_write_at_run_time_rejects_the_frame_whatever_the_policy() {
    // Data-dependent: declared sets look right on the rest pose, the write happens later.
    struct Late(usize, usize);
    impl Modifier for Late {
        fn descriptor(&self) -> ModifierDescriptor {
            ModifierDescriptor {
                name: "late",
                stage: Stage::Reach,
                reads: vec![],
                writes: vec![self.0],
                bounds_expansion: 0.0,
                failure: FailurePolicy::Visual(Fallback::PassThrough),
            }
        }
        fn run(&mut self, pose: &mut ModifierPose, f: &ModifierFrame) -> Result<(), ModifierError> {
            let target = if f.time > 0.05 { self.1 } else { self.0 };
            pose.set_local(target, Trs::IDENTITY)
        }
    }
    let mut rig = Rig::new();
    let (hand, head) = (joint(rig.package, "hand_r"), joint(rig.package, "head"));
    rig.hero
        .register(&rig.package.skeletons[0], Box::new(Late(hand, head)))
        .unwrap();
    assert_eq!(rig.frame(), Ok(HeroOutcome::Posed));
    let before = rig.hero.palette().to_vec();
    for _ in 0..3 {
        assert_eq!(
            rig.frame(),
            Err(HeroError::Rejected {
                modifier: "late",
                error: ModifierError::UndeclaredWrite { joint: head },
            })
        );
    }
    assert_eq!(
        rig.hero.palette(),
        &before[..],
        "the last valid palette is kept"
    );
    assert!(rig
        .hero
        .diagnostics()
        .entries()
        .all(|d| d.action == Action::Rejected));
}

#[test]
fn stages_run_in_order_whatever_the_registration_order() {
    let mut rig = Rig::new();
    let clock = Arc::new(AtomicU32::new(0));
    let names = ["spine_01", "neck", "hand_r", "ponytail_01"];
    let stages = [Stage::Posture, Stage::Aim, Stage::Reach, Stage::Secondary];
    let stamps: Vec<Arc<AtomicU32>> = (0..4).map(|_| Arc::new(AtomicU32::new(99))).collect();
    for k in [3, 1, 0, 2] {
        let mut m = Test::new(
            names[k],
            stages[k],
            vec![joint(rig.package, names[k])],
            Does::Turn { extra: None },
        );
        m.order = Some((clock.clone(), stamps[k].clone()));
        rig.register(m).unwrap();
    }
    clock.store(0, Ordering::SeqCst);
    rig.frame().unwrap();
    let got: Vec<u32> = stamps.iter().map(|s| s.load(Ordering::SeqCst)).collect();
    assert_eq!(got, [0, 1, 2, 3]);
    let order: Vec<Stage> = rig.hero.descriptors().map(|d| d.stage).collect();
    assert_eq!(order, stages);
}

#[test]
fn a_visual_failure_keeps_the_last_valid_pose_and_is_logged_within_bounds() {
    let mut rig = Rig::new();
    let hand = joint(rig.package, "hand_r");
    let mut m = Test::new("rail", Stage::Reach, vec![hand], Does::FailFrom(3));
    m.failure = FailurePolicy::Visual(Fallback::LastValid);
    rig.register(m).unwrap();
    for _ in 0..3 {
        assert_eq!(rig.frame(), Ok(HeroOutcome::Posed));
    }
    let valid = rig.hero.palette().to_vec();
    for _ in 0..40 {
        assert_eq!(rig.frame(), Ok(HeroOutcome::KeptLastValid));
        assert_eq!(rig.hero.palette(), &valid[..]);
    }
    let d = rig.hero.diagnostics();
    assert_eq!(d.total(), 40);
    assert_eq!(d.entries().count(), DIAGNOSTICS);
    let frames: Vec<u64> = d.entries().map(|e| e.frame).collect();
    assert_eq!(
        frames,
        (28..=43).collect::<Vec<u64>>(),
        "the newest, oldest first"
    );
    assert!(d.entries().all(|e| e.action == Action::KeptLastValid
        && e.error == ModifierError::Failed("the rail is gone")));
}

#[test]
fn a_pass_through_undoes_only_the_failing_modifier() {
    let run = |failing: Option<FailurePolicy>| {
        let mut rig = Rig::new();
        let (spine, hand) = (joint(rig.package, "spine_01"), joint(rig.package, "hand_r"));
        rig.register(Test::new(
            "lean",
            Stage::Posture,
            vec![spine],
            Does::Turn { extra: None },
        ))
        .unwrap();
        if let Some(policy) = failing {
            let mut m = Test::new("broken", Stage::Reach, vec![hand], Does::Nan);
            m.failure = policy;
            rig.register(m).unwrap();
        }
        let out = rig.frame();
        (
            out,
            rig.hero.palette().to_vec(),
            rig.hero.diagnostics().total(),
        )
    };
    let (clean, palette, _) = run(None);
    assert_eq!(clean, Ok(HeroOutcome::Posed));
    let (out, passed, logged) = run(Some(FailurePolicy::Visual(Fallback::PassThrough)));
    assert_eq!(out, Ok(HeroOutcome::Posed));
    assert_eq!(passed, palette, "the lean stays, the NaN hand is undone");
    assert_eq!(logged, 1);
    let (out, _, _) = run(Some(FailurePolicy::Critical));
    assert_eq!(
        out,
        Err(HeroError::Rejected {
            modifier: "broken",
            error: ModifierError::NonFinite {
                joint: joint(character(), "hand_r")
            },
        })
    );
}

#[test]
fn a_reach_modifier_puts_the_hand_on_its_target_and_allocates_nothing() {
    let mut rig = Rig::new();
    let p = rig.package;
    let (upper, lower, hand) = (
        joint(p, "upperarm_r"),
        joint(p, "lowerarm_r"),
        joint(p, "hand_r"),
    );
    let mut m = Test::new("reach", Stage::Reach, vec![upper, lower], Does::Reach);
    m.reads = vec![hand];
    rig.register(m).unwrap();
    rig.frame().unwrap();
    let made = allocations(|| {
        for _ in 0..60 {
            assert_eq!(rig.frame(), Ok(HeroOutcome::Posed));
        }
    });
    assert_eq!(made, 0);
    let c = rig.hero.component();
    let a = rig.time as f32 * 2.0;
    let want = Vec3::from(c[upper].translation) + Vec3::new(0.25 * a.cos(), 0.1 * a.sin(), 0.3);
    let got = Vec3::from(c[hand].translation);
    assert!(got.distance(want) < 1e-3, "{got} vs {want}");
    let skin = &p.skins[0];
    for (k, m) in rig.hero.palette().iter().enumerate() {
        let expected = c[skin.joints[k] as usize] * skin.inverse_bind[k];
        assert!(m.abs_diff_eq(expected, 1e-6), "palette entry {k}");
    }
}
