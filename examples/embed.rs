//! Throng in your own renderer: this window owns its wgpu surface, device and backdrop
//! pipeline; Throng ticks and poses a crowd on that device and draws it into the same pass.
//!
//! `cargo run --release --example embed -- [--instances N] [--frames N --screenshot FILE.png]`
//! (docs/embedding.md walks through it).

use std::error::Error;
use std::sync::Arc;

use throng::gpu::draw::{cleared_depth, CrowdPass, Target};
use throng::gpu::raster::{read_texture, Scene};
use throng::gpu::{wgpu, GpuContext};
use throng::{
    control::tree::Value, fixtures::Formation, Animator, AnimatorOptions, TickClock, View,
};
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::window::{Window, WindowId};

type Fallible<T> = Result<T, Box<dyn Error>>;

/// A sky gradient: the renderer's own pipeline, drawn before the crowd in the same pass.
const BACKDROP: &str = "
@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    return vec4<f32>(f32(i / 2u) * 4.0 - 1.0, f32(i % 2u) * 4.0 - 1.0, 1.0, 1.0);
}
@fragment fn fs(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
    let t = clamp(p.y / 400.0, 0.0, 1.0);
    return vec4<f32>(mix(vec3(0.25, 0.40, 0.65), vec3(0.80, 0.78, 0.70), t), 1.0);
}";

/// What the window draws with: its surface and pipeline, and the crowd on the same device.
struct Gpu {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    ctx: GpuContext,
    depth: wgpu::TextureView,
    backdrop: wgpu::RenderPipeline,
    animator: Animator,
    clock: TickClock,
    crowd: CrowdPass,
    scene: Scene,
}

/// The command line, and the window once it exists.
#[derive(Default)]
struct App {
    instances: usize,
    frames: Option<u32>,
    screenshot: Option<String>,
    gpu: Option<Gpu>,
    frame: u32,
    error: Option<Box<dyn Error>>,
}

fn main() -> Fallible<()> {
    let mut app = App {
        instances: 64,
        ..App::default()
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--instances" => app.instances = value.parse()?,
            "--frames" => app.frames = Some(value.parse()?),
            "--screenshot" => app.screenshot = Some(value),
            _ => return Err(format!("unknown flag {flag} (see the file's doc comment)").into()),
        }
    }
    EventLoop::new()?.run_app(&mut app)?;
    app.error.map_or(Ok(()), Err)
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.gpu.is_none() {
            self.gpu = (Gpu::new(event_loop, self.instances))
                .map_err(|e| self.error = Some(e))
                .ok();
            if self.gpu.is_none() {
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
        if let (Some(gpu), WindowEvent::RedrawRequested) = (self.gpu.as_mut(), &event) {
            self.frame += 1;
            let last = self.frames == Some(self.frame);
            let shot = self.screenshot.as_deref().filter(|_| last);
            match gpu.frame(shot) {
                Ok(()) => gpu.window.request_redraw(),
                Err(e) => (self.error, self.frames) = (Some(e), Some(self.frame)),
            }
        }
        if self.frames == Some(self.frame) || event == WindowEvent::CloseRequested {
            event_loop.exit();
        }
    }
}

impl Gpu {
    fn new(event_loop: &ActiveEventLoop, instances: usize) -> Fallible<Gpu> {
        let size = winit::dpi::PhysicalSize::new(640, 400);
        let attributes = Window::default_attributes().with_inner_size(size);
        let window = Arc::new(event_loop.create_window(attributes)?);
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
        let surface = instance.create_surface(window.clone())?;
        let options = wgpu::RequestAdapterOptions {
            compatible_surface: Some(&surface),
            ..Default::default()
        };
        let adapter = pollster::block_on(instance.request_adapter(&options))?;
        // The device is the renderer's; it asks for the limits and features Throng needs.
        let (device, queue) =
            pollster::block_on(adapter.request_device(&GpuContext::device_descriptor(&adapter)))?;
        let ctx = GpuContext::from_device(device, queue)?;
        let size = window.inner_size();
        let mut config = (surface.get_default_config(&adapter, size.width, size.height))
            .ok_or("the surface does not fit the adapter")?;
        let formats = surface.get_capabilities(&adapter).formats;
        config.format = *formats
            .iter()
            .find(|f| f.is_srgb())
            .unwrap_or(&config.format);
        // COPY_SRC for the screenshot.
        config.usage |= wgpu::TextureUsages::COPY_SRC;
        surface.configure(&ctx.device, &config);
        let target = Target {
            color: config.format,
            depth: wgpu::TextureFormat::Depth32Float,
            samples: 1,
        };
        let depth = target.depth_view(&ctx.device, (config.width, config.height));
        let backdrop = backdrop(&ctx.device, target);
        // The crowd: the generated character on a grid, at a spread of speeds.
        let mut package = throng::builtin_character()?;
        let grid = Formation::new(&mut package, 0, instances)?;
        let tree = (throng::fixtures::CROWD_TREE, "crowd.toml");
        let options = AnimatorOptions {
            capacity: instances as u32,
            ..AnimatorOptions::default()
        };
        let limits = throng::tree_limits(&package, 0, tree)?;
        let mut animator = Animator::new(&ctx, &[&package], limits, options)?;
        let character = animator.add_character(package, 0, Some(tree))?;
        for (k, placement) in grid.placements().iter().enumerate() {
            let member = animator.spawn(character, placement)?;
            let speed = [0.0, 0.8, 1.4, 2.0][k % 4];
            animator.set_input(member, "speed", Value::Float(speed))?;
        }
        animator.tick()?;
        let crowd = CrowdPass::new(&ctx, target)?;
        let aspect = config.width as f32 / config.height as f32;
        let framing = Scene::framing(&grid.bounds(), aspect, grid.spacing);
        let scene = Scene {
            ground: None,
            ..framing
        };
        animator.set_view(Some(View {
            camera: scene.camera,
            width: config.width,
            height: config.height,
        }));
        Ok(Gpu {
            window,
            surface,
            config,
            ctx,
            depth,
            backdrop,
            animator,
            clock: TickClock::new(AnimatorOptions::default().hz),
            crowd,
            scene,
        })
    }

    /// The ticks due (30 Hz), the frame between the last two (a 60 Hz frame time, so runs are
    /// repeatable), then one render pass of the backdrop and the crowd; `shot` saves the image.
    fn frame(&mut self, shot: Option<&str>) -> Fallible<()> {
        let (ticks, alpha) = self.clock.advance(1.0 / 60.0);
        for _ in 0..ticks {
            self.animator.tick()?;
        }
        self.animator.present(alpha)?;
        // Members crossing mesh LODs are drawn at both levels, dithered.
        self.crowd.set_lod_fades(self.animator.lod_fades());
        let size = (self.config.width, self.config.height);
        self.crowd
            .prepare(self.animator.runtime(), &self.scene, size)?;
        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t)
            | wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
            _ => return Err("the surface gave no texture".into()),
        };
        let view = frame.texture.create_view(&Default::default());
        let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations::default(),
            })],
            depth_stencil_attachment: Some(cleared_depth(&self.depth)),
            ..Default::default()
        });
        pass.set_pipeline(&self.backdrop);
        pass.draw(0..3, 0..1);
        self.crowd.render(&mut pass);
        drop(pass);
        self.ctx.queue.submit([encoder.finish()]);
        if let Some(path) = shot {
            throng::write_png(path.as_ref(), &read_texture(&self.ctx, &frame.texture)?)?;
        }
        self.window.pre_present_notify();
        self.ctx.queue.present(frame);
        Ok(())
    }
}

/// The backdrop's pipeline: a full-screen triangle at the far plane, under the crowd.
fn backdrop(device: &wgpu::Device, target: Target) -> wgpu::RenderPipeline {
    let source = wgpu::ShaderSource::Wgsl(BACKDROP.into());
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("backdrop"),
        source,
    });
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("backdrop"),
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: Default::default(),
        depth_stencil: Some(wgpu::DepthStencilState {
            format: target.depth,
            depth_write_enabled: Some(false),
            depth_compare: Some(wgpu::CompareFunction::LessEqual),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(target.color.into())],
        }),
        multiview_mask: None,
        cache: None,
    })
}
