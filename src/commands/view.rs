//! `throng view`: the crowd in a window, through the embedding API (throng::Animator and
//! CrowdPass on the window's own device), with an egui overlay: play, pause and single-step of
//! the fixed tick, the member count, the program mode (the pose pass's mapping, or the
//! interpreter alone), level of detail on or off and its tint, the far tier (members under
//! `FAR_HEIGHT` pixels tall drawn as cards, baked when the crowd is built), and live stage times. Drag to orbit, scroll to zoom; Space plays or pauses, `.` steps one tick, `L` and `T`
//! toggle LOD and tint.
//!
//! Unlike an embedding, the viewer waits for each frame's GPU work (`Runtime::finish`) to show
//! its stage times and what culling kept.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use glam::Vec3;
use throng::control::tree::Value;
use throng::fixtures::Formation;
use throng::gpu::draw::{cleared_depth, CrowdPass, Target};
use throng::gpu::impostor::{Card, FAR_HEIGHT};
use throng::gpu::raster::{read_texture, Camera, Scene, BACKGROUND, DEPTH_FORMAT};
use throng::gpu::{wgpu, GpuContext, Mapping, RuntimeOptions, Specialise, StageTimes, Visibility};
use throng::{Animator, AnimatorOptions, TickClock, View};
use winit::application::ApplicationHandler;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

use super::CliError;

/// Members the count control offers at most.
const MAX_INSTANCES: u32 = 20_000;
/// Seconds per tick, as the demo's.
const TICK: f64 = 1.0 / 30.0;
/// Frames rendered per second of crowd time (twice the tick rate).
const FRAME_HZ: f64 = 60.0;
/// The far tier's cards' tier under `--lod-tint` / `T` (blue, as `throng demo`'s).
const CARD_TINT: u32 = 5;

#[derive(clap::Args)]
pub struct Args {
    /// Members of the generated character's crowd, on a grid, driven by its state tree.
    #[arg(long, default_value_t = 400)]
    instances: u32,
    /// Window size, pixels.
    #[arg(long, default_value_t = 960)]
    width: u32,
    #[arg(long, default_value_t = 600)]
    height: u32,
    /// Quit after this many frames (the overlay and the crowd playing).
    #[arg(long)]
    frames: Option<u32>,
    /// With --frames: save the last frame, overlay included, as PNG.
    #[arg(long, requires = "frames")]
    screenshot: Option<PathBuf>,
    /// Start with members tinted by level of detail.
    #[arg(long)]
    lod_tint: bool,
    /// Start in this program mode: the pose pass in the adapter's mapping or a chosen one
    /// (specialised pipelines built in the background), or the interpreter alone.
    #[arg(long, value_enum, default_value_t = ProgramMode::Adapter)]
    program_mode: ProgramMode,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let event_loop = EventLoop::new().map_err(|e| window_error(e.to_string()))?;
    let mut app = App {
        args,
        viewer: None,
        frame: 0,
        error: None,
    };
    (event_loop.run_app(&mut app)).map_err(|e| window_error(e.to_string()))?;
    app.error.map_or(Ok(()), Err)
}

fn window_error(reason: String) -> CliError {
    CliError::Usage(format!(
        "no window: {reason} (throng view needs a display; without one, run it under xvfb-run)"
    ))
}

struct App {
    args: Args,
    viewer: Option<Viewer>,
    frame: u32,
    error: Option<CliError>,
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.viewer.is_none() {
            match Viewer::new(event_loop, &self.args) {
                Ok(v) => self.viewer = Some(v),
                Err(e) => {
                    self.error = Some(e);
                    event_loop.exit();
                }
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
        let Some(viewer) = self.viewer.as_mut() else {
            return;
        };
        if event == WindowEvent::CloseRequested {
            return event_loop.exit();
        }
        if event != WindowEvent::RedrawRequested {
            return viewer.input(&event);
        }
        self.frame += 1;
        let last = self.args.frames == Some(self.frame);
        let shot = self.args.screenshot.as_ref().filter(|_| last);
        match viewer.frame(shot) {
            Ok(()) if last => {
                let (specialised, interpreter) = viewer.panel.dispatches;
                println!(
                    "{} frames in program mode {}: the last frame's pose dispatches ran {specialised} \
                     on specialised pipelines and {interpreter} on the interpreter",
                    self.frame,
                    viewer.panel.mode.label()
                );
                event_loop.exit()
            }
            Ok(()) => viewer.window.request_redraw(),
            Err(e) => {
                self.error = Some(e);
                event_loop.exit();
            }
        }
    }
}

/// An orbit about a target: azimuth about +Y from +Z toward +X, elevation, distance.
#[derive(Clone, Copy, Debug)]
struct Orbit {
    target: Vec3,
    azimuth: f32,
    elevation: f32,
    distance: f32,
    fov_y: f32,
}

impl Orbit {
    fn from_camera(c: &Camera) -> Orbit {
        let back = c.eye - c.target;
        let distance = back.length().max(1e-3);
        Orbit {
            target: c.target,
            azimuth: back.x.atan2(back.z),
            elevation: (back.y / distance).clamp(-1.0, 1.0).asin(),
            distance,
            fov_y: c.fov_y,
        }
    }

    fn camera(&self) -> Camera {
        let (sa, ca) = self.azimuth.sin_cos();
        let (se, ce) = self.elevation.sin_cos();
        let eye = self.target + Vec3::new(sa * ce, se, ca * ce) * self.distance;
        Camera {
            eye,
            target: self.target,
            fov_y: self.fov_y,
            near: self.distance * 0.01,
            far: self.distance * 20.0,
        }
    }
}

/// How the GPU evaluates the pose programs: the pose pass's mapping (the adapter's or a chosen
/// one) with specialised pipelines built in the background, or the interpreter alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, clap::ValueEnum)]
enum ProgramMode {
    #[default]
    Adapter,
    Thread,
    Workgroup,
    Interpreter,
}

impl ProgramMode {
    const ALL: [ProgramMode; 4] = [
        ProgramMode::Adapter,
        ProgramMode::Thread,
        ProgramMode::Workgroup,
        ProgramMode::Interpreter,
    ];

    fn label(self) -> &'static str {
        match self {
            ProgramMode::Adapter => "the adapter's mapping",
            ProgramMode::Thread => "thread mapping",
            ProgramMode::Workgroup => "workgroup mapping",
            ProgramMode::Interpreter => "interpreter only",
        }
    }

    fn runtime(self) -> RuntimeOptions {
        let (mapping, specialise) = match self {
            ProgramMode::Adapter => (None, Specialise::Background),
            ProgramMode::Thread => (Some(Mapping::Thread), Specialise::Background),
            ProgramMode::Workgroup => (Some(Mapping::Workgroup), Specialise::Background),
            ProgramMode::Interpreter => (None, Specialise::Never),
        };
        RuntimeOptions {
            mapping,
            specialise,
            ..RuntimeOptions::default()
        }
    }
}

/// What the overlay shows and controls.
#[derive(Default)]
struct Panel {
    playing: bool,
    step: bool,
    lod: bool,
    tint: bool,
    instances: u32,
    mode: ProgramMode,
    /// The last frame's pose dispatches: on specialised pipelines, on the interpreter.
    dispatches: (usize, usize),
    ticks: u64,
    tick_ms: f64,
    /// The 30 Hz tick clock and where the last frame fell between ticks.
    clock: TickClock,
    alpha: f32,
    frame_ms: f64,
    times: StageTimes,
    visibility: Visibility,
    /// The far tier's cards of the last frame (members under `FAR_HEIGHT` pixels tall).
    cards: usize,
}

struct Overlay {
    ctx: egui::Context,
    state: egui_winit::State,
    renderer: egui_wgpu::Renderer,
}

struct Viewer {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    gpu: GpuContext,
    target: Target,
    depth: wgpu::TextureView,
    crowd: CrowdPass,
    animator: Animator,
    scene: Scene,
    orbit: Orbit,
    drag: Option<(f64, f64)>,
    cursor: (f64, f64),
    overlay: Overlay,
    panel: Panel,
    /// The member count and LOD switch the animator was made with.
    built: (u32, bool, ProgramMode),
}

impl Viewer {
    fn new(event_loop: &ActiveEventLoop, args: &Args) -> Result<Viewer, CliError> {
        let size = winit::dpi::PhysicalSize::new(args.width.max(64), args.height.max(64));
        let attributes = Window::default_attributes()
            .with_title("throng view")
            .with_inner_size(size);
        let window =
            (event_loop.create_window(attributes)).map_err(|e| window_error(e.to_string()))?;
        let window = Arc::new(window);
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
        let surface =
            (instance.create_surface(window.clone())).map_err(|e| window_error(e.to_string()))?;
        let options = wgpu::RequestAdapterOptions {
            compatible_surface: Some(&surface),
            ..Default::default()
        };
        let adapter = pollster::block_on(instance.request_adapter(&options))
            .map_err(|e| window_error(format!("no adapter for the window: {e}")))?;
        let (device, queue) =
            pollster::block_on(adapter.request_device(&GpuContext::device_descriptor(&adapter)))
                .map_err(|e| window_error(e.to_string()))?;
        let gpu = GpuContext::from_device(device, queue)?;
        let size = window.inner_size();
        let mut config = (surface.get_default_config(&adapter, size.width, size.height))
            .ok_or_else(|| window_error("the surface does not fit the adapter".into()))?;
        let formats = surface.get_capabilities(&adapter).formats;
        config.format = (formats.iter().copied().find(|f| f.is_srgb())).unwrap_or(config.format);
        config.usage |= wgpu::TextureUsages::COPY_SRC;
        surface.configure(&gpu.device, &config);
        let target = Target {
            color: config.format,
            depth: DEPTH_FORMAT,
            samples: 1,
        };
        let mut crowd = CrowdPass::new(&gpu, target)?;
        let depth = target.depth_view(&gpu.device, (config.width, config.height));
        let instances = args.instances.clamp(1, MAX_INSTANCES);
        let (animator, scene) = crowd_scene(
            &gpu,
            (instances, true, args.program_mode),
            &config,
            &mut crowd,
        )?;
        let egui_ctx = egui::Context::default();
        let viewport = egui::ViewportId::ROOT;
        let state = egui_winit::State::new(egui_ctx.clone(), viewport, &window, None, None, None);
        let options = egui_wgpu::RendererOptions {
            depth_stencil_format: Some(DEPTH_FORMAT),
            ..Default::default()
        };
        let renderer = egui_wgpu::Renderer::new(&gpu.device, config.format, options);
        Ok(Viewer {
            window,
            surface,
            config,
            target,
            depth,
            crowd,
            orbit: Orbit::from_camera(&scene.camera),
            animator,
            scene,
            drag: None,
            cursor: (0.0, 0.0),
            overlay: Overlay {
                ctx: egui_ctx,
                state,
                renderer,
            },
            panel: Panel {
                playing: true,
                clock: TickClock::new(1.0 / TICK),
                alpha: 1.0,
                lod: true,
                tint: args.lod_tint,
                instances,
                mode: args.program_mode,
                ..Panel::default()
            },
            built: (instances, true, args.program_mode),
            gpu,
        })
    }

    /// Mouse and keys: the overlay first, then the camera and the shortcuts.
    fn input(&mut self, event: &WindowEvent) {
        if (self.overlay.state.on_window_event(&self.window, event)).consumed {
            return;
        }
        match event {
            WindowEvent::Resized(size) => self.resize(size.width, size.height),
            WindowEvent::MouseInput {
                state,
                button: MouseButton::Left,
                ..
            } => self.drag = (*state == ElementState::Pressed).then_some(self.cursor),
            WindowEvent::CursorMoved { position, .. } => {
                self.cursor = (position.x, position.y);
                if let Some((x, y)) = self.drag.replace(self.cursor) {
                    let o = &mut self.orbit;
                    o.azimuth -= (position.x - x) as f32 * 0.01;
                    o.elevation = (o.elevation + (position.y - y) as f32 * 0.01).clamp(0.05, 1.5);
                }
            }
            WindowEvent::MouseWheel { delta, .. } => {
                let lines = match delta {
                    MouseScrollDelta::LineDelta(_, y) => *y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                };
                self.orbit.distance *= 0.9f32.powf(lines);
            }
            WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Pressed => {
                let p = &mut self.panel;
                match &event.logical_key {
                    Key::Named(NamedKey::Space) => p.playing = !p.playing,
                    Key::Character(c) if c == "." => p.step = true,
                    Key::Character(c) if c.eq_ignore_ascii_case("l") => p.lod = !p.lod,
                    Key::Character(c) if c.eq_ignore_ascii_case("t") => p.tint = !p.tint,
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// The surface and depth at the window's new size (nothing while it is minimised).
    fn resize(&mut self, width: u32, height: u32) {
        if width == 0 || height == 0 {
            return;
        }
        (self.config.width, self.config.height) = (width, height);
        self.surface.configure(&self.gpu.device, &self.config);
        self.depth = self.target.depth_view(&self.gpu.device, (width, height));
    }

    /// One frame: the tick when playing (or stepping), the pose, the overlay, one render pass.
    fn frame(&mut self, shot: Option<&PathBuf>) -> Result<(), CliError> {
        let start = Instant::now();
        let asked = (self.panel.instances, self.panel.lod, self.panel.mode);
        if asked != self.built {
            (self.animator, _) = crowd_scene(&self.gpu, asked, &self.config, &mut self.crowd)?;
            self.built = asked;
        }
        let p = &mut self.panel;
        // Control ticks at 30 Hz and the window renders at 60 (a fixed frame time, so
        // `--frames` runs are repeatable); a single step is one tick, shown at its end.
        let (ticks, alpha) = match (p.playing, std::mem::take(&mut p.step)) {
            (true, _) => p.clock.advance(1.0 / FRAME_HZ),
            (false, true) => (1, 1.0),
            (false, false) => (0, p.alpha),
        };
        p.alpha = alpha;
        for _ in 0..ticks {
            let tick = Instant::now();
            self.animator
                .tick()
                .map_err(|e| CliError::Control(e.to_string()))?;
            p.tick_ms = tick.elapsed().as_secs_f64() * 1e3;
            p.ticks += 1;
        }
        let camera = self.orbit.camera();
        self.scene.camera = camera;
        let (width, height) = (self.config.width, self.config.height);
        self.animator.set_view(Some(View {
            camera,
            width,
            height,
        }));
        let report =
            (self.animator.present(p.alpha)).map_err(|e| CliError::Control(e.to_string()))?;
        p.dispatches = (report.specialised_dispatches, report.interpreter_dispatches);
        p.times = self.animator.runtime_mut().finish()?;
        p.visibility = self.animator.runtime().visibility();
        let tiers: Vec<u8> = match p.tint {
            true => (0..self.animator.runtime().capacities().instances)
                .map(|m| self.animator.level(throng::MemberId(m)) + 1)
                .collect(),
            false => Vec::new(),
        };
        self.crowd.set_tiers(&tiers);
        // The far tier's cards, blue under the tint (as `throng demo --lod-tint`).
        let tier = if p.tint { CARD_TINT } else { 0 };
        let cards: Vec<Card> = (self.animator.cards().iter())
            .map(|c| Card { tier, ..*c })
            .collect();
        self.crowd.set_cards(&cards);
        self.crowd.set_lod_fades(self.animator.lod_fades());
        p.cards = cards.len();
        self.crowd
            .prepare(self.animator.runtime(), &self.scene, (width, height))?;
        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t) => t,
            wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
            // Skip the frame: the window is hidden, or its surface is reconfigured for the next.
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => {
                return Ok(())
            }
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                self.surface.configure(&self.gpu.device, &self.config);
                return Ok(());
            }
            other => return Err(window_error(format!("no surface texture: {other:?}"))),
        };
        let view = frame.texture.create_view(&Default::default());
        self.draw(&view);
        if let Some(path) = shot {
            let image = read_texture(&self.gpu, &frame.texture)?;
            super::demo::write_png(path, &image)?;
        }
        self.window.pre_present_notify();
        self.gpu.queue.present(frame);
        self.panel.frame_ms = start.elapsed().as_secs_f64() * 1e3;
        Ok(())
    }

    /// The overlay's user interface and paint jobs, then one pass: background, crowd, overlay.
    fn draw(&mut self, view: &wgpu::TextureView) {
        let input = self.overlay.state.take_egui_input(&self.window);
        let adapter = self.gpu.adapter.name.clone();
        let panel = &mut self.panel;
        let output = self.overlay.ctx.run_pass(input, |ctx| {
            let window = egui::Window::new("throng").default_width(260.0);
            window.show(ctx, |ui| controls(ui, panel, &adapter));
        });
        let o = &mut self.overlay;
        o.state
            .handle_platform_output(&self.window, output.platform_output);
        let jobs = o.ctx.tessellate(output.shapes, output.pixels_per_point);
        let screen = egui_wgpu::ScreenDescriptor {
            size_in_pixels: [self.config.width, self.config.height],
            pixels_per_point: output.pixels_per_point,
        };
        let (device, queue) = (&self.gpu.device, &self.gpu.queue);
        for (id, deltas) in &output.textures_delta.set {
            for delta in deltas {
                o.renderer.update_texture(device, queue, *id, delta);
            }
        }
        let mut encoder = device.create_command_encoder(&Default::default());
        let extra = o
            .renderer
            .update_buffers(device, queue, &mut encoder, &jobs, &screen);
        let [r, g, b] = BACKGROUND.map(f64::from);
        let mut pass = encoder
            .begin_render_pass(&wgpu::RenderPassDescriptor {
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color { r, g, b, a: 1.0 }),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: Some(cleared_depth(&self.depth)),
                ..Default::default()
            })
            .forget_lifetime();
        self.crowd.render(&mut pass);
        o.renderer.render(&mut pass, &jobs, &screen);
        drop(pass);
        queue.submit(extra.into_iter().chain([encoder.finish()]));
        for id in &output.textures_delta.free {
            o.renderer.free_texture(id);
        }
        let mut applied = output.textures_delta;
        applied.clear();
    }
}

/// The overlay's contents.
fn controls(ui: &mut egui::Ui, p: &mut Panel, adapter: &str) {
    ui.label(adapter);
    ui.horizontal(|ui| {
        let label = if p.playing { "pause" } else { "play" };
        if ui.button(label).clicked() {
            p.playing = !p.playing;
        }
        if ui.button("step").clicked() {
            p.step = true;
        }
        ui.label(format!("tick {} ({:.1} s)", p.ticks, p.ticks as f64 * TICK));
    });
    ui.add(
        egui::Slider::new(&mut p.instances, 1..=MAX_INSTANCES)
            .logarithmic(true)
            .text("members"),
    );
    egui::ComboBox::from_label("program mode")
        .selected_text(p.mode.label())
        .show_ui(ui, |ui| {
            for mode in ProgramMode::ALL {
                ui.selectable_value(&mut p.mode, mode, mode.label());
            }
        });
    ui.label(format!(
        "pose dispatches: {} specialised, {} interpreter",
        p.dispatches.0, p.dispatches.1
    ));
    ui.checkbox(&mut p.lod, "level of detail (L)");
    (ui.checkbox(&mut p.tint, "tint by level (T)")).on_hover_text(
        "green: every joint, yellow: about half, orange: about a quarter; cards blue",
    );
    let v = &p.visibility;
    ui.label(format!(
        "visible {}, skinned {}: {} vertices, {} triangles",
        v.visible, v.skinned, v.skinned_vertices, v.triangles
    ));
    let levels: Vec<String> = (v.per_level.iter()).map(|(n, _)| n.to_string()).collect();
    ui.label(format!(
        "members per level: {}; far tier: {} cards",
        levels.join(" / "),
        p.cards
    ));
    let t = &p.times;
    let source = if t.gpu_timestamps {
        "timestamps"
    } else {
        "no timestamps"
    };
    ui.label(format!(
        "ms: tick {:.2}, GPU pose {:.2}, bounds {:.2}, skinning {:.2} ({source})",
        p.tick_ms, t.pose_ms, t.bounds_ms, t.skinning_ms
    ));
    ui.label(format!(
        "ms: GPU frame {:.1}, whole frame {:.1}",
        t.wall_ms, p.frame_ms
    ));
}

/// The generated character's crowd of `n` members at a spread of speeds, posed with or
/// without `lod` in program mode `mode`, with the far tier (members under `FAR_HEIGHT` pixels
/// tall drawn as cards, baked now and handed to `crowd`), and the scene framing it.
fn crowd_scene(
    gpu: &GpuContext,
    (n, lod, mode): (u32, bool, ProgramMode),
    config: &wgpu::SurfaceConfiguration,
    crowd: &mut CrowdPass,
) -> Result<(Animator, Scene), CliError> {
    let n = n.clamp(1, MAX_INSTANCES) as usize;
    let mut package = throng::builtin_character()?;
    let grid = Formation::new(&mut package, 0, n).map_err(|e| CliError::Usage(e.to_string()))?;
    let tree = (throng::fixtures::CROWD_TREE, "crowd.toml");
    let options = AnimatorOptions {
        capacity: n as u32,
        lod,
        far_height: Some(FAR_HEIGHT),
        runtime: mode.runtime(),
        ..AnimatorOptions::default()
    };
    let control = |e: throng::AnimatorError| CliError::Control(e.to_string());
    let limits = throng::tree_limits(&package, 0, tree).map_err(control)?;
    let mut animator = Animator::new(gpu, &[&package], limits, options).map_err(control)?;
    let character = (animator.add_character(package, 0, Some(tree))).map_err(control)?;
    for (k, placement) in grid.placements().iter().enumerate() {
        let member = animator.spawn(character, placement).map_err(control)?;
        let speed = [0.0, 0.8, 1.4, 1.4, 2.4, 3.5][k % 6];
        (animator.set_input(member, "speed", Value::Float(speed))).map_err(control)?;
    }
    animator.tick().map_err(control)?;
    let baked = animator.bake_far_tier(character).map_err(control)?;
    crowd.set_impostor(&baked.impostor, &baked.atlas)?;
    let aspect = config.width as f32 / config.height.max(1) as f32;
    let scene = Scene::framing(&grid.bounds(), aspect, grid.spacing);
    Ok((animator, scene))
}
