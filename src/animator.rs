//! Throng inside someone else's renderer: an [`Animator`] ticks one character's crowd on the
//! CPU (throng-control, the state tree) and poses and skins it on the caller's wgpu device; the
//! caller draws the skinned output in its own render pass, with [`CrowdPass`] or its own
//! pipeline (docs/embedding.md).
//!
//! A frame, in order:
//! 1. [`Animator::set_input`] (gameplay: speed, wave, ...), [`Animator::tick`]: one control
//!    tick of every member (rayon), its root motion composed into the member's placement
//!    (`placement = placement · delta`, the delta in the component frame at the tick's start,
//!    DESIGN.md §5), its program copied out; events and failures of the tick are readable;
//! 2. [`Animator::pose`]: the GPU frame (program, FK, palette, bounds, culling against the
//!    frustum of [`Animator::set_view`], skinning, each member at its level of detail)
//!    recorded and submitted to the caller's queue, no wait and no readback;
//! 3. the caller's pass: [`CrowdPass::prepare`] then [`CrowdPass::render`], or its own draw of
//!    [`Runtime::skinned_pages`] / [`Runtime::palette_pages`].

use glam::Affine3A;
use throng_control::crowd::Crowd;
use throng_control::events::Event;
use throng_control::instance::Controller;
use throng_control::tree::Value;
use throng_cpu_ref::bounds::Frustum;
use throng_cpu_ref::lod::LodState;
use throng_cpu_ref::{Package, Program};
use throng_gpu::raster::Camera;
use throng_gpu::{
    Batch, Capacities, FrameReport, GpuContext, GpuError, Instance, PackageId, Pose, Runtime,
    RuntimeOptions,
};

#[cfg(doc)]
use throng_gpu::draw::CrowdPass;

/// Why an [`Animator`] could not be made or could not run a frame; each names what to fix.
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
        member: usize,
        source: throng_control::instance::InputError,
    },
    #[error("member {member}'s tick failed and it kept its state: {source}")]
    Tick {
        member: usize,
        source: throng_control::instance::TickError,
    },
    #[error("the tree's initial states cannot start: {0}")]
    Spawn(throng_control::instance::TickError),
    #[error(transparent)]
    Cook(#[from] throng_cook::CookError),
    #[error("no member {member}: the animator has {members}")]
    NoMember { member: usize, members: usize },
    #[error("the package has no skeleton {0}; cook the character, or pick one of its skeletons")]
    NoSkeleton(u32),
}

/// How an [`Animator`] runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnimatorOptions {
    /// Control ticks per second; [`Animator::tick`] advances one tick.
    pub hz: f64,
    /// Events one member may deliver per tick.
    pub event_capacity: usize,
    /// Members skinned per frame at most (the first in member order when culling keeps
    /// more); `None`: all of them.
    pub skinned_budget: Option<u32>,
    /// With a view ([`Animator::set_view`]), pose and draw each member at the coarsest cooked
    /// skeleton and mesh LOD whose error projects under a pixel (with hysteresis); false: every
    /// member at full detail.
    pub lod: bool,
    /// The GPU runtime's: the pose mapping (default: the adapter's) and when specialised
    /// pipelines are built (default: in the background, the interpreter running meanwhile).
    pub runtime: RuntimeOptions,
}

/// What the members are seen through: a camera and the image it renders.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    pub camera: Camera,
    pub width: u32,
    pub height: u32,
}

impl Default for AnimatorOptions {
    fn default() -> Self {
        AnimatorOptions {
            hz: 30.0,
            event_capacity: 64,
            skinned_budget: None,
            lod: true,
            runtime: RuntimeOptions::default(),
        }
    }
}

/// One character's crowd, ticked on the CPU and posed and skinned on a caller's device.
pub struct Animator {
    controller: Controller,
    crowd: Crowd,
    programs: Vec<Program>,
    placements: Vec<Affine3A>,
    runtime: Runtime,
    package: PackageId,
    skeleton: u32,
    skin: Option<u32>,
    view: Option<View>,
    lod: Option<LodState>,
    /// Per member the skeleton LOD level of the last [`Animator::pose`].
    levels: Vec<u8>,
}

impl Animator {
    /// A crowd of `package`'s skeleton `skeleton` driven by the state tree `tree` (TOML source,
    /// docs/state-tree.md; `file` names it in errors), one member per placement (component
    /// space → scene), on `ctx`: make it from the renderer's own device and queue with
    /// [`GpuContext::from_device`].
    pub fn new(
        ctx: &GpuContext,
        package: Package,
        skeleton: u32,
        (tree, file): (&str, &str),
        placements: &[Affine3A],
        options: AnimatorOptions,
    ) -> Result<Animator, AnimatorError> {
        if package.skeletons.get(skeleton as usize).is_none() {
            return Err(AnimatorError::NoSkeleton(skeleton));
        }
        let tree = throng_control::tree::load(tree, file, &package, skeleton)?;
        let controller = Controller::new(tree, package, options.hz, options.event_capacity)?;
        let limits = controller.limits();
        let package = &controller.package;
        let members = placements.len() as u32;
        let mut capacities = Capacities::for_packages(&[package], members.max(1));
        capacities.skinned_instances = (options.skinned_budget)
            .unwrap_or(members)
            .clamp(1, members.max(1));
        capacities.fit_programs(&limits)?;
        if controller.tree.inertializes() {
            capacities.history_slots = members;
        }
        // Before the crowd is spawned: a crowd too large for one runtime costs nothing to refuse.
        capacities.check(ctx)?;
        let crowd = Crowd::new(&controller, placements.len()).map_err(AnimatorError::Spawn)?;
        let mut runtime = Runtime::with_options(ctx, capacities, options.runtime)?;
        let id = runtime.add_package(package)?;
        let skin = (package.skins.iter())
            .position(|s| s.skeleton == skeleton)
            .map(|s| s as u32);
        let program = Program {
            ops: Vec::with_capacity(limits.max_ops),
            weights: Vec::with_capacity(limits.max_weights),
        };
        let mut animator = Animator {
            programs: vec![program; placements.len()],
            placements: placements.to_vec(),
            controller,
            crowd,
            runtime,
            package: id,
            skeleton,
            skin,
            view: None,
            lod: options.lod.then(LodState::new),
            levels: vec![0; placements.len()],
        };
        animator.copy_programs();
        Ok(animator)
    }

    /// The generated character (cooked with the default profile) and its crowd tree
    /// (`fixtures/trees/crowd.toml`: idle, walk/run by `speed`, `wave` on the upper body).
    pub fn builtin(
        ctx: &GpuContext,
        placements: &[Affine3A],
        options: AnimatorOptions,
    ) -> Result<Animator, AnimatorError> {
        let package = crate::builtin_character()?;
        let tree = (throng_fixtures::CROWD_TREE, "crowd.toml");
        Animator::new(ctx, package, 0, tree, placements, options)
    }

    /// Members, numbered as their placements were given.
    pub fn len(&self) -> usize {
        self.placements.len()
    }

    pub fn is_empty(&self) -> bool {
        self.placements.is_empty()
    }

    /// Sets input `name` of member `member` for the next ticks (numbers clamped to the tree's
    /// declared range; unknown names, wrong types and non-finite values are refused).
    pub fn set_input(
        &mut self,
        member: usize,
        name: &str,
        value: Value,
    ) -> Result<(), AnimatorError> {
        let members = self.len();
        let state = (self.crowd.instances.get_mut(member))
            .ok_or(AnimatorError::NoMember { member, members })?;
        (self.controller.set_input(state, name, value))
            .map_err(|source| AnimatorError::Input { member, source })
    }

    /// [`Animator::set_input`] by the input's index in the tree
    /// (`animator.controller().tree.input(name)`, looked up once): no name lookup per member
    /// and tick.
    pub fn set_input_at(
        &mut self,
        member: usize,
        input: u16,
        value: Value,
    ) -> Result<(), AnimatorError> {
        let members = self.len();
        let state = (self.crowd.instances.get_mut(member))
            .ok_or(AnimatorError::NoMember { member, members })?;
        (self.controller.set_input_at(state, input, value))
            .map_err(|source| AnimatorError::Input { member, source })
    }

    /// One control tick of every member (step 1 of the module doc). A member whose tick fails
    /// keeps its state, program and placement; the first failure is returned after every
    /// other member has ticked.
    pub fn tick(&mut self) -> Result<(), AnimatorError> {
        self.crowd.tick(&self.controller);
        for (p, &(t, q)) in self.placements.iter_mut().zip(&self.crowd.motion) {
            *p *= Affine3A::from_rotation_translation(q, t);
        }
        self.copy_programs();
        match self.crowd.failures().next() {
            Some((member, e)) => Err(AnimatorError::Tick {
                member: *member as usize,
                source: e.clone(),
            }),
            None => Ok(()),
        }
    }

    fn copy_programs(&mut self) {
        for (i, program) in self.programs.iter_mut().enumerate() {
            self.crowd.programs.copy_into(i, program);
        }
    }

    /// Events the last tick delivered, in member order.
    pub fn events(&self) -> impl Iterator<Item = &Event> {
        self.crowd.events()
    }

    /// Member `member`'s socket transforms after the last tick, in the tree's order
    /// (`controller().tree.sockets`), in its component frame: scene space is
    /// `placements()[member] * socket`. Every member's sockets advance each tick, seen or
    /// culled, at any level of detail; empty for an unknown member.
    pub fn sockets(&self, member: usize) -> &[Affine3A] {
        self.crowd.sockets(&self.controller, member)
    }

    /// Placements (component space → scene), by member: root motion moves them each tick;
    /// the caller may move them too (a teleport, a vehicle).
    pub fn placements(&self) -> &[Affine3A] {
        &self.placements
    }

    pub fn placements_mut(&mut self) -> &mut [Affine3A] {
        &mut self.placements
    }

    /// Sees the members through `view` from the next [`Animator::pose`]: only those whose
    /// animated bounds meet its frustum are skinned and drawn, each (with
    /// [`AnimatorOptions::lod`]) at the level of detail its projected size asks for. `None`:
    /// every member, at full detail.
    pub fn set_view(&mut self, view: Option<View>) {
        self.view = view;
        let frustum = view.map(|v| {
            let aspect = v.width as f32 / v.height.max(1) as f32;
            Frustum::from_view_proj(&v.camera.view_proj(aspect))
        });
        self.runtime.set_frustum(frustum);
    }

    /// Per member its skeleton LOD level in the last [`Animator::pose`] (0: every joint).
    pub fn levels(&self) -> &[u8] {
        &self.levels
    }

    /// Records and submits the GPU frame of the current programs and placements (step 2 of
    /// the module doc); frame slot `i` is member `i`. Nothing waits for the GPU.
    pub fn pose(&mut self) -> Result<FrameReport, AnimatorError> {
        self.choose_levels();
        let instances: Vec<Instance> = (self.programs.iter())
            .zip(&self.placements)
            .zip(&self.levels)
            .map(|((program, &placement), &level)| Instance {
                pose: match level {
                    0 => Pose::Program(program),
                    level => Pose::Lod(program, level),
                },
                placement,
            })
            .collect();
        let batches = [Batch {
            package: self.package,
            skeleton: self.skeleton,
            skin: self.skin,
            instances: &instances,
        }];
        Ok(self.runtime.frame(&batches)?)
    }

    /// Each member's level from its distance to the view's eye: pixels per scene unit at the
    /// member's origin, `focal / distance` (a program keeping inertialization history stays at
    /// level 0: history needs every joint).
    fn choose_levels(&mut self) {
        let lods = &self.controller.package.skeletons[self.skeleton as usize].lods;
        let (Some(view), Some(state)) = (self.view, self.lod.as_mut()) else {
            self.levels.fill(0);
            return;
        };
        let focal = view.height as f32 / (2.0 * (view.camera.fov_y * 0.5).tan());
        let eye = view.camera.eye;
        for (k, (level, (placement, program))) in (self.levels.iter_mut())
            .zip(self.placements.iter().zip(&self.programs))
            .enumerate()
        {
            let distance = eye.distance(placement.translation.into()).max(1e-3);
            *level = match program.history_slot() {
                Some(_) => 0,
                None => state.choose(k, focal / distance, lods),
            };
        }
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

    /// The controller: the package it drives (with the tree's masks), the tree, the tick rate.
    pub fn controller(&self) -> &Controller {
        &self.controller
    }

    /// Member `member`'s current program (for a CPU reference or a hero).
    pub fn program(&self, member: usize) -> Option<&Program> {
        self.programs.get(member)
    }
}
