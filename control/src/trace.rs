//! A bounded ring of one instance's last ticks, for debugging (`throng simulate --trace N`):
//! per tick the inputs, every region's state path, the transitions taken with the clauses that
//! fired them, the events delivered and the root motion.
//!
//! Every entry is allocated when the ring is made, sized for the controller's tree and event
//! capacity, so recording a tick allocates nothing.

use crate::events::Event;
use crate::instance::{Controller, InstanceState, TickOutput};
use crate::root_motion::{Motion, IDENTITY};
use crate::tree::{Clause, Value, MAX_DEPTH};

/// A transition that fired: region and index of the transition in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taken {
    pub region: u16,
    pub transition: u16,
}

/// One traced tick.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEntry {
    /// The tick's number (1 for the first tick).
    pub tick: u64,
    pub inputs: Vec<Value>,
    /// Per region, its active path root-down (`path[..depth]`) after the tick.
    pub paths: Vec<([u16; MAX_DEPTH], u8)>,
    pub taken: Vec<Taken>,
    pub events: Vec<Event>,
    pub root_motion: Motion,
}

/// The last `capacity` ticks of one instance, oldest first.
#[derive(Clone, Debug)]
pub struct Trace {
    entries: Vec<TraceEntry>,
    /// Slot the next tick goes into.
    next: usize,
    len: usize,
}

impl Trace {
    /// A ring of `capacity` ticks (at least one) for instances of `ctl`.
    pub fn new(ctl: &Controller, capacity: usize) -> Self {
        let regions = ctl.tree.regions.len();
        // One by one: a clone of an empty vector does not keep its capacity.
        let entry = |_| TraceEntry {
            tick: 0,
            inputs: Vec::with_capacity(ctl.tree.inputs.len()),
            paths: Vec::with_capacity(regions),
            taken: Vec::with_capacity(regions),
            events: Vec::with_capacity(ctl.event_capacity),
            root_motion: IDENTITY,
        };
        Trace {
            entries: (0..capacity.max(1)).map(entry).collect(),
            next: 0,
            len: 0,
        }
    }

    /// Records the tick that just left `s` as it is and produced `out`, replacing the oldest
    /// entry once the ring is full.
    pub fn push(&mut self, s: &InstanceState, out: &TickOutput) {
        let e = &mut self.entries[self.next];
        e.tick = s.tick;
        e.inputs.clone_from(&s.inputs);
        e.paths.clear();
        e.paths
            .extend(s.regions.iter().map(|rs| (rs.path, rs.depth)));
        e.taken.clear();
        for c in &out.changes {
            let t = Taken {
                region: c.region,
                transition: c.transition,
            };
            if e.taken.last() != Some(&t) && e.taken.len() < e.taken.capacity() {
                e.taken.push(t);
            }
        }
        e.events.clear();
        let room = e.events.capacity();
        e.events
            .extend(out.events.events().iter().take(room).copied());
        e.root_motion = out.root_motion;
        self.next = (self.next + 1) % self.entries.len();
        self.len = (self.len + 1).min(self.entries.len());
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The traced ticks, oldest first.
    pub fn entries(&self) -> impl Iterator<Item = &TraceEntry> {
        let n = self.entries.len();
        (0..self.len).map(move |i| &self.entries[(self.next + n - self.len + i) % n])
    }
}

/// `clause` as the tree states it, with the value it tested in `inputs` (e.g. `speed >= 4.2
/// (speed = 4.5)`).
pub fn clause_text(ctl: &Controller, clause: &Clause, inputs: &[Value]) -> String {
    match *clause {
        Clause::Input { input, cmp, value } => {
            let name = ctl
                .tree
                .inputs
                .get(input as usize)
                .map_or("?", |i| i.name.as_str());
            let now = inputs
                .get(input as usize)
                .map_or("?".to_owned(), |v| value_text(*v));
            format!(
                "{name} {} {} ({name} = {now})",
                cmp.symbol(),
                value_text(value)
            )
        }
        Clause::Elapsed { cmp, seconds } => format!("elapsed {} {seconds} s", cmp.symbol()),
        Clause::Completed(want) => format!("completed == {want}"),
    }
}

/// An input value as the tree writes it.
pub fn value_text(v: Value) -> String {
    match v {
        Value::Float(f) => format!("{f:?}"),
        Value::Int(i) => format!("{i}"),
        Value::Bool(b) => format!("{b}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{self, Value};

    fn controller() -> Controller {
        let imported =
            throng_cook::import_slice(&throng_fixtures::character_glb(), "character").unwrap();
        let package = throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)
            .unwrap()
            .0;
        let src = include_str!("../../fixtures/trees/crowd.toml");
        let tree = tree::load(src, "crowd.toml", &package, 0).unwrap();
        Controller::new(tree, package, 60.0, 64).unwrap()
    }

    #[test]
    fn the_ring_keeps_the_last_ticks_oldest_first_as_the_ticks_produced_them() {
        let ctl = controller();
        let mut s = ctl.spawn(0).unwrap();
        let (mut scratch, mut out) = (ctl.scratch(), ctl.output());
        let mut trace = Trace::new(&ctl, 5);
        let mut all = Vec::new();
        for tick in 0..300u64 {
            // Walk, then sprint from tick 250: the sprint_start transition fires on tick 251.
            let speed = if tick < 250 { 1.4 } else { 5.0 };
            ctl.set_input(&mut s, "speed", Value::Float(speed)).unwrap();
            ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
            trace.push(&s, &out);
            let mut one = Trace::new(&ctl, 1);
            one.push(&s, &out);
            all.push(one.entries().next().unwrap().clone());
            if tick == 251 {
                let sprint: Vec<_> = trace.entries().filter(|e| !e.taken.is_empty()).collect();
                assert_eq!(sprint.len(), 1);
                assert_eq!(sprint[0].tick, 251);
                let t = sprint[0].taken[0];
                let tr = &ctl.tree.regions[t.region as usize].transitions[t.transition as usize];
                assert_eq!(tr.id, "sprint_start");
                assert_eq!(
                    clause_text(&ctl, &tr.when[0], &sprint[0].inputs),
                    "speed >= 4.2 (speed = 5.0)"
                );
            }
        }
        assert_eq!(trace.len(), 5);
        let kept: Vec<_> = trace.entries().cloned().collect();
        assert_eq!(kept, all[295..]);
        assert_eq!(
            kept.iter().map(|e| e.tick).collect::<Vec<_>>(),
            [296, 297, 298, 299, 300]
        );
        assert!(all.iter().any(|e| !e.events.is_empty()), "no events traced");
    }
}
