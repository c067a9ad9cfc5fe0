//! Throng's fixed-tick control (DESIGN.md §5; docs/state-tree.md): clip players, events, state
//! trees, transitions, layers, sync groups and root motion. Its only presentation output is
//! each instance's pose program (DESIGN.md §4) and the root motion it asks of the game's motor.
//!
//! Time is f64 seconds and u64 ticks; everything is deterministic: the same tree, inputs and
//! ticks give the same events, root motion and programs bit for bit, on any number of threads.
//!
//! Entry points: [`tree::load`] a tree for a package, bind it in an [`instance::Controller`],
//! then tick one [`instance::InstanceState`] or a whole [`crowd::Crowd`]. [`sprite`] plays
//! flipbook clips of an atlas on the same tick.

pub mod blend;
pub mod crowd;
pub mod curve_events;
pub mod digest;
pub mod dump;
pub mod events;
pub mod instance;
pub mod player;
pub mod program;
pub mod record;
pub mod root_motion;
pub mod script;
pub mod socket;
pub mod span;
pub mod sprite;
mod tick;
pub mod trace;
pub mod tree;
mod undo;

pub use tick::matching::{stop_segments, MatchQuery, StopSegment, NEAR_ROWS};
