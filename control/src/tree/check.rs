//! Whole-region checks: conflicting priorities, unreachable states and zero-time cycles.

use super::doc::{RegionDoc, S};
use super::load::Ctx;
use super::{Clause, Cmp, InputType, Tree, TreeError, TreeErrorKind, Value, MAX_DEPTH};

/// Edges the zero-time cycle search may visit before it gives up on a tree as too tangled.
const CYCLE_SEARCH_BUDGET: usize = 200_000;

pub(super) fn region(
    ctx: &Ctx,
    tree: &Tree,
    r: usize,
    doc: &S<RegionDoc>,
) -> Result<(), TreeError> {
    priorities(ctx, tree, r, doc)?;
    reachable(ctx, tree, r, doc)?;
    zero_time_cycles(ctx, tree, r, doc)
}

/// Two transitions leaving one state with the same priority would be ordered only by their
/// ids: the author must say which comes first.
fn priorities(ctx: &Ctx, tree: &Tree, r: usize, doc: &S<RegionDoc>) -> Result<(), TreeError> {
    let region = &tree.regions[r];
    for (i, a) in region.transitions.iter().enumerate() {
        if let Some(b) = region.transitions[..i]
            .iter()
            .find(|b| b.from == a.from && b.priority == a.priority)
        {
            let t = &doc.get_ref().transitions[i];
            let span = t.get_ref().priority.as_ref().map_or(t.span(), |p| p.span());
            let from = region.states[a.from as usize].name.clone();
            let transitions = format!("'{}' and '{}'", b.id, a.id);
            let kind = TreeErrorKind::ConflictingPriority {
                transitions,
                state: from,
                priority: a.priority,
            };
            return Err(ctx.err(
                span,
                format!("regions[{r}].transitions[{i}].priority"),
                kind,
            ));
        }
    }
    Ok(())
}

/// Every state lies on some path the region can be in: the initial path, or one a transition
/// from a reachable state enters.
fn reachable(ctx: &Ctx, tree: &Tree, r: usize, doc: &S<RegionDoc>) -> Result<(), TreeError> {
    let region = &tree.regions[r];
    let mut reached = vec![false; region.states.len()];
    let mut chain = [0u16; MAX_DEPTH];
    let mut mark = |s: u16, reached: &mut Vec<bool>| {
        let len = tree.entry_chain(r, s, &mut chain);
        chain[..len]
            .iter()
            .for_each(|&c| reached[c as usize] = true);
    };
    mark(region.initial, &mut reached);
    loop {
        let before = reached.iter().filter(|&&x| x).count();
        for t in &region.transitions {
            if reached[t.from as usize] {
                mark(t.to, &mut reached);
            }
        }
        if reached.iter().filter(|&&x| x).count() == before {
            break;
        }
    }
    if let Some(i) = reached.iter().position(|&x| !x) {
        let name = &doc.get_ref().states.get_ref()[i].get_ref().name;
        let kind = TreeErrorKind::Unreachable(name.get_ref().clone());
        return Err(ctx.err(name.span(), format!("regions[{r}].states[{i}].name"), kind));
    }
    Ok(())
}

/// Interval of values an input may take; ints use closed integer bounds.
#[derive(Clone, Copy, Debug)]
struct Range {
    lo: f64,
    lo_closed: bool,
    hi: f64,
    hi_closed: bool,
}

impl Range {
    const ALL: Range = Range {
        lo: f64::NEG_INFINITY,
        lo_closed: false,
        hi: f64::INFINITY,
        hi_closed: false,
    };

    fn empty(&self) -> bool {
        self.lo > self.hi || (self.lo == self.hi && !(self.lo_closed && self.hi_closed))
    }

    /// `self` narrowed by `x cmp v`; `!=` keeps it (it removes at most one point).
    fn narrow(mut self, cmp: Cmp, v: f64, int: bool) -> Range {
        let (lo, lo_closed, hi, hi_closed) = match (cmp, int) {
            (Cmp::Eq, _) => (v, true, v, true),
            (Cmp::Ne, _) => return self,
            (Cmp::Lt, true) => (f64::NEG_INFINITY, false, v - 1.0, true),
            (Cmp::Gt, true) => (v + 1.0, true, f64::INFINITY, false),
            (Cmp::Lt, false) => (f64::NEG_INFINITY, false, v, false),
            (Cmp::Le, _) => (f64::NEG_INFINITY, false, v, true),
            (Cmp::Gt, false) => (v, false, f64::INFINITY, false),
            (Cmp::Ge, _) => (v, true, f64::INFINITY, false),
        };
        if lo > self.lo || (lo == self.lo && !lo_closed) {
            (self.lo, self.lo_closed) = (lo, lo_closed);
        }
        if hi < self.hi || (hi == self.hi && !hi_closed) {
            (self.hi, self.hi_closed) = (hi, hi_closed);
        }
        self
    }
}

/// A transition that cannot fire on entry with no time passed: it waits on elapsed time or on
/// completion (or can never fire).
fn takes_time(when: &[Clause]) -> bool {
    when.iter().any(|c| match *c {
        Clause::Elapsed {
            cmp: Cmp::Gt,
            seconds,
        } => seconds >= 0.0,
        Clause::Elapsed {
            cmp: Cmp::Ge | Cmp::Eq,
            seconds,
        } => seconds > 0.0,
        Clause::Elapsed {
            cmp: Cmp::Lt,
            seconds,
        } => seconds <= 0.0,
        Clause::Elapsed {
            cmp: Cmp::Le,
            seconds,
        } => seconds < 0.0,
        Clause::Completed(true) => true,
        _ => false,
    })
}

/// Narrows `ranges` by the input clauses of `when`; false when some input's range empties.
fn narrow(tree: &Tree, ranges: &mut [Range], when: &[Clause]) -> bool {
    for c in when {
        if let Clause::Input { input, cmp, value } = *c {
            let int = tree.inputs[input as usize].ty == InputType::Int;
            let (cmp, v) = match (cmp, value) {
                // A bool `!= b` is `== !b`.
                (Cmp::Ne, Value::Bool(b)) => (Cmp::Eq, (!b) as u8 as f64),
                (cmp, v) => (cmp, v.as_f64()),
            };
            let range = &mut ranges[input as usize];
            *range = range.narrow(cmp, v, int || value.ty() == InputType::Bool);
            if range.empty() {
                return false;
            }
        }
    }
    true
}

/// A cycle of leaf states whose transitions can all fire under one input snapshot without
/// time passing would switch state every tick forever. Searched leaf to leaf (a transition of
/// an ancestor applies to every leaf below it), narrowing each input's range along the path.
fn zero_time_cycles(ctx: &Ctx, tree: &Tree, r: usize, doc: &S<RegionDoc>) -> Result<(), TreeError> {
    let region = &tree.regions[r];
    let n = region.states.len();
    let leaf = |s: usize| region.states[s].initial.is_none();
    // Edges leaf -> (entered leaf, transition).
    let mut edges: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    let mut chain = [0u16; MAX_DEPTH];
    for (l, out) in edges.iter_mut().enumerate().filter(|(l, _)| leaf(*l)) {
        let mut at = Some(l as u16);
        while let Some(s) = at {
            for &t in &region.states[s as usize].transitions {
                let tr = &region.transitions[t as usize];
                if !takes_time(&tr.when) {
                    let len = tree.entry_chain(r, tr.to, &mut chain);
                    out.push((chain[len - 1] as usize, t as usize));
                }
            }
            at = region.states[s as usize].parent;
        }
    }
    // A cycle lies within one strongly connected component: edges between components need no
    // search, so chains and trees of states cost nothing.
    let component = components(&edges);
    for (l, out) in edges.iter_mut().enumerate() {
        out.retain(|&(to, _)| component[to] == component[l]);
    }
    let mut search = Search {
        tree,
        r,
        edges: &edges,
        start: 0,
        budget: CYCLE_SEARCH_BUDGET,
    };
    for start in (0..n).filter(|&s| leaf(s)) {
        search.start = start;
        let ranges = vec![Range::ALL; tree.inputs.len()];
        if let Some(found) = search.from(start, &ranges, &mut Vec::new()) {
            let names: Vec<&str> = found
                .iter()
                .map(|&t| region.transitions[t].id.as_str())
                .collect();
            let first = found[0];
            let span = doc.get_ref().transitions[first].get_ref().id.span();
            let kind = TreeErrorKind::ZeroTimeCycle(format!("transitions {}", names.join(" -> ")));
            return Err(ctx.err(span, format!("regions[{r}].transitions[{first}]"), kind));
        }
        if search.budget == 0 {
            let kind = TreeErrorKind::Invalid(
                "too many transition paths to check for zero-time cycles".into(),
            );
            return Err(ctx.err(doc.span(), format!("regions[{r}].transitions"), kind));
        }
    }
    Ok(())
}

/// The strongly connected component of each vertex of `edges` (vertex -> (vertex, label)), named
/// by one of its vertices. Kosaraju's two passes, iterative.
/// (S. R. Kosaraju; M. Sharir, "A strong-connectivity algorithm and its applications in data flow
/// analysis", https://doi.org/10.1016/0898-1221(81)90008-0)
fn components(edges: &[Vec<(usize, usize)>]) -> Vec<usize> {
    let n = edges.len();
    let mut finished = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for root in 0..n {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        let mut stack = vec![(root, 0)];
        while let Some(&(v, i)) = stack.last() {
            match edges[v].get(i) {
                Some(&(w, _)) => {
                    let top = stack.len() - 1;
                    stack[top].1 += 1;
                    if !seen[w] {
                        seen[w] = true;
                        stack.push((w, 0));
                    }
                }
                None => {
                    finished.push(v);
                    stack.pop();
                }
            }
        }
    }
    let mut reverse = vec![Vec::new(); n];
    for (v, out) in edges.iter().enumerate() {
        for &(w, _) in out {
            reverse[w].push(v);
        }
    }
    let mut component = vec![usize::MAX; n];
    for &root in finished.iter().rev() {
        if component[root] != usize::MAX {
            continue;
        }
        component[root] = root;
        let mut stack = vec![root];
        while let Some(v) = stack.pop() {
            for &w in &reverse[v] {
                if component[w] == usize::MAX {
                    component[w] = root;
                    stack.push(w);
                }
            }
        }
    }
    component
}

/// The zero-time cycle search over one region's leaf graph.
struct Search<'a> {
    tree: &'a Tree,
    r: usize,
    /// Leaf -> (entered leaf, transition).
    edges: &'a [Vec<(usize, usize)>],
    start: usize,
    budget: usize,
}

impl Search<'_> {
    /// Depth first to a path back to `start` through leaves `>= start` (each cycle is found from
    /// its smallest leaf) whose clauses are jointly satisfiable; `path` holds (leaf, transition).
    fn from(
        &mut self,
        at: usize,
        ranges: &[Range],
        path: &mut Vec<(usize, usize)>,
    ) -> Option<Vec<usize>> {
        for &(next, t) in &self.edges[at] {
            if self.budget == 0 {
                return None;
            }
            self.budget -= 1;
            let visited = path.iter().any(|&(p, _)| p == next);
            if next < self.start || (visited && next != self.start) {
                continue;
            }
            let mut narrowed = ranges.to_vec();
            if !narrow(
                self.tree,
                &mut narrowed,
                &self.tree.regions[self.r].transitions[t].when,
            ) {
                continue;
            }
            path.push((next, t));
            if next == self.start {
                return Some(path.iter().map(|&(_, t)| t).collect());
            }
            if let Some(found) = self.from(next, &narrowed, path) {
                return Some(found);
            }
            path.pop();
        }
        None
    }
}
