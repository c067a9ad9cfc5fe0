//! The demo's far tier: members shorter on screen than `FAR_HEIGHT` pixels are hidden from
//! the skinned tiers (`Pose::Hidden`) and drawn as impostor cards showing the frame of their
//! heaviest clip at its control clock, so a member crossing the boundary keeps its phase. The
//! impostor is baked on the GPU the first frame a member needs it.

use glam::Affine3A;
use throng_cpu_ref::Package;
use throng_gpu::impostor::{bake, BakeOptions, Baked, Card, FAR_HEIGHT};
use throng_gpu::raster::Raster;
use throng_gpu::{GpuContext, GpuError};

/// A member in the far tier leaves it above `FAR_HEIGHT × (1 + FAR_HYSTERESIS)` pixels, so one
/// at the boundary does not flip every frame.
const FAR_HYSTERESIS: f32 = 0.2;
/// `Card::tier` of far members under `--lod-tint`: outside 1–4, so blue.
pub const FAR_TINT: u32 = 5;

pub struct FarTier {
    /// Per member, whether it is in the far tier.
    pub far: Vec<bool>,
    pub cards: Vec<Card>,
    baked: Option<Baked>,
    /// Seconds the bake took.
    pub bake_s: f64,
}

impl FarTier {
    pub fn new(members: usize) -> FarTier {
        FarTier {
            far: vec![false; members],
            cards: Vec::new(),
            baked: None,
            bake_s: 0.0,
        }
    }

    /// Whether member `k`, `height` pixels tall on screen, is in the far tier this frame; one
    /// that must run its program (`must`) is not.
    pub fn choose(&mut self, k: usize, height: f32, must: bool) -> bool {
        let limit = match self.far[k] {
            true => FAR_HEIGHT * (1.0 + FAR_HYSTERESIS),
            false => FAR_HEIGHT,
        };
        self.far[k] = !must && height < limit;
        self.far[k]
    }

    /// Bakes skin `skin`'s clips (every clip of its skeleton) the first time, and gives the
    /// raster the atlas.
    pub fn ensure_baked(
        &mut self,
        ctx: &GpuContext,
        package: &Package,
        skin: u32,
        raster: &mut Raster,
    ) -> Result<(), GpuError> {
        if self.baked.is_some() {
            return Ok(());
        }
        let start = std::time::Instant::now();
        let options = BakeOptions::far_tier(package, skin);
        let baked = bake(ctx, package, skin, &options, |_, _| {})?;
        raster.set_impostor(&baked.impostor, &baked.atlas)?;
        self.bake_s = start.elapsed().as_secs_f64();
        self.baked = Some(baked);
        Ok(())
    }

    /// The card of a far member at frame slot `slot`, showing `clip` at clip time `time` (a
    /// clip the bake has; else the first frame of the first baked clip).
    pub fn push_card(
        &mut self,
        package: &Package,
        placement: &Affine3A,
        slot: u32,
        clip: Option<(u32, f64)>,
        tier: u32,
    ) {
        let Some(b) = &self.baked else { return };
        let i = &b.impostor;
        let first = clip
            .and_then(|(c, t)| i.frame_cell(package, c, t))
            .unwrap_or(0);
        let mut card = Card::new(i, placement, slot, first);
        card.tier = tier;
        self.cards.push(card);
    }

    /// Atlas size and cells, when baked.
    pub fn atlas(&self) -> Option<(u32, u32, u32)> {
        let i = &self.baked.as_ref()?.impostor;
        Some((i.width, i.height, i.first_cell(i.clips.len())))
    }
}
