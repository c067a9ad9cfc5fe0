//! Foot contacts for heroes: a state machine around two-bone IK, per foot
//! Free → Planting → Planted → Releasing → Free.
//!
//! Each update measures the *animated* foot (the pose before any correction) in scene space and
//! asks the game's [`GroundQuery`] for the surface under it. A foot wants contact when an
//! authored contact value (a contact curve or window, one per foot, in [0, 1]) says so, or, with
//! none, when the detector does: the ankle within `contact_height` of the surface and moving
//! slower than `contact_speed` horizontally. Leaving takes `release_height` / `release_speed`,
//! both above the entry thresholds (hysteresis: a foot on the edge does not flicker).
//!
//! - **Free**: the foot follows the animation. When it wants contact on a surface, its anchor is
//!   captured: the ankle's position and the foot's rotation in the frame of the surface under it
//!   (a platform's local frame, with the platform's identity and generation, or the scene's).
//! - **Planting**: the IK weight ramps from 0 to 1 over `ramp_time`, easing the foot onto the
//!   anchor; at 1 the foot is Planted.
//! - **Planted**: the ankle is held on the anchor, carried by its platform's current transform:
//!   the foot rides a platform that moves and turns.
//! - **Releasing**: the weight ramps back to 0 over `ramp_time`, still toward the anchor, then the
//!   foot is Free. A foot releases when it stops wanting contact ([`ReleaseReason::Lifted`]), when
//!   the anchor leaves the leg's reach even with the pelvis lowered by `max_pelvis_drop`
//!   ([`ReleaseReason::OutOfReach`]), when its platform is gone ([`ReleaseReason::PlatformGone`]),
//!   or when the game asks ([`Contacts::release`]; the foot then plants again only after it has
//!   stopped wanting contact once).
//!
//! The pelvis follows: it is lowered (never raised) by the most any engaged foot needs to reach
//! its anchor, scaled by that foot's weight and smoothed over `pelvis_smooth_time`.
//!
//! Units: scene metres and seconds; the placement maps component space to the scene and must be
//! a similarity (rotation, uniform scale, translation). Nothing allocates.
//!
//! The state machine follows the contact handling of game IK rigs, e.g. Unreal Engine's foot
//! placement node (https://dev.epicgames.com/documentation/en-us/unreal-engine/animation-blueprint-foot-placement-in-unreal-engine):
//! planting with hysteresis, locked feet released past a reach limit, and a pelvis that drops
//! to let a leg reach.

use glam::{Affine3A, Quat, Vec3};

use crate::ik::chain::{self, position, rotation_of};
use crate::ik::MAX_FEET;
use crate::ik::{
    foot::smoothing_factor, solve_two_bone, IkError, IkResult, IkStatus, Leg, TwoBone,
};
use crate::{Skeleton, Trs};

/// A platform the game moves: its identity and the generation of that identity (a platform
/// destroyed and another made under the same id has a new generation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PlatformRef {
    pub id: u32,
    pub generation: u32,
}

/// The surface under a point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroundHit {
    /// The surface point below (or at) the queried point, scene space.
    pub point: Vec3,
    /// Its unit normal.
    pub normal: Vec3,
    /// The platform the surface belongs to and its current transform (platform local → scene);
    /// `None` for static ground.
    pub platform: Option<(PlatformRef, Affine3A)>,
}

/// What the game tells the contacts about its world.
pub trait GroundQuery {
    /// The surface under scene point `at`, or `None` where there is none (over a gap).
    fn ground(&self, at: Vec3) -> Option<GroundHit>;
    /// Platform `platform`'s current transform (local → scene), `None` once it is gone or its id
    /// has a newer generation.
    fn platform(&self, platform: PlatformRef) -> Option<Affine3A>;
}

/// Static flat ground at height `0` (scene y), no platforms.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlatGround(pub f32);

impl GroundQuery for FlatGround {
    fn ground(&self, at: Vec3) -> Option<GroundHit> {
        Some(GroundHit {
            point: Vec3::new(at.x, self.0, at.z),
            normal: Vec3::Y,
            platform: None,
        })
    }

    fn platform(&self, _: PlatformRef) -> Option<Affine3A> {
        None
    }
}

/// Where a foot is in its contact cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ContactPhase {
    #[default]
    Free,
    Planting,
    Planted,
    Releasing,
}

impl ContactPhase {
    /// Lower-case name, as traces print it.
    pub fn as_str(self) -> &'static str {
        match self {
            ContactPhase::Free => "free",
            ContactPhase::Planting => "planting",
            ContactPhase::Planted => "planted",
            ContactPhase::Releasing => "releasing",
        }
    }

    fn engaged(self) -> bool {
        matches!(self, ContactPhase::Planting | ContactPhase::Planted)
    }
}

/// Why a foot last left Planting or Planted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseReason {
    /// It stopped wanting contact (authored value or detector).
    Lifted,
    /// Its anchor left the leg's reach.
    OutOfReach,
    /// Its platform is gone.
    PlatformGone,
    /// [`Contacts::release`].
    Requested,
}

impl ReleaseReason {
    pub fn as_str(self) -> &'static str {
        match self {
            ReleaseReason::Lifted => "lifted",
            ReleaseReason::OutOfReach => "out_of_reach",
            ReleaseReason::PlatformGone => "platform_gone",
            ReleaseReason::Requested => "requested",
        }
    }
}

/// Thresholds and times, scene metres and seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactSettings {
    /// The ankle may plant within this height of the surface...
    pub contact_height: f32,
    /// ... moving horizontally slower than this (m/s).
    pub contact_speed: f32,
    /// A planted foot lifts above this height (≥ `contact_height`)...
    pub release_height: f32,
    /// ... or faster than this (≥ `contact_speed`).
    pub release_speed: f32,
    /// An authored contact value plants at or above this and releases below `authored_release`.
    pub authored_contact: f32,
    pub authored_release: f32,
    /// Seconds of the weight ramp in and out (> 0).
    pub ramp_time: f32,
    /// Reach as a fraction of the leg's length, in (0, 1].
    pub max_reach: f32,
    /// How far (metres) the pelvis may drop to let a leg reach.
    pub max_pelvis_drop: f32,
    /// Smoothing time of the pelvis drop (s, ≥ 0).
    pub pelvis_smooth_time: f32,
}

impl ContactSettings {
    /// Settings for feet whose ankles stand `ankle_height` metres above the ground when flat
    /// (the rest pose's): plant within 3 cm of that height, release 3 cm above it; plant below
    /// 1.5 m/s, release above 2.5 m/s (loose enough for animation whose stance feet slide, as
    /// the generated walk's do at up to 1.2 m/s; tight enough to keep a swinging foot, at 3–4.5
    /// m/s, free); 0.1 s ramps; 99.5 % reach; the pelvis may drop 10 cm.
    pub fn for_ankle_height(ankle_height: f32) -> ContactSettings {
        ContactSettings {
            contact_height: ankle_height + 0.03,
            contact_speed: 1.5,
            release_height: ankle_height + 0.06,
            release_speed: 2.5,
            authored_contact: 0.5,
            authored_release: 0.4,
            ramp_time: 0.1,
            max_reach: 0.995,
            max_pelvis_drop: 0.1,
            pelvis_smooth_time: 0.1,
        }
    }

    fn validate(&self) -> Result<(), IkError> {
        let check =
            |what, v: f32, lo: f32, hi: f32, range| crate::ik::in_range(what, v, lo, hi, range);
        check(
            "contact_height",
            self.contact_height,
            f32::MIN,
            f32::MAX,
            "finite",
        )?;
        check("contact_speed", self.contact_speed, 0.0, f32::MAX, ">= 0")?;
        check(
            "release_height",
            self.release_height,
            self.contact_height,
            f32::MAX,
            ">= contact_height",
        )?;
        check(
            "release_speed",
            self.release_speed,
            self.contact_speed,
            f32::MAX,
            ">= contact_speed",
        )?;
        check(
            "authored_contact",
            self.authored_contact,
            0.0,
            1.0,
            "[0, 1]",
        )?;
        check(
            "authored_release",
            self.authored_release,
            0.0,
            self.authored_contact,
            "[0, authored_contact]",
        )?;
        check(
            "ramp_time",
            self.ramp_time,
            f32::MIN_POSITIVE,
            f32::MAX,
            "> 0",
        )?;
        check(
            "max_reach",
            self.max_reach,
            f32::MIN_POSITIVE,
            1.0,
            "(0, 1]",
        )?;
        check(
            "max_pelvis_drop",
            self.max_pelvis_drop,
            0.0,
            f32::MAX,
            ">= 0",
        )?;
        check(
            "pelvis_smooth_time",
            self.pelvis_smooth_time,
            0.0,
            f32::MAX,
            ">= 0",
        )
    }
}

/// One foot's contact state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FootContact {
    pub phase: ContactPhase,
    /// IK weight in [0, 1] (the ramp's progress, eased).
    pub weight: f32,
    /// The platform the anchor is on (`None`: the scene).
    pub platform: Option<PlatformRef>,
    /// The ankle's anchor and the foot's rotation in the platform's frame (or the scene's).
    pub anchor: Vec3,
    pub anchor_rotation: Quat,
    /// Where the anchor is now, scene space (its platform's current transform applied).
    pub target: Vec3,
    /// Why the foot last released.
    pub reason: Option<ReleaseReason>,
    /// The last two-bone result (engaged feet only).
    pub ik: Option<IkResult>,
    /// The animated ankle of the last update, scene space (for its speed).
    last_animated: Option<Vec3>,
    ramp: f32,
    /// Set by [`Contacts::release`]: no new plant until the foot stops wanting contact.
    held_off: bool,
    release_requested: bool,
}

/// The contacts of one hero: its legs, settings and per-foot state.
#[derive(Clone, Debug, PartialEq)]
pub struct Contacts {
    pelvis: usize,
    legs: [Leg; MAX_FEET],
    count: usize,
    pub settings: ContactSettings,
    feet: [FootContact; MAX_FEET],
    /// The current pelvis drop, scene metres (≤ 0).
    pelvis_offset: f32,
}

impl Contacts {
    /// Contacts for `legs` (1 to [`MAX_FEET`]; thigh, calf and ankle each an ancestor of the
    /// next), the pelvis an ancestor of every thigh.
    pub fn new(
        skeleton: &Skeleton,
        pelvis: usize,
        legs: &[Leg],
        settings: ContactSettings,
    ) -> Result<Contacts, IkError> {
        if legs.is_empty() || legs.len() > MAX_FEET {
            return Err(IkError::ChainLength {
                len: legs.len(),
                min: 1,
                max: MAX_FEET,
            });
        }
        chain::check_joint(skeleton, pelvis)?;
        for leg in legs {
            chain::check_chain(skeleton, &[pelvis, leg.thigh, leg.calf, leg.foot], 4, 4)?;
        }
        settings.validate()?;
        let mut all = [legs[0]; MAX_FEET];
        all[..legs.len()].copy_from_slice(legs);
        Ok(Contacts {
            pelvis,
            legs: all,
            count: legs.len(),
            settings,
            feet: [FootContact::default(); MAX_FEET],
            pelvis_offset: 0.0,
        })
    }

    /// The legs, in the order given.
    pub fn legs(&self) -> &[Leg] {
        &self.legs[..self.count]
    }

    /// Each foot's state, in leg order.
    pub fn feet(&self) -> &[FootContact] {
        &self.feet[..self.count]
    }

    /// The pelvis drop of the last update, scene metres (≤ 0).
    pub fn pelvis_offset(&self) -> f32 {
        self.pelvis_offset
    }

    /// Releases foot `foot` at the next update (when Planting or Planted); it plants again only
    /// after it has stopped wanting contact once.
    pub fn release(&mut self, foot: usize) {
        if let Some(f) = self.feet[..self.count].get_mut(foot) {
            f.release_requested = true;
        }
    }

    /// Forgets every contact (a teleport): feet Free, no pelvis drop.
    pub fn reset(&mut self) {
        self.feet = [FootContact::default(); MAX_FEET];
        self.pelvis_offset = 0.0;
    }

    /// Advances the contacts by `dt` seconds and corrects the pose: `local` / `component` (its FK)
    /// are the animated pose, `placement` maps component space to the scene, `authored` holds one
    /// contact value per leg (or `None` for the detector). Invalid input is an error and changes
    /// nothing.
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &mut self,
        skeleton: &Skeleton,
        local: &mut [Trs],
        component: &mut [Affine3A],
        placement: &Affine3A,
        ground: &dyn GroundQuery,
        authored: Option<&[f32]>,
        dt: f32,
    ) -> Result<(), IkError> {
        chain::check_pose(skeleton, local, component)?;
        crate::ik::in_range("contact dt", dt, 0.0, f32::MAX, ">= 0")?;
        if !placement.is_finite() || placement.matrix3.determinant().abs() <= f32::MIN_POSITIVE {
            return Err(IkError::Invalid {
                what: "hero placement",
                reason: "is not finite and invertible",
            });
        }
        if let Some(a) = authored {
            if a.len() != self.count {
                return Err(IkError::Length {
                    what: "authored contact values",
                    len: a.len(),
                    expected: self.count,
                });
            }
            for &v in a {
                crate::ik::in_range("authored contact value", v, 0.0, 1.0, "[0, 1]")?;
            }
        }
        let s = self.settings;
        let to_component = placement.inverse();
        let scene_rotation = rotation_of(placement);
        let scale = placement.matrix3.x_axis.length();
        let scene = |j: usize, c: &[Affine3A]| placement.transform_point3(position(c, j));

        // Phases, anchors and the drop each engaged foot needs, on the animated pose.
        let mut drop = 0.0f32;
        for i in 0..self.count {
            let leg = self.legs[i];
            let f = &mut self.feet[i];
            let ankle = scene(leg.foot, component);
            let hit = ground.ground(ankle);
            let speed = match f.last_animated {
                Some(last) if dt > 0.0 => ((ankle - last) * Vec3::new(1.0, 0.0, 1.0)).length() / dt,
                _ => 0.0,
            };
            f.last_animated = Some(ankle);
            let engaged = f.phase.engaged();
            let wants = match authored {
                Some(a) if engaged => a[i] >= s.authored_release,
                Some(a) => a[i] >= s.authored_contact,
                None => hit.is_some_and(|h| {
                    let height = ankle.y - h.point.y;
                    if engaged {
                        height <= s.release_height && speed <= s.release_speed
                    } else {
                        height <= s.contact_height && speed <= s.contact_speed
                    }
                }),
            };
            if !wants {
                f.held_off = false;
            }
            // A platform that is gone releases the feet on it.
            let gone = matches!(f.platform, Some(p) if ground.platform(p).is_none());
            let step = if s.ramp_time > 0.0 {
                dt / s.ramp_time
            } else {
                1.0
            };
            match f.phase {
                ContactPhase::Free => {
                    if let (true, false, Some(h)) = (wants, f.held_off, hit) {
                        let (frame, platform) = match h.platform {
                            Some((p, m)) => (m, Some(p)),
                            None => (Affine3A::IDENTITY, None),
                        };
                        let inverse = frame.inverse();
                        f.platform = platform;
                        f.anchor = inverse.transform_point3(ankle);
                        f.anchor_rotation = (rotation_of(&inverse)
                            * scene_rotation
                            * rotation_of(&component[leg.foot]))
                        .normalize();
                        f.target = ankle;
                        f.reason = None;
                        f.ramp = 0.0;
                        f.phase = ContactPhase::Planting;
                    }
                }
                ContactPhase::Planting | ContactPhase::Planted => {
                    let reason = if f.release_requested {
                        Some(ReleaseReason::Requested)
                    } else if gone {
                        Some(ReleaseReason::PlatformGone)
                    } else if !wants {
                        Some(ReleaseReason::Lifted)
                    } else {
                        None
                    };
                    if let Some(r) = reason {
                        f.phase = ContactPhase::Releasing;
                        f.reason = Some(r);
                        f.held_off = r == ReleaseReason::Requested;
                    } else if f.phase == ContactPhase::Planting {
                        f.ramp = (f.ramp + step).min(1.0);
                        if f.ramp >= 1.0 {
                            f.phase = ContactPhase::Planted;
                        }
                    }
                }
                ContactPhase::Releasing => {
                    f.ramp = (f.ramp - step).max(0.0);
                    if f.ramp <= 0.0 {
                        f.phase = ContactPhase::Free;
                        f.platform = None;
                    }
                }
            }
            f.release_requested = false;
            if f.phase == ContactPhase::Free {
                f.weight = 0.0;
                f.ik = None;
                continue;
            }
            // The anchor's frame after the transition (a foot just planted has a new one).
            let frame = match f.platform {
                Some(p) => ground.platform(p),
                None => Some(Affine3A::IDENTITY),
            };
            if let Some(frame) = frame {
                f.target = frame.transform_point3(f.anchor);
            }
            // The drop that brings the anchor within reach of the thigh (scene space).
            let thigh = scene(leg.thigh, component);
            let length = (position(component, leg.calf) - position(component, leg.thigh)).length()
                + (position(component, leg.foot) - position(component, leg.calf)).length();
            let reach = s.max_reach * length * scale;
            let d = f.target - thigh;
            let across = (d * Vec3::new(1.0, 0.0, 1.0)).length();
            let need = if across < reach {
                (d.y + (reach * reach - across * across).sqrt()).min(0.0)
            } else {
                f32::NEG_INFINITY
            };
            if -need > s.max_pelvis_drop && f.phase.engaged() {
                f.phase = ContactPhase::Releasing;
                f.reason = Some(ReleaseReason::OutOfReach);
            }
            f.weight = smoothstep(f.ramp);
            if f.phase.engaged() {
                drop = drop.min(need * f.weight);
            }
        }

        // The pelvis follows, then each engaged foot reaches its anchor.
        let k = smoothing_factor(dt, s.pelvis_smooth_time);
        // Down at once as far as a foot needs (its weight ramps it in), back up smoothly.
        self.pelvis_offset = (self.pelvis_offset + (drop - self.pelvis_offset) * k)
            .min(drop)
            .min(0.0);
        chain::translate_joint(
            skeleton,
            local,
            component,
            self.pelvis,
            to_component.transform_vector3(Vec3::Y * self.pelvis_offset),
        );
        let to_component_rotation = rotation_of(&to_component);
        for i in 0..self.count {
            let (leg, f) = (self.legs[i], &mut self.feet[i]);
            if f.phase == ContactPhase::Free || f.weight == 0.0 {
                continue;
            }
            let frame_rotation = match f.platform {
                Some(p) => ground
                    .platform(p)
                    .map_or(Quat::IDENTITY, |m| rotation_of(&m)),
                None => Quat::IDENTITY,
            };
            let ik = TwoBone {
                end_rotation: Some(
                    (to_component_rotation * frame_rotation * f.anchor_rotation).normalize(),
                ),
                weight: f.weight,
                ..TwoBone::new(
                    leg.thigh,
                    leg.calf,
                    leg.foot,
                    to_component.transform_point3(f.target),
                )
            };
            let r = solve_two_bone(skeleton, local, component, &ik)?;
            if r.status == IkStatus::Unreachable && f.phase.engaged() {
                f.phase = ContactPhase::Releasing;
                f.reason = Some(ReleaseReason::OutOfReach);
            }
            f.ik = Some(r);
        }
        Ok(())
    }
}

/// `3t² - 2t³`: a ramp that starts and ends with zero slope.
fn smoothstep(t: f32) -> f32 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Finds a pelvis and two legs by common joint names (`pelvis`/`hips`, `thigh`/`upperleg`/
/// `upleg`, `calf`/`lowerleg`/`leg`/`shin`, `foot`/`ankle`, with `_l`/`.l`/`left` side marks), the
/// way `throng simulate --hero` finds them; `None` when a joint is missing.
pub fn find_legs(skeleton: &Skeleton) -> Option<(usize, [Leg; 2])> {
    let lower: Vec<String> = skeleton.names.iter().map(|n| n.to_lowercase()).collect();
    let find = |names: &[&str], side: &str| -> Option<usize> {
        names.iter().find_map(|n| {
            lower.iter().position(|x| {
                let marked = [
                    format!("{n}_{side}"),
                    format!("{n}.{side}"),
                    format!("{side}_{n}"),
                    format!("{}{n}", if side == "l" { "left" } else { "right" }),
                ];
                marked.iter().any(|m| x == m)
            })
        })
    };
    let pelvis = ["pelvis", "hips"]
        .iter()
        .find_map(|n| lower.iter().position(|x| x == n))?;
    let leg = |side: &str| -> Option<Leg> {
        Some(Leg {
            thigh: find(&["thigh", "upperleg", "upleg"], side)?,
            calf: find(&["calf", "lowerleg", "leg", "shin"], side)?,
            foot: find(&["foot", "ankle"], side)?,
        })
    };
    Some((pelvis, [leg("l")?, leg("r")?]))
}
