//! Pops: how much a member's screen coverage jumps from one frame to the next when it changes
//! tier, against what its own motion changes it at full detail (docs/gpu.md, "Watching the
//! boundary").
//!
//! `--coverage` renders each frame a second time writing member ids instead of colours
//! (`Raster::set_member_ids`) and counts each member's pixels: its *coverage* (what covers the
//! pixel after depth, so occlusion by other members counts too). A run at full detail
//! (`--no-far-tier --no-lod`, every member skinned) and a run with the tiers, the same frames
//! and camera, see the same motion; `--pops-against FULL.json` compares them. At frame f a
//! member's change is |c(f) − c(f − 1)|; the *motion change* is the largest change of the full
//! detail run within `WINDOW` frames of f (at least `FLOOR` pixels), and the pop ratio the
//! tiered change over it. Only members the full-detail run shows in both frames are compared.

use std::path::Path;

use serde::{Deserialize, Serialize};
use throng_gpu::raster::{member_at, Image};

use super::super::{read_file, write_file, CliError};

/// Frames either side of a change over which the full-detail run's largest change is taken.
const WINDOW: usize = 2;
/// The smallest motion change (pixels) a ratio is taken against.
const FLOOR: u32 = 2;
/// Ratios above this count as pops in [`Pops::over_2`].
const BAR: f64 = 2.0;

/// Each frame's pixels per frame slot.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Coverage {
    pub width: u32,
    pub height: u32,
    pub frames: Vec<Vec<u32>>,
}

impl Coverage {
    /// Counts the pixels of each of `slots` frame slots in an image rendered with member ids.
    pub fn push(&mut self, image: &Image, slots: usize) {
        let mut counts = vec![0; slots];
        for px in image.rgba.chunks_exact(4) {
            let rgba = [px[0], px[1], px[2], px[3]];
            if let Some(c) = member_at(rgba).and_then(|s| counts.get_mut(s as usize)) {
                *c += 1;
            }
        }
        self.frames.push(counts);
    }

    pub fn write(&self, path: &Path) -> Result<(), CliError> {
        let text = serde_json::to_vec(self).map_err(|e| CliError::Usage(e.to_string()))?;
        write_file(path, &text)
    }

    pub fn read(path: &Path) -> Result<Coverage, CliError> {
        serde_json::from_slice(&read_file(path)?).map_err(|e| {
            CliError::Usage(format!(
                "{}: not a coverage file written by `throng demo --coverage` ({e})",
                path.display()
            ))
        })
    }
}

/// The largest pop of a tiered run against a full-detail one.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Pops {
    /// The largest ratio of a member's change to its motion change, and where: its frame slot,
    /// the frame, its change and its motion change (pixels).
    pub worst_ratio: f64,
    pub member: u32,
    pub frame: usize,
    pub change_px: u32,
    pub motion_px: u32,
    /// Member-frames compared, and those whose ratio is above 2.
    pub compared: usize,
    pub over_2: usize,
}

/// Compares `tiered` with `full` (the same frames, size and members).
pub fn pops(tiered: &Coverage, full: &Coverage) -> Result<Pops, CliError> {
    if (tiered.width, tiered.height, tiered.frames.len())
        != (full.width, full.height, full.frames.len())
    {
        return Err(CliError::Usage(format!(
            "--pops-against: the full-detail run has {} frames of {}x{}, this one {} of {}x{}; \
             run both with the same --frames, --width, --height and --instances",
            full.frames.len(),
            full.width,
            full.height,
            tiered.frames.len(),
            tiered.width,
            tiered.height
        )));
    }
    let change = |c: &Coverage, f: usize, m: usize| -> Option<u32> {
        let now = *c.frames[f].get(m)?;
        let before = *c.frames[f - 1].get(m)?;
        Some(now.abs_diff(before))
    };
    let mut out = Pops::default();
    for f in 1..full.frames.len() {
        for m in 0..full.frames[f].len() {
            let shown = |g: usize| full.frames[g].get(m).is_some_and(|&c| c > 0);
            if !shown(f) || !shown(f - 1) {
                continue;
            }
            let Some(tiered_change) = change(tiered, f, m) else {
                continue;
            };
            let window = f.saturating_sub(WINDOW).max(1)..=(f + WINDOW).min(full.frames.len() - 1);
            let motion = (window.filter_map(|g| change(full, g, m)).max())
                .unwrap_or(0)
                .max(FLOOR);
            let ratio = f64::from(tiered_change) / f64::from(motion);
            out.compared += 1;
            out.over_2 += usize::from(ratio > BAR);
            if ratio > out.worst_ratio {
                out = Pops {
                    worst_ratio: ratio,
                    member: m as u32,
                    frame: f,
                    change_px: tiered_change,
                    motion_px: motion,
                    ..out
                };
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coverage(frames: Vec<Vec<u32>>) -> Coverage {
        Coverage {
            width: 4,
            height: 4,
            frames,
        }
    }

    #[test]
    fn a_jump_the_full_detail_run_does_not_make_is_a_pop_and_a_shared_one_is_not() {
        let full = coverage(vec![
            vec![100, 50],
            vec![104, 60],
            vec![108, 70],
            vec![112, 80],
        ]);
        let tiered = coverage(vec![
            vec![100, 50],
            vec![104, 60],
            vec![140, 70],
            vec![144, 80],
        ]);
        let p = pops(&tiered, &full).unwrap();
        // Member 0 jumps 36 px at frame 2 where its motion changes it by 4: a ratio of 9.
        assert_eq!((p.member, p.frame, p.change_px, p.motion_px), (0, 2, 36, 4));
        assert_eq!(p.worst_ratio, 9.0);
        assert_eq!((p.compared, p.over_2), (6, 1));
        let same = pops(&full, &full).unwrap();
        assert!(same.worst_ratio <= 1.0, "{same:?}");
        assert!(pops(&coverage(vec![vec![1]]), &full).is_err());
    }
}
