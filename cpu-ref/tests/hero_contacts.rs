//! Foot contacts on a hero (throng_cpu_ref::hero::contact): the generated character walks onto a
//! platform that moves and turns; planted feet ride it within 0.5 cm of their anchors, each foot
//! goes Planting → Planted → Releasing in order, feet release when the platform carries them out
//! of reach or the game asks, and a hero frame allocates nothing.

mod ik_support;

use glam::{Affine3A, Quat, Vec3};
use ik_support::character;
use throng_cpu_ref::clip::sample_root_motion;
use throng_cpu_ref::hero::{
    find_legs, ContactPhase, ContactSettings, Contacts, FlatGround, GroundHit, GroundQuery, Hero,
    HeroFrame, HeroOutcome, PlatformRef, ReleaseReason,
};
use throng_cpu_ref::{Package, PoseOp, Program, ProgramLimits};
use throng_fixtures::alloc::{allocations, Counting};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const HZ: f32 = 60.0;

/// A platform whose local +Z half (from z = 0) is a floor at height 0, moving along +X at
/// `speed` m/s and turning about its origin at `turn` rad/s, its origin starting at `start`.
struct Platform {
    start: Vec3,
    speed: f32,
    turn: f32,
    time: f32,
    generation: u32,
}

const PLATFORM: u32 = 7;

impl Platform {
    /// Generation 1, at time 0.
    fn new(start: Vec3, speed: f32, turn: f32) -> Platform {
        Platform {
            start,
            speed,
            turn,
            time: 0.0,
            generation: 1,
        }
    }

    fn transform(&self) -> Affine3A {
        Affine3A::from_rotation_translation(
            Quat::from_rotation_y(self.turn * self.time),
            self.start + Vec3::X * self.speed * self.time,
        )
    }
}

impl GroundQuery for Platform {
    fn ground(&self, at: Vec3) -> Option<GroundHit> {
        let m = self.transform();
        let on = m.inverse().transform_point3(at).z >= 0.0;
        Some(GroundHit {
            point: Vec3::new(at.x, 0.0, at.z),
            normal: Vec3::Y,
            platform: on.then_some((
                PlatformRef {
                    id: PLATFORM,
                    generation: self.generation,
                },
                m,
            )),
        })
    }

    fn platform(&self, p: PlatformRef) -> Option<Affine3A> {
        (p.id == PLATFORM && p.generation == self.generation).then(|| self.transform())
    }
}

/// The walk in place, its root motion accumulated into the placement.
struct Walker<'a> {
    package: &'a Package,
    walk: u32,
    base: Affine3A,
    program: Program,
    hero: Hero,
}

impl<'a> Walker<'a> {
    fn new(package: &'a Package) -> Walker<'a> {
        let skeleton = &package.skeletons[0];
        let walk = package.find_clip("walk").unwrap() as u32;
        let mut ground = package.clone();
        let base = throng_fixtures::Formation::new(&mut ground, 0, 1)
            .unwrap()
            .ground;
        let (pelvis, legs) = find_legs(skeleton).expect("the character's legs");
        let mut rest = vec![Affine3A::IDENTITY; skeleton.joint_count()];
        throng_cpu_ref::fk::local_to_component(skeleton, &skeleton.rest, &mut rest);
        let ankle = base
            .transform_point3(Vec3::from(rest[legs[0].foot].translation))
            .y;
        let mut hero = Hero::new(
            skeleton,
            0,
            package.skins[0].joints.len(),
            ProgramLimits::default(),
        );
        let settings = ContactSettings::for_ankle_height(ankle);
        hero.set_contacts(Some(
            Contacts::new(skeleton, pelvis, &legs, settings).unwrap(),
        ));
        Walker {
            package,
            walk,
            base,
            program: Program {
                ops: vec![PoseOp::sample(0, walk, 0.0), PoseOp::to_component(0)],
                weights: vec![],
            },
            hero,
        }
    }

    /// Component → scene at walk time `t`: the base times the root motion so far.
    fn placement(&self, t: f32) -> Affine3A {
        let clip = &self.package.clips[self.walk as usize];
        let d = clip.duration as f32;
        let affine = |t: f32| {
            sample_root_motion(clip, t).map_or(Affine3A::IDENTITY, |(p, q)| {
                Affine3A::from_rotation_translation(q, p)
            })
        };
        let loops = (t / d).floor();
        let mut m = Affine3A::IDENTITY;
        for _ in 0..loops as u32 {
            m *= affine(d);
        }
        self.base * m * affine(t - loops * d)
    }

    fn frame(&mut self, k: u32, ground: &dyn GroundQuery) -> HeroOutcome {
        let t = k as f32 / HZ;
        let d = self.package.clips[self.walk as usize].duration as f32;
        self.program.ops[0] = PoseOp::sample(0, self.walk, t.rem_euclid(d));
        let assets = self.package.assets(0).unwrap();
        let placement = self.placement(t);
        self.hero
            .run(&HeroFrame {
                program: &self.program,
                assets: &assets,
                placement,
                time: f64::from(t),
                dt: if k == 0 { 0.0 } else { 1.0 / HZ },
                ground,
                contact_values: None,
            })
            .unwrap()
    }

    /// Foot `i`'s ankle in the scene after the last frame.
    fn ankle(&self, i: usize, t: f32) -> Vec3 {
        let foot = self.hero.contacts().unwrap().legs()[i].foot;
        self.placement(t)
            .transform_point3(Vec3::from(self.hero.component()[foot].translation))
    }
}

/// Each foot's phases, one entry per change.
fn record(changes: &mut [Vec<ContactPhase>; 2], hero: &Hero) {
    for (i, f) in hero.contacts().unwrap().feet().iter().enumerate() {
        if changes[i].last() != Some(&f.phase) {
            changes[i].push(f.phase);
        }
    }
}

/// Every change is the next phase of the cycle (or Planting straight to Releasing).
fn in_order(phases: &[ContactPhase]) -> bool {
    use ContactPhase::*;
    phases.windows(2).all(|w| {
        matches!(
            (w[0], w[1]),
            (Free, Planting)
                | (Planting, Planted)
                | (Planting, Releasing)
                | (Planted, Releasing)
                | (Releasing, Free)
        )
    })
}

#[test]
fn a_planted_foot_rides_a_moving_turning_platform_within_half_a_centimetre() {
    let package = character();
    let mut walker = Walker::new(package);
    let mut platform = Platform::new(Vec3::new(0.0, 0.0, 1.2), 0.15, 0.2);
    let mut changes = [vec![ContactPhase::Free], vec![ContactPhase::Free]];
    let (mut worst, mut planted_on_platform, mut cycles_on_platform) = (0.0f32, 0, 0);
    for k in 0..(5.0 * HZ) as u32 {
        platform.time = k as f32 / HZ;
        assert_eq!(walker.frame(k, &platform), HeroOutcome::Posed);
        record(&mut changes, &walker.hero);
        let m = platform.transform();
        for (i, f) in walker.hero.contacts().unwrap().feet().iter().enumerate() {
            if f.phase == ContactPhase::Planted && f.platform.is_some() {
                let miss = walker
                    .ankle(i, platform.time)
                    .distance(m.transform_point3(f.anchor));
                worst = worst.max(miss);
                planted_on_platform += 1;
            }
            if f.phase == ContactPhase::Releasing && f.platform.is_some() {
                cycles_on_platform += 1;
            }
        }
    }
    assert!(
        worst <= 0.005,
        "a planted foot left its platform anchor by {worst} m"
    );
    assert!(
        planted_on_platform > 30 && cycles_on_platform > 0,
        "{planted_on_platform} planted frames, {cycles_on_platform} releasing frames on the platform"
    );
    for (i, phases) in changes.iter().enumerate() {
        assert!(in_order(phases), "foot {i}: {phases:?}");
        let full = phases.windows(3).any(|w| {
            w == [
                ContactPhase::Planting,
                ContactPhase::Planted,
                ContactPhase::Releasing,
            ]
        });
        assert!(
            full,
            "foot {i} never went through a whole contact: {phases:?}"
        );
    }
}

#[test]
fn a_foot_releases_when_the_platform_carries_it_out_of_reach() {
    let package = character();
    let mut walker = Walker::new(package);
    // Under the hero from the start and sliding sideways at 2 m/s.
    let mut platform = Platform::new(Vec3::new(0.0, 0.0, -5.0), 2.0, 0.0);
    let mut reasons = Vec::new();
    let mut changes = [vec![ContactPhase::Free], vec![ContactPhase::Free]];
    for k in 0..(3.0 * HZ) as u32 {
        platform.time = k as f32 / HZ;
        walker.frame(k, &platform);
        record(&mut changes, &walker.hero);
        for f in walker.hero.contacts().unwrap().feet() {
            if f.phase == ContactPhase::Releasing {
                reasons.extend(f.reason);
            }
            assert!(f.target.is_finite() && f.weight.is_finite());
        }
        assert!(walker.hero.palette().iter().all(|m| m.is_finite()));
    }
    assert!(
        reasons.contains(&ReleaseReason::OutOfReach),
        "no foot was released out of reach: {reasons:?}"
    );
    for (i, phases) in changes.iter().enumerate() {
        assert!(in_order(phases), "foot {i}: {phases:?}");
    }
}

#[test]
fn a_platform_that_is_gone_releases_its_feet_and_the_game_can_release_a_foot() {
    let package = character();
    let mut walker = Walker::new(package);
    let mut platform = Platform::new(Vec3::new(0.0, 0.0, -5.0), 0.0, 0.0);
    let mut seen = Vec::new();
    for k in 0..(3.0 * HZ) as u32 {
        platform.time = k as f32 / HZ;
        if k == 60 {
            // A new platform under the same id.
            platform.generation = 2;
        }
        let planted = |w: &Walker| {
            w.hero
                .contacts()
                .unwrap()
                .feet()
                .iter()
                .position(|f| f.phase == ContactPhase::Planted)
        };
        if k > 100 && seen.len() == 1 {
            if let Some(i) = planted(&walker) {
                walker.hero.contacts_mut().unwrap().release(i);
                walker.frame(k, &platform);
                let f = walker.hero.contacts().unwrap().feet()[i];
                assert_eq!(f.phase, ContactPhase::Releasing);
                seen.push(f.reason.unwrap());
                continue;
            }
        }
        walker.frame(k, &platform);
        if k >= 60 && seen.is_empty() {
            if let Some(f) = walker
                .hero
                .contacts()
                .unwrap()
                .feet()
                .iter()
                .find(|f| f.reason == Some(ReleaseReason::PlatformGone))
            {
                seen.push(f.reason.unwrap());
            }
        }
    }
    assert_eq!(
        seen,
        [ReleaseReason::PlatformGone, ReleaseReason::Requested],
        "the releases seen"
    );
}

#[test]
fn the_pelvis_drops_only_to_let_a_foot_reach_and_flat_ground_keeps_the_feet_still() {
    let package = character();
    let mut walker = Walker::new(package);
    let ground = FlatGround(0.0);
    let (mut worst, mut planted) = (0.0f32, 0);
    for k in 0..(3.0 * HZ) as u32 {
        walker.frame(k, &ground);
        let c = walker.hero.contacts().unwrap();
        assert!(c.pelvis_offset() <= 0.0);
        for (i, f) in c.feet().iter().enumerate() {
            if f.phase == ContactPhase::Planted {
                worst = worst.max(walker.ankle(i, k as f32 / HZ).distance(f.anchor));
                planted += 1;
            }
        }
    }
    assert!(
        planted > 60,
        "{planted} planted foot-frames in 3 s of walking"
    );
    assert!(worst <= 0.005, "{worst} m");
}

#[test]
fn contact_curves_plant_each_foot_while_its_curve_is_on() {
    use throng_cpu_ref::scalar::sample_track;
    let package = character();
    let mut walker = Walker::new(package);
    let assets = package.assets(0).unwrap();
    let err = walker.hero.set_contact_curves(&assets, &["contact/tail"]);
    assert!(
        err.unwrap_err()
            .to_string()
            .contains("no curve channel 'contact/tail'"),
        "an unknown curve is refused"
    );
    walker
        .hero
        .set_contact_curves(&assets, &["contact/foot_l", "contact/foot_r"])
        .unwrap();
    let walk = &package.clips[walker.walk as usize];
    let tracks = package.curves.tracks_of(walker.walk);
    let d = walk.duration as f32;
    let ground = FlatGround(0.0);
    // The left foot is on for the first half of each cycle, the right for the second. A foot is
    // never engaged while its curve is off (below the release value 0.4), and one whose curve is
    // on (0.5 and up) is engaged unless it was released out of reach (a stance foot left
    // behind as the body moves on: the reach rule, not the curve).
    let mut engaged = [false; 2];
    let (mut plants, mut out_of_reach) = ([0; 2], 0);
    for k in 0..(2.0 * HZ) as u32 {
        walker.frame(k, &ground);
        let t = (k as f32 / HZ).rem_euclid(d);
        for (i, f) in walker.hero.contacts().unwrap().feet().iter().enumerate() {
            let v = sample_track(walk, &tracks[i].values, t);
            let now = matches!(f.phase, ContactPhase::Planting | ContactPhase::Planted);
            if now {
                assert!(v >= 0.4, "foot {i} at {t} s engaged with its curve at {v}");
            } else if v >= 0.5 {
                assert_eq!(
                    f.reason,
                    Some(ReleaseReason::OutOfReach),
                    "foot {i} at {t} s: curve {v}, {:?}",
                    f.phase
                );
                out_of_reach += usize::from(engaged[i]);
            }
            plants[i] += usize::from(now && !engaged[i]);
            engaged[i] = now;
        }
    }
    eprintln!("plants {plants:?}, out-of-reach releases while the curve was on: {out_of_reach}");
    assert!(plants.iter().all(|&n| n >= 2), "{plants:?}");
}

#[test]
fn a_hero_frame_with_contacts_allocates_nothing_after_the_first() {
    let package = character();
    let mut walker = Walker::new(package);
    let mut platform = Platform::new(Vec3::new(0.0, 0.0, 1.2), 0.15, 0.2);
    walker.frame(0, &platform);
    let made = allocations(|| {
        for k in 1..120 {
            platform.time = k as f32 / HZ;
            walker.frame(k, &platform);
        }
    });
    assert_eq!(made, 0);
}

#[test]
fn bad_contact_settings_and_legs_are_refused() {
    let package = character();
    let skeleton = &package.skeletons[0];
    let (pelvis, legs) = find_legs(skeleton).unwrap();
    let mut s = ContactSettings::for_ankle_height(0.1);
    s.release_height = s.contact_height - 0.01;
    let err = Contacts::new(skeleton, pelvis, &legs, s).unwrap_err();
    assert!(err.to_string().contains("release_height"), "{err}");
    let mut swapped = legs;
    swapped[0].thigh = legs[0].foot;
    swapped[0].foot = legs[0].thigh;
    assert!(Contacts::new(
        skeleton,
        pelvis,
        &swapped,
        ContactSettings::for_ankle_height(0.1)
    )
    .is_err());
}
