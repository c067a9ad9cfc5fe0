//! Blend spaces: weights of a producer's clips from its float inputs.
//!
//! 1-D: points sorted by position; the input is clamped to the first and last point and the two
//! bracketing points share the weight linearly. 2-D: the points are Delaunay-triangulated once at
//! load (Bowyer–Watson: A. Bowyer, "Computing Dirichlet tessellations", and D. F. Watson,
//! "Computing the n-dimensional Delaunay tessellation", The Computer Journal 24(2), 1981); an
//! input inside a triangle weighs its corners barycentrically, one outside the hull is projected
//! to the nearest point of the hull and weighs that edge's two ends linearly.

use glam::DVec2;

/// Weights of 1-D points at sorted positions `at` for input `x`, written into `out` (same
/// length). At most two are non-zero.
pub fn weights_1d(at: &[f64], x: f64, out: &mut [f32]) {
    out.iter_mut().for_each(|w| *w = 0.0);
    let (Some(&first), Some(&last)) = (at.first(), at.last()) else {
        return;
    };
    if x <= first || at.len() == 1 {
        out[0] = 1.0;
        return;
    }
    if x >= last {
        out[at.len() - 1] = 1.0;
        return;
    }
    // at[i] <= x < at[i + 1]
    let i = at.partition_point(|&a| a <= x) - 1;
    let span = at[i + 1] - at[i];
    let u = if span > 0.0 { (x - at[i]) / span } else { 0.0 };
    out[i] = (1.0 - u) as f32;
    out[i + 1] = u as f32;
}

/// Triangles over 2-D points (indices), counter-clockwise.
pub type Triangle = [u16; 3];

/// Why points cannot be triangulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TriangulationError {
    #[error("a 2-D blend space needs at least 3 points")]
    TooFew,
    #[error("the points of a 2-D blend space all lie on one line")]
    Collinear,
    #[error("two points of a 2-D blend space coincide")]
    Duplicate,
}

fn orient(a: DVec2, b: DVec2, c: DVec2) -> f64 {
    (b - a).perp_dot(c - a)
}

/// True when `p` lies strictly inside the circumcircle of the counter-clockwise triangle abc.
fn in_circumcircle(a: DVec2, b: DVec2, c: DVec2, p: DVec2) -> bool {
    let (ad, bd, cd) = (a - p, b - p, c - p);
    let det = (ad.length_squared()) * bd.perp_dot(cd) - (bd.length_squared()) * ad.perp_dot(cd)
        + (cd.length_squared()) * ad.perp_dot(bd);
    det > 1e-12
}

/// Delaunay triangulation of `points` (Bowyer–Watson with a super-triangle).
pub fn triangulate(points: &[DVec2]) -> Result<Vec<Triangle>, TriangulationError> {
    let n = points.len();
    if n < 3 {
        return Err(TriangulationError::TooFew);
    }
    for i in 0..n {
        for j in i + 1..n {
            if points[i].distance_squared(points[j]) < 1e-18 {
                return Err(TriangulationError::Duplicate);
            }
        }
    }
    let (lo, hi) = points.iter().fold((points[0], points[0]), |(lo, hi), &p| {
        (lo.min(p), hi.max(p))
    });
    let extent = (hi - lo).max_element().max(1e-9);
    let tolerance = 1e-9 * extent * extent;
    let bends =
        |j: usize| (j + 1..n).any(|k| orient(points[0], points[j], points[k]).abs() > tolerance);
    if !(1..n).any(bends) {
        return Err(TriangulationError::Collinear);
    }
    let centre = (lo + hi) * 0.5;
    let big = extent * 64.0;
    let mut all: Vec<DVec2> = points.to_vec();
    all.push(centre + DVec2::new(-big, -big));
    all.push(centre + DVec2::new(big, -big));
    all.push(centre + DVec2::new(0.0, big));
    let mut tris: Vec<[usize; 3]> = vec![[n, n + 1, n + 2]];
    for (p, &point) in points.iter().enumerate() {
        let (bad, keep): (Vec<[usize; 3]>, Vec<[usize; 3]>) = tris
            .iter()
            .partition(|t| in_circumcircle(all[t[0]], all[t[1]], all[t[2]], point));
        // Boundary of the cavity: edges of bad triangles not shared by another bad triangle.
        let mut edges: Vec<(usize, usize)> = Vec::new();
        for t in &bad {
            for e in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
                let shared = bad
                    .iter()
                    .any(|o| o != t && o.contains(&e.0) && o.contains(&e.1));
                if !shared {
                    edges.push(e);
                }
            }
        }
        tris = keep;
        tris.extend(edges.into_iter().map(|(a, b)| [a, b, p]));
    }
    let mut out: Vec<Triangle> = tris
        .into_iter()
        .filter(|t| t.iter().all(|&v| v < n))
        .filter(|t| orient(all[t[0]], all[t[1]], all[t[2]]).abs() > 1e-12)
        .map(|t| {
            let ccw = orient(all[t[0]], all[t[1]], all[t[2]]) > 0.0;
            let t = if ccw { t } else { [t[0], t[2], t[1]] };
            [t[0] as u16, t[1] as u16, t[2] as u16]
        })
        .collect();
    out.sort_unstable();
    Ok(out)
}

/// Barycentric weights of `p` in triangle abc.
fn barycentric(a: DVec2, b: DVec2, c: DVec2, p: DVec2) -> [f64; 3] {
    let area = orient(a, b, c);
    let wa = orient(b, c, p) / area;
    let wb = orient(c, a, p) / area;
    [wa, wb, 1.0 - wa - wb]
}

/// Weights of 2-D `points` (triangulated as `triangles`) for input `p`, written into `out`.
/// At most three are non-zero; they are non-negative and sum to 1.
pub fn weights_2d(points: &[DVec2], triangles: &[Triangle], p: DVec2, out: &mut [f32]) {
    out.iter_mut().for_each(|w| *w = 0.0);
    const INSIDE: f64 = -1e-9;
    for t in triangles {
        let [a, b, c] = t.map(|i| points[i as usize]);
        let w = barycentric(a, b, c, p);
        if w.iter().all(|&x| x >= INSIDE) {
            let w = w.map(|x| x.max(0.0));
            let sum: f64 = w.iter().sum();
            for (k, &i) in t.iter().enumerate() {
                out[i as usize] = (w[k] / sum) as f32;
            }
            return;
        }
    }
    // Outside the hull: the nearest point on any triangle edge (the nearest hull point).
    let mut best: Option<(f64, u16, u16, f64)> = None;
    for t in triangles {
        for (i, j) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            let (a, b) = (points[i as usize], points[j as usize]);
            let ab = b - a;
            let u = ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
            let dist = p.distance_squared(a + ab * u);
            if best.is_none_or(|(d, ..)| dist < d) {
                best = Some((dist, i, j, u));
            }
        }
    }
    if let Some((_, i, j, u)) = best {
        out[i as usize] += (1.0 - u) as f32;
        out[j as usize] += u as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_d_weights_bracket_and_clamp() {
        let at = [0.0, 1.4, 3.5];
        let mut w = [0.0; 3];
        weights_1d(&at, 0.7, &mut w);
        assert_eq!(w, [0.5, 0.5, 0.0]);
        weights_1d(&at, 9.0, &mut w);
        assert_eq!(w, [0.0, 0.0, 1.0]);
        weights_1d(&at, -1.0, &mut w);
        assert_eq!(w, [1.0, 0.0, 0.0]);
        weights_1d(&at, 1.4, &mut w);
        assert_eq!(w, [0.0, 1.0, 0.0]);
    }

    #[test]
    fn square_with_centre_is_four_delaunay_triangles_and_weights_interpolate() {
        let pts = [
            DVec2::new(0.0, 0.0),
            DVec2::new(2.0, 0.0),
            DVec2::new(2.0, 2.0),
            DVec2::new(0.0, 2.0),
            DVec2::new(1.0, 1.0),
        ];
        let tris = triangulate(&pts).unwrap();
        assert_eq!(tris.len(), 4, "{tris:?}");
        let mut w = [0.0; 5];
        weights_2d(&pts, &tris, DVec2::new(1.0, 1.0), &mut w);
        assert!((w[4] - 1.0).abs() < 1e-6, "{w:?}");
        weights_2d(&pts, &tris, DVec2::new(1.0, 0.0), &mut w);
        assert!(
            (w[0] - 0.5).abs() < 1e-6 && (w[1] - 0.5).abs() < 1e-6,
            "{w:?}"
        );
        // Outside: projects onto the edge x = 2.
        weights_2d(&pts, &tris, DVec2::new(5.0, 0.5), &mut w);
        assert!(
            (w[1] - 0.75).abs() < 1e-6 && (w[2] - 0.25).abs() < 1e-6,
            "{w:?}"
        );
        let sum: f32 = w.iter().sum();
        assert!((sum - 1.0).abs() < 1e-6);
    }

    #[test]
    fn degenerate_point_sets_are_rejected() {
        let line = [DVec2::ZERO, DVec2::X, DVec2::X * 2.0];
        assert_eq!(triangulate(&line), Err(TriangulationError::Collinear));
        assert_eq!(triangulate(&line[..2]), Err(TriangulationError::TooFew));
        assert_eq!(
            triangulate(&[DVec2::ZERO, DVec2::X, DVec2::X]),
            Err(TriangulationError::Duplicate)
        );
    }
}
