//! A cooked motion-matching database: per frame of its clips, a feature vector describing where
//! the character is going and how its feet and hips move, normalised so that one distance
//! compares them; and the search that finds the frame best matching a query.
//!
//! Features (all in the frame's *trajectory space*: the clip's root-motion trajectory at that
//! frame, +Z forward, +Y up, metres and seconds), [`FEATURES`] floats in five groups:
//!
//! | group | floats | what |
//! |---|---|---|
//! | trajectory positions | 6 | where the trajectory is `horizons[k]` seconds later (x, z), k = 0..3 |
//! | trajectory directions | 6 | which way it faces then (unit x, z) |
//! | foot positions | 6 | left, right ankle (x, y, z) |
//! | foot velocities | 6 | left, right ankle (x, y, z), m/s |
//! | hip velocity | 3 | the root-motion joint's velocity (x, y, z), m/s |
//!
//! Normalisation follows Clavet's and Holden's motion matching: each float has its mean over the
//! database subtracted, then is divided by its group's standard deviation (the mean of the
//! group's per-float deviations, so a group's floats keep their relative sizes) and multiplied by
//! the group's weight. The cost of a frame is the squared distance between its row and the
//! query. Simon Clavet, "Motion Matching and The Road to Next-Gen Animation", GDC 2016
//! (https://www.gdcvault.com/play/1023280/); Daniel Holden et al., "Learned Motion Matching",
//! SIGGRAPH 2020, and its companion code's bounding-volume search
//! (https://github.com/orangeduck/Motion-Matching).
//!
//! Search: [`MotionDatabase::search_exhaustive`] is the oracle, every searchable row in order;
//! [`MotionDatabase::search`] skips boxes of rows whose axis-aligned bounds cannot beat the best
//! so far, at two sizes ([`SMALL_BLOCK`] inside [`LARGE_BLOCK`]). The boxes hold similar rows,
//! grouped at load by recursive median splits (a k-d tree's), not runs of consecutive frames.
//! Both return the same frame: the lowest cost, ties to the lowest row (a bound prunes a box only
//! when it is above the best cost, or equal to it with every row of the box after the best's).
//! Each row's cost is summed in the same order by both (four interleaved lanes, `sum_squares`),
//! and a bound is a sum of terms each at most the row's in that order, so rounding keeps it below
//! the row's cost. The fast search visits large boxes best bound first and stops summing a bound
//! or a row's cost once the partial sum passes the best cost: the terms are never negative, so
//! neither could win or tie.

use thiserror::Error;

/// Floats per frame.
pub const FEATURES: usize = 27;
/// Horizons of the trajectory features.
pub const HORIZONS: usize = 3;
/// Feature groups: name and the floats they span, in row order.
pub const GROUPS: [(&str, std::ops::Range<usize>); 5] = [
    ("trajectory_positions", 0..6),
    ("trajectory_directions", 6..12),
    ("foot_positions", 12..18),
    ("foot_velocities", 18..24),
    ("hip_velocity", 24..27),
];
/// Rows per small and at most rows per large box of the search's bounds.
pub const SMALL_BLOCK: usize = 16;
pub const LARGE_BLOCK: usize = 64;
/// Large boxes the fast search orders by bound at a time (on the stack).
const WINDOW: usize = 128;

/// Frame tags (bits of [`MotionDatabase::tags`]).
pub mod tag {
    pub const IDLE: u8 = 1;
    pub const WALK: u8 = 2;
    pub const RUN: u8 = 4;
    pub const START: u8 = 8;
    pub const STOP: u8 = 16;
    pub const TURN: u8 = 32;
    /// Names in bit order.
    pub const NAMES: [&str; 6] = ["idle", "walk", "run", "start", "stop", "turn"];

    /// The bit of a tag name.
    pub fn of(name: &str) -> Option<u8> {
        NAMES.iter().position(|n| *n == name).map(|b| 1 << b)
    }
}

/// One clip's rows: `frames` rows from `first`, the first `playable` searchable (the rest are too
/// close to the clip's end to play until the next query).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatabaseClip {
    /// Package clip index.
    pub clip: u32,
    pub first: u32,
    pub frames: u32,
    pub playable: u32,
}

/// Which rows a search may return: searchable rows carrying one of `tags` (0: any), outside
/// `exclude` (rows a character must not jump to, e.g. around the frame it plays).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    pub tags: u8,
    pub exclude: std::ops::Range<u32>,
}

impl Filter {
    /// Rows with one of `tags` (0: any), none excluded.
    pub fn tags(tags: u8) -> Filter {
        Filter {
            tags,
            exclude: 0..0,
        }
    }
}

/// The best row of a search and its cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Match {
    pub row: u32,
    pub cost: f32,
}

/// A database that does not hold together.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum DatabaseError {
    #[error("motion database: {0}")]
    Invalid(String),
}

/// One level of the search's boxes: per box, the lower and upper corner of its rows, the union
/// of their tags, its lowest row (ties go to the lowest row) and where its contents start in the
/// level below (rows in [`Boxes::order`] for small boxes, small boxes for large ones; one more
/// entry than boxes).
#[derive(Clone, Debug, Default, PartialEq)]
struct Level {
    lo: Vec<[f32; FEATURES]>,
    hi: Vec<[f32; FEATURES]>,
    tags: Vec<u8>,
    first_row: Vec<u32>,
    start: Vec<u32>,
}

impl Level {
    /// Appends the box of `rows` (their indices in `db_rows`), its contents starting at `start`.
    fn push(&mut self, rows: &[u32], db_rows: &[[f32; FEATURES]], tags: &[u8], start: u32) {
        let mut lo = [f32::INFINITY; FEATURES];
        let mut hi = [f32::NEG_INFINITY; FEATURES];
        let mut union = 0;
        for &r in rows {
            for (f, &v) in db_rows[r as usize].iter().enumerate() {
                lo[f] = lo[f].min(v);
                hi[f] = hi[f].max(v);
            }
            union |= tags[r as usize];
        }
        self.lo.push(lo);
        self.hi.push(hi);
        self.tags.push(union);
        self.first_row
            .push(rows.iter().copied().min().unwrap_or(u32::MAX));
        self.start.push(start);
    }

    /// The least cost any row of box `k` can have, or any value above `limit` once the partial
    /// sum passes it (the terms are never negative, so the whole sum would too).
    fn bound(&self, k: usize, query: &[f32; FEATURES], limit: f32) -> f32 {
        let (lo, hi) = (&self.lo[k], &self.hi[k]);
        sum_squares(|f| (lo[f] - query[f]).max(query[f] - hi[f]).max(0.0), limit)
    }
}

/// The fast search's bounds: the searchable rows grouped into large boxes of at most
/// [`LARGE_BLOCK`] rows, each split into small boxes of at most [`SMALL_BLOCK`], by recursive
/// median splits along the float of widest spread (a k-d tree's construction: Jon Bentley,
/// "Multidimensional binary search trees used for associative searching", CACM 1975). Boxes of
/// similar rows, not of consecutive frames: a run of frames spans a whole gait cycle in the foot
/// features, so its box bounds little; a box of similar rows is tight in every float.
#[derive(Clone, Debug, Default, PartialEq)]
struct Boxes {
    /// Searchable rows (database indices) in box order: the large boxes' in turn, each's small
    /// boxes' in turn.
    order: Vec<u32>,
    /// The rows in that order (a copy, so a box's rows are contiguous).
    rows: Vec<[f32; FEATURES]>,
    /// Their tags in that order.
    tags: Vec<u8>,
    small: Level,
    large: Level,
}

impl Boxes {
    fn new(rows: &[[f32; FEATURES]], tags: &[u8], searchable: &[bool]) -> Boxes {
        let mut ids: Vec<u32> = (0..rows.len() as u32)
            .filter(|&r| searchable[r as usize])
            .collect();
        let mut b = Boxes::default();
        let mut larges = Vec::new();
        split(&mut ids, rows, LARGE_BLOCK, &mut larges);
        let mut at = 0;
        for end in larges {
            let large = &mut ids[at..end];
            b.large.push(large, rows, tags, b.small.lo.len() as u32);
            let mut smalls = Vec::new();
            split(large, rows, SMALL_BLOCK, &mut smalls);
            let mut s = 0;
            for e in smalls {
                b.small.push(&large[s..e], rows, tags, b.order.len() as u32);
                b.order.extend_from_slice(&large[s..e]);
                s = e;
            }
            at = end;
        }
        b.small.start.push(b.order.len() as u32);
        b.large.start.push(b.small.lo.len() as u32);
        b.rows = b.order.iter().map(|&r| rows[r as usize]).collect();
        b.tags = b.order.iter().map(|&r| tags[r as usize]).collect();
        b
    }
}

/// Orders `ids` (rows of `rows`) into runs of at most `size` similar rows and appends each run's
/// end (an index into `ids`, ascending) to `ends`: splits along the float of widest spread at a
/// multiple of `size` near the median (the fewest runs), recursively. Deterministic: ties in a
/// float go by row.
fn split(ids: &mut [u32], rows: &[[f32; FEATURES]], size: usize, ends: &mut Vec<usize>) {
    fn go(
        ids: &mut [u32],
        at: usize,
        rows: &[[f32; FEATURES]],
        size: usize,
        ends: &mut Vec<usize>,
    ) {
        if ids.len() <= size {
            if !ids.is_empty() {
                ends.push(at + ids.len());
            }
            return;
        }
        let spread = |f: usize| {
            let (lo, hi) = ids
                .iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &r| {
                    let v = rows[r as usize][f];
                    (lo.min(v), hi.max(v))
                });
            hi - lo
        };
        let spreads: [f32; FEATURES] = std::array::from_fn(spread);
        let widest = (0..FEATURES).fold(0, |w, f| if spreads[f] > spreads[w] { f } else { w });
        ids.sort_unstable_by(|&a, &b| {
            (rows[a as usize][widest].total_cmp(&rows[b as usize][widest])).then(a.cmp(&b))
        });
        let cut = ids.len().div_ceil(size).div_ceil(2) * size;
        let (left, right) = ids.split_at_mut(cut);
        go(left, at, rows, size, ends);
        go(right, at + cut, rows, size, ends);
    }
    go(ids, 0, rows, size, ends)
}

/// Lanes of [`sum_squares`]: the floats' squares are summed in this many interleaved partial
/// sums (float `f` into lane `f % LANES`), which the compiler keeps in one vector register.
const LANES: usize = 4;

/// The sum of `term(f)²` over the [`FEATURES`] floats, in a fixed order: lane by lane
/// ([`LANES`]), then the lanes pairwise. Every cost and bound sums this way, so a bound whose
/// terms are each at most a row's is at most the row's cost (float addition is monotone). Once
/// the sum so far passes `limit`, after every eighth float, it returns it (the rest would only
/// add: the terms are never negative).
#[inline(always)]
fn sum_squares(term: impl Fn(usize) -> f32, limit: f32) -> f32 {
    let mut lanes = [0.0f32; LANES];
    let total = |l: &[f32; LANES]| (l[0] + l[1]) + (l[2] + l[3]);
    let whole = FEATURES / LANES * LANES;
    let mut f = 0;
    while f < whole {
        for (l, lane) in lanes.iter_mut().enumerate() {
            let d = term(f + l);
            *lane += d * d;
        }
        f += LANES;
        if f % (2 * LANES) == 0 && total(&lanes) > limit {
            return total(&lanes);
        }
    }
    for (l, lane) in lanes.iter_mut().enumerate().take(FEATURES - whole) {
        let d = term(whole + l);
        *lane += d * d;
    }
    total(&lanes)
}

/// A motion-matching database of one skeleton's clips.
#[derive(Clone, Debug, PartialEq)]
pub struct MotionDatabase {
    pub skeleton: u32,
    /// Rows per second of clip time.
    pub rate: f32,
    /// Seconds ahead of the trajectory features.
    pub horizons: [f32; HORIZONS],
    /// Weight of each of [`GROUPS`].
    pub weights: [f32; GROUPS.len()],
    pub clips: Vec<DatabaseClip>,
    /// Subtracted from a raw feature vector...
    pub mean: [f32; FEATURES],
    /// ... which is then multiplied by this (group weight / group deviation).
    pub scale: [f32; FEATURES],
    /// Normalised rows, clip after clip.
    pub rows: Vec<[f32; FEATURES]>,
    /// Tag bits per row ([`tag`]).
    pub tags: Vec<u8>,
    searchable: Vec<bool>,
    boxes: Boxes,
}

impl MotionDatabase {
    /// Checks the parts and builds the search's bounds.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        skeleton: u32,
        rate: f32,
        horizons: [f32; HORIZONS],
        weights: [f32; GROUPS.len()],
        clips: Vec<DatabaseClip>,
        mean: [f32; FEATURES],
        scale: [f32; FEATURES],
        rows: Vec<[f32; FEATURES]>,
        tags: Vec<u8>,
    ) -> Result<MotionDatabase, DatabaseError> {
        let bad = |m: String| Err(DatabaseError::Invalid(m));
        if !(rate.is_finite() && rate > 0.0) {
            return bad(format!("rate {rate} is not positive"));
        }
        if horizons.iter().any(|h| !(h.is_finite() && *h > 0.0)) {
            return bad(format!("horizons {horizons:?} are not positive"));
        }
        if weights.iter().any(|w| !(w.is_finite() && *w >= 0.0)) {
            return bad(format!("weights {weights:?} are not finite and >= 0"));
        }
        if mean.iter().chain(&scale).any(|v| !v.is_finite()) {
            return bad("the normalisation is not finite".into());
        }
        if tags.len() != rows.len() {
            return bad(format!("{} tags for {} rows", tags.len(), rows.len()));
        }
        if rows.iter().flatten().any(|v| !v.is_finite()) {
            return bad("a row is not finite".into());
        }
        let mut next = 0u32;
        let mut searchable = vec![false; rows.len()];
        for (k, c) in clips.iter().enumerate() {
            if c.first != next || c.playable > c.frames {
                return bad(format!(
                    "clip entry {k} covers rows {}..{} ({} playable) after row {next}",
                    c.first,
                    c.first as u64 + c.frames as u64,
                    c.playable
                ));
            }
            next = c.first.saturating_add(c.frames);
            if next as usize > rows.len() {
                return bad(format!("clip entry {k} ends past the {} rows", rows.len()));
            }
            for s in &mut searchable[c.first as usize..(c.first + c.playable) as usize] {
                *s = true;
            }
        }
        if next as usize != rows.len() {
            return bad(format!("the clips cover {next} of {} rows", rows.len()));
        }
        let boxes = Boxes::new(&rows, &tags, &searchable);
        Ok(MotionDatabase {
            skeleton,
            rate,
            horizons,
            weights,
            clips,
            mean,
            scale,
            rows,
            tags,
            searchable,
            boxes,
        })
    }

    /// A raw feature vector normalised as the rows are.
    pub fn normalize(&self, raw: &[f32; FEATURES]) -> [f32; FEATURES] {
        std::array::from_fn(|f| (raw[f] - self.mean[f]) * self.scale[f])
    }

    /// The raw feature vector of row `row` (the normalisation undone where its scale is not 0).
    pub fn raw(&self, row: usize) -> Option<[f32; FEATURES]> {
        let r = self.rows.get(row)?;
        Some(std::array::from_fn(|f| {
            if self.scale[f] != 0.0 {
                r[f] / self.scale[f] + self.mean[f]
            } else {
                self.mean[f]
            }
        }))
    }

    /// The clip entry and clip time (seconds) of row `row`.
    pub fn locate(&self, row: u32) -> Option<(&DatabaseClip, f32)> {
        let c = self
            .clips
            .iter()
            .find(|c| row >= c.first && row < c.first + c.frames)?;
        Some((c, (row - c.first) as f32 / self.rate))
    }

    /// Whether row `row` is searchable (not in its clip's tail; false past the rows).
    pub fn is_searchable(&self, row: usize) -> bool {
        self.searchable.get(row).copied().unwrap_or(false)
    }

    /// Whether row `row` may be matched: searchable and passing `filter`.
    fn eligible(&self, row: usize, filter: &Filter) -> bool {
        self.searchable[row]
            && (filter.tags == 0 || self.tags[row] & filter.tags != 0)
            && !filter.exclude.contains(&(row as u32))
    }

    /// The squared distance of row `row` from `query`, summed in [`sum_squares`]' order.
    pub fn cost(&self, row: usize, query: &[f32; FEATURES]) -> f32 {
        self.cost_up_to(row, query, f32::INFINITY)
    }

    /// [`MotionDatabase::cost`], or any value above `limit` once the partial sum passes it.
    fn cost_up_to(&self, row: usize, query: &[f32; FEATURES], limit: f32) -> f32 {
        let r = &self.rows[row];
        sum_squares(|f| r[f] - query[f], limit)
    }

    /// The oracle: every row `filter` lets through, lowest cost, ties to the lowest row; `None`
    /// when there is none.
    pub fn search_exhaustive(&self, query: &[f32; FEATURES], filter: &Filter) -> Option<Match> {
        let mut best: Option<Match> = None;
        for row in 0..self.rows.len() {
            if !self.eligible(row, filter) {
                continue;
            }
            let cost = self.cost(row, query);
            if best.is_none_or(|b| cost < b.cost) {
                best = Some(Match {
                    row: row as u32,
                    cost,
                });
            }
        }
        best
    }

    /// The same answer as [`MotionDatabase::search_exhaustive`], skipping boxes whose bounds
    /// cannot beat the best so far. `start`, when given, is tried first (the frame the character
    /// plays now, usually: its cost makes the first bound).
    pub fn search(
        &self,
        query: &[f32; FEATURES],
        filter: &Filter,
        start: Option<u32>,
    ) -> Option<Match> {
        let tags = filter.tags;
        let boxes = &self.boxes;
        let mut best: Option<Match> = start
            .filter(|&r| (r as usize) < self.rows.len() && self.eligible(r as usize, filter))
            .map(|r| Match {
                row: r,
                cost: self.cost(r as usize, query),
            });
        let limit = |best: &Option<Match>| best.map_or(f32::INFINITY, |b| b.cost);
        // A box can hold the answer if its bound is below the best cost, or equal to it with a
        // row before the best's.
        let open = |bound: f32, first: u32, best: &Option<Match>| match best {
            None => bound.is_finite(),
            Some(b) => bound < b.cost || (bound == b.cost && first < b.row),
        };
        // Large boxes are visited best bound first, a window of them at a time (no allocation):
        // the rows most likely to win are costed first, and their cost prunes the rest.
        let (large, small) = (&boxes.large, &boxes.small);
        let mut window = [(0.0f32, 0u32); WINDOW];
        for first in (0..large.lo.len()).step_by(WINDOW) {
            let mut len = 0;
            for big in first..(first + WINDOW).min(large.lo.len()) {
                if tags != 0 && large.tags[big] & tags == 0 {
                    continue;
                }
                let bound = large.bound(big, query, limit(&best));
                if open(bound, large.first_row[big], &best) {
                    window[len] = (bound, big as u32);
                    len += 1;
                }
            }
            window[..len].sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for &(bound, big) in &window[..len] {
                let big = big as usize;
                if !open(bound, large.first_row[big], &best) {
                    continue;
                }
                for k in large.start[big] as usize..large.start[big + 1] as usize {
                    if (tags != 0 && small.tags[k] & tags == 0)
                        || !open(
                            small.bound(k, query, limit(&best)),
                            small.first_row[k],
                            &best,
                        )
                    {
                        continue;
                    }
                    for at in small.start[k] as usize..small.start[k + 1] as usize {
                        let row = boxes.order[at];
                        if (tags != 0 && boxes.tags[at] & tags == 0)
                            || filter.exclude.contains(&row)
                        {
                            continue;
                        }
                        let r = &boxes.rows[at];
                        let cost = sum_squares(|f| r[f] - query[f], limit(&best));
                        let better = match best {
                            None => true,
                            Some(b) => cost < b.cost || (cost == b.cost && row < b.row),
                        };
                        if better {
                            best = Some(Match { row, cost });
                        }
                    }
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database of `n` rows from a hashed sequence, in clips of 100 rows (90 playable), with
    /// duplicated rows so that ties occur.
    fn database(n: usize) -> MotionDatabase {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
        };
        let mut rows: Vec<[f32; FEATURES]> = (0..n)
            .map(|r| std::array::from_fn(|f| next() + (r as f32 * 0.01 + f as f32).sin()))
            .collect();
        for r in (50..n).step_by(97) {
            rows[r] = rows[r - 40];
        }
        let tags = (0..n).map(|r| 1u8 << (r / 100 % 6)).collect();
        let clips = (0..n.div_ceil(100))
            .map(|k| {
                let frames = (n - k * 100).min(100) as u32;
                DatabaseClip {
                    clip: k as u32,
                    first: (k * 100) as u32,
                    frames,
                    playable: frames.saturating_sub(10),
                }
            })
            .collect();
        MotionDatabase::new(
            0,
            60.0,
            [0.33, 0.67, 1.0],
            [1.0; 5],
            clips,
            [0.0; FEATURES],
            [1.0; FEATURES],
            rows,
            tags,
        )
        .unwrap()
    }

    #[test]
    fn the_fast_search_returns_the_exhaustive_answer_with_ties_to_the_lowest_row() {
        let db = database(2_000);
        let mut disagreements = 0;
        let mut q = 0x1234_5678u64;
        for k in 0..500 {
            q = q
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let base = (q >> 33) as usize % db.rows.len();
            // Queries near rows (noise of several sizes) and exact copies of duplicated rows.
            let noise = [0.0, 0.01, 0.3, 2.0][k % 4];
            let query: [f32; FEATURES] =
                std::array::from_fn(|f| db.rows[base][f] + noise * ((k * 31 + f) as f32).sin());
            let tags = [0, tag::WALK, tag::RUN | tag::IDLE][k % 3];
            // Some queries exclude the rows around the one they are near.
            let b = base as u32;
            let exclude = if k % 5 == 4 {
                b.saturating_sub(12)..b + 13
            } else {
                0..0
            };
            let filter = Filter { tags, exclude };
            let start = (k % 2 == 0).then_some(((q >> 13) as usize % db.rows.len()) as u32);
            let want = db.search_exhaustive(&query, &filter);
            if want.is_some_and(|m| filter.exclude.contains(&m.row)) {
                disagreements += 1;
            }
            if db.search(&query, &filter, start) != want {
                disagreements += 1;
            }
        }
        assert_eq!(disagreements, 0);
        // A duplicated row ties with its original: the earlier row wins.
        let query = db.rows[147];
        assert_eq!(db.rows[147], db.rows[107]);
        let m = db.search(&query, &Filter::tags(0), Some(147)).unwrap();
        assert_eq!((m.row, m.cost), (107, 0.0));
        assert_eq!(db.search_exhaustive(&query, &Filter::tags(0)), Some(m));
        // Excluded, the original gives way to its copy.
        let around = Filter {
            tags: 0,
            exclude: 100..110,
        };
        let m = db.search(&query, &around, Some(147)).unwrap();
        assert_eq!((m.row, m.cost), (147, 0.0));
        assert_eq!(db.search_exhaustive(&query, &around), Some(m));
    }

    #[test]
    fn rows_past_the_playable_part_and_other_tags_are_never_returned() {
        let db = database(300);
        let query = db.rows[95];
        let m = db.search(&query, &Filter::tags(0), None).unwrap();
        assert!(m.row % 100 < 90, "{m:?}");
        let m = db.search(&query, &Filter::tags(tag::RUN), None).unwrap();
        assert_eq!(db.tags[m.row as usize], tag::RUN);
        assert_eq!(db.search(&query, &Filter::tags(tag::TURN), None), None);
        assert_eq!(db.search_exhaustive(&query, &Filter::tags(tag::TURN)), None);
    }

    #[test]
    fn inconsistent_parts_are_refused() {
        let db = database(300);
        let mut clips = db.clips.clone();
        clips[1].first += 1;
        let err = MotionDatabase::new(
            0,
            60.0,
            db.horizons,
            db.weights,
            clips,
            db.mean,
            db.scale,
            db.rows.clone(),
            db.tags.clone(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("clip entry 1"), "{err}");
        let mut rows = db.rows.clone();
        rows[3][4] = f32::NAN;
        assert!(MotionDatabase::new(
            0,
            60.0,
            db.horizons,
            db.weights,
            db.clips.clone(),
            db.mean,
            db.scale,
            rows,
            db.tags.clone()
        )
        .is_err());
    }
}
