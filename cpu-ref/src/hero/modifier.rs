//! Game modifiers: code the game runs inside a hero's pose pipeline (vehicle-hand placement,
//! weapon alignment, twist distribution, injury posture), each with a descriptor that declares
//! its stage, the joints it reads and writes, how far it may move the mesh, and what its failure
//! means.
//!
//! A modifier sees the pose only through [`ModifierPose`], which answers reads of declared joints
//! and takes writes to declared joints; anything else is [`ModifierError::UndeclaredRead`] or
//! [`ModifierError::UndeclaredWrite`]. [`crate::hero::Hero::register`] checks the descriptor
//! (joints that exist, no two modifiers of one stage writing one joint) and then runs the
//! modifier once on the skeleton's rest pose: a modifier that touches a joint outside its sets
//! there is refused at registration, with the joint named. At run time the same checks stay:
//! an undeclared access always rejects the hero's frame, whatever the modifier's policy.
//!
//! The descriptor model is the one of the architecture Throng follows ("expose native modifiers
//! with a descriptor containing stage, joint/curve read and write sets"); scalar curves are not
//! in the sets yet, since Throng carries no curves through programs.

use glam::{Affine3A, Quat};
use thiserror::Error;

use crate::ik::{self, chain, Aim, IkError, IkResult, Spring, SpringState, TwoBone};
use crate::{Skeleton, Trs};

/// Where in a hero's frame a modifier runs. Stages run in this order (foot contacts run between
/// [`Stage::Posture`] and [`Stage::Aim`]); modifiers of one stage run in registration order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Whole-body changes before the feet are placed: injury posture, leaning.
    Posture,
    /// Looking and aiming: heads, weapons.
    Aim,
    /// Hands and other end effectors: a hand on a rail, a steering wheel.
    Reach,
    /// What follows the final primary pose: twist distribution, springs.
    Secondary,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Posture => "posture",
            Stage::Aim => "aim",
            Stage::Reach => "reach",
            Stage::Secondary => "secondary",
        }
    }
}

/// What a visual failure falls back to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallback {
    /// The modifier's writes are undone; the rest of the frame goes on.
    PassThrough,
    /// The frame stops and the hero keeps its last valid palette.
    LastValid,
}

/// What a modifier's failure means for the hero's frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailurePolicy {
    /// The frame's output is rejected: [`crate::hero::HeroError::Rejected`], the last valid
    /// palette kept.
    Critical,
    /// Logged in the hero's bounded diagnostics, then the fallback.
    Visual(Fallback),
}

/// A modifier's declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct ModifierDescriptor {
    /// Shown in errors and diagnostics.
    pub name: &'static str,
    pub stage: Stage,
    /// Joints whose local or component transforms it reads (the joints it writes are readable
    /// too).
    pub reads: Vec<usize>,
    /// Joints whose local transforms it writes (at least one).
    pub writes: Vec<usize>,
    /// Most distance (scene metres) it moves any vertex from where the pose before it put it:
    /// the hero's culling bounds grow by the sum ([`crate::hero::Hero::bounds_expansion`]).
    pub bounds_expansion: f32,
    pub failure: FailurePolicy,
}

/// What a modifier gets besides the pose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModifierFrame {
    /// Seconds since the hero's first frame, and since its last one.
    pub time: f64,
    pub dt: f32,
    /// The hero's placement, component space → scene.
    pub placement: Affine3A,
}

/// Why a modifier failed.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum ModifierError {
    #[error("read joint {joint}, which it does not declare")]
    UndeclaredRead { joint: usize },
    #[error("wrote joint {joint}, which it does not declare")]
    UndeclaredWrite { joint: usize },
    #[error("left joint {joint} not finite")]
    NonFinite { joint: usize },
    #[error("IK: {0}")]
    Ik(#[from] IkError),
    /// The modifier's own reason.
    #[error("{0}")]
    Failed(&'static str),
}

impl ModifierError {
    /// An access outside the declared sets: always rejects the frame.
    pub fn is_undeclared(&self) -> bool {
        matches!(
            self,
            ModifierError::UndeclaredRead { .. } | ModifierError::UndeclaredWrite { .. }
        )
    }
}

/// Code run inside a hero's pose pipeline. A registered modifier stays reachable by its type
/// and name ([`crate::hero::Hero::modifier`]) for the game to feed it and read its results.
pub trait Modifier: Send + std::any::Any {
    /// Its declaration, read once at registration.
    fn descriptor(&self) -> ModifierDescriptor;
    /// Corrects `pose` for this frame.
    fn run(&mut self, pose: &mut ModifierPose, frame: &ModifierFrame) -> Result<(), ModifierError>;
    /// Forgets retained state (a teleport; also after the registration probe).
    fn reset(&mut self) {}
}

/// A set of joints as a bit set (allocated at registration).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JointSet(Vec<u64>);

impl JointSet {
    pub fn new(joints: usize, members: &[usize]) -> JointSet {
        let mut bits = vec![0u64; joints.div_ceil(64)];
        for &j in members.iter().filter(|&&j| j < joints) {
            bits[j / 64] |= 1 << (j % 64);
        }
        JointSet(bits)
    }

    pub fn contains(&self, joint: usize) -> bool {
        self.0
            .get(joint / 64)
            .is_some_and(|w| w & (1 << (joint % 64)) != 0)
    }

    pub(crate) fn members(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(k, &w)| {
            (0..64)
                .filter(move |b| w & (1 << b) != 0)
                .map(move |b| k * 64 + b)
        })
    }
}

/// A hero's pose as a modifier sees it: the local pose and its component transforms (component
/// space, the skeleton's `root_transform` excluded), through its declared sets. Every write
/// rebuilds the written joint's subtree, so later reads see it.
pub struct ModifierPose<'a> {
    skeleton: &'a Skeleton,
    local: &'a mut [Trs],
    component: &'a mut [Affine3A],
    reads: &'a JointSet,
    writes: &'a JointSet,
}

impl<'a> ModifierPose<'a> {
    pub(crate) fn new(
        skeleton: &'a Skeleton,
        local: &'a mut [Trs],
        component: &'a mut [Affine3A],
        reads: &'a JointSet,
        writes: &'a JointSet,
    ) -> ModifierPose<'a> {
        ModifierPose {
            skeleton,
            local,
            component,
            reads,
            writes,
        }
    }

    pub fn skeleton(&self) -> &Skeleton {
        self.skeleton
    }

    fn readable(&self, joint: usize) -> Result<(), ModifierError> {
        if joint < self.local.len() && (self.reads.contains(joint) || self.writes.contains(joint)) {
            Ok(())
        } else {
            Err(ModifierError::UndeclaredRead { joint })
        }
    }

    fn writable(&self, joints: &[usize]) -> Result<(), ModifierError> {
        match joints
            .iter()
            .find(|&&j| j >= self.local.len() || !self.writes.contains(j))
        {
            Some(&joint) => Err(ModifierError::UndeclaredWrite { joint }),
            None => Ok(()),
        }
    }

    /// Joint `joint`'s local transform.
    pub fn local(&self, joint: usize) -> Result<Trs, ModifierError> {
        self.readable(joint)?;
        Ok(self.local[joint])
    }

    /// Joint `joint`'s component transform.
    pub fn component(&self, joint: usize) -> Result<Affine3A, ModifierError> {
        self.readable(joint)?;
        Ok(self.component[joint])
    }

    /// Sets joint `joint`'s local transform.
    pub fn set_local(&mut self, joint: usize, value: Trs) -> Result<(), ModifierError> {
        self.writable(&[joint])?;
        self.local[joint] = value;
        chain::rebuild_subtree(self.skeleton, self.local, self.component, joint);
        Ok(())
    }

    /// Gives joint `joint` the component rotation `rotation` (its translation and scale kept).
    pub fn set_component_rotation(
        &mut self,
        joint: usize,
        rotation: Quat,
    ) -> Result<(), ModifierError> {
        self.writable(&[joint])?;
        chain::set_component_rotation(self.skeleton, self.local, self.component, joint, rotation);
        chain::rebuild_subtree(self.skeleton, self.local, self.component, joint);
        Ok(())
    }

    /// [`ik::solve_two_bone`]: writes the root and mid joints (and the tip, with an end
    /// rotation).
    pub fn two_bone(&mut self, solve: &TwoBone) -> Result<IkResult, ModifierError> {
        let tip: &[usize] = if solve.end_rotation.is_some() {
            &[solve.tip]
        } else {
            &[]
        };
        self.writable(&[solve.root, solve.mid])?;
        self.writable(tip)?;
        Ok(ik::solve_two_bone(
            self.skeleton,
            self.local,
            self.component,
            solve,
        )?)
    }

    /// [`ik::solve_aim`] over `chain` (every joint written).
    pub fn aim(
        &mut self,
        solve: &Aim,
        chain: &[usize],
        weights: &[f32],
    ) -> Result<IkResult, ModifierError> {
        self.writable(chain)?;
        Ok(ik::solve_aim(
            self.skeleton,
            self.local,
            self.component,
            solve,
            chain,
            weights,
        )?)
    }

    /// [`ik::update_spring`] over `chain` (every joint written); returns the substeps taken.
    pub fn spring(
        &mut self,
        chain: &[usize],
        spring: &Spring,
        state: &mut SpringState,
        dt: f32,
    ) -> Result<u32, ModifierError> {
        self.writable(chain)?;
        Ok(ik::update_spring(
            self.skeleton,
            self.local,
            self.component,
            chain,
            spring,
            state,
            dt,
        )?)
    }
}

/// Why [`crate::hero::Hero::register`] refused a modifier. Nothing was registered.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum RegisterError {
    #[error("modifier '{modifier}' names joint {joint}; the skeleton has {joints}")]
    UnknownJoint {
        modifier: &'static str,
        joint: usize,
        joints: usize,
    },
    #[error("modifier '{modifier}' declares no joint it writes")]
    NothingWritten { modifier: &'static str },
    #[error(
        "modifier '{modifier}' writes joint {joint}, which '{other}' of the same stage ({stage}) \
         writes too: put one of them in another stage"
    )]
    Conflict {
        modifier: &'static str,
        other: &'static str,
        joint: usize,
        stage: &'static str,
    },
    #[error("modifier '{modifier}': bounds_expansion {value} is not a finite distance >= 0")]
    BoundsExpansion { modifier: &'static str, value: f32 },
    #[error(
        "modifier '{modifier}' {error} when run on the rest pose at registration: declare it \
         in the descriptor"
    )]
    Undeclared {
        modifier: &'static str,
        error: ModifierError,
    },
}

/// What the pipeline did about a failed modifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Rejected,
    PassedThrough,
    KeptLastValid,
}

/// One failure, as kept in [`Diagnostics`].
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// The hero's frame count when it happened.
    pub frame: u64,
    pub modifier: &'static str,
    pub error: ModifierError,
    pub action: Action,
}

/// How many failures [`Diagnostics`] keeps.
pub const DIAGNOSTICS: usize = 16;

/// The last [`DIAGNOSTICS`] failures, oldest first, and how many there were in all. Bounded:
/// a modifier failing every frame never grows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Diagnostics {
    ring: [Option<Diagnostic>; DIAGNOSTICS],
    total: u64,
}

impl Diagnostics {
    pub(crate) fn push(&mut self, d: Diagnostic) {
        self.ring[(self.total % DIAGNOSTICS as u64) as usize] = Some(d);
        self.total += 1;
    }

    /// Failures since the hero was made.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The kept failures, oldest first.
    pub fn entries(&self) -> impl Iterator<Item = &Diagnostic> {
        let start = (self.total % DIAGNOSTICS as u64) as usize;
        self.ring[start..]
            .iter()
            .chain(&self.ring[..start])
            .flatten()
    }
}
