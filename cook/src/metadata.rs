//! The cook's checks of a clip's events and sync markers, and their canonical form
//! (DESIGN.md §5, docs/events-and-root-motion.md).
//!
//! A time must be finite and within [0, duration]; one past the duration by at most
//! [`TIME_TOLERANCE`] (a decimal time in a file against an f32 key time) is taken as the duration.
//! On a looping clip a marker at the duration is the same phase point as 0 and is stored at 0;
//! events are left where they are written (control delivers each crossing in order). Errors, each
//! naming the file, line and key that wrote the entry: a non-finite time, a time outside the
//! clip, an empty name, events or markers on a clip of zero duration, and two events (or two
//! markers) with the same name at the same time. Both lists come out sorted by time, then name.

use throng_cpu_ref::{Clip, ClipEvent, CurveChannel, CurveTrack, Curves, LoopPolicy, SyncMarker};

use crate::import::{AuthoredCurve, ClipMeta, Origin, Placed};
use crate::CookError;

/// How far past the duration, relative to `max(duration, 1 s)`, a time is taken as the duration.
pub const TIME_TOLERANCE: f64 = 1e-6;

/// The clip's checked events, sorted by time, then name.
pub fn events(meta: &ClipMeta, clip: &Clip) -> Result<Vec<ClipEvent>, CookError> {
    let mut out = Vec::with_capacity(meta.events.len());
    for e in &meta.events {
        let time = checked_time(&e.value.name, e.value.time, &e.origin, clip)?;
        out.push(Placed {
            value: ClipEvent {
                time,
                ..e.value.clone()
            },
            origin: e.origin.clone(),
        });
    }
    sorted_unique(out, |e| (e.time, e.name.as_str()), "event")
}

/// The clip's checked markers, sorted by time, then name; on a looping clip one at the duration
/// is stored at 0.
pub fn markers(meta: &ClipMeta, clip: &Clip) -> Result<Vec<SyncMarker>, CookError> {
    let mut out = Vec::with_capacity(meta.markers.len());
    for m in &meta.markers {
        let mut time = checked_time(&m.value.name, m.value.time, &m.origin, clip)?;
        if clip.loop_policy == LoopPolicy::Loop && time == clip.duration {
            time = 0.0;
        }
        out.push(Placed {
            value: SyncMarker {
                time,
                ..m.value.clone()
            },
            origin: m.origin.clone(),
        });
    }
    sorted_unique(out, |m| (m.time, m.name.as_str()), "marker")
}

/// An authored curve and its values at a clip's samples.
pub type SampledCurve<'a> = (&'a Placed<AuthoredCurve>, Vec<f32>);

/// The clip's authored curves, checked, each with its values at the clip's samples
/// (`Clip::sample_time`): linear between keys or held (step), the first key's value before it
/// and the last's after. Errors at the curve's origin: an empty name, a name given twice, no
/// keys, a key time that is not finite, outside the clip or not after the key before it, a
/// value that is not finite, an empty range or a default outside it.
pub fn curves<'a>(meta: &'a ClipMeta, clip: &Clip) -> Result<Vec<SampledCurve<'a>>, CookError> {
    let mut out: Vec<SampledCurve> = Vec::with_capacity(meta.curves.len());
    let slack = TIME_TOLERANCE * clip.duration.max(1.0);
    for placed in &meta.curves {
        let (c, origin) = (&placed.value, &placed.origin);
        if c.name.is_empty() {
            return Err(origin.error("the curve's name is empty"));
        }
        if let Some((first, _)) = out.iter().find(|(p, _)| p.value.name == c.name) {
            return Err(origin.error(format!(
                "curve '{}' is given twice on clip '{}' (also {})",
                c.name, clip.name, first.origin.key
            )));
        }
        if c.min.is_nan() || c.max.is_nan() || c.min > c.max {
            return Err(origin.error(format!(
                "curve '{}': range [{}, {}] is empty",
                c.name, c.min, c.max
            )));
        }
        if !c.default.is_finite() || c.default < c.min || c.default > c.max {
            return Err(origin.error(format!(
                "curve '{}': default {} is not a finite value in [{}, {}]",
                c.name, c.default, c.min, c.max
            )));
        }
        if c.keys.is_empty() {
            return Err(origin.error(format!("curve '{}' has no keys", c.name)));
        }
        let mut last = f64::NEG_INFINITY;
        for (k, &(t, v)) in c.keys.iter().enumerate() {
            if !t.is_finite() || t < 0.0 || t > clip.duration + slack || t <= last {
                return Err(origin.error(format!(
                    "curve '{}': key {k} at {t} s is not a time in clip '{}' ([0, {}] s) after \
                     the key before it",
                    c.name, clip.name, clip.duration
                )));
            }
            if !v.is_finite() {
                return Err(origin.error(format!(
                    "curve '{}': key {k}'s value {v} is not a finite f32",
                    c.name
                )));
            }
            last = t;
        }
        let values = (0..clip.sample_count)
            .map(|i| key_value(c, clip.sample_time(i)))
            .collect();
        out.push((placed, values));
    }
    Ok(out)
}

/// One clip's checked authored curve: the clip's index and skeleton, the curve and its values at
/// the clip's samples.
pub struct ClipCurve<'a> {
    pub clip: u32,
    pub skeleton: u32,
    pub curve: &'a Placed<AuthoredCurve>,
    pub values: Vec<f32>,
}

/// The package's curves from every clip's: one channel per skeleton and name (sorted by
/// skeleton, then name), one track per clip and curve (sorted by clip, then channel). A channel
/// has one schema: a curve whose composition, default or range differs from an earlier clip's
/// curve of the same name and skeleton is an error at its origin.
pub fn channels(curves: Vec<ClipCurve>) -> Result<Curves, CookError> {
    let mut schemas: Vec<(u32, &Placed<AuthoredCurve>)> = Vec::new();
    for c in &curves {
        let a = &c.curve.value;
        let same =
            |(s, p): &&(u32, &Placed<AuthoredCurve>)| *s == c.skeleton && p.value.name == a.name;
        match schemas.iter().find(same) {
            Some((_, first)) => {
                let f = &first.value;
                let schema = |x: &AuthoredCurve| {
                    (
                        x.composition,
                        x.default.to_bits(),
                        x.min.to_bits(),
                        x.max.to_bits(),
                    )
                };
                if schema(f) != schema(a) {
                    return Err(c.curve.origin.error(format!(
                        "curve '{}' is {} with default {} in [{}, {}], but {} gives it {} with \
                         default {} in [{}, {}]: a curve has one schema on its skeleton",
                        a.name,
                        a.composition.name(),
                        a.default,
                        a.min,
                        a.max,
                        first.origin.key,
                        f.composition.name(),
                        f.default,
                        f.min,
                        f.max
                    )));
                }
            }
            None => schemas.push((c.skeleton, c.curve)),
        }
    }
    schemas.sort_by(|(sa, a), (sb, b)| (sa, &a.value.name).cmp(&(sb, &b.value.name)));
    let channels: Vec<CurveChannel> = schemas
        .iter()
        .map(|(skeleton, p)| CurveChannel {
            name: p.value.name.clone(),
            skeleton: *skeleton,
            default: p.value.default,
            min: p.value.min,
            max: p.value.max,
            composition: p.value.composition,
        })
        .collect();
    let mut tracks: Vec<CurveTrack> = curves
        .into_iter()
        .map(|c| {
            let channel = channels
                .iter()
                .position(|ch| ch.skeleton == c.skeleton && ch.name == c.curve.value.name)
                .unwrap_or_default() as u32;
            CurveTrack {
                clip: c.clip,
                channel,
                values: c.values,
                quantized: None,
            }
        })
        .collect();
    tracks.sort_by_key(|t| (t.clip, t.channel));
    Ok(Curves {
        channels,
        tracks,
        selections: Vec::new(),
    })
}

/// Authored curve `c` at `time`: its keys held (step) or lerped, clamped to the first and last.
fn key_value(c: &AuthoredCurve, time: f64) -> f32 {
    let after = c.keys.partition_point(|&(t, _)| t <= time);
    match (after.checked_sub(1), c.keys.get(after)) {
        (None, _) => c.keys[0].1,
        (Some(k), None) => c.keys[k].1,
        (Some(k), Some(&(t1, v1))) => {
            let (t0, v0) = c.keys[k];
            if c.step {
                v0
            } else {
                let u = ((time - t0) / (t1 - t0)) as f32;
                v0 + (v1 - v0) * u
            }
        }
    }
}

/// `time` checked against the clip, snapped to the duration when just past it.
fn checked_time(name: &str, time: f64, origin: &Origin, clip: &Clip) -> Result<f64, CookError> {
    let duration = clip.duration;
    if name.is_empty() {
        return Err(origin.error("the name is empty"));
    }
    if duration <= 0.0 {
        return Err(origin.error(format!(
            "clip '{}' has zero duration: it cannot carry events or markers",
            clip.name
        )));
    }
    if !time.is_finite() {
        return Err(origin.error(format!(
            "time of '{name}' is {time}, not a finite number of seconds"
        )));
    }
    let slack = TIME_TOLERANCE * duration.max(1.0);
    if time < 0.0 || time > duration + slack {
        return Err(origin.error(format!(
            "time of '{name}' is {time} s, outside clip '{}' ([0, {duration}] s)",
            clip.name
        )));
    }
    Ok(time.min(duration))
}

/// The values sorted by `key`; two with equal keys are an error at the later one's origin.
fn sorted_unique<T>(
    mut items: Vec<Placed<T>>,
    key: impl Fn(&T) -> (f64, &str),
    what: &str,
) -> Result<Vec<T>, CookError> {
    items.sort_by(|a, b| {
        let (ka, kb) = (key(&a.value), key(&b.value));
        ka.0.total_cmp(&kb.0).then_with(|| ka.1.cmp(kb.1))
    });
    if let Some(pair) = items
        .windows(2)
        .find(|w| key(&w[0].value) == key(&w[1].value))
    {
        let (time, name) = key(&pair[1].value);
        let first = &pair[0].origin;
        let at = first
            .line
            .map(|l| format!("line {l}, "))
            .unwrap_or_default();
        let hint = if what == "marker" {
            "; on a looping clip a marker at the duration is the one at 0"
        } else {
            ""
        };
        return Err(pair[1].origin.error(format!(
            "{what} '{name}' at {time} s is given twice (also {at}{}){hint}",
            first.key
        )));
    }
    Ok(items.into_iter().map(|p| p.value).collect())
}
