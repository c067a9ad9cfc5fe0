//! Impostors: a skin's clips baked into an atlas of camera-facing cards, the far tier
//! (docs/gpu.md "Far tier"). This module is the description the package stores and the
//! arithmetic both the bake and `impostor.wgsl` follow; the bake itself is throng-gpu's.
//!
//! Conventions: component space, +Y up, characters face +Z. View `v` of `views` looks at the
//! character from azimuth `v · 2π / views` (about +Y, from +Z toward +X) and elevation row `r`
//! from `elevations[r]` radians above the horizon, toward `centre`. Its image is a square
//! `2 · radius` on a side, centred on `centre`, right = `normalize(Y × d)` and up = `d × right`
//! for `d` the unit direction from `centre` toward the camera; a card is drawn the same way
//! toward the real camera, so the atlas cell maps onto it exactly at the baked direction.
//!
//! Cells are `cell` pixels square, numbered left to right then top to bottom over the atlas;
//! clip slot `c` (in `clips` order) starts where the one before ended, and within it cell
//! `(frame · rows + row) · views + view`. A texel holds (plain bytes, not sRGB-encoded) the
//! surface normal in component space, octahedral with +Y as its pole, in rg, the surface's
//! offset from the card's centre toward the baking camera in b (−1 to 1 card radii as 0 to 1),
//! and coverage in alpha (0 or 255): throng-shaders raster.wgsl `bake_texel`.
//!
//! Frames: a looping clip's `frames` cells show times `f · duration / frames` (its end is its
//! start); a clip played once shows `f · duration / (frames − 1)`, both ends included. A card
//! shows the two frames around its clip time mixed ([`frame_blend`]), and the two views around
//! its azimuth at the nearest elevation row, mixed (raster.wgsl `card_fs`).

use std::f32::consts::TAU;

use glam::Vec3;

use crate::{Clip, LoopPolicy, Package};

/// Views around the up axis an impostor may have.
pub const MAX_IMPOSTOR_VIEWS: u32 = 64;
/// Elevation rows an impostor may have.
pub const MAX_IMPOSTOR_ROWS: usize = 8;

/// One skin's baked impostor.
#[derive(Clone, Debug, PartialEq)]
pub struct Impostor {
    /// The skin it shows (package index).
    pub skin: u32,
    /// Atlas size in pixels, each a whole number of cells.
    pub width: u32,
    pub height: u32,
    /// Cell side in pixels.
    pub cell: u32,
    /// Views around the up axis per elevation row.
    pub views: u32,
    /// Elevation of each row above the horizon, radians, ascending, within ±π/2.
    pub elevations: Vec<f32>,
    /// Card centre (component space) and half size (scene units).
    pub centre: Vec3,
    pub radius: f32,
    /// The baked clips, in atlas order.
    pub clips: Vec<ImpostorClip>,
}

/// One baked clip: `frames` frames, each `rows × views` cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImpostorClip {
    /// Package clip index.
    pub clip: u32,
    pub frames: u32,
}

/// Why an impostor was refused: the field and what is wrong with it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("impostor {field} {what}")]
pub struct ImpostorError {
    pub field: &'static str,
    pub what: String,
}

fn refuse(field: &'static str, what: String) -> ImpostorError {
    ImpostorError { field, what }
}

/// Frames a bake at `fps` frames per second gives `clip` (at least 1; both ends of a clip
/// played once).
pub fn frames_for(clip: &Clip, fps: f32) -> u32 {
    let spans = (clip.duration * f64::from(fps)).round().clamp(0.0, 1e6) as u32;
    match clip.loop_policy {
        LoopPolicy::Loop => spans.max(1),
        LoopPolicy::Once => spans + 1,
    }
}

/// The clip time frame `frame` of `frames` shows (module doc).
pub fn frame_time(clip: &Clip, frames: u32, frame: u32) -> f64 {
    let spans = match clip.loop_policy {
        LoopPolicy::Loop => frames,
        LoopPolicy::Once => frames.saturating_sub(1),
    };
    match spans {
        0 => 0.0,
        n => clip.duration * f64::from(frame) / f64::from(n),
    }
}

/// Where a clip time falls among a clip's baked frames: the nearest frame, the neighbour on the
/// time's side of it, and how far toward that neighbour the time lies, in frames (0 on the
/// nearest frame, at most one half). A card shows the two frames mixed by `weight`
/// (docs/gpu.md, "Far tier"), so it moves as smoothly as its frames allow instead of stepping.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameBlend {
    pub nearest: u32,
    pub toward: u32,
    pub weight: f32,
}

/// The frame of `frames` nearest to clip time `time` (seconds; wrapped for a looping clip,
/// clamped for one played once).
pub fn frame_at(clip: &Clip, frames: u32, time: f64) -> u32 {
    frame_blend(clip, frames, time).nearest
}

/// [`frame_at`]'s frame and its neighbour toward `time` (a looping clip's last frame
/// neighbours its first; a clip played once holds its ends).
pub fn frame_blend(clip: &Clip, frames: u32, time: f64) -> FrameBlend {
    let still = FrameBlend {
        nearest: 0,
        toward: 0,
        weight: 0.0,
    };
    if clip.duration <= 0.0 || frames <= 1 || !time.is_finite() {
        return still;
    }
    let phase = time / clip.duration;
    let (x, wraps) = match clip.loop_policy {
        LoopPolicy::Loop => (phase.rem_euclid(1.0) * f64::from(frames), true),
        LoopPolicy::Once => (phase.clamp(0.0, 1.0) * f64::from(frames - 1), false),
    };
    let n = x.round();
    let d = x - n;
    let n = n as u32;
    let (nearest, toward) = match (wraps, d >= 0.0) {
        (true, true) => (n % frames, (n + 1) % frames),
        (true, false) => (n % frames, (n + frames - 1) % frames),
        (false, true) => (n, (n + 1).min(frames - 1)),
        (false, false) => (n, n.saturating_sub(1)),
    };
    FrameBlend {
        nearest,
        toward,
        weight: d.abs() as f32,
    }
}

/// The cells a card shows (row 0, view 0 of each frame) and the mix between them
/// ([`FrameBlend`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CardFrame {
    pub first: u32,
    pub next: u32,
    pub blend: f32,
}

impl CardFrame {
    /// Cell `cell` alone.
    pub fn still(cell: u32) -> CardFrame {
        CardFrame {
            first: cell,
            next: cell,
            blend: 0.0,
        }
    }
}

impl Impostor {
    /// Cells per atlas row.
    pub fn columns(&self) -> u32 {
        self.width / self.cell.max(1)
    }

    /// Elevation rows.
    pub fn rows(&self) -> u32 {
        self.elevations.len() as u32
    }

    /// Cells one frame takes: a cell per view and row.
    pub fn cells_per_frame(&self) -> u32 {
        self.views * self.rows()
    }

    /// First cell of each clip slot, and the cell count after the last.
    pub fn first_cell(&self, slot: usize) -> u32 {
        let per_frame = self.cells_per_frame();
        self.clips[..slot.min(self.clips.len())]
            .iter()
            .map(|c| c.frames * per_frame)
            .sum()
    }

    /// The slot of package clip `clip`, if baked.
    pub fn slot_of(&self, clip: u32) -> Option<usize> {
        self.clips.iter().position(|c| c.clip == clip)
    }

    /// The cell of row 0, view 0 of the frame nearest to clip time `time` of package clip
    /// `clip` (of `package`, the impostor's); `None` when the clip is not baked.
    pub fn frame_cell(&self, package: &Package, clip: u32, time: f64) -> Option<u32> {
        Some(self.card_frame(package, clip, time)?.first)
    }

    /// [`Impostor::frame_cell`] and the cell of its neighbouring frame toward `time`, with
    /// their mix ([`frame_blend`]).
    pub fn card_frame(&self, package: &Package, clip: u32, time: f64) -> Option<CardFrame> {
        let slot = self.slot_of(clip)?;
        let b = frame_blend(
            package.clips.get(clip as usize)?,
            self.clips[slot].frames,
            time,
        );
        Some(CardFrame {
            first: self.cell_of(slot, b.nearest, 0, 0),
            next: self.cell_of(slot, b.toward, 0, 0),
            blend: b.weight,
        })
    }

    /// The cell of (clip slot, frame, row, view).
    pub fn cell_of(&self, slot: usize, frame: u32, row: u32, view: u32) -> u32 {
        self.first_cell(slot) + (frame * self.rows() + row) * self.views + view
    }

    /// Pixel rectangle of `cell`: x, y of its top-left corner.
    pub fn cell_origin(&self, cell: u32) -> (u32, u32) {
        let columns = self.columns().max(1);
        ((cell % columns) * self.cell, (cell / columns) * self.cell)
    }

    /// Unit direction from the centre toward the camera of (row, view), component space.
    pub fn view_direction(&self, row: u32, view: u32) -> Vec3 {
        let azimuth = view as f32 * TAU / self.views.max(1) as f32;
        let elevation = self.elevations.get(row as usize).copied().unwrap_or(0.0);
        Vec3::new(
            elevation.cos() * azimuth.sin(),
            elevation.sin(),
            elevation.cos() * azimuth.cos(),
        )
    }

    /// The baked (row, view) nearest to unit direction `d` (component space, from the centre
    /// toward the camera): nearest azimuth, then nearest elevation.
    pub fn nearest_view(&self, d: Vec3) -> (u32, u32) {
        let views = self.views.max(1);
        let step = TAU / views as f32;
        let azimuth = d.x.atan2(d.z).rem_euclid(TAU);
        let view = ((azimuth / step).round() as u32) % views;
        let elevation = d.y.clamp(-1.0, 1.0).asin();
        let row = (0..self.rows())
            .min_by(|&a, &b| {
                let e = |r: u32| (self.elevations[r as usize] - elevation).abs();
                e(a).total_cmp(&e(b))
            })
            .unwrap_or(0);
        (row, view)
    }

    /// Checks the impostor against `package`: its skin and clips exist, the clips are the
    /// skin's skeleton's and each baked once, the atlas is a whole number of cells and holds
    /// every cell, the views and rows are within bounds and the card is finite and not empty.
    pub fn validate(&self, package: &Package) -> Result<(), ImpostorError> {
        let skin = package.skins.get(self.skin as usize).ok_or_else(|| {
            refuse(
                "skin",
                format!(
                    "{} is not among the {} skins",
                    self.skin,
                    package.skins.len()
                ),
            )
        })?;
        let whole = |n: u32| n.is_multiple_of(self.cell);
        if self.cell == 0 || !whole(self.width) || !whole(self.height) {
            return Err(refuse(
                "cell",
                format!(
                    "{} px does not divide the {}x{} atlas into whole cells",
                    self.cell, self.width, self.height
                ),
            ));
        }
        if self.views == 0 || self.views > MAX_IMPOSTOR_VIEWS {
            return Err(refuse(
                "views",
                format!("{} is not within 1..={MAX_IMPOSTOR_VIEWS}", self.views),
            ));
        }
        let rows = self.elevations.len();
        if rows == 0 || rows > MAX_IMPOSTOR_ROWS {
            return Err(refuse(
                "elevations",
                format!("has {rows} rows; 1..={MAX_IMPOSTOR_ROWS} are allowed"),
            ));
        }
        let in_range = |e: &f32| e.is_finite() && e.abs() <= std::f32::consts::FRAC_PI_2;
        if !self.elevations.iter().all(in_range) || !self.elevations.is_sorted_by(|a, b| a < b) {
            return Err(refuse(
                "elevations",
                format!("{:?} are not ascending angles within ±π/2", self.elevations),
            ));
        }
        if !(self.centre.is_finite() && self.radius.is_finite() && self.radius > 0.0) {
            return Err(refuse(
                "card",
                format!(
                    "centre {} and radius {} are not a finite, non-empty card",
                    self.centre, self.radius
                ),
            ));
        }
        if self.clips.is_empty() {
            return Err(refuse("clips", "are empty: nothing was baked".into()));
        }
        for (slot, c) in self.clips.iter().enumerate() {
            let clip = package.clips.get(c.clip as usize).ok_or_else(|| {
                refuse(
                    "clip",
                    format!("{} is not among the {} clips", c.clip, package.clips.len()),
                )
            })?;
            if clip.skeleton != skin.skeleton {
                return Err(refuse(
                    "clip",
                    format!(
                        "{} animates skeleton {}, not the skin's {}",
                        c.clip, clip.skeleton, skin.skeleton
                    ),
                ));
            }
            if self.slot_of(c.clip) != Some(slot) {
                return Err(refuse("clip", format!("{} is baked twice", c.clip)));
            }
            if c.frames == 0 {
                return Err(refuse("frames", format!("of clip {} are 0", c.clip)));
            }
        }
        let capacity = u64::from(self.columns()) * u64::from(self.height / self.cell);
        let needed: u64 = self
            .clips
            .iter()
            .map(|c| u64::from(c.frames) * u64::from(self.cells_per_frame()))
            .sum();
        if needed > capacity {
            return Err(refuse(
                "atlas",
                format!("holds {capacity} cells; the clips need {needed}"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clip(duration: f64, loop_policy: LoopPolicy) -> Clip {
        Clip {
            name: "c".into(),
            skeleton: 0,
            skeleton_hash: 0,
            duration,
            sample_rate: 30.0,
            sample_count: 2,
            loop_policy,
            profile: String::new(),
            sub_tracks: Vec::new(),
            values: Vec::new(),
            events: Vec::new(),
            markers: Vec::new(),
            root_motion: None,
            compressed: None,
        }
    }

    #[test]
    fn a_looping_clip_wraps_to_its_first_frame_and_a_clip_played_once_holds_its_last() {
        let walk = clip(1.0, LoopPolicy::Loop);
        assert_eq!(frames_for(&walk, 12.0), 12);
        assert_eq!(frame_time(&walk, 12, 3), 0.25);
        assert_eq!(frame_at(&walk, 12, 0.25), 3);
        assert_eq!(frame_at(&walk, 12, 0.99), 0);
        assert_eq!(frame_at(&walk, 12, 1.25), 3);
        assert_eq!(frame_at(&walk, 12, -0.25), 9);
        let wave = clip(1.0, LoopPolicy::Once);
        assert_eq!(frames_for(&wave, 12.0), 13);
        assert_eq!(frame_time(&wave, 13, 12), 1.0);
        assert_eq!(frame_at(&wave, 13, 0.99), 12);
        assert_eq!(frame_at(&wave, 13, 5.0), 12);
        assert_eq!(frame_at(&wave, 13, f64::NAN), 0);
    }

    #[test]
    fn a_time_between_frames_blends_its_nearest_frame_toward_the_next_one_across_a_loop() {
        let walk = clip(1.0, LoopPolicy::Loop);
        let b = frame_blend(&walk, 12, 0.26);
        assert_eq!((b.nearest, b.toward), (3, 4));
        assert!((b.weight - 0.12).abs() < 1e-5, "{b:?}");
        let b = frame_blend(&walk, 12, 0.24);
        assert_eq!((b.nearest, b.toward), (3, 2));
        assert!((b.weight - 0.12).abs() < 1e-5, "{b:?}");
        // The last frame of a loop leads to its first; a clip played once holds its ends.
        let b = frame_blend(&walk, 12, 11.2 / 12.0);
        assert_eq!((b.nearest, b.toward), (11, 0));
        let wave = clip(1.0, LoopPolicy::Once);
        let b = frame_blend(&wave, 13, 5.0);
        assert_eq!((b.nearest, b.toward, b.weight), (12, 12, 0.0));
        // On a frame the neighbour has no weight.
        let b = frame_blend(&wave, 13, -1.0);
        assert_eq!((b.nearest, b.weight), (0, 0.0));
        assert_eq!(frame_blend(&wave, 13, f64::NAN).weight, 0.0);
    }

    fn impostor() -> Impostor {
        Impostor {
            skin: 0,
            width: 256,
            height: 128,
            cell: 32,
            views: 8,
            elevations: vec![0.0, 0.5],
            centre: Vec3::Y,
            radius: 1.0,
            clips: vec![
                ImpostorClip { clip: 0, frames: 1 },
                ImpostorClip { clip: 1, frames: 1 },
            ],
        }
    }

    #[test]
    fn cells_run_by_clip_then_frame_then_row_then_view_across_the_atlas_rows() {
        let i = impostor();
        assert_eq!(i.columns(), 8);
        assert_eq!(i.cells_per_frame(), 16);
        assert_eq!(i.cell_of(0, 0, 1, 3), 11);
        assert_eq!(i.cell_of(1, 0, 0, 0), 16);
        assert_eq!(i.cell_origin(11), (96, 32));
    }

    #[test]
    fn the_nearest_view_of_each_baked_direction_is_that_direction() {
        let i = impostor();
        for row in 0..2 {
            for view in 0..8 {
                let d = i.view_direction(row, view);
                assert_eq!(i.nearest_view(d), (row, view), "{d}");
            }
        }
        // Just short of halfway to view 1 (45°) from the front, and a camera straight above.
        let a = 22.0f32.to_radians();
        assert_eq!(i.nearest_view(Vec3::new(a.sin(), 0.0, a.cos())), (0, 0));
        assert_eq!(i.nearest_view(Vec3::new(0.0, 1.0, 0.0)), (1, 0));
    }
}
