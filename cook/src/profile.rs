//! Quality profiles: the cooking settings chosen per use of a character.
//!
//! | profile | rate | key-aligned up to | for |
//! |---|---|---|---|
//! | `hero` | 60 Hz | 120 Hz | characters seen close up and evaluated on the CPU (IK, cameras near) |
//! | `standard` | 30 Hz | 60 Hz | the default: the rate most game animation is authored and shipped at |
//! | `crowd` | 30 Hz | 30 Hz | crowd members |
//!
//! The rate is a fallback. When every channel of a clip is keyed on one uniform grid (24 fps
//! exports, 120 Hz mocap), the cook samples on that grid, thinned by the smallest whole factor
//! that brings it to `max_rate` or below: cooked samples then land on source keys, and LINEAR
//! sources are reproduced instead of having their corners cut (a 24 fps Fox walk resampled at
//! 30 Hz is off by 2 % of the model's size; on its own grid it is exact).
//!
//! `crowd` and `standard` share a rate because uniform resampling alone gives no cheaper knob
//! that keeps motion intact (15 Hz visibly rounds off contacts and fast arcs). They are separate
//! names because the codec (DESIGN.md §7) will give them different error thresholds and bit
//! budgets; packages cooked today already record which one they meant.

use crate::CookError;

/// A named set of cooking settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub name: &'static str,
    /// Uniform sample rate of cooked clips whose source is not keyed on a uniform grid, in
    /// samples per second.
    pub sample_rate: f32,
    /// Highest rate a key-aligned clip may keep (see the module doc).
    pub max_rate: f32,
}

impl Profile {
    pub const HERO: Profile = Profile { name: "hero", sample_rate: 60.0, max_rate: 120.0 };
    pub const STANDARD: Profile = Profile { name: "standard", sample_rate: 30.0, max_rate: 60.0 };
    pub const CROWD: Profile = Profile { name: "crowd", sample_rate: 30.0, max_rate: 30.0 };
    /// The profile used when none is named.
    pub const DEFAULT: Profile = Profile::STANDARD;
    /// Every profile, in the order listed to users.
    pub const ALL: [Profile; 3] = [Profile::HERO, Profile::STANDARD, Profile::CROWD];

    /// The profile with this name; the error lists the valid names.
    pub fn parse(name: &str) -> Result<Profile, CookError> {
        Self::ALL.into_iter().find(|p| p.name == name).ok_or_else(|| CookError::UnknownProfile {
            name: name.to_string(),
            valid: Self::ALL.map(|p| p.name).join(", "),
        })
    }
}

impl Default for Profile {
    fn default() -> Self {
        Profile::DEFAULT
    }
}
