//! Throng's scalar CPU reference: the asset model (skeletons, skin bindings, skinned meshes,
//! cooked clips), glTF-exact source-curve sampling, the pose program and its interpreter,
//! forward kinematics, palettes and linear blend skinning.
//!
//! Conventions (DESIGN.md §2): right-handed, +Y up, metres, column vectors, Hamilton quaternions
//! stored (x, y, z, w). Local transforms are [`Trs`]; component (model-space) transforms are
//! `glam::Affine3A`. Nothing here allocates while evaluating: callers own every output buffer.

pub mod bounds;
pub mod chain;
pub mod clip;
pub mod codec;
pub mod curve;
pub mod error_metric;
pub mod fk;
pub mod frame;
pub mod hero;
pub mod ik;
pub mod impostor;
pub mod inertialize;
pub mod interpreter;
pub mod lod;
pub mod morph;
pub mod motion;
pub mod motion_db;
pub mod package;
pub mod palette;
pub mod present;
pub mod program;
pub mod retained;
pub mod scalar;
pub mod significance;
pub mod skeleton;
pub mod skin;
pub mod skinning;
pub mod stagger;
pub mod transform;
pub mod values;

pub use clip::{
    Clip, ClipEvent, LoopPolicy, RootMotion, RootMotionPolicy, SubTrack, SubTrackKind, SyncMarker,
};
pub use curve::{Channel, ChannelPath, Interpolation, SourceClip};
pub use frame::{
    Batch, BatchLayout, BatchOutput, CpuRuntime, FrameError, Instance, Outputs, PackageId, Pose,
    SkinnedVertex, SlotClaims,
};
pub use interpreter::Evaluator;
pub use lod::SkeletonLod;
pub use morph::{MeshNode, MeshRef, MorphTarget, NodePrimitive, Scene, StaticMesh, WeightClip};
pub use package::Package;
pub use program::{Assets, Mask, PoseOp, Program, ProgramError, ProgramLimits};
pub use scalar::{
    Composition, CurveChannel, CurveSelection, CurveTrack, CurveValue, Curves, QuantizedTrack,
};
pub use skeleton::{Skeleton, SkeletonError, NO_PARENT};
pub use skin::{MeshLod, SkinBinding, SkinnedMesh};
pub use transform::Trs;
