//! Where the clips come from: a glTF file's curves or a cooked package's clips, on the source's
//! first skeleton.

use throng_cpu_ref::clip::sample_clip;
use throng_cpu_ref::{Clip, Package, Skeleton, SourceClip, Trs};

use super::RetargetError;
use crate::import::{AuthoredCurve, ClipMeta, Origin, Placed as MetaPlaced};
use crate::Imported;

/// A source's skeleton (its first) and the clips on it, each with its metadata.
#[derive(Clone, Debug)]
pub struct Source {
    pub file: String,
    pub package: Package,
    pub clips: Vec<(Motion, ClipMeta)>,
}

/// A source clip: glTF curves (sampled exactly) or a cooked clip without root motion.
#[derive(Clone, Debug)]
pub enum Motion {
    Curves(SourceClip),
    Cooked(Box<Clip>),
}

impl Motion {
    pub fn name(&self) -> &str {
        match self {
            Motion::Curves(c) => &c.name,
            Motion::Cooked(c) => &c.name,
        }
    }

    /// Times to sample the retargeted clip at: the union of the source's key times (a cooked
    /// clip's sample times), so key-aligned sources stay key-aligned.
    pub fn times(&self) -> Vec<f64> {
        match self {
            Motion::Curves(c) => {
                let mut t: Vec<f32> = c.channels.iter().flat_map(|ch| ch.times.clone()).collect();
                t.sort_by(f32::total_cmp);
                t.dedup();
                if t.last().is_none_or(|&l| l < c.duration) {
                    t.push(c.duration);
                }
                t.into_iter().map(f64::from).collect()
            }
            Motion::Cooked(c) => (0..c.sample_count).map(|i| c.sample_time(i)).collect(),
        }
    }

    /// The local pose at `time`.
    pub fn sample(&self, skeleton: &Skeleton, time: f64, local: &mut [Trs]) {
        match self {
            Motion::Curves(c) => {
                throng_cpu_ref::curve::sample_exact(c, skeleton, time as f32, local)
            }
            Motion::Cooked(c) => sample_clip(c, skeleton, time as f32, local),
        }
    }
}

impl Source {
    /// The first skeleton of an imported glTF file and its clips.
    pub fn from_imported(imported: &Imported) -> Source {
        let clips = imported
            .source_clips
            .iter()
            .enumerate()
            .filter(|(_, c)| c.skeleton == 0)
            .map(|(i, c)| {
                let meta = imported.clip_meta.get(i).cloned().unwrap_or_default();
                (Motion::Curves(c.clone()), meta)
            })
            .collect();
        Source {
            file: imported.source.clone(),
            package: imported.package.clone(),
            clips,
        }
    }

    /// The first skeleton of a cooked package and its clips. A clip whose root motion was
    /// extracted is refused: its pose no longer holds the motion (retarget its glTF source).
    pub fn from_package(package: Package, file: &str) -> Result<Source, RetargetError> {
        let mut clips = Vec::new();
        for (index, clip) in package
            .clips
            .iter()
            .enumerate()
            .filter(|(_, c)| c.skeleton == 0)
        {
            if clip.root_motion.is_some() {
                return Err(RetargetError::Source {
                    file: file.to_string(),
                    reason: format!(
                        "clip '{}' had its root motion extracted by the cook; retarget from the \
                         glTF it was cooked from",
                        clip.name
                    ),
                });
            }
            let meta = ClipMeta {
                events: clip
                    .events
                    .iter()
                    .map(|e| cooked_meta(e.clone(), file))
                    .collect(),
                markers: clip
                    .markers
                    .iter()
                    .map(|m| cooked_meta(m.clone(), file))
                    .collect(),
                root_motion: None,
                curves: cooked_curves(&package, index as u32, clip)
                    .map(|c| cooked_meta(c, file))
                    .collect(),
            };
            clips.push((Motion::Cooked(Box::new(clip.clone())), meta));
        }
        Ok(Source {
            file: file.to_string(),
            package,
            clips,
        })
    }

    pub fn skeleton(&self) -> Result<&Skeleton, RetargetError> {
        self.package
            .skeletons
            .first()
            .ok_or_else(|| RetargetError::Source {
                file: self.file.clone(),
                reason: "has no skeleton".into(),
            })
    }
}

/// A cooked clip's curve tracks as authored curves: linear keys at its sample times, with
/// their channels' schema.
fn cooked_curves<'a>(
    package: &'a Package,
    index: u32,
    clip: &'a Clip,
) -> impl Iterator<Item = AuthoredCurve> + 'a {
    let curves = &package.curves;
    curves.tracks_of(index).iter().filter_map(move |t| {
        let c = curves.channels.get(t.channel as usize)?;
        Some(AuthoredCurve {
            name: c.name.clone(),
            composition: c.composition,
            default: c.default,
            min: c.min,
            max: c.max,
            step: false,
            keys: (0u32..)
                .zip(&t.values)
                .map(|(i, &v)| (clip.sample_time(i), v))
                .collect(),
        })
    })
}

fn cooked_meta<T>(value: T, file: &str) -> MetaPlaced<T> {
    MetaPlaced {
        value,
        origin: Origin {
            file: file.to_string(),
            line: None,
            key: "cooked clip".into(),
        },
    }
}
