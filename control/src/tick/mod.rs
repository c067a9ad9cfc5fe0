//! The phases of [`crate::instance::Controller::tick`], one module each, in the tick's numbered
//! order (the module doc of [`crate::instance`]); the tick itself and the state it runs on live
//! there.

mod advance;
mod fade;
pub(crate) mod matching;
pub(crate) mod motion;
mod select;
pub(crate) mod sync;
