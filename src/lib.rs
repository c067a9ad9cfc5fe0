//! Throng: crowd animation on the GPU with a scalar CPU reference as its oracle.
//!
//! This facade re-exports the workspace crates and adds what a renderer embedding Throng needs:
//! an [`Animator`] (control ticked on the CPU at a fixed rate, frames posed and skinned on the
//! caller's wgpu device at any rate between ticks)
//! to draw with [`gpu::draw::CrowdPass`] in the caller's own pass (docs/embedding.md). The
//! `throng` binary is a thin command-line tool over them (`throng --help`).
//!
//! ```no_run
//! use throng::gpu::draw::{cleared_depth, CrowdPass, Target};
//! use throng::gpu::{raster::Scene, wgpu, GpuContext};
//! use throng::{control::tree::Value, fixtures::Formation, Animator, AnimatorOptions};
//! use throng::{MemberId, TickClock};
//!
//! /// The renderer's device and queue, its colour and depth views of `width` × `height`.
//! fn crowd_in_my_renderer(
//!     (device, queue): (wgpu::Device, wgpu::Queue),
//!     (view, depth): (&wgpu::TextureView, &wgpu::TextureView),
//!     (width, height): (u32, u32),
//! ) -> Result<(), Box<dyn std::error::Error>> {
//! // Once: wrap the renderer's device (made with GpuContext::device_descriptor), cook a
//! // character, place a crowd, and make the draw for the renderer's formats.
//! let ctx = GpuContext::from_device(device, queue)?;
//! let mut package = throng::builtin_character()?;
//! let grid = Formation::new(&mut package, 0, 1000)?;
//! let tree = (throng::fixtures::CROWD_TREE, "crowd.toml");
//! let mut animator =
//!     Animator::crowd(&ctx, package, 0, tree, &grid.placements(), AnimatorOptions::default())?;
//! let mut clock = TickClock::new(30.0);
//! let target = Target { color: wgpu::TextureFormat::Bgra8UnormSrgb, depth: wgpu::TextureFormat::Depth32Float, samples: 1 };
//! let mut crowd = CrowdPass::new(&ctx, target)?;
//! let scene = Scene::framing(&grid.bounds(), width as f32 / height as f32, grid.spacing);
//!
//! // Every frame: the 30 Hz ticks due (gameplay inputs first), the frame between the last two
//! // ticks, then the renderer's pass.
//! let (ticks, alpha) = clock.advance(1.0 / 60.0);
//! for _ in 0..ticks {
//!     animator.set_input(MemberId(0), "speed", Value::Float(1.4))?;
//!     animator.tick()?;
//! }
//! animator.present(alpha)?;
//! crowd.prepare(animator.runtime(), &scene, (width, height))?;
//! let mut encoder = ctx.device.create_command_encoder(&Default::default());
//! let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
//!     color_attachments: &[Some(wgpu::RenderPassColorAttachment {
//!         view,
//!         depth_slice: None,
//!         resolve_target: None,
//!         ops: wgpu::Operations::default(),
//!     })],
//!     depth_stencil_attachment: Some(cleared_depth(depth)),
//!     ..Default::default()
//! });
//! // ... the renderer's own draws ...
//! crowd.render(&mut pass);
//! drop(pass);
//! ctx.queue.submit([encoder.finish()]);
//! Ok(())
//! }
//! ```

pub mod sketch;

pub use throng_animator::{
    builtin_character, locomotion_character, tree_limits, Animator, AnimatorError, AnimatorOptions,
    CharacterId, MemberId, TickClock, TickTimes, UpdateRate, View, FAR_FADE,
};
pub use throng_control as control;
pub use throng_cook as cook;
pub use throng_cpu_ref as cpu_ref;
pub use throng_fixtures as fixtures;
pub use throng_gpu as gpu;

/// The generated character with, instead of its own clips, every CMU clip (`.glb`) in the folder
/// `mocap` retargeted onto it by `fixtures/retarget/cmu-to-character.toml` (docs/retargeting.md),
/// cooked and compressed with the default profile.
pub fn mocap_character(
    mocap: &std::path::Path,
) -> Result<cpu_ref::Package, cook::retarget::RetargetError> {
    use cook::retarget::{retarget, RetargetError, RetargetProfile, Source};
    let profile = RetargetProfile::parse(
        fixtures::CMU_TO_CHARACTER,
        "fixtures/retarget/cmu-to-character.toml",
    )?;
    let io = |e: std::io::Error| RetargetError::Io {
        file: mocap.display().to_string(),
        message: e.to_string(),
    };
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(mocap)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("glb")))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(RetargetError::Source {
            file: mocap.display().to_string(),
            reason: "holds no .glb clips to retarget (the CMU clips are in ../shared/assets/mocap)"
                .into(),
        });
    }
    let mut target = cook::import_slice(&fixtures::character_glb(), "generated character")?;
    target.source_clips.clear();
    target.clip_meta.clear();
    for file in &files {
        let source = Source::from_imported(&cook::import_file(file)?);
        target = retarget(&profile, &source, &target, &[])?.0;
    }
    let profile = cook::Profile::DEFAULT;
    let (mut package, mut report) = cook::cook(&target, &profile)?;
    cook::compress(&mut package, &mut report, &profile);
    Ok(package)
}

/// Writes `image` as an 8-bit sRGB RGBA PNG at `path`, creating its folder.
pub fn write_png(
    path: &std::path::Path,
    image: &gpu::raster::Image,
) -> Result<(), png::EncodingError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, image.width, image.height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_source_srgb(png::SrgbRenderingIntent::Perceptual);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&image.rgba)?;
    writer.finish()
}
