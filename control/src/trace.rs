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
