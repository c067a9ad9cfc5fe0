//! How many sample bits a per-segment linear trend would save (issue 13's "study where the bits
//! go"): for every compressed clip of each file, per segment, animated sub-track and component,
//! the stored width against the width of the residuals from the straight line through the
//! segment's first and last stored values, at the same precision (shift), less what a header
//! would need to hold the line (its end value and the residuals' offset, each the stored width
//! plus a sign bit). Prints the sample bits today, the net bits with trends, and the ratio that
//! would give. Then the same for least-squares polynomials of degree 1 to 3 per segment and
//! component (residuals from the rounded fit), once with each coefficient costing the stored
//! width plus two bits in the header and once free: the bound any per-segment curve of that
//! degree could reach. Then, with the coefficients free, residuals from a basis learned per
//! segment (each row's mean and the segment's leading principal components over every animated
//! component's samples, 1 to 3 of them): the bound of a curve shared by a segment's sub-tracks
//! rather than chosen per sub-track. And each component coded sequentially, its prediction
//! errors Rice-coded (Rice, "Some practical universal noiseless coding techniques", JPL 1979).
//! An estimate from the stream, not an encoder: precision stays as the search chose it.
//!
//! `cargo run --release -p throng-cook --example codec_headroom -- [--max-rate HZ] FILE.glb...`
//! (`--max-rate`: the `standard` profile's thresholds with key-aligned clips kept up to HZ
//! instead of 60 Hz).

use throng_cook::{cook_file, Profile};
use throng_cpu_ref::codec::layout::LO_SHIFT;
use throng_cpu_ref::codec::{decode_k, header, segment_count};
use throng_cpu_ref::SubTrackKind;

/// Bits that hold every value in `0..=span`.
fn bits(span: i64) -> u64 {
    64 - span.max(0).leading_zeros() as u64
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut profile = Profile::STANDARD;
    if args.first().is_some_and(|a| a == "--max-rate") && args.len() > 1 {
        match args[1].parse() {
            Ok(hz) => profile.max_rate = hz,
            Err(e) => return eprintln!("--max-rate {}: {e}", args[1]),
        }
        args.drain(..2);
    }
    let (mut raw, mut payload, mut today, mut trended) = (0u64, 0u64, 0u64, 0u64);
    // Sample bits with a fit of degree `d` (index d - 1), its coefficients costed and free.
    let (mut costed, mut free) = ([0u64; 3], [0u64; 3]);
    // Sample bits with a learned basis of the mean and `c` components (index c - 1), free.
    let mut learned = [0u64; 3];
    // Sample bits with each component's samples predicted from the one or two before and the
    // prediction errors Rice-coded (index: the prediction's order - 1).
    let mut rice = [0u64; 2];
    for path in args {
        let (package, report) = match cook_file(path.as_ref(), &profile) {
            Ok(cooked) => cooked,
            Err(e) => return eprintln!("{path}: {e}"),
        };
        let codec = report.codec.unwrap_or_default();
        raw += codec.total.raw_bytes;
        payload += codec.total.compressed_bytes;
        let (mut file_today, mut file_trended) = (0u64, 0u64);
        for clip in &package.clips {
            let Some(z) = &clip.compressed else { continue };
            let Some(segments) = segment_count(clip.sample_count, z.segment_length) else {
                continue;
            };
            for s in 0..segments {
                let first = s * z.segment_length;
                let n = (clip.sample_count - first).min(z.segment_length);
                // Each animated component's stored values in this segment, and its width.
                let mut rows: Vec<(Vec<i64>, u64)> = Vec::new();
                for st in clip
                    .sub_tracks
                    .iter()
                    .filter(|st| st.kind == SubTrackKind::Animated)
                {
                    let Some((_, h)) = header(z, s, st.offset) else {
                        continue;
                    };
                    let ks: Vec<[u32; 3]> = (first..first + n)
                        .filter_map(|i| decode_k(z, st.offset, i))
                        .collect();
                    for axis in 0..3 {
                        let w = u64::from(h.widths[axis]);
                        file_today += w * u64::from(n);
                        let base = i64::from(h.hi[axis] << LO_SHIFT);
                        let k: Vec<i64> = (ks.iter())
                            .map(|v| (i64::from(v[axis]) - base) >> h.shift)
                            .collect();
                        rows.push((k.clone(), w));
                        for (order, bits_used) in rice.iter_mut().enumerate() {
                            *bits_used += rice_bits(&k, w, order + 1).min(w * u64::from(n));
                        }
                        let (k0, k1) = (k[0], k[k.len() - 1]);
                        let steps = (k.len() as i64 - 1).max(1);
                        let residuals: Vec<i64> = (k.iter().enumerate())
                            .map(|(i, &v)| v - (k0 + ((k1 - k0) * i as i64) / steps))
                            .collect();
                        for degree in 1..=3 {
                            let fit = least_squares(&k, degree);
                            let wp = bits(span(k.iter().zip(&fit).map(|(&v, &p)| v - p)));
                            let header = (degree as u64 + 1) * (w + 2);
                            let fitted = wp.min(w) * u64::from(n);
                            costed[degree - 1] += if wp < w {
                                fitted + header
                            } else {
                                w * u64::from(n)
                            };
                            free[degree - 1] += fitted;
                        }
                        let lo = residuals.iter().copied().min().unwrap_or(0);
                        let hi = residuals.iter().copied().max().unwrap_or(0);
                        let w_trend = bits(hi - lo);
                        let line = if w_trend < w { 2 * (w + 1) } else { 0 };
                        file_trended += w_trend.min(w) * u64::from(n) + line;
                    }
                }
                for (c, bits_used) in learned.iter_mut().enumerate() {
                    *bits_used += basis_bits(&rows, c + 1);
                }
            }
        }
        println!(
            "{path}: sample bits {file_today}, with trends {file_trended} ({:.1} % fewer)",
            100.0 * (1.0 - file_trended as f64 / file_today.max(1) as f64)
        );
        today += file_today;
        trended += file_trended;
    }
    let ratio = |bits: u64| {
        let saved = (today - bits.min(today)) / 8;
        raw as f64 / (payload - saved.min(payload)).max(1) as f64
    };
    for degree in 1..=3 {
        println!(
            "all: least-squares polynomial of degree {degree}: ratio {:.2} with its coefficients \
             in the header, {:.2} were they free",
            ratio(costed[degree - 1]),
            ratio(free[degree - 1])
        );
    }
    for (order, &bits_used) in rice.iter().enumerate() {
        println!(
            "all: each sample predicted from the {} before it, errors Rice-coded: ratio {:.2}",
            order + 1,
            ratio(bits_used)
        );
    }
    for (c, &bits_used) in learned.iter().enumerate() {
        println!(
            "all: learned basis per segment, mean and {} components, coefficients free: ratio {:.2}",
            c + 1,
            ratio(bits_used)
        );
    }
    let saved = (today - trended.min(today)) / 8;
    println!(
        "all: ratio {:.2} today; {:.2} with trends ({} of {} payload bytes saved)",
        raw as f64 / payload.max(1) as f64,
        raw as f64 / (payload - saved).max(1) as f64,
        saved,
        payload
    );
}

/// `max - min` of `values` (0 when empty).
fn span(values: impl Iterator<Item = i64>) -> i64 {
    let (lo, hi) = values.fold((i64::MAX, i64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        0
    } else {
        hi - lo
    }
}

/// The least-squares polynomial of `degree` through `k` (at x = i / (n - 1)), evaluated at each
/// sample and rounded: normal equations solved by Gauss-Jordan elimination, in f64.
fn least_squares(k: &[i64], degree: usize) -> Vec<i64> {
    let m = degree + 1;
    let x = |i: usize| i as f64 / (k.len().max(2) - 1) as f64;
    let mut a = vec![vec![0.0f64; m + 1]; m];
    for (i, &v) in k.iter().enumerate() {
        let powers: Vec<f64> = (0..m).map(|e| x(i).powi(e as i32)).collect();
        for r in 0..m {
            for c in 0..m {
                a[r][c] += powers[r] * powers[c];
            }
            a[r][m] += powers[r] * v as f64;
        }
    }
    for c in 0..m {
        // A segment shorter than the degree leaves the system singular: nudge the diagonal.
        a[c][c] += 1e-9;
        let pivot = a[c].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot[c];
                row.iter_mut().zip(&pivot).for_each(|(x, p)| *x -= f * p);
            }
        }
    }
    let coefficients: Vec<f64> = (0..m).map(|r| a[r][m] / a[r][r]).collect();
    (0..k.len())
        .map(|i| {
            let p: f64 = (0..m).map(|e| coefficients[e] * x(i).powi(e as i32)).sum();
            p.round() as i64
        })
        .collect()
}

/// Bits of a component's stored values `k` (width `w`) coded sequentially: the first `order`
/// at `w` bits, then each value's error from its prediction (the last value, or the line
/// through the last two, for `order` 1 or 2), zigzagged and Rice-coded with the segment's best
/// parameter (5 bits to say which). Decoding a sample would read every sample before it in
/// its segment: the bound of giving up per-sample random access within a segment.
fn rice_bits(k: &[i64], w: u64, order: usize) -> u64 {
    let errors: Vec<u64> = (order..k.len())
        .map(|i| {
            let predicted = if order == 1 {
                k[i - 1]
            } else {
                2 * k[i - 1] - k[i - 2]
            };
            let e = k[i] - predicted;
            ((e << 1) ^ (e >> 63)) as u64
        })
        .collect();
    let best = (0..=24u64)
        .map(|p| errors.iter().map(|&z| p + 1 + (z >> p)).sum::<u64>())
        .min()
        .unwrap_or(0);
    w * order.min(k.len()) as u64 + 5 + best
}

/// Sample bits of a segment's `rows` (stored values and width of each animated component) with
/// each row's residual from its mean and its projection on the `c` leading principal components
/// of the segment's mean-removed rows, rounded; a row keeps its width where that is narrower.
fn basis_bits(rows: &[(Vec<i64>, u64)], c: usize) -> u64 {
    let n = rows.first().map_or(0, |r| r.0.len());
    let centred: Vec<Vec<f64>> = (rows.iter())
        .map(|(k, _)| {
            let mean = k.iter().sum::<i64>() as f64 / n.max(1) as f64;
            k.iter().map(|&v| v as f64 - mean).collect()
        })
        .collect();
    // Each row scaled to unit length first, so wide rows do not choose the basis alone.
    let mut covariance = vec![vec![0.0f64; n]; n];
    for r in &centred {
        let norm2: f64 = r.iter().map(|x| x * x).sum();
        if norm2 <= 0.0 {
            continue;
        }
        for i in 0..n {
            for j in 0..n {
                covariance[i][j] += r[i] * r[j] / norm2;
            }
        }
    }
    let basis = leading_eigenvectors(covariance, c);
    (rows.iter().zip(&centred))
        .map(|((_, w), r)| {
            let mut residual = r.clone();
            for e in &basis {
                let coefficient: f64 = r.iter().zip(e).map(|(a, b)| a * b).sum();
                residual
                    .iter_mut()
                    .zip(e)
                    .for_each(|(x, b)| *x -= coefficient * b);
            }
            bits(span(residual.iter().map(|x| x.round() as i64))).min(*w) * n as u64
        })
        .sum()
}

/// The `c` unit eigenvectors of symmetric `a` with the largest eigenvalues (cyclic Jacobi).
fn leading_eigenvectors(mut a: Vec<Vec<f64>>, c: usize) -> Vec<Vec<f64>> {
    let n = a.len();
    let mut v: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| f64::from(u8::from(i == j))).collect())
        .collect();
    for _ in 0..50 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i][j] * a[i][j])
            .sum();
        if off < 1e-18 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                if a[p][q].abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let (cos, sin) = (1.0 / (t * t + 1.0).sqrt(), t / (t * t + 1.0).sqrt());
                let rotate = |x: &mut f64, y: &mut f64| {
                    (*x, *y) = (cos * *x - sin * *y, sin * *x + cos * *y);
                };
                // A ← Jᵀ A J: columns p and q, then rows p and q; V ← V J.
                for row in a.iter_mut().chain(v.iter_mut()) {
                    let (mut x, mut y) = (row[p], row[q]);
                    rotate(&mut x, &mut y);
                    (row[p], row[q]) = (x, y);
                }
                let (low, high) = a.split_at_mut(q);
                for (x, y) in low[p].iter_mut().zip(high[0].iter_mut()) {
                    rotate(x, y);
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| a[j][j].total_cmp(&a[i][i]));
    (order.into_iter().take(c))
        .map(|i| (0..n).map(|k| v[k][i]).collect())
        .collect()
}
