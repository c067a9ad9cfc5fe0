//! A hero's pose pipeline on the CPU (DESIGN.md §8, docs/ik.md "Heroes"): its program evaluated,
//! then game modifiers and foot contacts in stage order, then its skin's palette, which joins
//! the crowd's skinning as a [`crate::Pose::Hero`].
//!
//! ```text
//! program ─► Evaluator ─► local + FK ─► Posture ─► contacts ─► Aim ─► Reach ─► Secondary ─► palette
//!                                       (modifiers)  (feet, pelvis)  (modifiers ...)
//! ```
//!
//! A frame either completes, and the palette is its pose's, or it does not, and the palette stays
//! the last valid one: a program or IK error, or a modifier's critical failure, is an error; a
//! modifier's visual failure falls back as its descriptor says ([`modifier::FailurePolicy`]) and
//! is kept in the bounded [`Diagnostics`]. After the first frame nothing allocates.

pub mod contact;
pub mod modifier;

use glam::Affine3A;
use thiserror::Error;

pub use contact::{
    find_legs, ContactPhase, ContactSettings, Contacts, FlatGround, FootContact, GroundHit,
    GroundQuery, PlatformRef, ReleaseReason,
};
pub use modifier::{
    Action, Diagnostic, Diagnostics, FailurePolicy, Fallback, JointSet, Modifier,
    ModifierDescriptor, ModifierError, ModifierFrame, ModifierPose, RegisterError, Stage,
    DIAGNOSTICS,
};

use crate::fk;
use crate::ik::IkError;
use crate::inertialize::History;
use crate::palette::build_palette;
use crate::{Assets, Evaluator, Program, ProgramError, ProgramLimits, Skeleton, Trs};

/// One frame's inputs.
#[derive(Clone, Copy)]
pub struct HeroFrame<'a> {
    pub program: &'a Program,
    pub assets: &'a Assets<'a>,
    /// Component space → scene (a similarity).
    pub placement: Affine3A,
    /// Seconds since the hero's first frame, and since its last one (≥ 0).
    pub time: f64,
    pub dt: f32,
    /// The world the feet stand on.
    pub ground: &'a dyn GroundQuery,
    /// Authored contact values, one per leg in [0, 1] (contact curves or windows), or `None`
    /// for the hero's contact curves ([`Hero::set_contact_curves`]) or, without those, the
    /// detector ([`contact`]).
    pub contact_values: Option<&'a [f32]>,
}

/// How a frame ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeroOutcome {
    /// The palette is this frame's pose (possibly with modifiers passed through).
    Posed,
    /// A modifier failed visually with [`Fallback::LastValid`]: the palette is the last valid
    /// one.
    KeptLastValid,
}

/// Why a frame produced no pose. The palette is the last valid one.
#[derive(Debug, Error, PartialEq)]
pub enum HeroError {
    #[error("program: {0}")]
    Program(#[from] ProgramError),
    #[error("the program's final pose is not one of the hero's skeleton ({joints} joints)")]
    Skeleton { joints: usize },
    #[error("foot contacts: {0}")]
    Contacts(IkError),
    #[error("no curve channel '{name}' on the hero's skeleton (it has {channels}): a contact curve must be one the package's clips carry")]
    ContactCurve { name: String, channels: usize },
    #[error("modifier '{modifier}' failed critically: {error}")]
    Rejected {
        modifier: &'static str,
        error: ModifierError,
    },
}

struct Registered {
    modifier: Box<dyn Modifier>,
    descriptor: ModifierDescriptor,
    reads: JointSet,
    writes: JointSet,
}

/// One hero: its evaluator and history, pose buffers, modifiers, contacts and palette.
pub struct Hero {
    skin: usize,
    evaluator: Evaluator,
    history: History,
    local: Vec<Trs>,
    component: Vec<Affine3A>,
    /// The local pose before the running modifier, for a pass-through.
    saved: Vec<Trs>,
    palette: Vec<Affine3A>,
    /// In stage order, registration order within a stage.
    modifiers: Vec<Registered>,
    contacts: Option<Contacts>,
    diagnostics: Diagnostics,
    frames: u64,
    /// The evaluator's sizes, to rebuild it with curve capacity ([`Hero::set_contact_curves`]).
    limits: ProgramLimits,
    palette_len: usize,
    /// Per leg, the index among the skeleton's curve channels of the curve that gates its
    /// contact; empty for none.
    contact_curves: Vec<usize>,
    /// This frame's values of `contact_curves`, clamped to [0, 1].
    contact_values: Vec<f32>,
}

impl Hero {
    /// A hero of `skeleton` showing skin `skin` (`palette_len` entries), evaluating programs
    /// within `limits` (its inertialization history has `limits.history_slots` slots). The
    /// palette starts as the rest pose's identity entries.
    pub fn new(
        skeleton: &Skeleton,
        skin: usize,
        palette_len: usize,
        limits: ProgramLimits,
    ) -> Hero {
        let joints = skeleton.joint_count();
        Hero {
            skin,
            evaluator: Evaluator::new(limits, joints, palette_len),
            history: History::new(limits.history_slots, joints),
            local: skeleton.rest.clone(),
            component: vec![Affine3A::IDENTITY; joints],
            saved: skeleton.rest.clone(),
            palette: vec![Affine3A::IDENTITY; palette_len],
            modifiers: Vec::new(),
            contacts: None,
            diagnostics: Diagnostics::default(),
            frames: 0,
            limits,
            palette_len,
            contact_curves: Vec::new(),
            contact_values: Vec::new(),
        }
    }

    /// Gates each leg's contact (in [`Contacts::legs`] order) by the scalar curve of that name
    /// of `assets`' skeleton, evaluated by the hero's program each frame (e.g. the generated
    /// character's `contact/foot_l` and `contact/foot_r`), unless a frame gives
    /// [`HeroFrame::contact_values`] itself; no names: the detector again. The evaluator is
    /// rebuilt to carry the skeleton's curves.
    pub fn set_contact_curves(&mut self, assets: &Assets, names: &[&str]) -> Result<(), HeroError> {
        let channels = assets.curves.range(assets.skeleton_index);
        let ids = names
            .iter()
            .map(|name| {
                let id = assets.curves.find(assets.skeleton_index, name);
                id.map(|id| id as usize - channels.start)
                    .ok_or_else(|| HeroError::ContactCurve {
                        name: (*name).to_string(),
                        channels: channels.len(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let joints = assets.skeleton.joint_count();
        let capacity = if ids.is_empty() { 0 } else { channels.len() };
        self.evaluator = Evaluator::with_curves(self.limits, joints, self.palette_len, capacity);
        self.contact_values = vec![0.0; ids.len()];
        self.contact_curves = ids;
        Ok(())
    }

    /// Places the feet from now on (`None`: no contacts).
    pub fn set_contacts(&mut self, contacts: Option<Contacts>) {
        self.contacts = contacts;
    }

    pub fn contacts(&self) -> Option<&Contacts> {
        self.contacts.as_ref()
    }

    pub fn contacts_mut(&mut self) -> Option<&mut Contacts> {
        self.contacts.as_mut()
    }

    /// Registers `modifier` for `skeleton` (the hero's): checks its descriptor, runs it once on
    /// the rest pose (then resets it) and refuses it if it touched a joint outside its sets.
    pub fn register(
        &mut self,
        skeleton: &Skeleton,
        mut modifier: Box<dyn Modifier>,
    ) -> Result<(), RegisterError> {
        let d = modifier.descriptor();
        let joints = skeleton.joint_count();
        let name = d.name;
        if let Some(&joint) = d.reads.iter().chain(&d.writes).find(|&&j| j >= joints) {
            return Err(RegisterError::UnknownJoint {
                modifier: name,
                joint,
                joints,
            });
        }
        if d.writes.is_empty() {
            return Err(RegisterError::NothingWritten { modifier: name });
        }
        if !d.bounds_expansion.is_finite() || d.bounds_expansion < 0.0 {
            return Err(RegisterError::BoundsExpansion {
                modifier: name,
                value: d.bounds_expansion,
            });
        }
        for other in self
            .modifiers
            .iter()
            .filter(|r| r.descriptor.stage == d.stage)
        {
            if let Some(&joint) = d.writes.iter().find(|&&j| other.writes.contains(j)) {
                return Err(RegisterError::Conflict {
                    modifier: name,
                    other: other.descriptor.name,
                    joint,
                    stage: d.stage.as_str(),
                });
            }
        }
        let (reads, writes) = (
            JointSet::new(joints, &d.reads),
            JointSet::new(joints, &d.writes),
        );
        let mut local = skeleton.rest.clone();
        let mut component = vec![Affine3A::IDENTITY; joints];
        fk::local_to_component(skeleton, &local, &mut component);
        let probe = ModifierFrame {
            time: 0.0,
            dt: 0.0,
            placement: Affine3A::IDENTITY,
        };
        let ran = modifier.run(
            &mut ModifierPose::new(skeleton, &mut local, &mut component, &reads, &writes),
            &probe,
        );
        modifier.reset();
        // Only undeclared accesses are judged: a modifier may fail on the rest pose for its own
        // reasons.
        if let Err(error) = ran {
            if error.is_undeclared() {
                return Err(RegisterError::Undeclared {
                    modifier: name,
                    error,
                });
            }
        }
        let at = self
            .modifiers
            .iter()
            .position(|r| r.descriptor.stage > d.stage)
            .unwrap_or(self.modifiers.len());
        self.modifiers.insert(
            at,
            Registered {
                modifier,
                descriptor: d,
                reads,
                writes,
            },
        );
        Ok(())
    }

    /// The sum of the registered modifiers' bounds expansions, scene metres: grow the hero's
    /// culling bounds by it.
    pub fn bounds_expansion(&self) -> f32 {
        self.modifiers
            .iter()
            .map(|r| r.descriptor.bounds_expansion)
            .sum()
    }

    /// The registered modifier named `name`, if it is a `T`.
    pub fn modifier<T: Modifier>(&self, name: &str) -> Option<&T> {
        let r = self.modifiers.iter().find(|r| r.descriptor.name == name)?;
        (r.modifier.as_ref() as &dyn std::any::Any).downcast_ref()
    }

    /// The registered modifier named `name`, if it is a `T`, to change its inputs.
    pub fn modifier_mut<T: Modifier>(&mut self, name: &str) -> Option<&mut T> {
        let r = self
            .modifiers
            .iter_mut()
            .find(|r| r.descriptor.name == name)?;
        (r.modifier.as_mut() as &mut dyn std::any::Any).downcast_mut()
    }

    /// Every registered descriptor, in the order they run.
    pub fn descriptors(&self) -> impl Iterator<Item = &ModifierDescriptor> {
        self.modifiers.iter().map(|r| &r.descriptor)
    }

    /// Runs one frame. On `Ok(Posed)` the palette and pose are this frame's.
    pub fn run(&mut self, frame: &HeroFrame) -> Result<HeroOutcome, HeroError> {
        self.frames += 1;
        let skeleton = frame.assets.skeleton;
        self.evaluator
            .run_with_history(frame.program, frame.assets, &mut self.history)?;
        let joints = skeleton.joint_count();
        let local = self
            .evaluator
            .final_local(frame.program)
            .filter(|l| l.len() == joints && self.local.len() == joints)
            .ok_or(HeroError::Skeleton { joints })?;
        self.local.copy_from_slice(local);
        self.component.copy_from_slice(self.evaluator.component());
        let curves = self.evaluator.curves();
        for (value, &k) in self.contact_values.iter_mut().zip(&self.contact_curves) {
            *value = curves.get(k).map_or(0.0, |v| v.clamp(0.0, 1.0));
        }

        let ctx = ModifierFrame {
            time: frame.time,
            dt: frame.dt,
            placement: frame.placement,
        };
        for stage in [Stage::Posture, Stage::Aim, Stage::Reach, Stage::Secondary] {
            if stage == Stage::Aim {
                let authored = match frame.contact_values {
                    Some(given) => Some(given),
                    None if !self.contact_curves.is_empty() => Some(&self.contact_values[..]),
                    None => None,
                };
                if let Some(contacts) = &mut self.contacts {
                    contacts
                        .update(
                            skeleton,
                            &mut self.local,
                            &mut self.component,
                            &frame.placement,
                            frame.ground,
                            authored,
                            frame.dt,
                        )
                        .map_err(HeroError::Contacts)?;
                }
            }
            if self.run_stage(skeleton, stage, &ctx)? == HeroOutcome::KeptLastValid {
                return Ok(HeroOutcome::KeptLastValid);
            }
        }
        if let Some(skin) = frame.assets.skins.get(self.skin) {
            if skin.joints.len() == self.palette.len() {
                build_palette(skin, &self.component, &mut self.palette);
            }
        }
        Ok(HeroOutcome::Posed)
    }

    /// Runs the modifiers of `stage`, each against a copy of the pose before it.
    fn run_stage(
        &mut self,
        skeleton: &Skeleton,
        stage: Stage,
        ctx: &ModifierFrame,
    ) -> Result<HeroOutcome, HeroError> {
        for r in self
            .modifiers
            .iter_mut()
            .filter(|r| r.descriptor.stage == stage)
        {
            self.saved.copy_from_slice(&self.local);
            let ran = r
                .modifier
                .run(
                    &mut ModifierPose::new(
                        skeleton,
                        &mut self.local,
                        &mut self.component,
                        &r.reads,
                        &r.writes,
                    ),
                    ctx,
                )
                .and_then(
                    |()| match r.writes.members().find(|&j| !self.local[j].is_finite()) {
                        Some(joint) => Err(ModifierError::NonFinite { joint }),
                        None => Ok(()),
                    },
                );
            let Err(error) = ran else { continue };
            let d = &r.descriptor;
            let action = match d.failure {
                _ if error.is_undeclared() => Action::Rejected,
                FailurePolicy::Critical => Action::Rejected,
                FailurePolicy::Visual(Fallback::PassThrough) => Action::PassedThrough,
                FailurePolicy::Visual(Fallback::LastValid) => Action::KeptLastValid,
            };
            self.diagnostics.push(Diagnostic {
                frame: self.frames,
                modifier: d.name,
                error: error.clone(),
                action,
            });
            match action {
                Action::Rejected => {
                    return Err(HeroError::Rejected {
                        modifier: d.name,
                        error,
                    })
                }
                Action::KeptLastValid => return Ok(HeroOutcome::KeptLastValid),
                Action::PassedThrough => {
                    self.local.copy_from_slice(&self.saved);
                    fk::local_to_component(skeleton, &self.local, &mut self.component);
                }
            }
        }
        Ok(HeroOutcome::Posed)
    }

    /// The palette of the last valid frame (identity entries before the first).
    pub fn palette(&self) -> &[Affine3A] {
        &self.palette
    }

    /// The pose of the last frame run (after its modifiers and contacts).
    pub fn local(&self) -> &[Trs] {
        &self.local
    }

    pub fn component(&self) -> &[Affine3A] {
        &self.component
    }

    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }

    /// Forgets the contacts' and the modifiers' retained state (a teleport).
    pub fn reset(&mut self) {
        if let Some(c) = &mut self.contacts {
            c.reset();
        }
        for r in &mut self.modifiers {
            r.modifier.reset();
        }
    }
}
