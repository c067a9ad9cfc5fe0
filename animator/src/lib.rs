//! Throng inside someone else's renderer: an [`Animator`] keeps crowds of one or more characters
//! (packages), ticks their control on the CPU at a fixed rate (throng-control, state trees) and
//! presents them on the caller's wgpu device at any rate between ticks (docs/embedding.md).
//!
//! The flow, per tick and per rendered frame:
//! 1. [`Animator::set_input`] (gameplay: speed, wave, ...); [`Animator::tick`]: one control tick
//!    of every member of every character (rayon), each member's root motion composed into its
//!    placement (`placement = placement · delta`, the delta in the component frame at the tick's
//!    start, DESIGN.md §5), and what changed handed to the retained instances
//!    (throng-cpu-ref `retained`): a program only when its static part changed, else its values
//!    (times and weights), and the placement. Levels of detail are chosen here, from the view.
//! 2. [`Animator::present`]`(alpha)`, any number of times between ticks: the GPU frame of the
//!    crowd at `alpha` of the way from the second-last tick to the last (program, FK, palette,
//!    bounds, culling against the view, skinning, each member at its level of detail), recorded
//!    and submitted to the caller's queue; no wait, no readback, and control untouched. Members
//!    due no pose this frame keep their last (update-rate LOD); members shorter on screen than
//!    the far tier's height are drawn as impostor cards ([`Animator::cards`]).
//! 3. The caller's pass: [`CrowdPass::prepare`] then [`CrowdPass::render`] (with
//!    [`CrowdPass::set_cards`] for the far tier), or its own draw of [`Runtime::skinned_pages`] /
//!    [`Runtime::palette_pages`].
//!
//! Characters come with a state tree (control drives them) or without one (the caller sets each
//! member's program with [`Animator::set_program`]); heroes show a palette the caller computed
//! (IK) with [`Animator::set_hero`].

use std::time::{Duration, Instant};

use glam::{Affine3A, Quat, Vec3};
use throng_control::crowd::Crowd;
use throng_control::events::Event;
use throng_control::instance::Controller;
use throng_control::tree::Value;
use throng_cpu_ref::bounds::{Bounds, Frustum};
use throng_cpu_ref::frame::{batch_assets, BatchAssets};
use throng_cpu_ref::lod::{lod_fade_for_scale, LodState};
use throng_cpu_ref::present::Placement;
use throng_cpu_ref::program::op;
use throng_cpu_ref::retained::{InstanceId, Instances, Kind, RetainedError, Show};
use throng_cpu_ref::significance::{BudgetReport, Claim, PoseBudget};
use throng_cpu_ref::stagger::{rate_for_height, Stagger};
use throng_cpu_ref::{Package, Program, ProgramLimits};
use throng_gpu::draw::LodFade;
use throng_gpu::impostor::{bake, BakeOptions, Baked, Card};
use throng_gpu::raster::Camera;
use throng_gpu::{
    Batch, Capacities, FrameReport, GpuContext, GpuError, PackageId, Runtime, RuntimeOptions,
};

#[cfg(doc)]
use throng_gpu::draw::CrowdPass;

/// Why an [`Animator`] could not be made or could not run; each names what to fix.
#[derive(Debug, thiserror::Error)]
pub enum AnimatorError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("state tree: {0}")]
    Tree(#[from] throng_control::tree::TreeError),
    #[error("controller: {0}")]
    Controller(#[from] throng_control::player::PlayerError),
    #[error("member {member}: {source}")]
    Input {
        member: u32,
        source: throng_control::instance::InputError,
    },
    #[error("member {member}'s tick failed and it kept its state: {source}")]
    Tick {
        member: u32,
        source: throng_control::instance::TickError,
    },
    #[error("the tree's initial states cannot start: {0}")]
    Spawn(throng_control::instance::TickError),
    #[error(transparent)]
    Cook(#[from] throng_cook::CookError),
    #[error(transparent)]
    Retained(#[from] RetainedError),
    #[error("no member {0}: it was never spawned, or it was despawned")]
    NoMember(u32),
    #[error("no character {0}")]
    NoCharacter(usize),
    #[error("the package has no skeleton {0}; cook the character, or pick one of its skeletons")]
    NoSkeleton(u32),
    #[error("character {0} has a state tree: control sets its programs; set its inputs instead")]
    Driven(usize),
    #[error("character {0} has no skin to draw as impostor cards")]
    NoSkin(usize),
}

/// How often members are posed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UpdateRate {
    /// Every member every frame.
    EveryFrame,
    /// By projected height: every frame from 96 px, every 2, 3, 4 frames below 96, 48, 24 px
    /// (throng-cpu-ref `stagger`).
    Stagger,
    /// At most `joints` joints posed per frame, the tallest on screen first, none waiting more
    /// than `max_stale` frames (throng-cpu-ref `significance`).
    Budget { joints: u64, max_stale: u32 },
}

/// The default [`AnimatorOptions::far_fade`]: a member cross-fades from mesh to card as it
/// shrinks from 1.5 times the far tier's height to that height (at the demo's dolly, about 17
/// frames).
pub const FAR_FADE: f32 = 1.5;

/// The largest card share of a member that cannot be a card alone (its program captures
/// history) while the far tier cross-fades: one pixel in 16 stays its mesh's.
const CAPTURING_SHARE: f32 = 15.0 / 16.0;

/// How an [`Animator`] runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnimatorOptions {
    /// Control ticks per second; [`Animator::tick`] advances one tick.
    pub hz: f64,
    /// Events one member may deliver per tick.
    pub event_capacity: usize,
    /// Most members at once.
    pub capacity: u32,
    /// Members skinned per frame at most (in slot order when culling keeps more); `None`: all.
    pub skinned_budget: Option<u32>,
    /// With a view ([`Animator::set_view`]), pose and draw each member at the coarsest cooked
    /// skeleton and mesh LOD whose error projects under a pixel (crossing levels over a band:
    /// `lod_fade`); false: every member at full detail.
    pub lod: bool,
    /// With `lod`, members cross between mesh LODs over a band of distances instead of
    /// switching at one (with hysteresis): posed and skinned at the finer level, each is drawn
    /// with both levels' triangles in complementary dithered pixels, the coarser one's share
    /// growing with distance ([`Animator::lod_fades`] for [`CrowdPass::set_lod_fades`];
    /// throng-cpu-ref `lod::lod_fade_for_scale`).
    pub lod_fade: bool,
    pub update_rate: UpdateRate,
    /// With a view, members shorter on screen than this many pixels are drawn as impostor
    /// cards once [`Animator::bake_far_tier`] baked their character
    /// (`throng_gpu::impostor::FAR_HEIGHT` is the demo's); `None`: never.
    pub far_height: Option<f32>,
    /// The far tier's cross-fade: a member between `far_height` and `far_fade` times it is
    /// drawn both as a mesh and as a card, each keeping a complementary share of its pixels
    /// (dithered; the card's share grows linearly as it shrinks toward `far_height`), so it
    /// crosses tiers over the frames it takes to shrink or grow through the band instead of
    /// in one. 1: no cross-fade (a member switches tier at `far_height`, with 20 % hysteresis).
    pub far_fade: f32,
    /// With a view, skin and draw only members whose animated bounds meet its frustum; false:
    /// every member (levels of detail, update rate and the far tier still follow the view).
    pub cull: bool,
    /// The GPU runtime's: the pose mapping (default: the adapter's), when specialised
    /// pipelines are built (default: in the background, the interpreter running meanwhile),
    /// outputs.
    pub runtime: RuntimeOptions,
}

impl Default for AnimatorOptions {
    fn default() -> Self {
        AnimatorOptions {
            hz: 30.0,
            event_capacity: 64,
            capacity: 1024,
            skinned_budget: None,
            lod: true,
            lod_fade: true,
            update_rate: UpdateRate::EveryFrame,
            far_height: None,
            far_fade: FAR_FADE,
            cull: true,
            runtime: RuntimeOptions::default(),
        }
    }
}

/// What the members are seen through: a camera and the image it renders.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    pub camera: Camera,
    pub width: u32,
    pub height: u32,
}

impl View {
    /// Pixels per scene unit at distance `d` (focal length in pixels over distance).
    pub fn pixels_per_unit(&self, d: f32) -> f32 {
        self.height as f32 / (2.0 * (self.camera.fov_y * 0.5).tan()) / d.max(1e-3)
    }
}

/// A character (one package's skeleton and skin) the animator holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CharacterId(pub usize);

/// A member of a crowd: its retained instance's slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemberId(pub u32);

/// One character: its package on the GPU, and its control (a tree and a control crowd) or
/// none (programs set by the caller).
struct Character {
    package: PackageId,
    /// The package as the runtime holds it (for a tree character, the controller's).
    source: Package,
    kind: Kind,
    control: Option<(Controller, Crowd)>,
    /// Crowd index → member.
    members: Vec<MemberId>,
    /// The far tier's bake.
    far: Option<Baked>,
    /// Joints of its skeleton, per LOD level (the pose budget's cost).
    joints: Vec<u32>,
}

/// One member.
#[derive(Clone, Copy, Debug)]
struct Member {
    character: usize,
    /// Its index in its character's crowd (and members list).
    index: usize,
    placement: Placement,
    /// Its placement jumped since the last tick (no blend).
    jumped: bool,
    hero: bool,
    /// This frame: drawn as a card alone; and it was one the frame before.
    far: bool,
    rejoined: bool,
    /// This frame: its card's share of its pixels (0: no card; 1: `far`).
    card: f32,
    /// This tick: the share of its pixels its next coarser mesh LOD takes (0: none).
    coarser: f32,
}

/// How long the last tick's parts took.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TickTimes {
    /// Control's tick of every crowd.
    pub control: Duration,
    /// Handing what changed to the retained instances, and choosing levels of detail.
    pub handoff: Duration,
}

/// Crowds of characters, ticked on the CPU and presented on a caller's device.
pub struct Animator {
    options: AnimatorOptions,
    runtime: Runtime,
    store: Instances,
    characters: Vec<Character>,
    /// By member id (slot); `None`: free.
    members: Vec<Option<Member>>,
    view: Option<View>,
    lod: LodState,
    stagger: Stagger,
    budget: PoseBudget,
    claims: Vec<Claim>,
    /// How the last presented frame spent the pose budget ([`UpdateRate::Budget`]).
    budget_report: Option<BudgetReport>,
    cards: Vec<Card>,
    lod_fades: Vec<LodFade>,
    /// Scratch: a presented program (cards, heroes).
    presented: Program,
    tick_times: TickTimes,
    /// Presented frames since the last tick.
    frames: u64,
}

impl Animator {
    /// An animator with no characters yet, on `ctx`: make it from the renderer's own device
    /// and queue with [`GpuContext::from_device`]. `packages` are the packages its characters
    /// will use (the runtime's capacities are sized for them; more can be added if they fit).
    pub fn new(
        ctx: &GpuContext,
        packages: &[&Package],
        limits: ProgramLimits,
        options: AnimatorOptions,
    ) -> Result<Animator, AnimatorError> {
        let members = options.capacity.max(1);
        let mut capacities = Capacities::for_packages(packages, members);
        capacities.skinned_instances = options.skinned_budget.unwrap_or(members).clamp(1, members);
        capacities.fit_programs(&limits)?;
        capacities.history_slots = members;
        capacities.kinds = capacities.kinds.max(16);
        capacities.check(ctx)?;
        let runtime = Runtime::with_options(ctx, capacities, options.runtime)?;
        let mut limits = capacities.program_limits();
        limits.history_slots = members as usize;
        Ok(Animator {
            options,
            runtime,
            store: Instances::new(limits, members),
            characters: Vec::new(),
            members: Vec::new(),
            view: None,
            lod: LodState::new(),
            stagger: Stagger::new(),
            budget: PoseBudget::new(),
            claims: Vec::new(),
            budget_report: None,
            cards: Vec::new(),
            lod_fades: Vec::new(),
            presented: Program::default(),
            tick_times: TickTimes::default(),
            frames: 0,
        })
    }

    /// One character's crowd: skeleton `skeleton` of `package` driven by the state tree `tree`
    /// (TOML source and its file name), one member per placement (members `0..n` in order),
    /// ticked once so it can be presented; the options' capacity grows to the placements.
    pub fn crowd(
        ctx: &GpuContext,
        package: Package,
        skeleton: u32,
        tree: (&str, &str),
        placements: &[Affine3A],
        mut options: AnimatorOptions,
    ) -> Result<Animator, AnimatorError> {
        if package.skeletons.get(skeleton as usize).is_none() {
            return Err(AnimatorError::NoSkeleton(skeleton));
        }
        options.capacity = options.capacity.max(placements.len() as u32);
        let limits = tree_limits(&package, skeleton, tree)?;
        let mut animator = Animator::new(ctx, &[&package], limits, options)?;
        let c = animator.add_character(package, skeleton, Some(tree))?;
        for p in placements {
            animator.spawn(c, p)?;
        }
        animator.tick()?;
        Ok(animator)
    }

    /// The generated character (cooked with the default profile) and its crowd tree
    /// (`fixtures/trees/crowd.toml`: idle, walk/run by `speed`, `wave` on the upper body), one
    /// member per placement, ticked once so they can be presented.
    pub fn builtin(
        ctx: &GpuContext,
        placements: &[Affine3A],
        options: AnimatorOptions,
    ) -> Result<Animator, AnimatorError> {
        let package = builtin_character()?;
        let tree = (throng_fixtures::CROWD_TREE, "crowd.toml");
        Animator::crowd(ctx, package, 0, tree, placements, options)
    }

    /// Adds a character: skeleton `skeleton` of `package` (and the skin that binds it, if
    /// any), driven by the state tree `tree` (TOML source, docs/state-tree.md; its file name
    /// for errors) or, without one, by programs the caller sets ([`Animator::set_program`]).
    pub fn add_character(
        &mut self,
        package: Package,
        skeleton: u32,
        tree: Option<(&str, &str)>,
    ) -> Result<CharacterId, AnimatorError> {
        let sk = package
            .skeletons
            .get(skeleton as usize)
            .ok_or(AnimatorError::NoSkeleton(skeleton))?;
        let joints = std::iter::once(sk.joint_count() as u32)
            .chain(sk.lods.iter().map(|l| l.joints().len() as u32))
            .collect();
        let skin = (package.skins.iter())
            .position(|s| s.skeleton == skeleton)
            .map(|s| s as u32);
        let (control, source) = match tree {
            Some((text, file)) => {
                let tree = throng_control::tree::load(text, file, &package, skeleton)?;
                let ctl =
                    Controller::new(tree, package, self.options.hz, self.options.event_capacity)?;
                let crowd = Crowd::new(&ctl, 0).map_err(AnimatorError::Spawn)?;
                let source = ctl.package.clone();
                (Some((ctl, crowd)), source)
            }
            None => (None, package),
        };
        let id = self.runtime.add_package(&source)?;
        self.characters.push(Character {
            package: id,
            source,
            kind: Kind {
                package: id,
                skeleton,
                skin,
            },
            control,
            members: Vec::new(),
            far: None,
            joints,
        });
        Ok(CharacterId(self.characters.len() - 1))
    }

    /// Member `member`'s character and record, checked.
    fn member(&self, member: MemberId) -> Result<&Member, AnimatorError> {
        self.members
            .get(member.0 as usize)
            .and_then(Option::as_ref)
            .ok_or(AnimatorError::NoMember(member.0))
    }

    fn character(&self, c: CharacterId) -> Result<&Character, AnimatorError> {
        self.characters
            .get(c.0)
            .ok_or(AnimatorError::NoCharacter(c.0))
    }

    /// Adds a member of `character` at `placement` (component space → scene, a rotation, a
    /// uniform scale and a translation), on its tree's initial states; it shows from the next
    /// tick on (a character without a tree: once it has a program).
    pub fn spawn(
        &mut self,
        character: CharacterId,
        placement: &Affine3A,
    ) -> Result<MemberId, AnimatorError> {
        let kind = self.character(character)?.kind;
        let id = self.store.add(kind, placement)?;
        let member = MemberId(id.0);
        let c = &mut self.characters[character.0];
        if let Some((ctl, crowd)) = &mut c.control {
            if let Err(e) = crowd.add(ctl, id.0) {
                self.store.remove(id)?;
                return Err(AnimatorError::Spawn(e));
            }
        }
        let c = &self.characters[character.0];
        if let Some((_, crowd)) = &c.control {
            // Its program goes in whole: control lists no change for an added instance.
            let (ops, weights) = crowd.programs.program(c.members.len()).unwrap_or_default();
            let assets = assets_of(c)?;
            self.store.set_program_parts(id, ops, weights, &assets)?;
        }
        let c = &mut self.characters[character.0];
        let index = c.members.len();
        c.members.push(member);
        let slot = id.0 as usize;
        if self.members.len() <= slot {
            self.members.resize(slot + 1, None);
        }
        self.members[slot] = Some(Member {
            character: character.0,
            index,
            placement: Placement::from_affine(placement).unwrap_or_default(),
            jumped: true,
            hero: false,
            far: false,
            rejoined: false,
            card: 0.0,
            coarser: 0.0,
        });
        Ok(member)
    }

    /// Removes a member at once.
    pub fn despawn(&mut self, member: MemberId) -> Result<(), AnimatorError> {
        let m = *self.member(member)?;
        let c = &mut self.characters[m.character];
        if let Some((_, crowd)) = &mut c.control {
            crowd.remove(m.index);
        }
        c.members.swap_remove(m.index);
        if let Some(&moved) = c.members.get(m.index) {
            if let Some(x) = self.members[moved.0 as usize].as_mut() {
                x.index = m.index;
            }
        }
        self.members[member.0 as usize] = None;
        self.store.remove(InstanceId(member.0))?;
        Ok(())
    }

    /// Replaces character `character`'s package by a new generation of it (a re-cook: the
    /// same skeleton, clips that programs name still there), live: the GPU's copy, and the
    /// controller over it, members keeping their state.
    pub fn replace_package(
        &mut self,
        character: CharacterId,
        package: Package,
    ) -> Result<(), AnimatorError> {
        let c = self.character(character)?;
        let (hz, events) = (self.options.hz, self.options.event_capacity);
        let control = match &c.control {
            Some((ctl, _)) => Some(Controller::new(
                ctl.tree.clone(),
                package.clone(),
                hz,
                events,
            )?),
            None => None,
        };
        let source = control.as_ref().map_or(package, |ctl| ctl.package.clone());
        self.runtime.replace_package(c.package, &source)?;
        let c = &mut self.characters[character.0];
        if let (Some(ctl), Some((old, crowd))) = (control, &mut c.control) {
            crowd.rebind(&ctl);
            *old = ctl;
        }
        c.source = source;
        c.far = None;
        Ok(())
    }

    /// Sets input `name` of member `member` for the next ticks (numbers clamped to the tree's
    /// declared range; unknown names, wrong types and non-finite values are refused).
    pub fn set_input(
        &mut self,
        member: MemberId,
        name: &str,
        value: Value,
    ) -> Result<(), AnimatorError> {
        self.with_input(member, |ctl, s| ctl.set_input(s, name, value))
    }

    /// [`Animator::set_input`] by the input's index in the tree
    /// (`animator.controller(c).tree.input(name)`, looked up once): no name lookup per member
    /// and tick.
    pub fn set_input_at(
        &mut self,
        member: MemberId,
        input: u16,
        value: Value,
    ) -> Result<(), AnimatorError> {
        self.with_input(member, |ctl, s| ctl.set_input_at(s, input, value))
    }

    /// Runs `set` on member `member`'s controller and control state.
    fn with_input(
        &mut self,
        member: MemberId,
        set: impl FnOnce(
            &Controller,
            &mut throng_control::instance::InstanceState,
        ) -> Result<(), throng_control::instance::InputError>,
    ) -> Result<(), AnimatorError> {
        let m = *self.member(member)?;
        let c = &mut self.characters[m.character];
        let (ctl, crowd) = c
            .control
            .as_mut()
            .ok_or(AnimatorError::NoCharacter(m.character))?;
        set(ctl, &mut crowd.instances[m.index]).map_err(|source| AnimatorError::Input {
            member: member.0,
            source,
        })
    }

    /// Sets the program of a member of a character without a tree, for the next tick (checked
    /// now: a bad program is refused and changes nothing).
    pub fn set_program(
        &mut self,
        member: MemberId,
        program: &Program,
    ) -> Result<(), AnimatorError> {
        let m = *self.member(member)?;
        if self.characters[m.character].control.is_some() {
            return Err(AnimatorError::Driven(m.character));
        }
        let assets = assets_of(&self.characters[m.character])?;
        self.store
            .set_program(InstanceId(member.0), program, &assets)?;
        Ok(())
    }

    /// Moves a member (a teleport: the next frames do not blend from where it was); placed as
    /// in [`Animator::spawn`].
    pub fn set_placement(
        &mut self,
        member: MemberId,
        placement: &Affine3A,
    ) -> Result<(), AnimatorError> {
        self.member(member)?;
        let p = Placement::from_affine(placement).ok_or(RetainedError::Bad {
            instance: member.0,
            what: "its placement is not a similarity (a rotation, a uniform positive scale and a \
                   translation, finite)"
                .into(),
        })?;
        if let Some(m) = self.members[member.0 as usize].as_mut() {
            m.placement = p;
            m.jumped = true;
        }
        Ok(())
    }

    /// Shows member `member` as a hero from now on: `palette` (one finite entry per entry of
    /// its skin, computed by the caller, e.g. with IK from [`Animator::presented_program`]) is
    /// its pose; `None` poses it from its program again.
    pub fn set_hero(
        &mut self,
        member: MemberId,
        palette: Option<&[Affine3A]>,
    ) -> Result<(), AnimatorError> {
        let m = *self.member(member)?;
        let assets = assets_of(&self.characters[m.character])?;
        self.store
            .set_hero(InstanceId(member.0), palette, &assets)?;
        if let Some(x) = self.members[member.0 as usize].as_mut() {
            x.hero = palette.is_some();
        }
        Ok(())
    }

    /// One control tick of every member (step 1 of the module doc). A member whose tick fails
    /// keeps its state, program and placement; the first failure is returned after every
    /// other member has ticked and the tick is committed.
    pub fn tick(&mut self) -> Result<(), AnimatorError> {
        let start = Instant::now();
        for c in &mut self.characters {
            if let Some((ctl, crowd)) = &mut c.control {
                crowd.tick(ctl);
            }
        }
        let control = start.elapsed();
        let mut failure = None;
        for c in 0..self.characters.len() {
            let assets = assets_of(&self.characters[c])?;
            let ch = &self.characters[c];
            if let Some((_, crowd)) = &ch.control {
                if failure.is_none() {
                    failure = crowd
                        .failures()
                        .next()
                        .map(|(member, e)| AnimatorError::Tick {
                            member: *member,
                            source: e.clone(),
                        });
                }
                // Control says whose program's static part changed: those go in whole
                // (validated), every other member's values alone.
                let mut changed = crowd.changed().iter().copied().peekable();
                for (k, &member) in ch.members.iter().enumerate() {
                    let Some(m) = self.members[member.0 as usize].as_mut() else {
                        continue;
                    };
                    let (t, q) = crowd.motion[k];
                    m.placement = compose(&m.placement, t, q);
                    let id = InstanceId(member.0);
                    let whole = changed.next_if_eq(&(k as u32)).is_some();
                    if whole || self.store.set_values(id, crowd.values(k)).is_err() {
                        let (ops, weights) = crowd.programs.program(k).unwrap_or_default();
                        if let Err(e) = self.store.set_program_parts(id, ops, weights, &assets) {
                            failure.get_or_insert(e.into());
                        }
                    }
                }
            }
        }
        for (slot, m) in self.members.iter_mut().enumerate() {
            let Some(m) = m else { continue };
            let id = InstanceId(slot as u32);
            self.store.set_similarity(id, m.placement, m.jumped)?;
            m.jumped = false;
        }
        self.choose_levels()?;
        self.store.commit();
        self.frames = 0;
        self.tick_times = TickTimes {
            control,
            handoff: start.elapsed() - control,
        };
        failure.map_or(Ok(()), Err)
    }

    /// Each member's skeleton LOD level from its distance to the view's eye, and its coarser
    /// level's share with [`AnimatorOptions::lod_fade`] (a program keeping inertialization
    /// history stays at level 0 alone: history needs every joint).
    fn choose_levels(&mut self) -> Result<(), AnimatorError> {
        let (Some(view), true) = (self.view, self.options.lod) else {
            return Ok(());
        };
        let fade = self.options.lod_fade;
        let eye = view.camera.eye;
        for c in 0..self.characters.len() {
            let assets = assets_of(&self.characters[c])?;
            let lods = &assets.assets.skeleton.lods;
            for &member in &self.characters[c].members {
                let Some(m) = self.members[member.0 as usize].as_mut() else {
                    continue;
                };
                let id = InstanceId(member.0);
                let scale = view.pixels_per_unit(eye.distance(m.placement.translation));
                let (mut level, mut coarser) = match fade {
                    true => lod_fade_for_scale(scale, lods),
                    false => (self.lod.choose(member.0 as usize, scale, lods), 0.0),
                };
                if self.store.history(id) {
                    (level, coarser) = (0, 0.0);
                }
                m.coarser = coarser;
                self.store.set_level(id, level, &assets)?;
            }
        }
        Ok(())
    }

    /// Sees the members through `view` from the next frame on: only those whose animated
    /// bounds meet its frustum are skinned and drawn, each (with [`AnimatorOptions::lod`]) at
    /// the level of detail its projected size asks for, chosen each tick. `None`: every
    /// member, at full detail.
    pub fn set_view(&mut self, view: Option<View>) {
        self.view = view;
        let frustum = view.filter(|_| self.options.cull).map(|v| {
            let aspect = v.width as f32 / v.height.max(1) as f32;
            Frustum::from_view_proj(&v.camera.view_proj(aspect))
        });
        self.runtime.set_frustum(frustum);
    }

    /// Bakes character `character`'s far tier (its skin's clips seen from around, with
    /// Throng's own skinning and raster path): from then on its members shorter on screen
    /// than [`AnimatorOptions::far_height`] are cards, and so are its visible members past the
    /// skinned budget (the runtime's cull pass writes their cards, [`Runtime::set_far_tier`];
    /// the runtime draws one character's overflow as cards: the last one baked). Returns the
    /// bake for the caller's [`CrowdPass::set_impostor`].
    pub fn bake_far_tier(&mut self, character: CharacterId) -> Result<&Baked, AnimatorError> {
        let c = self.character(character)?;
        let skin = c.kind.skin.ok_or(AnimatorError::NoSkin(character.0))?;
        let package = c.package;
        let baked = match self.characters[character.0].far.take() {
            Some(baked) => baked,
            None => {
                let source = &self.characters[character.0].source;
                let options = BakeOptions::far_tier(source, skin);
                bake(self.runtime.context(), source, skin, &options, |_, _| {})?
            }
        };
        let baked = self.characters[character.0].far.insert(baked);
        // The visible members past the skinned budget are cards of this impostor too.
        self.runtime
            .set_far_tier(Some((package, &baked.impostor)))?;
        Ok(baked)
    }

    /// Presents the crowd at `alpha` of the way from the second-last tick to the last (step 2
    /// of the module doc): 0 shows the tick before, 1 the last. Nothing waits for the GPU and
    /// control is not touched.
    pub fn present(&mut self, alpha: f32) -> Result<FrameReport, AnimatorError> {
        self.choose_shows(alpha)?;
        self.choose_lod_fades(alpha);
        let report = self.runtime.present(&self.store, alpha)?;
        self.frames += 1;
        Ok(report)
    }

    /// This frame's update-rate LOD and far tier: which members keep their last pose, and
    /// which are cards (and their cards).
    fn choose_shows(&mut self, alpha: f32) -> Result<(), AnimatorError> {
        self.cards.clear();
        let Some(view) = self.view else {
            return Ok(());
        };
        let (rate, far) = (self.options.update_rate, self.options.far_height);
        if rate == UpdateRate::EveryFrame && far.is_none() {
            return Ok(());
        }
        let eye = view.camera.eye;
        // The far tier's cards are culled here, on the CPU that builds them: the GPU's cull
        // pass sees only the members it poses.
        let frustum = self.options.cull.then(|| {
            let aspect = view.width as f32 / view.height.max(1) as f32;
            Frustum::from_view_proj(&view.camera.view_proj(aspect))
        });
        // Projected height of a member: its skeleton's extent at its distance.
        self.claims.clear();
        for slot in 0..self.members.len() {
            let Some(m) = self.members[slot] else {
                self.claims.push(Claim {
                    significance: 0.0,
                    joints: 0,
                    must: false,
                });
                continue;
            };
            let c = &self.characters[m.character];
            let id = InstanceId(slot as u32);
            let height = 2.0
                * m.placement.scale
                * view.pixels_per_unit(eye.distance(m.placement.translation));
            let captures = self.store.captures(id);
            let must = captures || m.hero;
            let fade = self.options.far_fade;
            let share = match far {
                Some(h) if c.far.is_some() && !m.hero => {
                    let share = card_share(m.far, height, h, fade);
                    // A member whose program captures history is posed every frame, so never a
                    // card alone: while cross-fading it keeps a sliver of mesh (a share that
                    // jumped to 0 and back as captures come and go would pop); without, it is
                    // a mesh.
                    match (captures, fade > 1.0) {
                        (false, _) => share,
                        (true, true) => share.min(CAPTURING_SHARE),
                        (true, false) => 0.0,
                    }
                }
                _ => 0.0,
            };
            let card = share >= 1.0;
            if let Some(x) = self.members[slot].as_mut() {
                x.far = card;
                x.card = share;
                // Back from the far tier it has no pose to keep: it is posed this frame.
                x.rejoined = m.far && !card;
            }
            let level = self.store.level(id);
            self.claims.push(Claim {
                significance: height,
                joints: c.joints.get(level as usize).copied().unwrap_or(0),
                must,
            });
        }
        self.budget_report = match rate {
            UpdateRate::Budget { joints, max_stale } => {
                Some(self.budget.plan(&self.claims, joints, max_stale))
            }
            _ => None,
        };
        for slot in 0..self.members.len() {
            let Some(m) = self.members[slot] else {
                continue;
            };
            let id = InstanceId(slot as u32);
            let claim = self.claims[slot];
            let due = m.rejoined
                || match rate {
                    UpdateRate::EveryFrame => true,
                    UpdateRate::Stagger => {
                        claim.must || self.stagger.due(slot, rate_for_height(claim.significance))
                    }
                    UpdateRate::Budget { .. } => self.budget.due(slot),
                };
            let show = if m.far {
                Show::Hidden
            } else if due {
                Show::Posed
            } else {
                Show::Keep
            };
            self.store.set_show(id, show)?;
            if m.card > 0.0 {
                self.push_card(m, slot as u32, alpha, frustum.as_ref());
            }
        }
        Ok(())
    }

    /// This frame's members crossing mesh LODs (after the far tier's choice: a member whose
    /// card takes a share keeps that fade instead), anchored at their presented origins.
    fn choose_lod_fades(&mut self, alpha: f32) {
        self.lod_fades.clear();
        if self.view.is_none() || !self.options.lod {
            return;
        }
        for (slot, m) in self.members.iter().enumerate() {
            let Some(m) = m.filter(|m| m.coarser > 0.0 && m.card == 0.0) else {
                continue;
            };
            let anchor = self.store.present_placement(slot as u32, alpha).translation;
            self.lod_fades.push(LodFade {
                slot: slot as u32,
                share: m.coarser,
                anchor: anchor.to_array(),
            });
        }
    }

    /// The card of far member `m` (slot `slot`): its presented placement, the frame of its
    /// program's first sampled clip at its presented time; none when the card lies wholly
    /// outside `frustum` (the box around the sphere through its corners).
    fn push_card(&mut self, m: Member, slot: u32, alpha: f32, frustum: Option<&Frustum>) {
        let c = &self.characters[m.character];
        let Some(baked) = &c.far else { return };
        let impostor = &baked.impostor;
        let placement = self.store.present_placement(slot, alpha);
        if let Some(f) = frustum {
            let (scale, rotation, translation) = placement.to_scale_rotation_translation();
            let centre = translation + rotation * (scale * impostor.centre);
            let reach =
                Vec3::splat(impostor.radius * scale.max_element() * std::f32::consts::SQRT_2);
            let card = Bounds {
                min: centre - reach,
                max: centre + reach,
            };
            if !f.intersects(&card) {
                return;
            }
        }
        let clip = if self
            .store
            .present_program(slot, alpha, &c.source.clips, &mut self.presented)
        {
            (self.presented.ops.iter())
                .find(|o| o.code == op::SAMPLE)
                .map(|o| (o.a, f64::from(o.time)))
        } else {
            None
        };
        let frame = clip
            .and_then(|(c2, t)| impostor.card_frame(&c.source, c2, t))
            .unwrap_or_default();
        self.cards.push(Card {
            fade: m.card,
            ..Card::new(impostor, &placement, slot, frame)
        });
    }

    /// How the last presented frame spent the pose budget (with [`UpdateRate::Budget`] and a
    /// view).
    pub fn pose_budget(&self) -> Option<BudgetReport> {
        self.budget_report
    }

    /// The members of the last presented frame that cross-fade between two mesh LODs
    /// ([`AnimatorOptions::lod_fade`]), for [`CrowdPass::set_lod_fades`].
    pub fn lod_fades(&self) -> &[LodFade] {
        &self.lod_fades
    }

    /// The far tier's cards of the last presented frame, for [`CrowdPass::set_cards`].
    pub fn cards(&self) -> &[Card] {
        &self.cards
    }

    /// Members, in slot order.
    pub fn members(&self) -> impl Iterator<Item = MemberId> + '_ {
        (self.members.iter().enumerate()).filter_map(|(i, m)| m.map(|_| MemberId(i as u32)))
    }

    /// Live members.
    pub fn len(&self) -> usize {
        self.members.iter().flatten().count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Member `member`'s placement (component space → scene) after the last tick.
    pub fn placement(&self, member: MemberId) -> Option<Affine3A> {
        let m = self.members.get(member.0 as usize)?.as_ref()?;
        Some(m.placement.to_affine())
    }

    /// Member `member`'s skeleton LOD level (0: every joint).
    pub fn level(&self, member: MemberId) -> u8 {
        self.store.level(InstanceId(member.0))
    }

    /// Whether member `member` was a card in the last presented frame.
    pub fn is_card(&self, member: MemberId) -> bool {
        self.members
            .get(member.0 as usize)
            .and_then(|m| m.as_ref())
            .is_some_and(|m| m.far)
    }

    /// Events the last tick delivered, character after character, each in member order (an
    /// event's `instance` is its member's id).
    pub fn events(&self) -> impl Iterator<Item = &Event> {
        (self.characters.iter())
            .filter_map(|c| c.control.as_ref())
            .flat_map(|(_, crowd)| crowd.events())
    }

    /// Member `member`'s socket transforms after the last tick, in its tree's order, in its
    /// component frame: scene space is `placement(member) * socket`. Every member's sockets
    /// advance each tick, seen or culled, at any level of detail; empty for an unknown member
    /// or one without a tree.
    pub fn sockets(&self, member: MemberId) -> &[Affine3A] {
        let Some(m) = self.members.get(member.0 as usize).and_then(|m| m.as_ref()) else {
            return &[];
        };
        match &self.characters[m.character].control {
            Some((ctl, crowd)) => crowd.sockets(ctl, m.index),
            None => &[],
        }
    }

    /// Character `character`'s controller (its package with the tree's masks, its tree, the
    /// tick rate); `None` without a tree.
    pub fn controller(&self, character: CharacterId) -> Option<&Controller> {
        self.characters
            .get(character.0)?
            .control
            .as_ref()
            .map(|(ctl, _)| ctl)
    }

    /// Character `character`'s package, as the runtime holds it.
    pub fn package(&self, character: CharacterId) -> Option<&Package> {
        Some(&self.characters.get(character.0)?.source)
    }

    /// Character `character`'s package id in the runtime.
    pub fn package_id(&self, character: CharacterId) -> Option<PackageId> {
        Some(self.characters.get(character.0)?.package)
    }

    /// Member `member`'s character.
    pub fn character_of(&self, member: MemberId) -> Option<CharacterId> {
        Some(CharacterId(
            self.members.get(member.0 as usize)?.as_ref()?.character,
        ))
    }

    /// Member `member`'s program at `alpha` between the last two ticks (as the frame presents
    /// it: for a hero's IK, or a CPU reference); `None` for an unknown member or one without a
    /// program.
    pub fn presented_program(&mut self, member: MemberId, alpha: f32) -> Option<&Program> {
        let m = self.members.get(member.0 as usize)?.as_ref()?;
        let clips = &self.characters[m.character].source.clips;
        self.store
            .present_program(member.0, alpha, clips, &mut self.presented)
            .then_some(&self.presented)
    }

    /// The retained instances the frames present (throng-cpu-ref `retained`): for a CPU
    /// reference (`CpuRuntime::present`) of the same frames.
    pub fn instances(&self) -> &Instances {
        &self.store
    }

    /// A digest of control's last tick: per character every member's program, root motion and
    /// placement, and the events, in member order (what must not depend on frames presented).
    pub fn control_digest(&self) -> u64 {
        let mut d = throng_control::digest::Digest::default();
        for c in &self.characters {
            let Some((_, crowd)) = &c.control else {
                continue;
            };
            crowd_digest(&mut d, crowd, |id| {
                let m = self.members.get(id as usize)?.as_ref()?;
                Some(m.placement)
            });
        }
        d.finish()
    }

    /// How long the last tick's control and hand-off took.
    pub fn tick_times(&self) -> TickTimes {
        self.tick_times
    }

    /// The GPU runtime: its last frame's buffers ([`Runtime::skinned_pages`],
    /// [`Runtime::skinned_runs`], [`Runtime::palette_pages`], ...), and for tools
    /// [`Runtime::finish`] and [`Runtime::readback`] (which wait).
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    pub fn runtime_mut(&mut self) -> &mut Runtime {
        &mut self.runtime
    }
}

/// A fixed-rate tick clock for a render loop (Fiedler, "Fix Your Timestep!",
/// https://gafferongames.com/post/fix_your_timestep/): advance it by each frame's time; it says
/// how many ticks are due, and where between the last two ticks the frame then falls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TickClock {
    period: f64,
    pending: f64,
}

impl Default for TickClock {
    /// 30 ticks per second, as [`AnimatorOptions::default`].
    fn default() -> Self {
        TickClock::new(30.0)
    }
}

impl TickClock {
    /// A clock of `hz` ticks per second (at least one tick a day).
    pub fn new(hz: f64) -> TickClock {
        TickClock {
            period: 1.0 / hz.clamp(1.0 / 86_400.0, 1e6),
            pending: 0.0,
        }
    }

    /// Adds `dt` seconds (negative and non-finite ones count as 0): the ticks due now (run
    /// [`Animator::tick`] that many times), and the frame's `alpha` for [`Animator::present`].
    pub fn advance(&mut self, dt: f64) -> (u32, f32) {
        if dt.is_finite() && dt > 0.0 {
            self.pending += dt;
        }
        let ticks = (self.pending / self.period).floor();
        self.pending -= ticks * self.period;
        (
            ticks as u32,
            (self.pending / self.period).clamp(0.0, 1.0) as f32,
        )
    }
}

/// The program capacity of `tree` over skeleton `skeleton` of `package` (for
/// [`Animator::new`]): what every program control compiles from it fits.
pub fn tree_limits(
    package: &Package,
    skeleton: u32,
    (text, file): (&str, &str),
) -> Result<ProgramLimits, AnimatorError> {
    let tree = throng_control::tree::load(text, file, package, skeleton)?;
    let skin = package.skins.iter().any(|s| s.skeleton == skeleton);
    Ok(throng_control::program::limits(&tree, skin))
}

/// The checked assets of `c`'s kind.
fn assets_of(c: &Character) -> Result<BatchAssets<'_>, AnimatorError> {
    let batch = Batch {
        package: c.package,
        skeleton: c.kind.skeleton,
        skin: c.kind.skin,
        instances: &[],
    };
    Ok(batch_assets(0, &batch, |_| Some(&c.source)).map_err(GpuError::Frame)?)
}

/// One character's part of [`Animator::control_digest`]: per member of `crowd`, in its order,
/// its id, program and root motion, and its placement after the tick (`placement` of its id,
/// where it has one); then the tick's events. Public so that a replay of the same crowd
/// outside an animator (`throng soak`'s, on one thread) digests exactly as the animator does.
pub fn crowd_digest(
    d: &mut throng_control::digest::Digest,
    crowd: &Crowd,
    placement: impl Fn(u32) -> Option<Placement>,
) {
    for (k, (s, motion)) in crowd.instances.iter().zip(&crowd.motion).enumerate() {
        d.u64(u64::from(s.id));
        let (ops, weights) = crowd.programs.program(k).unwrap_or_default();
        d.program(ops, weights);
        d.motion(*motion);
        if let Some(p) = placement(s.id) {
            d.motion((p.translation, p.rotation));
        }
    }
    crowd.events().for_each(|e| d.event(e));
}

/// `p` moved by root motion `(t, q)` (in its component frame at the tick's start):
/// `p · delta`, a similarity still. Public for replays of a tick's placements
/// ([`crowd_digest`]).
pub fn compose(p: &Placement, t: Vec3, q: Quat) -> Placement {
    Placement {
        translation: p.translation + p.rotation * (t * p.scale),
        scale: p.scale,
        rotation: (p.rotation * q).normalize(),
    }
}

/// Whether a member `height` pixels tall is under the far tier's `limit` (with 20 % hysteresis:
/// one already there leaves it above `1.2 limit`).
/// The share of a member's pixels its card takes at `height` pixels tall, for a far tier at
/// `limit` pixels cross-fading up to `fade` × `limit` ([`AnimatorOptions::far_fade`]): 1 at
/// or under `limit`, falling linearly to 0 at the band's top. Without a band (`fade` ≤ 1) a
/// member is a card under `limit`, or under 1.2 × `limit` if it `was` one (hysteresis).
fn card_share(was: bool, height: f32, limit: f32, fade: f32) -> f32 {
    if fade <= 1.0 {
        let limit = if was { limit * 1.2 } else { limit };
        return if height < limit { 1.0 } else { 0.0 };
    }
    let top = limit * fade;
    ((top - height) / (top - limit)).clamp(0.0, 1.0)
}

/// The built-in generated character (throng-fixtures' glTF: 50 joints, idle, walk, run, wave
/// and breathing clips), cooked with the default profile.
pub fn builtin_character() -> Result<Package, throng_cook::CookError> {
    let imported =
        throng_cook::import_slice(&throng_fixtures::character_glb(), "generated character")?;
    Ok(throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)?.0)
}

/// The generated character with every CMU BVH file (`.bvh`) in the folder `bvh` retargeted onto
/// it (first two frames skipped, CMU's scale; `fixtures/retarget/cmu-to-character.toml`) and a
/// motion database of them and its `idle` (default settings): what
/// `throng motion-database ../shared/assets/mocap/bvh/*.bvh --onto character.glb --profile
/// fixtures/retarget/cmu-to-character.toml --bvh-skip 2 --idle idle` writes, for the
/// locomotion tree (`throng_fixtures::LOCOMOTION_TREE`).
pub fn locomotion_character(
    bvh: &std::path::Path,
) -> Result<Package, throng_cook::motion_db::CookDatabaseError> {
    let io = |message: String| throng_cook::CookError::Io {
        file: bvh.display().to_string(),
        message,
    };
    let mut files: Vec<_> = std::fs::read_dir(bvh)
        .map_err(|e| io(e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("bvh")))
        .collect();
    if files.is_empty() {
        let why =
            "holds no .bvh files (the CMU locomotion files are in ../shared/assets/mocap/bvh)";
        return Err(io(why.into()).into());
    }
    files.sort();
    let options = throng_cook::BvhOptions {
        skip: 2,
        ..Default::default()
    };
    let sources = (files.iter())
        .map(|f| throng_cook::import_bvh_file(f, options))
        .collect::<Result<Vec<_>, _>>()?;
    let target = throng_cook::import_slice(&throng_fixtures::character_glb(), "character")?;
    let profile = throng_cook::retarget::RetargetProfile::parse(
        throng_fixtures::CMU_TO_CHARACTER,
        "fixtures/retarget/cmu-to-character.toml",
    )?;
    throng_cook::motion_db::cook_database(
        target,
        &sources,
        &profile,
        &throng_cook::Profile::DEFAULT,
        &["idle".into()],
        &throng_cook::motion_db::DatabaseSettings::default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_members_card_share_grows_across_the_band_and_switches_at_once_without_one() {
        // Band from 24 px (no card) down to 16 px (a card alone).
        assert_eq!(card_share(false, 30.0, 16.0, 1.5), 0.0);
        assert_eq!(card_share(false, 24.0, 16.0, 1.5), 0.0);
        assert_eq!(card_share(false, 20.0, 16.0, 1.5), 0.5);
        assert_eq!(card_share(true, 16.0, 16.0, 1.5), 1.0);
        assert_eq!(card_share(false, 3.0, 16.0, 1.5), 1.0);
        // No band: a card under 16 px, or under 19.2 px once one.
        assert_eq!(card_share(false, 17.0, 16.0, 1.0), 0.0);
        assert_eq!(card_share(true, 17.0, 16.0, 1.0), 1.0);
        assert_eq!(card_share(true, 20.0, 16.0, 1.0), 0.0);
        assert_eq!(card_share(false, 15.0, 16.0, 1.0), 1.0);
    }
}
