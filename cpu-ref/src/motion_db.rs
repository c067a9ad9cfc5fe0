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
//! [`MotionDatabase::search`] returns the same frame (the lowest cost, ties to the lowest row)
//! looking at far fewer. At load it describes each searchable row by its projection onto the
//! rows' first [`AXES`] principal axes and the length of the rest, and groups the rows into boxes
//! at two sizes ([`SMALL_BLOCK`] inside [`LARGE_BLOCK`]) by recursive median splits (a k-d
//! tree's). Distances in those coordinates never exceed the true ones, so a box or a row farther
//! from the query there than the best cost so far (with a slack for rounding) cannot win or tie
//! and is skipped; the rows left are costed
//! exactly as the oracle costs them (four interleaved lanes, `sum_squares`). Large boxes are
//! visited nearest first, a row's cost stops summing once it passes the best cost (the terms are
//! never negative), and a small box's rows are measured against the query in vector lanes.

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
/// Most small boxes in a large one.
const SMALLS: usize = LARGE_BLOCK.div_ceil(SMALL_BLOCK);
/// Principal axes the search's bounds project onto.
pub const AXES: usize = 8;
/// Coordinates of a projected row: the [`AXES`] and the length of what they leave out.
const COORDS: usize = AXES + 1;
/// Most sweeps of the Jacobi eigenvalue iteration (it converges in about ten).
const JACOBI_SWEEPS: usize = 64;
/// Rounding slack of the search's bounds (see [`MotionDatabase::search`]): relative to a cost,
/// and per unit of a projected vector's length.
const COST_SLACK: f32 = 1e-4;
const PROJECTION_SLACK: f32 = 1e-4;

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

/// A row (or query) as the search's boxes see it: its first [`AXES`] coordinates on the
/// principal axes, then the length of the rest (the row less its projection onto those axes).
type Projected = [f32; COORDS];

/// The principal axes float by float: `[f][a]` is float `f` of axis `a`.
type Axes = [[f32; AXES]; FEATURES];

/// One level of the search's boxes: per box, the lower and upper corner of its rows' projections
/// (rounded outward; axis by axis, `lo[a][k]`, so that neighbouring boxes' bounds are summed in
/// vector lanes), the union of their tags and where its contents start in the level below (rows
/// in [`Boxes::order`] for small boxes, small boxes for large ones; one more entry than boxes).
#[derive(Clone, Debug, Default, PartialEq)]
struct Level {
    lo: [Vec<f32>; COORDS],
    hi: [Vec<f32>; COORDS],
    tags: Vec<u8>,
    start: Vec<u32>,
}

impl Level {
    /// Appends the box of `rows` (indices into `projected`), its contents starting at `start`.
    fn push(&mut self, rows: &[u32], projected: &[[f64; COORDS]], tags: &[u8], start: u32) {
        let mut lo = [f64::INFINITY; COORDS];
        let mut hi = [f64::NEG_INFINITY; COORDS];
        let mut union = 0;
        for &r in rows {
            for (a, &v) in projected[r as usize].iter().enumerate() {
                lo[a] = lo[a].min(v);
                hi[a] = hi[a].max(v);
            }
            union |= tags[r as usize];
        }
        // Rounded outward, so that the box holds every row's exact projection.
        for a in 0..COORDS {
            let (l, h) = (lo[a] as f32, hi[a] as f32);
            self.lo[a].push(if f64::from(l) > lo[a] {
                l.next_down()
            } else {
                l
            });
            self.hi[a].push(if f64::from(h) < hi[a] { h.next_up() } else { h });
        }
        self.tags.push(union);
        self.start.push(start);
    }

    /// Boxes in this level.
    fn len(&self) -> usize {
        self.tags.len()
    }

    /// The squared distances from `query` to boxes `first..` into `out` (one per element).
    fn bounds(&self, first: usize, query: &Projected, out: &mut [f32]) {
        out.fill(0.0);
        let boxes = first..first + out.len();
        for ((lo, hi), &y) in self.lo.iter().zip(&self.hi).zip(query) {
            let (lo, hi) = (&lo[boxes.clone()], &hi[boxes.clone()]);
            for ((b, &l), &h) in out.iter_mut().zip(lo).zip(hi) {
                let d = (l - y).max(y - h).max(0.0);
                *b += d * d;
            }
        }
    }
}

/// The fast search's bounds. The searchable rows are projected onto their first [`AXES`]
/// principal axes (the eigenvectors of their covariance, largest variance first): the features
/// move together (a foot's position and velocity follow the gait's phase, the trajectory's
/// positions and directions follow its curvature), so a few axes carry most of every distance.
/// A projection onto orthonormal axes never lengthens a distance, the part it leaves out is
/// orthogonal to it, and two vectors' left-out parts differ by at least the difference of their
/// lengths; so the distance between two rows' [`Projected`] coordinates (the projection and
/// the left-out part's length, which keeps a query far off the axes from looking near every
/// row) bounds their cost from below (the lower-bounding lemma of Christos Faloutsos, M.
/// Ranganathan and Yannis Manolopoulos, "Fast subsequence matching in time-series databases",
/// SIGMOD 1994; boxes on principal axes as in James McNames, "A fast nearest-neighbor algorithm
/// based on a principal axis search tree", IEEE TPAMI 2001). The rows are grouped into large
/// boxes of at most [`LARGE_BLOCK`], each split into small boxes of at most [`SMALL_BLOCK`], by
/// recursive median splits along the coordinate of widest spread (a k-d tree's construction: Jon
/// Bentley, "Multidimensional binary search trees used for associative searching", CACM 1975):
/// boxes of similar rows, tight in every coordinate.
#[derive(Clone, Debug, Default, PartialEq)]
struct Boxes {
    /// Searchable rows (database indices) in box order: the large boxes' in turn, each's small
    /// boxes' in turn.
    order: Vec<u32>,
    /// The rows in that order (a copy, so a box's rows are contiguous).
    rows: Vec<[f32; FEATURES]>,
    /// Per small box, its rows' projections axis by axis (`[a][i]`: axis `a` of the box's row
    /// `i`; infinite past its rows), so that one box's distances are summed in vector lanes.
    projected: Vec<[[f32; SMALL_BLOCK]; COORDS]>,
    /// Their tags in that order.
    tags: Vec<u8>,
    small: Level,
    large: Level,
    /// The principal axes float by float: `axes[f][a]` is float `f` of axis `a`.
    axes: Axes,
    /// The longest row (Euclidean norm), for the rounding slack of the rows' projections.
    longest: f32,
}

impl Boxes {
    fn new(rows: &[[f32; FEATURES]], tags: &[u8], searchable: &[bool]) -> Boxes {
        let mut ids: Vec<u32> = (0..rows.len() as u32)
            .filter(|&r| searchable[r as usize])
            .collect();
        let axes = principal_axes(rows, &ids);
        // Projected in f64 from the f32 axes: exact but for rounding far below f32's.
        let projected: Vec<[f64; COORDS]> = rows
            .iter()
            .map(|r| {
                let y: [f64; AXES] = std::array::from_fn(|a| {
                    (0..FEATURES)
                        .map(|f| f64::from(axes[f][a]) * f64::from(r[f]))
                        .sum()
                });
                let rest = (0..FEATURES).map(|f| {
                    let along: f64 = (0..AXES).map(|a| f64::from(axes[f][a]) * y[a]).sum();
                    f64::from(r[f]) - along
                });
                let rest = rest.map(|v| v * v).sum::<f64>().sqrt();
                std::array::from_fn(|c| if c < AXES { y[c] } else { rest })
            })
            .collect();
        let mut b = Boxes {
            axes,
            longest: rows.iter().map(|r| norm(r)).fold(0.0, f32::max),
            ..Boxes::default()
        };
        let mut larges = Vec::new();
        split(&mut ids, &projected, LARGE_BLOCK, &mut larges);
        let mut at = 0;
        for end in larges {
            let large = &mut ids[at..end];
            b.large.push(large, &projected, tags, b.small.len() as u32);
            let mut smalls = Vec::new();
            split(large, &projected, SMALL_BLOCK, &mut smalls);
            // Runs of at most SMALL_BLOCK cut at its multiples: never more than SMALLS.
            debug_assert!(smalls.len() <= SMALLS);
            let mut s = 0;
            for e in smalls {
                b.small
                    .push(&large[s..e], &projected, tags, b.order.len() as u32);
                b.order.extend_from_slice(&large[s..e]);
                s = e;
            }
            at = end;
        }
        b.small.start.push(b.order.len() as u32);
        b.large.start.push(b.small.len() as u32);
        b.rows = b.order.iter().map(|&r| rows[r as usize]).collect();
        b.projected = (0..b.small.len())
            .map(|k| {
                let rows = &b.order[b.small.start[k] as usize..b.small.start[k + 1] as usize];
                std::array::from_fn(|a| {
                    std::array::from_fn(|i| {
                        rows.get(i)
                            .map_or(f32::INFINITY, |&r| projected[r as usize][a] as f32)
                    })
                })
            })
            .collect();
        b.tags = b.order.iter().map(|&r| tags[r as usize]).collect();
        b
    }

    /// `query` as the boxes see it, in f32.
    fn project(&self, query: &[f32; FEATURES]) -> Projected {
        let mut y = [0.0f32; COORDS];
        for (axis_floats, &q) in self.axes.iter().zip(query) {
            for (y, &a) in y.iter_mut().zip(axis_floats) {
                *y += a * q;
            }
        }
        let mut rest = [0.0f32; FEATURES];
        for ((rest, axis_floats), &q) in rest.iter_mut().zip(&self.axes).zip(query) {
            let along: f32 = axis_floats.iter().zip(&y).map(|(a, y)| a * y).sum();
            *rest = q - along;
        }
        y[AXES] = norm(&rest);
        y
    }
}

/// The Euclidean norm of `v`.
fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

/// The first [`AXES`] principal axes of `rows[ids]`, largest variance first, float by float
/// (`[f][a]`: float `f` of axis `a`), rounded to f32: the eigenvectors of the rows' covariance
/// by cyclic Jacobi rotations (Golub and Van Loan, "Matrix Computations", §8.5), in f64.
/// Deterministic: a fixed sweep order, ties in variance by index.
fn principal_axes(rows: &[[f32; FEATURES]], ids: &[u32]) -> Axes {
    let n = ids.len().max(1) as f64;
    let mean: [f64; FEATURES] = std::array::from_fn(|f| {
        ids.iter()
            .map(|&r| f64::from(rows[r as usize][f]))
            .sum::<f64>()
            / n
    });
    let mut a = [[0.0f64; FEATURES]; FEATURES];
    for &r in ids {
        let d: [f64; FEATURES] = std::array::from_fn(|f| f64::from(rows[r as usize][f]) - mean[f]);
        for (i, row) in a.iter_mut().enumerate() {
            for (j, v) in row.iter_mut().enumerate() {
                *v += d[i] * d[j] / n;
            }
        }
    }
    let mut v = [[0.0f64; FEATURES]; FEATURES];
    for (i, row) in v.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    let scale: f64 = (0..FEATURES)
        .map(|i| a[i][i])
        .sum::<f64>()
        .max(f64::MIN_POSITIVE);
    for _sweep in 0..JACOBI_SWEEPS {
        let off: f64 = (0..FEATURES)
            .flat_map(|i| (0..FEATURES).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i][j] * a[i][j])
            .sum();
        if off <= (1e-15 * scale).powi(2) {
            break;
        }
        for p in 0..FEATURES {
            for q in p + 1..FEATURES {
                if a[p][q] == 0.0 {
                    continue;
                }
                // The rotation zeroing a[p][q] (the smaller root of t² + 2θt - 1 = 0).
                let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                let t = if theta == 0.0 {
                    1.0
                } else {
                    theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt())
                };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for row in a.iter_mut() {
                    let (x, y) = (row[p], row[q]);
                    row[p] = c * x - s * y;
                    row[q] = s * x + c * y;
                }
                let (before, from_q) = a.split_at_mut(q);
                for (x, y) in before[p].iter_mut().zip(from_q[0].iter_mut()) {
                    (*x, *y) = (c * *x - s * *y, s * *x + c * *y);
                }
                for row in v.iter_mut() {
                    let (x, y) = (row[p], row[q]);
                    row[p] = c * x - s * y;
                    row[q] = s * x + c * y;
                }
            }
        }
    }
    let mut order: [usize; FEATURES] = std::array::from_fn(|i| i);
    order.sort_by(|&x, &y| a[y][y].total_cmp(&a[x][x]).then(x.cmp(&y)));
    std::array::from_fn(|f| std::array::from_fn(|k| v[f][order[k]] as f32))
}

/// Orders `ids` (indices into `points`) into runs of at most `size` similar points and appends
/// each run's end (an index into `ids`, ascending) to `ends`: splits along the coordinate of
/// widest spread at a multiple of `size` near the median (the fewest runs), recursively.
/// Deterministic: ties in a coordinate go by index.
fn split(ids: &mut [u32], points: &[[f64; COORDS]], size: usize, ends: &mut Vec<usize>) {
    fn go(
        ids: &mut [u32],
        at: usize,
        points: &[[f64; COORDS]],
        size: usize,
        ends: &mut Vec<usize>,
    ) {
        if ids.len() <= size {
            if !ids.is_empty() {
                ends.push(at + ids.len());
            }
            return;
        }
        let spread = |c: usize| {
            let (lo, hi) = ids
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &r| {
                    let v = points[r as usize][c];
                    (lo.min(v), hi.max(v))
                });
            hi - lo
        };
        let spreads: [f64; COORDS] = std::array::from_fn(spread);
        let widest = (0..COORDS).fold(0, |w, c| if spreads[c] > spreads[w] { c } else { w });
        ids.sort_unstable_by(|&a, &b| {
            (points[a as usize][widest].total_cmp(&points[b as usize][widest])).then(a.cmp(&b))
        });
        let cut = ids.len().div_ceil(size).div_ceil(2) * size;
        let (left, right) = ids.split_at_mut(cut);
        go(left, at, points, size, ends);
        go(right, at + cut, points, size, ends);
    }
    go(ids, 0, points, size, ends)
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

    /// The same answer as [`MotionDatabase::search_exhaustive`], skipping boxes and rows whose
    /// projections onto the principal axes lie too far from the query's to beat the best so far.
    /// `start`, when given, is tried first (the frame the character plays now, usually: its cost
    /// makes the first bound).
    ///
    /// Why it is exact: the projection onto orthonormal axes never lengthens a distance, so a
    /// box's projected distance is at most the cost of any row in it. Rounding could break that
    /// by a hair (the axes are stored in f32, the query projected in f32, the costs summed in
    /// f32), so a box or row is skipped only when its projected distance exceeds
    /// √(best / (1 − [`COST_SLACK`])) + [`PROJECTION_SLACK`] × (|query| + |longest row|): each
    /// rounding is bounded by a small multiple of f32's epsilon (2⁻²⁴) times those lengths, far
    /// below the slack. A row within reach is costed exactly as the oracle costs it, ties to the
    /// lower row.
    pub fn search(
        &self,
        query: &[f32; FEATURES],
        filter: &Filter,
        start: Option<u32>,
    ) -> Option<Match> {
        let tags = filter.tags;
        let boxes = &self.boxes;
        let projected = boxes.project(query);
        let slack = PROJECTION_SLACK * (norm(query) + boxes.longest);
        // The projected squared distance beyond which nothing can beat or tie `best`.
        let reach_of = |best: &Option<Match>| {
            best.map_or(f32::INFINITY, |b| {
                let r = (b.cost / (1.0 - COST_SLACK)).sqrt() + slack;
                r * r
            })
        };
        let mut best: Option<Match> = start
            .filter(|&r| (r as usize) < self.rows.len() && self.eligible(r as usize, filter))
            .map(|r| Match {
                row: r,
                cost: self.cost(r as usize, query),
            });
        let mut reach = reach_of(&best);
        // Large boxes are visited nearest first, a window of them at a time (no allocation): the
        // rows most likely to win are costed first, and their cost prunes the rest.
        let (large, small) = (&boxes.large, &boxes.small);
        let mut window = [(0.0f32, 0u32); WINDOW];
        let mut bounds = [0.0f32; WINDOW];
        let mut small_bounds = [0.0f32; SMALLS];
        for first in (0..large.len()).step_by(WINDOW) {
            let count = WINDOW.min(large.len() - first);
            large.bounds(first, &projected, &mut bounds[..count]);
            let mut len = 0;
            for (big, &bound) in (first..).zip(&bounds[..count]) {
                if bound <= reach && (tags == 0 || large.tags[big] & tags != 0) {
                    window[len] = (bound, big as u32);
                    len += 1;
                }
            }
            window[..len].sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for &(bound, big) in &window[..len] {
                if bound > reach {
                    // Sorted: every box after this one is as far.
                    break;
                }
                let big = big as usize;
                let smalls = large.start[big] as usize..large.start[big + 1] as usize;
                let small_bounds = &mut small_bounds[..smalls.len()];
                small.bounds(smalls.start, &projected, small_bounds);
                for (k, &bound) in smalls.zip(small_bounds.iter()) {
                    if bound > reach || (tags != 0 && small.tags[k] & tags == 0) {
                        continue;
                    }
                    // The box's rows' projected distances, in lanes.
                    let mut near = [0.0f32; SMALL_BLOCK];
                    for (axis, &y) in boxes.projected[k].iter().zip(&projected) {
                        for (n, &p) in near.iter_mut().zip(axis) {
                            *n += (p - y) * (p - y);
                        }
                    }
                    let rows = small.start[k] as usize..small.start[k + 1] as usize;
                    for (at, &near) in rows.zip(&near) {
                        let row = boxes.order[at];
                        if near > reach
                            || (tags != 0 && boxes.tags[at] & tags == 0)
                            || filter.exclude.contains(&row)
                        {
                            continue;
                        }
                        let r = &boxes.rows[at];
                        let limit = best.map_or(f32::INFINITY, |b| b.cost);
                        let cost = sum_squares(|f| r[f] - query[f], limit);
                        let better = match best {
                            None => true,
                            Some(b) => cost < b.cost || (cost == b.cost && row < b.row),
                        };
                        if better {
                            best = Some(Match { row, cost });
                            reach = reach_of(&best);
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
    fn the_fast_search_is_exact_far_from_the_origin_where_rounding_is_largest() {
        // Rows a thousand units out in every float, along a few correlated directions: the
        // projections round at their largest, and exact copies tie at cost 0.
        let small = database(1_000);
        let rows: Vec<[f32; FEATURES]> = (small.rows.iter())
            .map(|r| std::array::from_fn(|f| 1000.0 + r[f % 3] * 50.0 + r[f] * 0.001))
            .collect();
        let db = MotionDatabase::new(
            0,
            60.0,
            small.horizons,
            small.weights,
            small.clips.clone(),
            [0.0; FEATURES],
            [1.0; FEATURES],
            rows,
            small.tags.clone(),
        )
        .unwrap();
        // Queries on and near the rows `database` duplicated (r and r - 40), starting from the
        // later copy: its cost of 0 is the first bound, and the earlier copy must still win.
        let mut disagreements = 0;
        let pairs = (50..db.rows.len()).step_by(97);
        let pairs = pairs.filter(|&r| db.is_searchable(r) && db.is_searchable(r - 40));
        let mut pairs_tried = 0;
        for (k, r) in pairs.enumerate() {
            pairs_tried += 1;
            for noise in [0.0, 1e-4, 0.01, 1.0] {
                let query: [f32; FEATURES] =
                    std::array::from_fn(|f| db.rows[r][f] + noise * ((k + f) as f32).cos());
                let filter = Filter::tags(0);
                let want = db.search_exhaustive(&query, &filter);
                if noise == 0.0 && want.map(|m| m.row) != Some(r as u32 - 40) {
                    disagreements += 1;
                }
                for start in [None, Some(r as u32)] {
                    if db.search(&query, &filter, start) != want {
                        disagreements += 1;
                    }
                }
            }
        }
        assert_eq!(disagreements, 0);
        assert!(pairs_tried >= 6, "{pairs_tried} pairs");
    }

    #[test]
    fn the_principal_axes_are_orthonormal_and_the_widest_comes_first() {
        // Rows spread along (1, 2, 0, ..., 0) and a little along every float.
        let rows: Vec<[f32; FEATURES]> = (0..500)
            .map(|r| {
                let t = (r as f32 * 0.37).sin() * 10.0;
                std::array::from_fn(|f| {
                    let along = [1.0, 2.0].get(f).copied().unwrap_or(0.0) * t;
                    along + ((r * 31 + f * 17) as f32).sin() * 0.1
                })
            })
            .collect();
        let ids: Vec<u32> = (0..rows.len() as u32).collect();
        let axes = principal_axes(&rows, &ids);
        let axis = |a: usize| -> [f32; FEATURES] { std::array::from_fn(|f| axes[f][a]) };
        let dot = |x: &[f32; FEATURES], y: &[f32; FEATURES]| -> f32 {
            x.iter().zip(y).map(|(a, b)| a * b).sum()
        };
        for a in 0..AXES {
            for b in 0..AXES {
                let want = if a == b { 1.0 } else { 0.0 };
                assert!(
                    (dot(&axis(a), &axis(b)) - want).abs() < 1e-5,
                    "axes {a}, {b}"
                );
            }
        }
        let widest = axis(0);
        let along = [1.0 / 5f32.sqrt(), 2.0 / 5f32.sqrt()];
        assert!(
            (widest[0] * along[0] + widest[1] * along[1]).abs() > 0.9999,
            "{widest:?}"
        );
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
