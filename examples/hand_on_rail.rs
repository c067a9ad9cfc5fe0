//! A game modifier in a hero's pose pipeline: the generated character stands idle on a train
//! platform with its right hand on a handrail that sways and slides along the carriage; the
//! hand follows the rail while the rail is within reach, and lets go (its writes passed
//! through, the failure logged) while it is not. Both feet stay planted by the hero's contacts.
//!
//! `cargo run --release --example hand_on_rail [-- --frames N]` prints one line per 10 frames
//! (docs/ik.md, "Heroes: contacts and modifiers").

use std::error::Error;

use glam::{Affine3A, Quat, Vec3};
use throng::cpu_ref::hero::{
    find_legs, ContactSettings, Contacts, FailurePolicy, Fallback, FlatGround, Hero, HeroFrame,
    Modifier, ModifierDescriptor, ModifierError, ModifierFrame, ModifierPose, Stage,
};
use throng::cpu_ref::ik::{IkStatus, TwoBone};
use throng::cpu_ref::{fk, PoseOp, Program, ProgramLimits};
use throng::fixtures::Formation;

const HZ: f64 = 60.0;

/// The right hand on a rail: a stage-`Reach` modifier writing the upper arm, forearm and hand
/// (the hand's rotation follows the rail), reading nothing else.
struct HandOnRail {
    arm: [usize; 3],
    /// Where the hand grips, scene space; set by the game every frame.
    grip: Vec3,
    /// The rail's direction, scene space.
    along: Vec3,
    /// The hand's component rotation that holds a rail along +X (captured from the rest pose).
    hold: Quat,
    /// Distance from the hand to the grip after the last frame, metres (NaN when it let go).
    pub miss: f32,
}

impl Modifier for HandOnRail {
    fn descriptor(&self) -> ModifierDescriptor {
        ModifierDescriptor {
            name: "hand on rail",
            stage: Stage::Reach,
            reads: vec![],
            writes: self.arm.to_vec(),
            // The arm's length: the hand moves at most that far from its animated place.
            bounds_expansion: 0.7,
            // Visual: a hand that cannot reach lets go; the rest of the pose is kept.
            failure: FailurePolicy::Visual(Fallback::PassThrough),
        }
    }

    fn run(&mut self, pose: &mut ModifierPose, f: &ModifierFrame) -> Result<(), ModifierError> {
        let to_component = f.placement.inverse();
        let [upper, lower, hand] = self.arm;
        let turn = Quat::from_rotation_arc(Vec3::X, self.along.normalize());
        let solve = TwoBone {
            end_rotation: Some(
                throng::cpu_ref::ik::chain::rotation_of(&to_component) * turn * self.hold,
            ),
            ..TwoBone::new(upper, lower, hand, to_component.transform_point3(self.grip))
        };
        self.miss = f32::NAN;
        let result = pose.two_bone(&solve)?;
        if result.status == IkStatus::Unreachable {
            return Err(ModifierError::Failed("the rail is out of reach"));
        }
        let at = f
            .placement
            .transform_point3(pose.component(hand)?.translation.into());
        self.miss = at.distance(self.grip);
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let frames = match std::env::args().skip_while(|a| a != "--frames").nth(1) {
        Some(n) => n.parse::<u32>()?,
        None => 240,
    };
    let mut package = throng::builtin_character()?;
    let layout = Formation::new(&mut package, 0, 1)?;
    let skeleton = &package.skeletons[0];
    let joint = |name: &str| skeleton.find(name).ok_or(format!("no joint {name}"));
    let arm = [joint("upperarm_r")?, joint("lowerarm_r")?, joint("hand_r")?];
    let placement = layout.ground;
    let mut rest = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    fk::local_to_component(skeleton, &skeleton.rest, &mut rest);
    let scene = |j: usize| placement.transform_point3(rest[j].translation.into());
    let shoulder = scene(arm[0]);

    let mut hero = Hero::new(
        skeleton,
        0,
        package.skins[0].joints.len(),
        ProgramLimits::default(),
    );
    hero.register(
        skeleton,
        Box::new(HandOnRail {
            arm,
            grip: shoulder,
            along: Vec3::X,
            hold: throng::cpu_ref::ik::chain::rotation_of(&rest[arm[2]]),
            miss: f32::NAN,
        }),
    )?;
    let (pelvis, legs) = find_legs(skeleton).ok_or("the character has no legs")?;
    let settings = ContactSettings::for_ankle_height(scene(legs[0].foot).y);
    hero.set_contacts(Some(Contacts::new(skeleton, pelvis, &legs, settings)?));
    for d in hero.descriptors() {
        println!(
            "modifier '{}': stage {}, writes {:?}, bounds +{} m",
            d.name,
            d.stage.as_str(),
            d.writes
                .iter()
                .map(|&j| &skeleton.names[j])
                .collect::<Vec<_>>(),
            d.bounds_expansion
        );
    }

    let idle = package.find_clip("idle").ok_or("no idle clip")? as u32;
    let duration = package.clips[idle as usize].duration as f32;
    let mut program = Program {
        ops: vec![PoseOp::sample(0, idle, 0.0), PoseOp::to_component(0)],
        weights: vec![],
    };
    let assets = package.assets(0).ok_or("no skeleton 0")?;
    let ground = FlatGround(0.0);
    for frame in 0..frames {
        let time = f64::from(frame) / HZ;
        let t = time as f32;
        // The rail runs along +X in front of the shoulder, swaying up and down; the grip slides
        // along it and, for a second in every four, out of the arm's reach.
        let slide = if (t % 4.0) >= 3.0 {
            1.2
        } else {
            0.2 * (0.8 * t).sin()
        };
        let grip = shoulder + Vec3::new(-0.15 + slide, 0.1 + 0.05 * (2.1 * t).sin(), 0.3);
        if let Some(rail) = hero.modifier_mut::<HandOnRail>("hand on rail") {
            rail.grip = grip;
        }
        program.ops[0] = PoseOp::sample(0, idle, t.rem_euclid(duration));
        let outcome = hero.run(&HeroFrame {
            program: &program,
            assets: &assets,
            placement,
            time,
            dt: if frame == 0 { 0.0 } else { (1.0 / HZ) as f32 },
            ground: &ground,
            contact_values: None,
        })?;
        if frame % 10 == 0 {
            let miss = hero
                .modifier::<HandOnRail>("hand on rail")
                .map_or(f32::NAN, |r| r.miss);
            let feet: Vec<&str> = hero
                .contacts()
                .map(|c| c.feet().iter().map(|f| f.phase.as_str()).collect())
                .unwrap_or_default();
            println!(
                "frame {frame:4}  t {time:5.2} s  {outcome:?}  hand {}  feet {}",
                if miss.is_nan() {
                    "let go".to_owned()
                } else {
                    format!("{:.2} mm from the grip", miss * 1e3)
                },
                feet.join(" ")
            );
        }
    }
    let d = hero.diagnostics();
    println!(
        "diagnostics: {} failure(s), the last {} kept",
        d.total(),
        d.entries().count()
    );
    if let Some(last) = d.entries().last() {
        println!(
            "  last: frame {} '{}' {} ({:?})",
            last.frame, last.modifier, last.error, last.action
        );
    }
    Ok(())
}
