//! The pose budget: which instances of a crowd re-evaluate their pose this frame when only so
//! many joints may be posed, filled by significance with a minimum service rate so that nobody
//! starves. The others take [`crate::Pose::Keep`] and show their last pose at this frame's
//! placement, as with the update-rate stagger ([`crate::stagger`]), whose fixed rates this
//! replaces with a budget.
//!
//! Per frame, in order: every instance that must run (its program captures inertialization
//! history, or it was never evaluated) and every instance not evaluated for `max_stale` frames
//! is served, whatever that costs (the minimum service rate is a guarantee, so it may overrun
//! the budget, and the report says by how much); then the others by significance, highest first
//! (ties by id), each while its joints still fit the budget. After the idea of Unreal Engine's
//! Animation Budget Allocator (Epic Games, "Animation Budget Allocator",
//! https://dev.epicgames.com/documentation/en-us/unreal-engine/animation-budget-allocator-in-unreal-engine),
//! here over joints rather than milliseconds, so a frame's choice is deterministic.

/// One instance's claim on this frame's pose budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Claim {
    /// Higher is served first: the demo's is the projected height in pixels.
    pub significance: f32,
    /// Joints its program runs on at its skeleton LOD level.
    pub joints: u32,
    /// Must be evaluated this frame (its program captures inertialization history).
    pub must: bool,
}

/// How one frame's budget was spent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BudgetReport {
    /// Joints per frame the budget allows, and joints of the instances served.
    pub budget: u64,
    pub spent: u64,
    /// Instances served: in all, because they had to be (history, first frame), and because
    /// they had waited `max_stale` frames.
    pub served: usize,
    pub must: usize,
    pub starving: usize,
    /// Instances that keep their last pose, and the most frames any of them has waited.
    pub kept: usize,
    pub max_wait: u32,
}

/// Per-instance waiting time and this frame's choice, kept from frame to frame; after the first
/// frame of a given crowd size it allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct PoseBudget {
    /// Frames since each instance was last served; [`NEVER`]: not served yet.
    waited: Vec<u32>,
    due: Vec<bool>,
    /// Scratch: instance ids by significance.
    order: Vec<u32>,
}

/// The wait of an instance never served.
const NEVER: u32 = u32::MAX;

impl PoseBudget {
    pub fn new() -> PoseBudget {
        PoseBudget::default()
    }

    /// Chooses this frame's served instances among `claims` (one per instance, by id) within
    /// `budget` joints; an instance that has waited `max_stale` frames (at least 1) is served
    /// whatever the budget. Read the choice with [`PoseBudget::due`].
    pub fn plan(&mut self, claims: &[Claim], budget: u64, max_stale: u32) -> BudgetReport {
        let n = claims.len();
        self.waited.resize(n, NEVER);
        self.due.clear();
        self.due.resize(n, false);
        let max_stale = max_stale.max(1);
        let mut report = BudgetReport {
            budget,
            ..BudgetReport::default()
        };
        for (i, c) in claims.iter().enumerate() {
            let never = self.waited[i] == NEVER;
            let starving = !never && self.waited[i].saturating_add(1) >= max_stale;
            if c.must || never || starving {
                self.due[i] = true;
                report.spent += u64::from(c.joints);
                report.must += usize::from(c.must || never);
                report.starving += usize::from(starving && !(c.must || never));
            }
        }
        self.order.clear();
        self.order
            .extend((0..n as u32).filter(|&i| !self.due[i as usize]));
        let key = |i: &u32| claims[*i as usize].significance;
        self.order
            .sort_unstable_by(|a, b| key(b).total_cmp(&key(a)).then(a.cmp(b)));
        for &i in &self.order {
            let joints = u64::from(claims[i as usize].joints);
            if report.spent + joints <= budget {
                self.due[i as usize] = true;
                report.spent += joints;
            }
        }
        for (due, waited) in self.due.iter().zip(&mut self.waited) {
            if *due {
                *waited = 0;
                report.served += 1;
            } else {
                *waited = waited.saturating_add(1);
                report.kept += 1;
                report.max_wait = report.max_wait.max(*waited);
            }
        }
        report
    }

    /// Whether instance `id` is served this frame (after [`PoseBudget::plan`]).
    pub fn due(&self, id: usize) -> bool {
        self.due.get(id).copied().unwrap_or(true)
    }
}
