//! The demo's heroes (DESIGN.md §8, docs/ik.md): members posed on the CPU by
//! `throng_cpu_ref::hero::Hero` so IK can correct them, then submitted to the GPU as palettes
//! (`Pose::Hero`) in the crowd's batch.
//!
//! Per hero and frame: its control program → `Evaluator` → the pipeline's stages, each a
//! modifier with declared reads and writes, and the feet's contacts:
//! 1. posture ([`UniformScales`]): non-uniform local scales above the head and hands (the
//!    generated character's breathing scales the chest) made uniform of equal volume, since the
//!    solvers only work on similarity transforms and would otherwise keep the FK pose
//!    (`UnsupportedScale`);
//! 2. contacts: each foot planted on the flat ground while its contact curve (`contact/foot_l`,
//!    `contact/foot_r`, the generated character's) is on, or, in a package without them, while
//!    the animation holds it low and slow (`throng_cpu_ref::hero::contact`); the pelvis lowered
//!    when a leg needs it;
//! 3. aim ([`LookAt`]): the head looks at one target shared by all heroes, sweeping left and
//!    right in front of their row ([`Heroes::look_target`]): `solve_aim` over
//!    spine_03–neck–head with weights [`HEAD_WEIGHTS`] and yaw / pitch limits, so the chest and
//!    neck share the turn;
//! 4. reach ([`Reach`]): each hand reaches for a point circling near its shoulder (the right
//!    hand raised, the left reaching out to the side): `solve_two_bone` on
//!    upperarm–lowerarm–hand, the elbow bending toward a pole below, outside and behind it, with
//!    a soft reach near full extension;
//! 5. secondary ([`Ponytail`]): a spring chain (`update_spring`, [`PONYTAIL_SPRING`]) over the
//!    ponytail's three joints follows the head's turn with a lag and sags under gravity; its
//!    state is each hero's own and advances by the time between the hero's frames.
//!
//! The aim runs before the reach: spine_03 carries the shoulders, so a later aim would move the
//! hands off their targets. Targets are built in scene space (metres, +Y up, heroes facing +Z)
//! and mapped into each hero's component space through the inverse of its placement. After
//! construction nothing here allocates.

use glam::{Affine3A, Vec3};
use throng_cpu_ref::hero::{
    find_legs, ContactPhase, ContactSettings, Contacts, FailurePolicy, Fallback, FlatGround, Hero,
    HeroFrame, Modifier, ModifierDescriptor, ModifierError, ModifierFrame, ModifierPose, Stage,
};
use throng_cpu_ref::ik::chain::rotation_of;
use throng_cpu_ref::ik::{Aim, IkResult, IkStatus, Spring, SpringState, TwoBone};
use throng_cpu_ref::{fk, Assets, Package, Program, ProgramLimits, Skeleton, Trs};

use crate::commands::CliError;

/// Share of the remaining turn taken by spine_03, neck and head (the head finishes it).
pub const HEAD_WEIGHTS: [f32; 3] = [0.25, 0.4, 1.0];
/// Aim limits from the rest facing in root space (radians).
const YAW_LIMIT: f32 = 1.1;
const PITCH_LIMIT: f32 = 0.6;
/// The look target sweeps this far (metres) beyond each end of the row, this far in front of it.
const LOOK_SWEEP: f32 = 2.5;
const LOOK_DISTANCE: f32 = 2.0;
/// Soft zone of the arms' reach, as a fraction of the arm's length.
const ARM_SOFTNESS: f32 = 0.03;
/// Relative spread of a local scale's components below which it counts as uniform.
const UNIFORM: f32 = 1e-4;
/// Joints the heroes need, by name.
const HEAD: [&str; 3] = ["spine_03", "neck", "head"];
const ARMS: [[&str; 3]; 2] = [
    ["upperarm_l", "lowerarm_l", "hand_l"],
    ["upperarm_r", "lowerarm_r", "hand_r"],
];
const PONYTAIL: [&str; 3] = ["ponytail_01", "ponytail_02", "ponytail_03"];
/// The ponytail's spring in component space (metres, +Y up): a loose pull toward the animated
/// hang (1/s²), light damping (1/s) and gravity.
pub const PONYTAIL_SPRING: Spring = Spring {
    stiffness: 40.0,
    damping: 3.0,
    gravity: Vec3::new(0.0, -9.81, 0.0),
    weight: 1.0,
};
/// Modifier names (each hero registers one of each, two reaches).
const LOOK: &str = "look at";
const REACH: [&str; 2] = ["reach left", "reach right"];
const PONYTAIL_NAME: &str = "ponytail";

/// IK, spring and contact outcome of one hero's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeroIk {
    pub head: IkResult,
    /// Left, right.
    pub hands: [IkResult; 2],
    /// Substeps the ponytail's spring took.
    pub ponytail_substeps: u32,
    /// Distance of the ponytail's tip joint from where the animation (and the head's aim) put
    /// it, component units (metres): how far the spring lags and sags.
    pub ponytail_lag: f32,
    /// Left and right foot's contact phase.
    pub feet: [ContactPhase; 2],
}

/// Joint indices and rest measures.
struct Rig {
    head: [usize; 3],
    arms: [[usize; 3]; 2],
    ponytail: [usize; 3],
    /// Head-local axes that point forward and up in the rest pose.
    forward: Vec3,
    up: Vec3,
    /// Upper plus lower arm, scene metres (rest pose).
    arm_length: f32,
    /// Rest head and ankle heights above the feet, scene metres.
    head_height: f32,
    ankle_height: f32,
    /// Joints on the paths from the root to the head and the hands, root first.
    paths: Vec<usize>,
}

/// Every hero's pipeline, placement and last results.
pub struct Heroes {
    rig: Rig,
    heroes: Vec<Hero>,
    placements: Vec<Affine3A>,
    /// Hero `h`'s time of its last frame.
    last: Vec<Option<f64>>,
    pub results: Vec<HeroIk>,
}

fn idle() -> IkResult {
    IkResult {
        status: IkStatus::Reached,
        position_error: 0.0,
        angle_error: 0.0,
        iterations: 0,
    }
}

/// The scalar curves that plant each foot (left, right) where a package has them.
const CONTACT_CURVES: [&str; 2] = ["contact/foot_l", "contact/foot_r"];

impl Heroes {
    /// Heroes of skin `skin` of `package` at `placements` (component → scene, facing +Z, feet on
    /// y = 0), evaluating programs within `limits`, with a history slot each (hero `h`'s is
    /// `h`).
    pub fn new(
        package: &Package,
        skin: u32,
        limits: ProgramLimits,
        placements: Vec<Affine3A>,
    ) -> Result<Heroes, CliError> {
        let binding = package
            .skins
            .get(skin as usize)
            .ok_or_else(|| usage(format!("the package has no skin {skin}")))?;
        let skeleton = package
            .skeletons
            .get(binding.skeleton as usize)
            .ok_or_else(|| usage(format!("skin {skin} names a missing skeleton")))?;
        let to_scene = placements.first().copied().unwrap_or(Affine3A::IDENTITY);
        let rig = Rig::new(skeleton, &to_scene)?;
        let n = placements.len();
        let limits = ProgramLimits {
            history_slots: n,
            ..limits
        };
        // Feet planted by the package's contact curves where it has them (the generated
        // character's), else by the detector.
        let assets = package.assets(binding.skeleton).filter(|a| {
            CONTACT_CURVES
                .iter()
                .all(|c| a.curves.find(a.skeleton_index, c).is_some())
        });
        let heroes = (0..n)
            .map(|h| {
                let mut hero =
                    rig.hero(skeleton, skin as usize, binding.joints.len(), limits, h)?;
                if let Some(assets) = &assets {
                    hero.set_contact_curves(assets, &CONTACT_CURVES)
                        .map_err(|e| usage(format!("--heroes: {e}")))?;
                }
                Ok(hero)
            })
            .collect::<Result<_, CliError>>()?;
        let idle = idle();
        Ok(Heroes {
            rig,
            heroes,
            last: vec![None; n],
            results: vec![
                HeroIk {
                    head: idle,
                    hands: [idle; 2],
                    ponytail_substeps: 0,
                    ponytail_lag: 0.0,
                    feet: [ContactPhase::Free; 2],
                };
                n
            ],
            placements,
        })
    }

    /// Hero `h`'s palette of the last [`Heroes::pose`] (empty when out of range).
    pub fn palette(&self, h: usize) -> &[Affine3A] {
        self.heroes.get(h).map_or(&[], |x| x.palette())
    }

    /// Scene point every head looks at, `time` seconds in: sweeping across the front of the row.
    pub fn look_target(&self, time: f64) -> Vec3 {
        let n = self.placements.len().max(1) as f32;
        let centre = self
            .placements
            .iter()
            .map(|p| Vec3::from(p.translation))
            .sum::<Vec3>()
            / n;
        let (lo, hi) = self
            .placements
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), p| {
                (lo.min(p.translation.x), hi.max(p.translation.x))
            });
        let half_row = if lo <= hi { 0.5 * (hi - lo) } else { 0.0 };
        let t = time as f32;
        Vec3::new(
            centre.x + (half_row + LOOK_SWEEP) * (1.2 * t).sin(),
            self.rig.head_height + 0.3 * (1.9 * t).sin(),
            centre.z + LOOK_DISTANCE,
        )
    }

    /// Poses hero `h` from `program` at demo time `time` (seconds): its pipeline advanced by the
    /// time since the hero's last frame.
    pub fn pose(
        &mut self,
        h: usize,
        program: &Program,
        assets: &Assets,
        time: f64,
    ) -> Result<(), CliError> {
        let target = self.look_target(time);
        let (Some(hero), Some(&placement), Some(last)) = (
            self.heroes.get_mut(h),
            self.placements.get(h),
            self.last.get_mut(h),
        ) else {
            return Ok(());
        };
        if let Some(look) = hero.modifier_mut::<LookAt>(LOOK) {
            look.target = target;
        }
        let dt = last.map_or(0.0, |t| (time - t).max(0.0) as f32);
        *last = Some(time);
        hero.run(&HeroFrame {
            program,
            assets,
            placement,
            time,
            dt,
            ground: &FlatGround(0.0),
            contact_values: None,
        })
        .map_err(|e| CliError::Control(format!("hero {h}: {e}")))?;
        let reach = |side: usize| {
            hero.modifier::<Reach>(REACH[side])
                .map_or(idle(), |r| r.result)
        };
        let (ponytail_substeps, ponytail_lag) = hero
            .modifier::<Ponytail>(PONYTAIL_NAME)
            .map_or((0, 0.0), |p| (p.substeps, p.lag));
        let mut feet = [ContactPhase::Free; 2];
        if let Some(c) = hero.contacts() {
            for (f, foot) in feet.iter_mut().zip(c.feet()) {
                *f = foot.phase;
            }
        }
        if let Some(r) = self.results.get_mut(h) {
            *r = HeroIk {
                head: hero.modifier::<LookAt>(LOOK).map_or(idle(), |l| l.result),
                hands: [reach(0), reach(1)],
                ponytail_substeps,
                ponytail_lag,
                feet,
            };
        }
        Ok(())
    }
}

/// Posture: each non-uniform local scale on the paths from the root to the head and the hands
/// replaced by the uniform scale of equal volume. The solvers keep the FK pose of chains under
/// non-uniform scale (`UnsupportedScale`), and the generated character's breathing layer scales
/// the chest by up to (1.02, 1, 1.03).
pub struct UniformScales {
    paths: Vec<usize>,
}

impl Modifier for UniformScales {
    fn descriptor(&self) -> ModifierDescriptor {
        ModifierDescriptor {
            name: "uniform scales",
            stage: Stage::Posture,
            reads: vec![],
            writes: self.paths.clone(),
            // A 3 % scale change moves a vertex 2 m from its joint by 6 cm at most.
            bounds_expansion: 0.06,
            failure: FailurePolicy::Visual(Fallback::PassThrough),
        }
    }

    fn run(&mut self, pose: &mut ModifierPose, _: &ModifierFrame) -> Result<(), ModifierError> {
        for &j in &self.paths {
            let t = pose.local(j)?;
            let s = t.scale;
            if s.max_element() - s.min_element() > UNIFORM * s.max_element() {
                let scale = Vec3::splat((s.x * s.y * s.z).abs().cbrt());
                pose.set_local(j, Trs { scale, ..t })?;
            }
        }
        Ok(())
    }
}

/// Aim: spine_03, neck and head turn toward `target` (scene space), within the limits.
pub struct LookAt {
    chain: [usize; 3],
    forward: Vec3,
    up: Vec3,
    /// Set by the caller before each frame.
    pub target: Vec3,
    pub result: IkResult,
}

impl Modifier for LookAt {
    fn descriptor(&self) -> ModifierDescriptor {
        ModifierDescriptor {
            name: LOOK,
            stage: Stage::Aim,
            reads: vec![],
            writes: self.chain.to_vec(),
            // The head and shoulders swing about the chest: a head's length or so.
            bounds_expansion: 0.3,
            failure: FailurePolicy::Visual(Fallback::PassThrough),
        }
    }

    fn run(&mut self, pose: &mut ModifierPose, f: &ModifierFrame) -> Result<(), ModifierError> {
        let target = f.placement.inverse().transform_point3(self.target);
        let aim = Aim {
            yaw_limit: YAW_LIMIT,
            pitch_limit: PITCH_LIMIT,
            ..Aim::new(target, self.forward, self.up)
        };
        self.result = pose.aim(&aim, &self.chain, &HEAD_WEIGHTS)?;
        Ok(())
    }
}

/// Reach: arm `side` (0 left, 1 right) of hero `hero` reaches for a point circling near its
/// shoulder.
pub struct Reach {
    side: usize,
    arm: [usize; 3],
    chest: usize,
    arm_length: f32,
    /// Phase offset of this hero's circling (radians).
    phase: f32,
    /// The last frame's target and pole, scene space.
    pub target: Vec3,
    pub result: IkResult,
}

impl Reach {
    /// Scene-space target and pole at `time` for the pose in `pose` placed at `to_scene`: the
    /// left hand reaches out to the side at shoulder height, the right up above the shoulder,
    /// each circling (distances in arm lengths, at most about 0.9).
    fn goal(
        &self,
        pose: &ModifierPose,
        to_scene: &Affine3A,
        time: f64,
    ) -> Result<(Vec3, Vec3), ModifierError> {
        let at = |j: usize| -> Result<Vec3, ModifierError> {
            Ok(to_scene.transform_point3(Vec3::from(pose.component(j)?.translation)))
        };
        let [root, mid, _] = self.arm;
        let (shoulder, elbow, chest) = (at(root)?, at(mid)?, at(self.chest)?);
        let left = self.side == 0;
        let sideways = if left { Vec3::X } else { Vec3::NEG_X };
        let out = ((shoulder - chest) * Vec3::new(1.0, 0.0, 1.0))
            .try_normalize()
            .unwrap_or(sideways);
        let (fwd, up, l) = (Vec3::Z, Vec3::Y, self.arm_length);
        let a = (if left { 1.3 } else { 2.1 }) * time as f32 + self.phase;
        let target = if left {
            shoulder + l * (out * 0.6 + fwd * (0.35 + 0.15 * a.sin()) + up * 0.25 * a.cos())
        } else {
            shoulder + l * (up * (0.6 + 0.15 * a.sin()) + out * (0.3 + 0.15 * a.cos()) + fwd * 0.2)
        };
        Ok((target, elbow + l * (out * 0.5 - up * 0.6 - fwd * 0.3)))
    }
}

impl Modifier for Reach {
    fn descriptor(&self) -> ModifierDescriptor {
        ModifierDescriptor {
            name: REACH[self.side],
            stage: Stage::Reach,
            reads: vec![self.chest, self.arm[2]],
            writes: vec![self.arm[0], self.arm[1]],
            bounds_expansion: 2.0 * self.arm_length,
            failure: FailurePolicy::Visual(Fallback::PassThrough),
        }
    }

    fn run(&mut self, pose: &mut ModifierPose, f: &ModifierFrame) -> Result<(), ModifierError> {
        let (target, pole) = self.goal(pose, &f.placement, f.time)?;
        let to_component = f.placement.inverse();
        let [root, mid, tip] = self.arm;
        let solve = TwoBone {
            pole: Some(to_component.transform_point3(pole)),
            softness: ARM_SOFTNESS,
            ..TwoBone::new(root, mid, tip, to_component.transform_point3(target))
        };
        self.result = pose.two_bone(&solve)?;
        self.target = target;
        Ok(())
    }
}

/// Secondary: the ponytail's spring, advanced by the frame's `dt`.
pub struct Ponytail {
    chain: [usize; 3],
    state: SpringState,
    pub substeps: u32,
    /// Distance of the tip from where the animation put it (component units).
    pub lag: f32,
}

impl Modifier for Ponytail {
    fn descriptor(&self) -> ModifierDescriptor {
        ModifierDescriptor {
            name: PONYTAIL_NAME,
            stage: Stage::Secondary,
            reads: vec![],
            writes: self.chain.to_vec(),
            bounds_expansion: 0.3,
            failure: FailurePolicy::Visual(Fallback::PassThrough),
        }
    }

    fn run(&mut self, pose: &mut ModifierPose, f: &ModifierFrame) -> Result<(), ModifierError> {
        let tip = self.chain[2];
        let animated = Vec3::from(pose.component(tip)?.translation);
        self.substeps = pose.spring(&self.chain, &PONYTAIL_SPRING, &mut self.state, f.dt)?;
        self.lag = animated.distance(Vec3::from(pose.component(tip)?.translation));
        Ok(())
    }

    fn reset(&mut self) {
        self.state = SpringState::default();
    }
}

impl Rig {
    /// Hero `h`'s pipeline: the four modifiers and the feet's contacts.
    fn hero(
        &self,
        skeleton: &Skeleton,
        skin: usize,
        palette_len: usize,
        limits: ProgramLimits,
        h: usize,
    ) -> Result<Hero, CliError> {
        let mut hero = Hero::new(skeleton, skin, palette_len, limits);
        let modifiers: [Box<dyn Modifier>; 5] = [
            Box::new(UniformScales {
                paths: self.paths.clone(),
            }),
            Box::new(LookAt {
                chain: self.head,
                forward: self.forward,
                up: self.up,
                target: Vec3::ZERO,
                result: idle(),
            }),
            Box::new(self.reach(0, h)),
            Box::new(self.reach(1, h)),
            Box::new(Ponytail {
                chain: self.ponytail,
                state: SpringState::default(),
                substeps: 0,
                lag: 0.0,
            }),
        ];
        for m in modifiers {
            hero.register(skeleton, m)
                .map_err(|e| usage(format!("--heroes: {e}")))?;
        }
        if let Some((pelvis, legs)) = find_legs(skeleton) {
            let settings = ContactSettings::for_ankle_height(self.ankle_height);
            let contacts = Contacts::new(skeleton, pelvis, &legs, settings)
                .map_err(|e| usage(format!("--heroes: the feet's contacts: {e}")))?;
            hero.set_contacts(Some(contacts));
        }
        Ok(hero)
    }

    fn reach(&self, side: usize, h: usize) -> Reach {
        Reach {
            side,
            arm: self.arms[side],
            chest: self.head[0],
            arm_length: self.arm_length,
            phase: 1.3 * h as f32,
            target: Vec3::ZERO,
            result: idle(),
        }
    }

    /// Finds the joints and measures the rest pose under `to_scene` (a hero's placement).
    fn new(skeleton: &Skeleton, to_scene: &Affine3A) -> Result<Rig, CliError> {
        let find = |name: &str| {
            skeleton.find(name).ok_or_else(|| {
                usage(format!(
                    "--heroes needs a rig with joints named {}, {} and {}: '{name}' is missing",
                    HEAD.join(", "),
                    ARMS.iter()
                        .flatten()
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", "),
                    PONYTAIL.join(", ")
                ))
            })
        };
        let head = [find(HEAD[0])?, find(HEAD[1])?, find(HEAD[2])?];
        let mut arms = [[0; 3]; 2];
        for (arm, names) in arms.iter_mut().zip(ARMS) {
            *arm = [find(names[0])?, find(names[1])?, find(names[2])?];
        }
        let ponytail = [find(PONYTAIL[0])?, find(PONYTAIL[1])?, find(PONYTAIL[2])?];
        let mut paths = Vec::new();
        for tip in [head[2], arms[0][2], arms[1][2]] {
            let mut joint = Some(tip);
            while let Some(j) = joint {
                if !paths.contains(&j) {
                    paths.push(j);
                }
                joint = throng_cpu_ref::ik::chain::parent(skeleton, j);
            }
        }
        // Depth-first order puts parents first.
        paths.sort_unstable();
        let mut rest = vec![Affine3A::IDENTITY; skeleton.joint_count()];
        fk::local_to_component(skeleton, &skeleton.rest, &mut rest);
        let to_component = to_scene.inverse();
        let head_rotation = rotation_of(&rest[head[2]]).inverse();
        let axis =
            |v: Vec3| (head_rotation * to_component.transform_vector3(v)).normalize_or_zero();
        let scene = |j: usize| to_scene.transform_point3(Vec3::from(rest[j].translation));
        let [upper, lower, hand] = arms[0];
        let ankle_height = find_legs(skeleton).map_or(0.0, |(_, legs)| scene(legs[0].foot).y);
        Ok(Rig {
            head,
            arms,
            ponytail,
            forward: axis(Vec3::Z),
            up: axis(Vec3::Y),
            arm_length: scene(upper).distance(scene(lower)) + scene(lower).distance(scene(hand)),
            // Placements stand the feet on y = 0.
            head_height: scene(head[2]).y,
            ankle_height,
            paths,
        })
    }
}

fn usage(what: String) -> CliError {
    CliError::Usage(what)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::builtin_character;
    use throng_cpu_ref::ik::IkStatus;
    use throng_cpu_ref::PoseOp;

    /// Two heroes 2 m apart facing +Z, and a program that breathes (non-uniform chest scale)
    /// on top of a walk.
    fn setup() -> (Package, Heroes, Program) {
        let mut package = builtin_character().unwrap();
        let layout = throng_fixtures::Formation::new(&mut package, 0, 1).unwrap();
        let placements = (0..2)
            .map(|h| {
                Affine3A::from_translation(Vec3::new(2.0 * h as f32, 0.0, 3.0)) * layout.ground
            })
            .collect();
        let heroes = Heroes::new(&package, 0, ProgramLimits::default(), placements).unwrap();
        let (walk, breathe) = (
            package.find_clip("walk").unwrap() as u32,
            package.find_clip("breathe").unwrap() as u32,
        );
        let program = Program {
            ops: vec![
                PoseOp::sample(0, walk, 0.3),
                PoseOp::sample(1, breathe, 1.0),
                PoseOp::sample(2, breathe, 0.0),
                PoseOp::additive(0, 1, 2, 1.0, throng_cpu_ref::program::NO_MASK),
                PoseOp::to_component(0),
                PoseOp::palette(0),
            ],
            weights: vec![],
        };
        (package, heroes, program)
    }

    fn assets(package: &Package) -> Assets<'_> {
        package.assets(0).unwrap()
    }

    #[test]
    fn heads_look_at_the_target_and_hands_reach_their_points() {
        let (package, mut heroes, program) = setup();
        let assets = assets(&package);
        let skin = &package.skins[0];
        for frame in 0..60 {
            let time = f64::from(frame) / 30.0;
            for h in 0..2 {
                heroes.pose(h, &program, &assets, time).unwrap();
                let ik = heroes.results[h];
                let p = heroes.placements[h];
                let component = heroes.heroes[h].component();
                let at = |j: usize| p.transform_point3(Vec3::from(component[j].translation));
                // The head's forward axis, in the scene, points at the look target (within the
                // limits when the solve was limited).
                let head = heroes.rig.head[2];
                let forward = p
                    .transform_vector3(rotation_of(&component[head]) * heroes.rig.forward)
                    .normalize();
                let to_target = (heroes.look_target(time) - at(head)).normalize();
                let miss = forward.angle_between(to_target);
                match ik.head.status {
                    IkStatus::Reached => assert!(
                        miss < 2e-3,
                        "hero {h} frame {frame}: head misses by {miss} rad"
                    ),
                    IkStatus::Limited => assert!(miss < 1.2, "hero {h} frame {frame}: {miss} rad"),
                    s => panic!("hero {h} frame {frame}: head {s:?}"),
                }
                assert!(
                    (miss - ik.head.angle_error).abs() < 2e-3,
                    "reported {} vs {miss}",
                    ik.head.angle_error
                );
                // Each hand is where the solver was asked to put it.
                for (side, (r, name)) in ik.hands.iter().zip(REACH).enumerate() {
                    assert_eq!(
                        r.status,
                        IkStatus::Reached,
                        "hero {h} frame {frame} hand {side}: {r:?}"
                    );
                    let target = heroes.heroes[h].modifier::<Reach>(name).unwrap().target;
                    let tip = at(heroes.rig.arms[side][2]);
                    assert!(
                        tip.distance(target) < 1e-3,
                        "hero {h} frame {frame} hand {side}: {tip} vs {target}"
                    );
                }
                // The palette is the corrected pose's: skin joint k's component times its inverse bind.
                for (k, m) in heroes.palette(h).iter().enumerate() {
                    let expected = component[skin.joints[k] as usize] * skin.inverse_bind[k];
                    assert!(m.abs_diff_eq(expected, 1e-6), "hero {h} palette entry {k}");
                }
            }
        }
    }

    /// The ponytail lags behind the head's sweep and sags, keeping its segments' lengths; the
    /// spring takes 8 substeps for a 30 Hz frame.
    #[test]
    fn the_ponytail_swings_behind_the_head_and_keeps_its_lengths() {
        let (package, mut heroes, _) = setup();
        let assets = assets(&package);
        let walk = package.find_clip("walk").unwrap() as u32;
        let program = Program {
            ops: vec![
                PoseOp::sample(0, walk, 0.3),
                PoseOp::to_component(0),
                PoseOp::palette(0),
            ],
            weights: vec![],
        };
        let [a, b, c] = heroes.rig.ponytail;
        let rest = &assets.skeleton.rest;
        let mut most: f32 = 0.0;
        for frame in 0..90 {
            heroes
                .pose(0, &program, &assets, f64::from(frame) / 30.0)
                .unwrap();
            let r = heroes.results[0];
            assert!(r.ponytail_lag.is_finite(), "frame {frame}: {r:?}");
            assert_eq!(r.ponytail_substeps, if frame == 0 { 1 } else { 8 });
            most = most.max(r.ponytail_lag);
            let component = heroes.heroes[0].component();
            let at = |j: usize| Vec3::from(component[j].translation);
            for (p, j) in [(a, b), (b, c)] {
                let (got, want) = (at(p).distance(at(j)), rest[j].translation.length());
                assert!((got - want).abs() < 1e-4, "frame {frame}: {got} vs {want}");
            }
        }
        assert!(
            most > 0.01,
            "the ponytail never left its animated place: {most} m"
        );
    }

    /// A hero standing idle plants both feet on the ground within a few frames, and they stay
    /// where they were planted.
    #[test]
    fn a_standing_hero_plants_both_feet() {
        let (package, mut heroes, _) = setup();
        let assets = assets(&package);
        let idle = package.find_clip("idle").unwrap() as u32;
        let mut program = Program {
            ops: vec![PoseOp::sample(0, idle, 0.0), PoseOp::to_component(0)],
            weights: vec![],
        };
        let duration = package.clips[idle as usize].duration as f32;
        for frame in 0..60 {
            let time = f64::from(frame) / 30.0;
            program.ops[0] = PoseOp::sample(0, idle, (time as f32).rem_euclid(duration));
            heroes.pose(0, &program, &assets, time).unwrap();
            if frame >= 10 {
                assert_eq!(
                    heroes.results[0].feet,
                    [ContactPhase::Planted; 2],
                    "frame {frame}"
                );
                let hero = &heroes.heroes[0];
                let c = hero.contacts().unwrap();
                for (leg, f) in c.legs().iter().zip(c.feet()) {
                    let at = heroes.placements[0]
                        .transform_point3(Vec3::from(hero.component()[leg.foot].translation));
                    assert!(
                        at.distance(f.target) < 1e-3,
                        "frame {frame}: {at} vs {}",
                        f.target
                    );
                }
            }
        }
    }

    #[test]
    fn the_look_target_sweeps_across_the_row() {
        let (_, heroes, _) = setup();
        let xs: Vec<f32> = (0..200)
            .map(|k| heroes.look_target(f64::from(k) * 0.05).x)
            .collect();
        let (lo, hi) = xs
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        // Row from x = 0 to 2: the target reaches LOOK_SWEEP beyond each end.
        assert!(
            lo < 0.0 - LOOK_SWEEP + 0.05 && hi > 2.0 + LOOK_SWEEP - 0.05,
            "{lo}..{hi}"
        );
    }

    #[test]
    fn the_hero_path_allocates_nothing_after_warm_up() {
        let (package, mut heroes, program) = setup();
        let assets = assets(&package);
        for h in 0..2 {
            heroes.pose(h, &program, &assets, 0.0).unwrap();
        }
        let made = throng_fixtures::alloc::allocations(|| {
            for frame in 1..30 {
                for h in 0..2 {
                    heroes
                        .pose(h, &program, &assets, f64::from(frame) / 30.0)
                        .unwrap();
                }
            }
        });
        assert_eq!(made, 0);
    }

    #[test]
    fn a_rig_without_the_named_joints_is_refused_in_one_line() {
        let mut package = builtin_character().unwrap();
        let head = package.skeletons[0].find("head").unwrap();
        package.skeletons[0].names[head] = "skull".into();
        let err = Heroes::new(
            &package,
            0,
            ProgramLimits::default(),
            vec![Affine3A::IDENTITY],
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("'head' is missing"), "{err}");
    }
}
