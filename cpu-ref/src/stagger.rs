//! Update-rate LOD: which instances re-evaluate their pose this frame; the others take
//! [`crate::Pose::Keep`] and show their last pose at this frame's placement.
//!
//! Each instance has its own countdown, seeded from its id, so instances of one rate spread
//! evenly over the frames: with rate 3 about a third of them are due each frame. (A global
//! frame counter modulo the rate would make every instance that enters a tier together due on
//! the same frame, and sync them forever.) Control keeps its full tick: an instance's program
//! is built from its control time whenever it is due, so playback speed does not depend on the
//! rate and a pose at a given control time does not depend on the stagger phase.

/// Frames between pose evaluations for an instance `pixels` tall on screen: every frame from
/// 96 px, then every 2, 3 and 4 frames below 96, 48 and 24 px (the demo's and the benchmark's
/// policy).
pub fn rate_for_height(pixels: f32) -> u8 {
    match pixels {
        p if p >= 96.0 => 1,
        p if p >= 48.0 => 2,
        p if p >= 24.0 => 3,
        _ => 4,
    }
}

/// Countdowns of a crowd's instances (by id), kept from frame to frame.
#[derive(Clone, Debug, Default)]
pub struct Stagger {
    /// Frames until each instance is due; [`NEVER_DUE`]: not seen yet.
    countdown: Vec<u8>,
}

/// The countdown of an instance never asked about: its first frame is always due.
const NEVER_DUE: u8 = u8::MAX;

impl Stagger {
    pub fn new() -> Stagger {
        Stagger::default()
    }

    /// Whether instance `id`, evaluated every `rate` frames (0 and 1: every frame), is due this
    /// frame. Call it once per instance per frame. An instance's first frame is due; after it,
    /// its phase comes from its id. A lower rate than before takes effect at once.
    pub fn due(&mut self, id: usize, rate: u8) -> bool {
        if id >= self.countdown.len() {
            self.countdown.resize(id + 1, NEVER_DUE);
        }
        let rate = rate.clamp(1, NEVER_DUE - 1);
        let c = &mut self.countdown[id];
        if *c == NEVER_DUE {
            *c = phase(id, rate);
            return true;
        }
        if *c >= rate {
            *c = phase(id, rate);
        }
        if *c == 0 {
            *c = rate - 1;
            true
        } else {
            *c -= 1;
            false
        }
    }

    /// Makes every instance due on its next frame (after a change of batch layout, whose slots
    /// no longer hold the same instances).
    pub fn forget(&mut self) {
        self.countdown.fill(NEVER_DUE);
    }
}

/// Frames until `id` is first due at `rate`: a hash of the id modulo the rate (SplitMix64's
/// finaliser; Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA
/// 2014, https://doi.org/10.1145/2660193.2660195).
fn phase(id: usize, rate: u8) -> u8 {
    let mut z = (id as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z % u64::from(rate)) as u8
}
