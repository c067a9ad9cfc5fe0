//! The raster pass: skinned instances become visible pixels where the camera says they are, a
//! different pose or instance count changes the image, and mismatched input is refused.

mod common;

use glam::{Affine3A, Vec3};
use throng_cpu_ref::bounds::Frustum;
use throng_cpu_ref::{Package, PoseOp, Program};
use throng_gpu::raster::{Bounds, Image, Raster, Scene, BACKGROUND};
use throng_gpu::{Batch, Capacities, GpuError, Instance, PackageId, Pose, Runtime};

/// Width not a multiple of 64 pixels, so readback rows are padded.
const WIDTH: u32 = 90;
const HEIGHT: u32 = 60;

fn sample(package: &Package, clip: &str, time: f32) -> Program {
    let clip = package.find_clip(clip).expect("character clip") as u32;
    Program {
        ops: vec![
            PoseOp::sample(0, clip, time),
            PoseOp::to_component(0),
            PoseOp::palette(0),
        ],
        weights: vec![],
    }
}

/// `n` placements on a row along x, 1.5 m apart, centred on the origin.
fn row(n: usize) -> Vec<Affine3A> {
    (0..n)
        .map(|i| {
            Affine3A::from_translation(Vec3::new(
                (i as f32 - (n as f32 - 1.0) * 0.5) * 1.5,
                0.0,
                0.0,
            ))
        })
        .collect()
}

/// A scene without ground (so every pixel off the crowd is the background) framing `n` slots of
/// the row: the character is about 1.8 m tall, 1 m wide and 0.6 m deep around its placement.
fn scene(n: usize, aspect: f32) -> Scene {
    let bounds = row(n).iter().fold(Bounds::EMPTY, |b, p| {
        let me = Bounds {
            min: Vec3::new(-0.6, 0.0, -0.4),
            max: Vec3::new(0.6, 1.9, 0.4),
        };
        b.union(&me.transformed(p))
    });
    Scene {
        ground: None,
        ..Scene::framing(&bounds, aspect, 1.0)
    }
}

struct Setup {
    package: Package,
    runtime: Runtime,
    id: PackageId,
    raster: Raster,
}

fn setup() -> Option<Setup> {
    let ctx = common::gpu()?;
    let package = common::character();
    let mut runtime = Runtime::new(&ctx, Capacities::for_packages(&[&package], 16)).unwrap();
    let id = runtime.add_package(&package).unwrap();
    let raster = Raster::new(&ctx, WIDTH, HEIGHT).unwrap();
    Some(Setup {
        package,
        runtime,
        id,
        raster,
    })
}

impl Setup {
    /// Poses `programs` at `placements` and renders them with `scene`.
    fn render(&mut self, programs: &[Program], placements: &[Affine3A], scene: &Scene) -> Image {
        let instances: Vec<Instance> = programs
            .iter()
            .zip(placements)
            .map(|(p, &placement)| Instance {
                pose: Pose::Program(p),
                placement,
            })
            .collect();
        let batches = [Batch {
            package: self.id,
            skeleton: 0,
            skin: Some(0),
            instances: &instances,
        }];
        self.runtime.frame(&batches).unwrap();
        let report = self.raster.render(&self.runtime, scene).unwrap();
        let levels = self.runtime.package(self.id).unwrap().skins[0].tiers.len();
        assert_eq!(
            report.draws, levels,
            "one instanced draw per level of detail for one page, no ground"
        );
        self.runtime.finish().unwrap();
        let times = self.raster.finish().unwrap();
        assert!(times.wall_ms > 0.0);
        self.raster.read_image().unwrap()
    }
}

/// The background colour as the sRGB bytes the target stores (IEC 61966-2-1 transfer).
fn background() -> [u8; 3] {
    BACKGROUND.map(|c| {
        let s = if c <= 0.003_130_8 {
            12.92 * c
        } else {
            1.055 * c.powf(1.0 / 2.4) - 0.055
        };
        (s * 255.0).round() as u8
    })
}

fn is_background(p: [u8; 4]) -> bool {
    let b = background();
    (0..3).all(|i| p[i].abs_diff(b[i]) <= 2)
}

/// Fraction of pixels that are not the background.
fn coverage(image: &Image) -> f64 {
    let n = (0..image.height)
        .flat_map(|y| (0..image.width).map(move |x| (x, y)))
        .filter(|&(x, y)| !is_background(image.pixel(x, y).unwrap()))
        .count();
    n as f64 / f64::from(image.width * image.height)
}

fn luma_variance(image: &Image) -> f64 {
    let luma: Vec<f64> = image
        .rgba
        .chunks_exact(4)
        .map(|p| 0.2126 * f64::from(p[0]) + 0.7152 * f64::from(p[1]) + 0.0722 * f64::from(p[2]))
        .collect();
    let mean = luma.iter().sum::<f64>() / luma.len() as f64;
    luma.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / luma.len() as f64
}

/// Pixel rectangle `(x0, y0, x1, y1)` of the projected corners of `bounds`.
fn projected(scene: &Scene, bounds: &Bounds, width: u32, height: u32) -> (f32, f32, f32, f32) {
    let m = scene.camera.view_proj(width as f32 / height as f32);
    bounds
        .corners()
        .fold((f32::MAX, f32::MAX, f32::MIN, f32::MIN), |r, c| {
            let p = m.project_point3(c);
            let (x, y) = (
                (p.x + 1.0) * 0.5 * width as f32,
                (1.0 - p.y) * 0.5 * height as f32,
            );
            (r.0.min(x), r.1.min(y), r.2.max(x), r.3.max(y))
        })
}

#[test]
fn instances_are_drawn_inside_their_projected_bounds() {
    let Some(mut s) = setup() else { return };
    let n = 4;
    let programs = vec![sample(&s.package, "walk", 0.3); n];
    let scene = scene(n, s.raster.aspect());
    let image = s.render(&programs, &row(n), &scene);
    assert_eq!((image.width, image.height), (WIDTH, HEIGHT));
    assert_eq!(image.rgba.len(), (WIDTH * HEIGHT * 4) as usize);
    // Corners are background: the clear colour went through the sRGB target intact.
    assert!(
        is_background(image.pixel(0, 0).unwrap()),
        "{:?} vs {:?}",
        image.pixel(0, 0),
        background()
    );
    let covered = coverage(&image);
    let variance = luma_variance(&image);
    println!("coverage {covered:.3}, luma variance {variance:.1}");
    assert!(covered > 0.05, "characters cover {covered}");
    assert!(variance > 20.0, "image is nearly uniform: {variance}");
    // Every drawn pixel lies inside the projected bounds of the instances (2 px slack for
    // rasterisation); a mis-padded readback or wrong vertex pulling would scatter them.
    let bounds = row(n).iter().fold(Bounds::EMPTY, |b, p| {
        let me = Bounds {
            min: Vec3::new(-1.0, -0.1, -0.8),
            max: Vec3::new(1.0, 2.1, 0.8),
        };
        b.union(&me.transformed(p))
    });
    let (x0, y0, x1, y1) = projected(&scene, &bounds, WIDTH, HEIGHT);
    let mut outside = 0;
    let mut inside = 0;
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            if is_background(image.pixel(x, y).unwrap()) {
                continue;
            }
            let (fx, fy) = (x as f32 + 0.5, y as f32 + 0.5);
            if fx < x0 - 2.0 || fx > x1 + 2.0 || fy < y0 - 2.0 || fy > y1 + 2.0 {
                outside += 1;
            } else {
                inside += 1;
            }
        }
    }
    assert_eq!(
        outside, 0,
        "{outside} drawn pixels outside ({x0}, {y0})-({x1}, {y1}), {inside} inside"
    );
    // Each of the four characters shows up: the columns between their centres have coverage.
    let m = scene.camera.view_proj(s.raster.aspect());
    for p in row(n) {
        let centre = m.project_point3(p.transform_point3(Vec3::new(0.0, 1.0, 0.0)));
        let x = ((centre.x + 1.0) * 0.5 * WIDTH as f32) as u32;
        let hits = (0..HEIGHT)
            .filter(|&y| !is_background(image.pixel(x, y).unwrap()))
            .count();
        assert!(hits > 3, "no character drawn at column {x}");
    }
}

#[test]
fn a_different_pose_gives_a_different_image() {
    let Some(mut s) = setup() else { return };
    let n = 2;
    let scene = scene(n, s.raster.aspect());
    let walk = s.render(&vec![sample(&s.package, "walk", 0.25); n], &row(n), &scene);
    let wave = s.render(&vec![sample(&s.package, "run", 0.1); n], &row(n), &scene);
    let again = s.render(&vec![sample(&s.package, "walk", 0.25); n], &row(n), &scene);
    assert_eq!(walk, again, "the same frame renders the same image");
    let differing = walk
        .rgba
        .chunks_exact(4)
        .zip(wave.rgba.chunks_exact(4))
        .filter(|(a, b)| a != b)
        .count();
    println!("{differing} pixels differ");
    assert!(
        differing as f64 > 0.01 * f64::from(WIDTH * HEIGHT),
        "{differing} pixels differ"
    );
}

#[test]
fn more_instances_cover_more_of_the_image() {
    let Some(mut s) = setup() else { return };
    let scene = scene(9, s.raster.aspect());
    let program = sample(&s.package, "idle", 0.5);
    let one = coverage(&s.render(std::slice::from_ref(&program), &row(9)[4..5], &scene));
    let nine = coverage(&s.render(&vec![program; 9], &row(9), &scene));
    println!("coverage: 1 instance {one:.4}, 9 instances {nine:.4}");
    assert!(one > 0.0, "the single instance is visible");
    assert!(nine > 4.0 * one, "9 instances cover {nine}, 1 covers {one}");
}

#[test]
fn an_image_is_read_back_only_after_a_render() {
    let Some(mut s) = setup() else { return };
    let scene = scene(2, s.raster.aspect());
    assert!(matches!(
        s.raster.read_image(),
        Err(GpuError::NothingToRead)
    ));
    let program = sample(&s.package, "idle", 0.0);
    let image = s.render(&[program.clone(), program], &row(2), &scene);
    assert!(coverage(&image) > 0.0);
}

#[test]
fn an_empty_or_oversized_image_is_an_error() {
    let Some(ctx) = common::gpu() else { return };
    for (w, h) in [(0, 10), (10, 0)] {
        let err = Raster::new(&ctx, w, h).err().expect("no pixels");
        assert!(err.to_string().contains("no pixels"), "{err}");
    }
    let too_wide = ctx.device.limits().max_texture_dimension_2d + 1;
    assert!(matches!(
        Raster::new(&ctx, too_wide, 4),
        Err(GpuError::AdapterLimit {
            what: "image width",
            ..
        })
    ));
}

#[test]
fn culling_against_the_cameras_frustum_leaves_the_image_unchanged() {
    let Some(mut s) = setup() else { return };
    // 15 instances on the row, the camera framing the middle 5.
    let scene = scene(5, s.raster.aspect());
    let programs: Vec<Program> = (0..15)
        .map(|i| sample(&s.package, "walk", 0.07 * i as f32))
        .collect();
    let all = s.render(&programs, &row(15), &scene);
    let drawn = s.runtime.visibility().visible;
    let frustum = Frustum::from_view_proj(&scene.camera.view_proj(s.raster.aspect()));
    s.runtime.set_frustum(Some(frustum));
    let culled = s.render(&programs, &row(15), &scene);
    let kept = s.runtime.visibility().visible;
    println!("visible: {drawn} without culling, {kept} with it");
    assert_eq!(drawn, 15);
    assert!(kept > 0 && kept < 15, "{kept} of 15 kept");
    assert!(coverage(&all) > 0.05);
    let differing = (0..all.rgba.len() / 4)
        .filter(|&p| all.rgba[4 * p..4 * p + 4] != culled.rgba[4 * p..4 * p + 4])
        .count();
    assert_eq!(differing, 0, "culling changed {differing} pixels");
}

#[test]
fn a_tier_tint_colours_instances_by_their_tier() {
    let Some(mut s) = setup() else { return };
    let scene = scene(3, s.raster.aspect());
    let programs = vec![sample(&s.package, "idle", 0.5); 3];
    let redness = |image: &Image| {
        let n = (0..image.height)
            .flat_map(|y| (0..image.width).map(move |x| (x, y)))
            .filter_map(|(x, y)| image.pixel(x, y))
            .map(|p| p.map(i32::from))
            .filter(|p| p[0] > p[1] + 40 && p[0] > p[2] + 40)
            .count();
        n as f64 / f64::from(image.width * image.height)
    };
    let own = s.render(&programs, &row(3), &scene);
    s.raster.set_tiers(&[4, 4, 4]);
    let red = s.render(&programs, &row(3), &scene);
    s.raster.set_tiers(&[1, 1, 1]);
    let green = s.render(&programs, &row(3), &scene);
    s.raster.set_tiers(&[]);
    let again = s.render(&programs, &row(3), &scene);
    println!(
        "red pixels: own colours {:.4}, tier 4 {:.4}",
        redness(&own),
        redness(&red)
    );
    assert!(redness(&red) > 0.5 * coverage(&red), "tier 4 tints red");
    assert!(redness(&green) < 0.1 * redness(&red), "tier 1 is not red");
    assert_eq!(own, again, "an empty tier list turns the tint off");
}

/// Red and green of every pixel of a motion image, as motion in pixels.
fn motions(image: &Image) -> Vec<[f32; 2]> {
    let range = throng_gpu::raster::MOTION_RANGE;
    image
        .rgba
        .chunks_exact(4)
        .map(|p| [p[0], p[1]].map(|c| (f32::from(c) / 255.0 - 0.5) * 2.0 * range))
        .collect()
}

/// A runtime with motion vectors for up to 4 instances of `package`, the package's id in it,
/// and a raster and scene framing a row of 3.
fn motion_runtime(
    ctx: &throng_gpu::GpuContext,
    package: &Package,
) -> (Runtime, PackageId, Raster, Scene) {
    let options = throng_gpu::RuntimeOptions {
        outputs: throng_cpu_ref::Outputs {
            motion: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let capacities = Capacities::for_packages(&[package], 4);
    let mut runtime = Runtime::with_options(ctx, capacities, options).unwrap();
    let id = runtime.add_package(package).unwrap();
    let raster = Raster::new(ctx, WIDTH, HEIGHT).unwrap();
    let scene = scene(3, raster.aspect());
    (runtime, id, raster, scene)
}

#[test]
fn motion_vectors_are_still_on_the_first_frame_and_follow_a_move_after_it() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let (mut runtime, id, mut raster, scene) = motion_runtime(&ctx, &package);
    let program = sample(&package, "idle", 0.3);
    let mut frame = |dx: f32| {
        let instances: Vec<Instance> = row(3)
            .into_iter()
            .map(|p| Instance {
                pose: Pose::Program(&program),
                placement: Affine3A::from_translation(Vec3::new(dx, 0.0, 0.0)) * p,
            })
            .collect();
        let batches = [Batch {
            package: id,
            skeleton: 0,
            skin: Some(0),
            instances: &instances,
        }];
        runtime.frame(&batches).unwrap();
        raster
            .render_motion(&runtime, &scene, &scene.camera)
            .unwrap();
        motions(&raster.read_motion().unwrap())
    };
    let still = |m: &[f32; 2]| m[0].abs() < 0.2 && m[1].abs() < 0.2;
    assert!(frame(0.0).iter().all(still), "first frame: no motion");
    assert!(
        frame(0.0).iter().all(still),
        "the same pose in the same place"
    );
    // 0.25 m to the right: the camera frames the row across the image, so right on screen.
    let moved = frame(0.25);
    let moving: Vec<&[f32; 2]> = moved.iter().filter(|m| !still(m)).collect();
    assert!(moving.len() > 50, "{} moving pixels", moving.len());
    let right = moving.iter().filter(|m| m[0] > 0.5).count();
    assert!(
        right * 10 >= moving.len() * 9,
        "{right} of {} move right",
        moving.len()
    );
    let plain = Runtime::new(&ctx, Capacities::for_packages(&[&package], 4)).unwrap();
    let refused = raster.render_motion(&plain, &scene, &scene.camera);
    assert!(
        matches!(&refused, Err(GpuError::Wgpu { reason, .. }) if reason.contains("outputs.motion")),
        "{refused:?}"
    );
}

#[test]
fn retained_motion_vectors_are_still_when_first_shown_follow_a_walk_and_reset_at_a_teleport() {
    use throng_cpu_ref::retained::{Instances, Kind};
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let (mut runtime, id, mut raster, scene) = motion_runtime(&ctx, &package);
    let program = sample(&package, "idle", 0.3);
    let kind = Kind {
        package: id,
        skeleton: 0,
        skin: Some(0),
    };
    let mut store = Instances::new(runtime.capacities().program_limits(), 4);
    let members: Vec<_> = (row(3).iter())
        .map(|p| store.add(kind, p).unwrap())
        .collect();
    let batch = Batch {
        package: id,
        skeleton: 0,
        skin: Some(0),
        instances: &[],
    };
    let assets =
        throng_cpu_ref::frame::batch_assets(0, &batch, |p| runtime.package(p).map(|r| &r.package))
            .unwrap();
    for &m in &members {
        store.set_program(m, &program, &assets).unwrap();
    }
    store.commit();
    // Each tick moves the row `dx` to the right, a jump or a walk; a frame at alpha 1 shows it.
    let mut tick = |store: &mut Instances, dx: f32, jump: bool| {
        for (&m, p) in members.iter().zip(row(3)) {
            let at = Affine3A::from_translation(Vec3::new(dx, 0.0, 0.0)) * p;
            store.set_placement(m, &at, jump).unwrap();
        }
        store.commit();
        runtime.present(store, 1.0).unwrap();
        raster
            .render_motion(&runtime, &scene, &scene.camera)
            .unwrap();
        motions(&raster.read_motion().unwrap())
    };
    let still = |m: &[f32; 2]| m[0].abs() < 0.2 && m[1].abs() < 0.2;
    let moving = |ms: &[[f32; 2]]| ms.iter().filter(|m| !still(m)).count();
    assert_eq!(
        moving(&tick(&mut store, 0.0, false)),
        0,
        "first shown: no motion"
    );
    let walked = tick(&mut store, 0.25, false);
    let right = walked.iter().filter(|m| m[0] > 0.5).count();
    assert!(moving(&walked) > 50, "{} moving pixels", moving(&walked));
    assert!(
        right * 10 >= moving(&walked) * 9,
        "{right} of {} move right",
        moving(&walked)
    );
    assert_eq!(
        moving(&tick(&mut store, 0.75, true)),
        0,
        "a teleport has no motion"
    );
    assert!(
        moving(&tick(&mut store, 1.0, false)) > 50,
        "motion again after the teleport"
    );
}

/// The mesh LOD cross-fade (docs/gpu.md, "Mesh LOD cross-fade"): members posed and skinned at
/// level 1 and given the coarser level's whole share draw level 2's shape (what they draw posed
/// at level 2, up to the pose the dropped joints hold); at a share between, each pixel is the
/// fine mesh's or the coarse one's, so what is covered lies between their intersection and
/// their union, the fine mesh keeping about its share of the pixels only it covers; without
/// fades the image is the fine level's alone.
#[test]
fn members_crossing_mesh_lods_draw_both_levels_in_complementary_pixels() {
    use throng_gpu::draw::LodFade;
    let Some(mut s) = setup() else { return };
    let mut raster = Raster::new(s.runtime.context(), 240, 160).unwrap();
    let scene = scene(3, raster.aspect());
    let program = sample(&s.package, "walk", 0.3);
    let placements = row(3);
    let mut render = |level: u8, share: Option<f32>| {
        let instances: Vec<Instance> = (placements.iter())
            .map(|&placement| Instance {
                pose: Pose::Lod(&program, level),
                placement,
            })
            .collect();
        let fades: Vec<LodFade> = (0..3)
            .filter_map(|slot| {
                Some(LodFade {
                    slot,
                    share: share?,
                    anchor: placements[slot as usize].translation.to_array(),
                })
            })
            .collect();
        raster.set_lod_fades(&fades);
        let batches = [Batch {
            package: s.id,
            skeleton: 0,
            skin: Some(0),
            instances: &instances,
        }];
        s.runtime.frame(&batches).unwrap();
        raster.render(&s.runtime, &scene).unwrap();
        s.runtime.finish().unwrap();
        raster.finish().unwrap();
        let image = raster.read_image().unwrap();
        (0..image.height)
            .flat_map(|y| (0..image.width).map(move |x| (x, y)))
            .map(|(x, y)| !is_background(image.pixel(x, y).unwrap()))
            .collect::<Vec<bool>>()
    };
    let fine = render(1, None);
    let coarse = render(1, Some(1.0));
    let level_two = render(2, None);
    let half = render(1, Some(0.5));
    let again = render(1, None);
    let count = |f: &dyn Fn(usize) -> bool| (0..fine.len()).filter(|&i| f(i)).count();
    let (n_fine, n_coarse, n_two) = (
        count(&|i| fine[i]),
        count(&|i| coarse[i]),
        count(&|i| level_two[i]),
    );
    let shared = count(&|i| coarse[i] && level_two[i]);
    let changed = count(&|i| coarse[i] != fine[i]);
    println!("pixels: fine {n_fine}, coarse share {n_coarse}, level 2 {n_two}, coarse and level 2 {shared}, coarse against fine {changed} differ");
    assert_eq!(fine, again, "no fades: the fine level alone");
    assert!(
        changed > n_fine / 50,
        "the coarse shape is drawn: {changed} pixels differ"
    );
    assert!(
        shared as f64 > 0.9 * n_two.max(n_coarse) as f64,
        "the coarse share is level 2's shape: {shared} of {n_coarse} and {n_two}"
    );
    let outside = count(&|i| half[i] && !(fine[i] || coarse[i]));
    let missing = count(&|i| fine[i] && coarse[i] && !half[i]);
    assert_eq!((outside, missing), (0, 0), "between intersection and union");
    let only_fine = count(&|i| fine[i] && !coarse[i]);
    let kept = count(&|i| fine[i] && !coarse[i] && half[i]) as f64 / only_fine.max(1) as f64;
    println!("half share: the fine mesh keeps {kept:.3} of the {only_fine} pixels only it covers");
    assert!(
        only_fine > 40 && (0.3..=0.7).contains(&kept),
        "{kept} of {only_fine}"
    );
}
