//! Throng's fixed-tick control (DESIGN.md §5): clip players, events, state trees, transitions,
//! layers, sync groups and root motion. Its only presentation output is each instance's pose
//! program (DESIGN.md §4) and the root motion it asks of the game's motor.
//!
//! Time is f64 seconds and u64 ticks; everything is deterministic: the same tree, inputs and
//! ticks give the same events, root motion and programs bit for bit, on any number of threads.

pub mod blend;
pub mod events;
pub mod player;
pub mod root_motion;
pub mod span;
pub mod tree;
pub mod instance;
pub mod program;
pub mod digest;
pub mod crowd;
pub mod dump;
