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
//! that keeps motion intact (15 Hz visibly rounds off contacts and fast arcs). They differ in the
//! codec's error thresholds (DESIGN.md §7, docs/codec.md), [`Profile::codec`]:
//!
//! | profile | threshold | important joints (head, neck, hands, feet, toes) |
//! |---|---|---|
//! | `hero` | 0.001 cm | 0.0005 cm |
//! | `standard` | 0.01 cm (ACL's default) | 0.01 cm |
//! | `crowd` | 0.1 cm | 0.01 cm |
//!
//! A threshold is the largest object-space distance, in centimetres, that a virtual vertex 3 cm
//! from a joint may move between the reference (uncompressed) cooked clip and the compressed one.
//! Thresholds are for a rig in metres (glTF's unit). A rig whose rest extent (the scene-space
//! diagonal of its rest joint positions) lies outside [`METRE_RIGS`] scene units is taken to be
//! authored in other units (the 120-unit Fox, a 5-centimetre Knight) and its thresholds are scaled
//! by `extent / REFERENCE_EXTENT`, so it is held to the same precision relative to its size
//! (DESIGN.md §3: compare errors relative to the model's extent) ([`CodecSettings::for_extent`]).
//!
//! Important joints are where contacts and gaze show error first (a sliding foot, a wobbling
//! head): a hero keeps them at half its budget, a crowd member at `standard`'s; `standard` is
//! ACL's default everywhere (halving it at important joints costs 8 % of the bytes on mocap).

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
    pub const HERO: Profile = Profile {
        name: "hero",
        sample_rate: 60.0,
        max_rate: 120.0,
    };
    pub const STANDARD: Profile = Profile {
        name: "standard",
        sample_rate: 30.0,
        max_rate: 60.0,
    };
    pub const CROWD: Profile = Profile {
        name: "crowd",
        sample_rate: 30.0,
        max_rate: 30.0,
    };
    /// The profile used when none is named.
    pub const DEFAULT: Profile = Profile::STANDARD;
    /// Every profile, in the order listed to users.
    pub const ALL: [Profile; 3] = [Profile::HERO, Profile::STANDARD, Profile::CROWD];

    /// The profile with this name; the error lists the valid names.
    pub fn parse(name: &str) -> Result<Profile, CookError> {
        Self::ALL
            .into_iter()
            .find(|p| p.name == name)
            .ok_or_else(|| CookError::UnknownProfile {
                name: name.to_string(),
                valid: Self::ALL.map(|p| p.name).join(", "),
            })
    }
}

/// The codec's error budget (docs/codec.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodecSettings {
    /// Largest error at virtual vertices 3 cm from each joint, in cm (object space).
    pub threshold_cm: f32,
    /// The threshold of important joints, in cm.
    pub important_cm: f32,
    /// A joint is important when its name contains one of these, ignoring ASCII case.
    pub important: &'static [&'static str],
}

/// Joint-name fragments of the joints where error shows first: contacts and gaze.
pub const IMPORTANT_JOINTS: &[&str] = &["head", "neck", "hand", "foot", "toe"];

/// Rest extents, in scene units, of rigs taken to be in metres.
pub const METRE_RIGS: std::ops::RangeInclusive<f32> = 0.2..=20.0;
/// The rest extent of a human in metres, to which other rigs' thresholds are scaled.
pub const REFERENCE_EXTENT: f32 = 2.0;

impl CodecSettings {
    /// The settings for a rig of rest extent `extent` (scene units), and the factor applied to
    /// the thresholds: 1 for a rig in metres, `extent / REFERENCE_EXTENT` otherwise.
    pub fn for_extent(&self, extent: f32) -> (CodecSettings, f32) {
        let scale = if METRE_RIGS.contains(&extent) || !(extent > 0.0 && extent.is_finite()) {
            1.0
        } else {
            extent / REFERENCE_EXTENT
        };
        let scaled = CodecSettings {
            threshold_cm: self.threshold_cm * scale,
            important_cm: self.important_cm * scale,
            important: self.important,
        };
        (scaled, scale)
    }

    /// The threshold of a joint named `name`, in cm.
    pub fn threshold_of(&self, name: &str) -> f32 {
        let name = name.to_ascii_lowercase();
        if self
            .important
            .iter()
            .any(|p| name.contains(&p.to_ascii_lowercase()))
        {
            self.important_cm.min(self.threshold_cm)
        } else {
            self.threshold_cm
        }
    }
}

impl Profile {
    /// The codec settings of this profile; a profile with another name gets `standard`'s.
    pub fn codec(&self) -> CodecSettings {
        let (threshold_cm, important_cm) = match self.name {
            "hero" => (0.001, 0.0005),
            "crowd" => (0.1, 0.01),
            _ => (0.01, 0.01),
        };
        CodecSettings {
            threshold_cm,
            important_cm,
            important: IMPORTANT_JOINTS,
        }
    }
}

impl Default for Profile {
    fn default() -> Self {
        Profile::DEFAULT
    }
}
