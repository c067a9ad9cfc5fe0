//! An instance posed as a hero every tick for the commands that follow one instance
//! (`throng simulate --trace`, `throng follow`): its compiled program evaluated, its root motion
//! accumulated into its placement, its feet's contacts on flat ground at the rest pose's lowest
//! joint (`throng_cpu_ref::hero::contact`), and the last ticks' contact phases.

use std::collections::VecDeque;

use glam::Affine3A;
use throng_control::instance::Controller;
use throng_cpu_ref::hero::{
    find_legs, ContactPhase, ContactSettings, Contacts, FlatGround, Hero, HeroFrame, ReleaseReason,
};
use throng_cpu_ref::{fk, PoseOp, Program, ProgramLimits};

use super::CliError;

/// A foot's contact phase and why it last released.
type FootPhase = (ContactPhase, Option<ReleaseReason>);

/// With `--trace`: the instance posed as a hero every tick (its compiled program evaluated, its
/// root motion accumulated into its placement, its feet's contacts on flat ground at the rest
/// pose's lowest joint, `throng_cpu_ref::hero::contact`), and the last ticks' contact phases.
pub struct Feet {
    pub hero: Hero,
    program: Program,
    pub placement: Affine3A,
    pub ground: FlatGround,
    /// The ankle joints (left, right) and their heights in the rest pose, scene space.
    pub ankles: [usize; 2],
    pub rest_heights: [f32; 2],
    names: [String; 2],
    ring: VecDeque<(u64, [FootPhase; 2])>,
    capacity: usize,
}

impl Feet {
    /// `None` when the skeleton has no pelvis and two legs `find_legs` knows by name. `band`:
    /// how far above its rest height an ankle may plant (default: `ContactSettings`'s, 3 cm;
    /// mocap's stance ankles stand higher: a run lands on the forefoot).
    pub fn new(
        ctl: &Controller,
        skeleton: u32,
        capacity: usize,
        limits: ProgramLimits,
        band: Option<f32>,
    ) -> Option<Feet> {
        let package = &ctl.package;
        let rig = package.skeletons.get(skeleton as usize)?;
        let (pelvis, legs) = find_legs(rig)?;
        let skin = package.skins.iter().position(|b| b.skeleton == skeleton);
        let palette = skin.map_or(0, |k| package.skins[k].joints.len());
        let mut rest = vec![Affine3A::IDENTITY; rig.joint_count()];
        fk::local_to_component(rig, &rig.rest, &mut rest);
        let height = |m: &Affine3A| rig.root_transform.transform_point3(m.translation.into()).y;
        let floor = rest.iter().map(height).fold(f32::INFINITY, f32::min);
        let ankle = height(&rest[legs[0].foot]) - floor;
        let mut settings = ContactSettings::for_ankle_height(ankle);
        if let Some(band) = band {
            let lift = ankle + band - settings.contact_height;
            settings.contact_height += lift;
            settings.release_height += lift;
        }
        let mut hero = Hero::new(
            rig,
            skin.unwrap_or(0),
            palette,
            ProgramLimits {
                history_slots: 1,
                ..limits
            },
        );
        hero.set_contacts(Some(Contacts::new(rig, pelvis, &legs, settings).ok()?));
        Some(Feet {
            hero,
            program: Program::default(),
            placement: rig.root_transform,
            ground: FlatGround(floor),
            ankles: legs.map(|l| l.foot),
            rest_heights: legs.map(|l| height(&rest[l.foot])),
            names: legs.map(|l| rig.names[l.foot].clone()),
            ring: VecDeque::with_capacity(capacity),
            capacity,
        })
    }

    /// Poses tick `tick`'s program, its root motion `motion` applied first.
    pub fn tick(
        &mut self,
        ctl: &Controller,
        tick: u64,
        (ops, weights): (&[PoseOp], &[f32]),
        motion: throng_control::root_motion::Motion,
        rate: f64,
    ) -> Result<(), CliError> {
        let (t, q) = motion;
        self.placement *= Affine3A::from_rotation_translation(q, t);
        self.program.ops.clear();
        self.program.ops.extend_from_slice(ops);
        self.program.weights.clear();
        self.program.weights.extend_from_slice(weights);
        let assets =
            (ctl.package.assets(0)).ok_or_else(|| control("the package has no skeleton"))?;
        self.hero
            .run(&HeroFrame {
                program: &self.program,
                assets: &assets,
                placement: self.placement,
                time: tick as f64 / rate,
                dt: (1.0 / rate) as f32,
                ground: &self.ground,
                contact_values: None,
            })
            .map_err(|e| control(format!("tick {tick}: the feet: {e}")))?;
        let feet = self.hero.contacts().map(|c| c.feet()).unwrap_or_default();
        let phase = |i: usize| {
            feet.get(i)
                .map_or((ContactPhase::Free, None), |f| (f.phase, f.reason))
        };
        if self.ring.len() == self.capacity {
            self.ring.pop_front();
        }
        if self.capacity > 0 {
            self.ring.push_back((tick, [phase(0), phase(1)]));
        }
        Ok(())
    }

    /// Tick `tick`'s phases: `foot_l planted  foot_r releasing (lifted)`.
    pub fn line(&self, tick: u64) -> Option<String> {
        let (_, phases) = self.ring.iter().find(|(t, _)| *t == tick)?;
        let parts: Vec<String> = self
            .names
            .iter()
            .zip(phases)
            .map(|(name, (phase, reason))| match (phase, reason) {
                (ContactPhase::Releasing, Some(r)) => {
                    format!("{name} {} ({})", phase.as_str(), r.as_str())
                }
                _ => format!("{name} {}", phase.as_str()),
            })
            .collect();
        Some(parts.join("  "))
    }
}

fn control(e: impl std::fmt::Display) -> CliError {
    CliError::Control(e.to_string())
}
