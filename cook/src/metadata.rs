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

use throng_cpu_ref::{Clip, ClipEvent, LoopPolicy, SyncMarker};

use crate::import::{ClipMeta, Origin, Placed};
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
