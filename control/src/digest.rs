//! A running hash of control output, for determinism checks (`throng simulate --hash`).

use crate::events::{Event, EventKind};
use crate::instance::{InstanceState, TickOutput};
use crate::root_motion::Motion;

/// FNV-1a over 64-bit words (Fowler, Noll, Vo; http://www.isthe.com/chongo/tech/comp/fnv/).
/// Floats enter by their bits, so equal digests mean bit-identical values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Digest(u64);

impl Default for Digest {
    fn default() -> Self {
        Digest(0xcbf2_9ce4_8422_2325)
    }
}

impl Digest {
    pub fn u64(&mut self, v: u64) {
        for b in v.to_le_bytes() {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    pub fn f32(&mut self, v: f32) {
        self.u64(v.to_bits() as u64);
    }
    pub fn bytes(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.u64(u64::from_le_bytes(word));
        }
    }
    pub fn finish(&self) -> u64 {
        self.0
    }

    pub fn event(&mut self, e: &Event) {
        for v in [
            e.tick,
            e.instance as u64,
            e.region as u64,
            e.activation,
            e.cycle as u64,
            e.clip as u64,
        ] {
            self.u64(v);
        }
        self.u64(match e.kind {
            EventKind::Clip(i) => i as u64,
            EventKind::Completed => u64::MAX,
            EventKind::Curve(i) => (1 << 32) | u64::from(i),
        });
        self.f64(e.time);
        self.u64(e.reverse as u64);
    }

    /// A compiled program's ops and weights, as the bytes the GPU receives.
    pub fn program(&mut self, ops: &[throng_cpu_ref::PoseOp], weights: &[f32]) {
        self.bytes(bytemuck::cast_slice(ops));
        self.bytes(bytemuck::cast_slice(weights));
    }

    pub fn motion(&mut self, (t, q): Motion) {
        t.to_array()
            .into_iter()
            .chain(q.to_array())
            .for_each(|v| self.f32(v));
    }

    /// The state path, every player's position, and the tick's events, changes and motion.
    pub fn tick(&mut self, s: &InstanceState, out: &TickOutput) {
        self.u64(s.tick);
        for rs in &s.regions {
            rs.path[..rs.depth as usize]
                .iter()
                .for_each(|&p| self.u64(p as u64));
            self.f64(rs.fade_elapsed);
        }
        for p in &s.players {
            self.u64(p.activation);
            self.u64(p.position().cycle as u64);
            self.f64(p.position().phase);
        }
        out.events.events().iter().for_each(|e| self.event(e));
        for c in &out.changes {
            self.u64(((c.region as u64) << 32) | ((c.state as u64) << 1) | (c.change as u64));
        }
        self.motion(out.root_motion);
    }
}
