//! Rig controls for heroes: solvers stacked in priority order (lowest first), each reading the
//! pose the one before left and blended over it by its weight. A control's retained state (a
//! spring chain's simulation) lives with it; disabling a control clears that state, so turning
//! it back on starts from the animated pose.

use glam::Affine3A;

use super::ccd::{solve_ccd, Ccd};
use super::chain::MAX_CHAIN_JOINTS;
use super::fabrik::{solve_fabrik, Fabrik};
use super::spring::{update_spring, Spring, SpringState};
use super::two_bone::{solve_two_bone, TwoBone};
use super::{check_weight, IkError, IkResult, IkStatus};
use crate::{Skeleton, Trs};

/// A chain's joints, root first, held inline so an update allocates nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Chain {
    joints: [usize; MAX_CHAIN_JOINTS],
    len: usize,
}

impl Chain {
    /// At most [`MAX_CHAIN_JOINTS`] joints (the solvers check the rest).
    pub fn new(joints: &[usize]) -> Result<Chain, IkError> {
        if joints.len() > MAX_CHAIN_JOINTS {
            return Err(IkError::ChainLength {
                len: joints.len(),
                min: 2,
                max: MAX_CHAIN_JOINTS,
            });
        }
        let mut c = Chain {
            joints: [0; MAX_CHAIN_JOINTS],
            len: joints.len(),
        };
        c.joints[..joints.len()].copy_from_slice(joints);
        Ok(c)
    }

    pub fn joints(&self) -> &[usize] {
        &self.joints[..self.len]
    }
}

/// What a control runs. Its own `weight` field is replaced by the control's.
#[derive(Clone, Debug, PartialEq)]
pub enum Solver {
    TwoBone(TwoBone),
    Fabrik(Chain, Fabrik),
    Ccd(Chain, Ccd),
    /// The state is boxed: it is ~1 KB beside ~300 B for the others.
    Spring(Chain, Spring, Box<SpringState>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Control {
    /// Lower runs first; equal priorities keep their order in the list.
    pub priority: i32,
    /// Blend over the pose before, in [0, 1].
    pub weight: f32,
    pub solver: Solver,
    enabled: bool,
}

impl Control {
    /// An enabled control.
    pub fn new(priority: i32, weight: f32, solver: Solver) -> Control {
        Control {
            priority,
            weight,
            solver,
            enabled: true,
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }
}

/// A hero's controls in priority order.
#[derive(Clone, Debug, PartialEq)]
pub struct Controls {
    controls: Vec<Control>,
    order: Vec<usize>,
}

impl Controls {
    pub fn new(controls: Vec<Control>) -> Controls {
        let mut order: Vec<usize> = (0..controls.len()).collect();
        order.sort_by_key(|&i| controls[i].priority);
        Controls { controls, order }
    }

    pub fn get(&self, index: usize) -> Option<&Control> {
        self.controls.get(index)
    }

    /// Turns control `index` on or off; turning it off clears its retained state.
    pub fn set_enabled(&mut self, index: usize, enabled: bool) {
        if let Some(c) = self.controls.get_mut(index) {
            if !enabled {
                if let Solver::Spring(_, _, state) = &mut c.solver {
                    state.reset();
                }
            }
            c.enabled = enabled;
        }
    }

    /// Runs every enabled control of non-zero weight in priority order on `local` / `component`
    /// (the FK of `local`), `dt` seconds after the last update; `results[i]` gets control `i`'s
    /// result (a disabled one's is left as it was; a spring reports `Reached` with its substeps
    /// as iterations). Stops at the first invalid control, the pose as the ones before left it.
    pub fn update(
        &mut self,
        skeleton: &Skeleton,
        local: &mut [Trs],
        component: &mut [Affine3A],
        dt: f32,
        results: &mut [IkResult],
    ) -> Result<(), IkError> {
        if results.len() < self.controls.len() {
            return Err(IkError::Length {
                what: "control results",
                len: results.len(),
                expected: self.controls.len(),
            });
        }
        for &i in &self.order {
            let c = &mut self.controls[i];
            check_weight("control weight", c.weight)?;
            if !c.enabled || c.weight == 0.0 {
                continue;
            }
            let w = c.weight;
            results[i] = match &mut c.solver {
                Solver::TwoBone(ik) => {
                    let ik = TwoBone { weight: w, ..*ik };
                    solve_two_bone(skeleton, local, component, &ik)?
                }
                Solver::Fabrik(chain, ik) => {
                    let ik = Fabrik { weight: w, ..*ik };
                    solve_fabrik(skeleton, local, component, chain.joints(), &ik)?
                }
                Solver::Ccd(chain, ik) => {
                    let ik = Ccd { weight: w, ..*ik };
                    solve_ccd(skeleton, local, component, chain.joints(), &ik)?
                }
                Solver::Spring(chain, spring, state) => {
                    let spring = Spring {
                        weight: w,
                        ..*spring
                    };
                    let steps = update_spring(
                        skeleton,
                        local,
                        component,
                        chain.joints(),
                        &spring,
                        state,
                        dt,
                    )?;
                    IkResult {
                        status: IkStatus::Reached,
                        position_error: 0.0,
                        angle_error: 0.0,
                        iterations: steps,
                    }
                }
            };
        }
        Ok(())
    }
}
