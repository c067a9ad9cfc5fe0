//! The far tier: an impostor baked by Throng's own GPU path, drawn as a card, looks like the
//! skinned instance it stands for at the baked view, and shows the frame of the instance's
//! clip time, so an instance crossing into the far tier keeps its phase.

mod common;

use glam::{Affine3A, Quat, Vec3};
use throng_cpu_ref::impostor::{frame_at, frame_time, CardFrame};
use throng_cpu_ref::{Package, PoseOp, Program};
use throng_gpu::impostor::{bake, BakeOptions, Baked, Card};
use throng_gpu::raster::{Camera, Image, Raster, Scene};
use throng_gpu::{Batch, Capacities, GpuContext, Instance, Pose, Runtime};

/// Pixels per side of the comparison images: the card covers about one cell.
const SIZE: u32 = 96;
const CELL: u32 = 64;

/// The character's walk clip.
fn walk_clip(package: &Package) -> u32 {
    package.find_clip("walk").expect("walk") as u32
}

/// The walk clip baked at 8 views, two elevations and 10 frames a second.
fn baked(ctx: &GpuContext, package: &Package) -> Baked {
    let options = BakeOptions {
        clips: vec![walk_clip(package)],
        views: 8,
        elevations: vec![0.0, 0.5],
        fps: 10.0,
        cell: CELL,
    };
    bake(ctx, package, 0, &options, |_, _| {}).unwrap()
}

/// The instance at `placement` seen from the baked direction (row, view) turned by the
/// placement, its card filling `CELL` of `SIZE` pixels.
fn scene(b: &Baked, placement: &Affine3A, row: u32, view: u32) -> Scene {
    let i = &b.impostor;
    let centre = placement.transform_point3(i.centre);
    let d = placement.transform_vector3(i.view_direction(row, view));
    // Narrow, so the camera stands as far off as a far-tier camera does (about 37 radii).
    let fov_y: f32 = 0.08;
    let distance = i.radius * SIZE as f32 / CELL as f32 / (0.5 * fov_y).tan();
    Scene {
        camera: Camera {
            eye: centre + d * distance,
            target: centre,
            fov_y,
            near: 0.1,
            far: 2.0 * distance,
        },
        light: Vec3::new(0.4, 0.8, 0.3).normalize(),
        ground: None,
        fog_distance: 1e6,
        highlight: 0,
    }
}

/// Renders the instance skinned at clip time `time`, or as its card showing `frame`.
#[allow(clippy::too_many_arguments)]
fn render(
    ctx: &GpuContext,
    package: &Package,
    b: &Baked,
    raster: &mut Raster,
    placement: Affine3A,
    (walk, time): (u32, f32),
    card: Option<u32>,
    scene: &Scene,
) -> Image {
    let program = Program {
        ops: vec![
            PoseOp::sample(0, walk, time),
            PoseOp::to_component(0),
            PoseOp::palette(0),
        ],
        weights: vec![],
    };
    let instances = [Instance {
        pose: match card {
            Some(_) => Pose::Hidden,
            None => Pose::Program(&program),
        },
        placement,
    }];
    let mut runtime = Runtime::new(ctx, Capacities::for_packages(&[package], 1)).unwrap();
    let id = runtime.add_package(package).unwrap();
    let batches = [Batch {
        package: id,
        skeleton: 0,
        skin: Some(0),
        instances: &instances,
    }];
    runtime.frame(&batches).unwrap();
    runtime.finish().unwrap();
    let cards: Vec<Card> = card
        .map(|frame| {
            Card::new(
                &b.impostor,
                &placement,
                0,
                CardFrame::still(b.impostor.cell_of(0, frame, 0, 0)),
            )
        })
        .into_iter()
        .collect();
    raster.set_cards(&cards);
    raster.render(&runtime, scene).unwrap();
    raster.finish().unwrap();
    raster.read_image().unwrap()
}

/// Mean absolute difference per channel (0–255) over the pixels either image covers, and the
/// fraction of those only one covers (`background`: the clear colour).
fn difference(a: &Image, b: &Image, background: [u8; 4]) -> (f64, f64) {
    let (mut sum, mut union, mut only) = (0.0, 0usize, 0usize);
    for (p, q) in a.rgba.chunks(4).zip(b.rgba.chunks(4)) {
        let (in_p, in_q) = (p != background, q != background);
        if !(in_p || in_q) {
            continue;
        }
        union += 1;
        only += usize::from(in_p != in_q);
        sum += p
            .iter()
            .zip(q)
            .take(3)
            .map(|(&x, &y)| f64::from(x.abs_diff(y)))
            .sum::<f64>()
            / 3.0;
    }
    (sum / union.max(1) as f64, only as f64 / union.max(1) as f64)
}

#[test]
fn a_card_at_a_baked_view_looks_like_the_skinned_frame_and_shows_the_nearest_frame() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let walk = walk_clip(&package);
    let b = baked(&ctx, &package);
    let clip = &package.clips[walk as usize];
    let frames = b.impostor.clips[0].frames;
    eprintln!(
        "atlas {}x{} ({} frames, 16 cells each), card radius {:.3}",
        b.impostor.width, b.impostor.height, frames, b.impostor.radius
    );
    let mut raster = Raster::new(&ctx, SIZE, SIZE).unwrap();
    raster.set_impostor(&b.impostor, &b.atlas).unwrap();
    let placement = Affine3A::from_rotation_translation(
        Quat::from_rotation_y(0.7),
        Vec3::new(12.0, 0.0, -30.0),
    );
    let background = {
        let s = scene(&b, &placement, 0, 0);
        let empty = render(
            &ctx,
            &package,
            &b,
            &mut raster,
            placement,
            (walk, 0.0),
            Some(0),
            &{
                let mut away = s;
                away.camera.target = away.camera.eye * 2.0 - away.camera.target;
                away
            },
        );
        [empty.rgba[0], empty.rgba[1], empty.rgba[2], empty.rgba[3]]
    };
    let mut worst = (0.0f64, 0.0f64);
    for (row, view, time) in [(0, 0, 0.2), (0, 3, 0.62), (1, 6, 0.9)] {
        let time = time * clip.duration as f32;
        let s = scene(&b, &placement, row, view);
        let skinned = render(
            &ctx,
            &package,
            &b,
            &mut raster,
            placement,
            (walk, time),
            None,
            &s,
        );
        let scores: Vec<(f64, f64)> = (0..frames)
            .map(|f| {
                let card = render(
                    &ctx,
                    &package,
                    &b,
                    &mut raster,
                    placement,
                    (walk, 0.0),
                    Some(f),
                    &s,
                );
                difference(&skinned, &card, background)
            })
            .collect();
        let best = (0..frames)
            .min_by(|&a, &c| scores[a as usize].0.total_cmp(&scores[c as usize].0))
            .unwrap();
        let nearest = frame_at(clip, frames, f64::from(time));
        let (error, coverage) = scores[nearest as usize];
        eprintln!(
            "row {row} view {view} t {time:.3}: nearest frame {nearest} (t {:.3}): mean error {error:.1}/255, silhouette mismatch {:.1} %; best-matching frame {best}",
            frame_time(clip, frames, nearest),
            100.0 * coverage
        );
        let apart = (best + frames - nearest) % frames;
        assert!(
            apart.min(frames - apart) <= 1,
            "the card that looks most like time {time} is frame {best}, not {nearest}"
        );
        if (f64::from(time) - frame_time(clip, frames, nearest)).abs() < 1e-4 {
            worst = (worst.0.max(error), worst.1.max(coverage));
        }
    }
    // At a baked frame and view: measured 0.3–0.6/255, at most 0.2 % of silhouette pixels
    // differing (lavapipe).
    assert!(worst.0 <= 2.0, "mean error {:.1}/255", worst.0);
    assert!(
        worst.1 <= 0.01,
        "silhouette mismatch {:.1} %",
        100.0 * worst.1
    );
}

#[test]
fn a_bake_of_nine_rows_or_past_the_atlas_side_is_refused_before_any_cell_is_drawn() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let walk = walk_clip(&package);
    let mut cells_drawn = 0;
    let nine_rows = BakeOptions {
        clips: vec![walk],
        views: 8,
        elevations: (0..9).map(|r| r as f32 * 0.1).collect(),
        fps: 10.0,
        cell: CELL,
    };
    let refused = bake(&ctx, &package, 0, &nine_rows, |_, _| cells_drawn += 1)
        .expect_err("nine elevation rows");
    assert!(
        matches!(&refused, throng_gpu::GpuError::BadPackage { what, .. } if what.contains("9 rows")),
        "{refused}"
    );
    let side = ctx.device.limits().max_texture_dimension_2d;
    let too_wide = BakeOptions {
        elevations: vec![0.0],
        cell: side,
        ..nine_rows
    };
    let refused = bake(&ctx, &package, 0, &too_wide, |_, _| cells_drawn += 1)
        .expect_err("an atlas wider than the adapter's textures");
    assert!(
        matches!(&refused, throng_gpu::GpuError::AdapterLimit { have, need, .. }
            if *have == u64::from(side) && *need > *have),
        "{refused}"
    );
    assert_eq!(cells_drawn, 0);
}

/// `atlas` with a texel of alpha 1/255 at two opposite corners of every cell: each cell's
/// covered rectangle becomes the whole cell, so its cards are drawn as whole squares, while
/// the alpha test (at one half) and the mips (twice the mean, in whole numbers) never show it.
fn untrimmed(b: &Baked) -> Image {
    let mut atlas = b.atlas.clone();
    let i = &b.impostor;
    for cell in 0..i.first_cell(i.clips.len()) {
        let (x, y) = i.cell_origin(cell);
        for (tx, ty) in [(x, y), (x + i.cell - 1, y + i.cell - 1)] {
            let at = 4 * (ty * atlas.width + tx) as usize;
            if atlas.rgba[at + 3] == 0 {
                atlas.rgba[at + 3] = 1;
            }
        }
    }
    atlas
}

#[test]
fn cards_trimmed_to_their_cells_coverage_draw_what_whole_squares_draw_at_every_distance() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let b = baked(&ctx, &package);
    let frames = b.impostor.clips[0].frames;
    // Rows of cards from 3 m to about 500 m: from 250 pixels tall (magnified four times) down
    // to one or two pixels (minified past the last mip level the cell has).
    let mut cards = Vec::new();
    for k in 0..18 {
        let z = 3.0 * 1.35f32.powi(k);
        for j in 0..5 {
            let placement = Affine3A::from_rotation_translation(
                Quat::from_rotation_y(0.9 * (k * 5 + j) as f32),
                Vec3::new((j as f32 - 2.0) * 0.16 * z, -0.3 * z.sqrt(), z),
            );
            let slot = (k * 5 + j) as u32;
            let first = b.impostor.cell_of(0, slot % frames, 0, 0);
            cards.push(Card::new(
                &b.impostor,
                &placement,
                slot,
                CardFrame::still(first),
            ));
        }
    }
    let scene = Scene {
        camera: Camera {
            eye: Vec3::new(0.0, 1.0, 0.0),
            target: Vec3::new(0.0, 0.2, 20.0),
            fov_y: 0.6,
            near: 0.1,
            far: 1000.0,
        },
        light: Vec3::new(0.4, 0.8, 0.3).normalize(),
        ground: None,
        fog_distance: 1e6,
        highlight: 0,
    };
    let mut runtime = Runtime::new(&ctx, Capacities::for_packages(&[&package], 1)).unwrap();
    runtime.add_package(&package).unwrap();
    runtime.frame(&[]).unwrap();
    runtime.finish().unwrap();
    let mut raster = Raster::new(&ctx, 320, 240).unwrap();
    let mut draw = |atlas: &Image| {
        raster.set_impostor(&b.impostor, atlas).unwrap();
        raster.set_cards(&cards);
        raster.render(&runtime, &scene).unwrap();
        raster.finish().unwrap();
        raster.read_image().unwrap()
    };
    let trimmed = draw(&b.atlas);
    let whole = draw(&untrimmed(&b));
    let background = [
        trimmed.rgba[0],
        trimmed.rgba[1],
        trimmed.rgba[2],
        trimmed.rgba[3],
    ];
    let (mut covered, mut differing) = (0usize, 0usize);
    for (p, q) in trimmed.rgba.chunks(4).zip(whole.rgba.chunks(4)) {
        covered += usize::from(p != background || q != background);
        differing += usize::from(p.iter().zip(q).any(|(&x, &y)| x.abs_diff(y) > 2));
    }
    eprintln!("{covered} pixels covered, {differing} differ by more than 2/255");
    assert!(covered > 2000, "only {covered} pixels show a card");
    // Only rounding (the two quads interpolate uv from different corners) may tell them apart.
    assert!(
        differing * 1000 <= covered,
        "{differing} of {covered} covered pixels differ"
    );
}

/// Cards write the depth of the surface each texel shows (docs/gpu.md, "Far tier"): a close
/// group of members drawn as cards covers each pixel with the member whose mesh covers it,
/// as their meshes do, not with whichever card's centre is nearer. Members stand at baked
/// views and frames (yaws a multiple of the views' step, the camera level and far), so a card
/// and its mesh differ in their depth alone, up to the atlas's resolution.
#[test]
fn overlapping_cards_occlude_each_other_pixel_by_pixel_as_their_meshes_do() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let walk = walk_clip(&package);
    let b = baked(&ctx, &package);
    let frames = b.impostor.clips[0].frames;
    // Twelve members in a 1.6 m square, each at a whole view and frame.
    let members: Vec<(Affine3A, u32)> = (0..12u32)
        .map(|k| {
            let (x, z) = ((k * 7 % 12) as f32, (k * 5 % 12) as f32);
            let yaw = (k * 3 % 8) as f32 * std::f32::consts::FRAC_PI_4;
            let at = Vec3::new(x * 0.15 - 0.8, 0.0, z * 0.15 - 0.8);
            (
                Affine3A::from_rotation_translation(Quat::from_rotation_y(yaw), at),
                k % frames,
            )
        })
        .collect();
    let (width, height) = (240u32, 120u32);
    let fov_y: f32 = 0.05;
    let distance = 2.4 / (0.5 * fov_y).tan();
    let scene = Scene {
        camera: Camera {
            eye: Vec3::new(0.0, b.impostor.centre.y, distance),
            target: Vec3::new(0.0, b.impostor.centre.y, 0.0),
            fov_y,
            near: 1.0,
            far: 2.0 * distance,
        },
        light: Vec3::new(0.4, 0.8, 0.3).normalize(),
        ground: None,
        fog_distance: 1e6,
        highlight: 0,
    };
    let mut raster = Raster::new(&ctx, width, height).unwrap();
    raster.set_impostor(&b.impostor, &b.atlas).unwrap();
    raster.set_member_ids(true);
    let clip = &package.clips[walk as usize];
    let programs: Vec<Program> = (members.iter())
        .map(|&(_, f)| Program {
            ops: vec![
                PoseOp::sample(0, walk, frame_time(clip, frames, f) as f32),
                PoseOp::to_component(0),
                PoseOp::palette(0),
            ],
            weights: vec![],
        })
        .collect();
    let mut runtime = Runtime::new(&ctx, Capacities::for_packages(&[&package], 12)).unwrap();
    let id = runtime.add_package(&package).unwrap();
    let mut ids = |cards: bool| {
        let instances: Vec<Instance> = (members.iter().zip(&programs))
            .map(|(&(placement, _), p)| Instance {
                pose: if cards {
                    Pose::Hidden
                } else {
                    Pose::Program(p)
                },
                placement,
            })
            .collect();
        runtime
            .frame(&[Batch {
                package: id,
                skeleton: 0,
                skin: Some(0),
                instances: &instances,
            }])
            .unwrap();
        runtime.finish().unwrap();
        let list: Vec<Card> = (members.iter().enumerate())
            .filter(|_| cards)
            .map(|(k, &(placement, f))| {
                let cell = b.impostor.cell_of(0, f, 0, 0);
                Card::new(&b.impostor, &placement, k as u32, CardFrame::still(cell))
            })
            .collect();
        raster.set_cards(&list);
        raster.render(&runtime, &scene).unwrap();
        raster.finish().unwrap();
        let image = raster.read_image().unwrap();
        (image.rgba.chunks(4))
            .map(|p| throng_gpu::raster::member_at([p[0], p[1], p[2], p[3]]))
            .collect::<Vec<_>>()
    };
    let (meshes, cards) = (ids(false), ids(true));
    // Pixels both images cover, and those of them inside a mesh silhouette (their four
    // neighbours show the same member): at a silhouette a card's texels and its mesh's
    // triangles may cover a pixel differently whatever the depth.
    let w = width as usize;
    let (mut both, mut same, mut inside, mut inside_other) = (0, 0, 0, 0);
    for (i, (&m, &c)) in meshes.iter().zip(&cards).enumerate() {
        let (Some(m), Some(c)) = (m, c) else { continue };
        both += 1;
        same += usize::from(m == c);
        let around = [i.wrapping_sub(1), i + 1, i.wrapping_sub(w), i + w];
        if around
            .iter()
            .all(|&j| meshes.get(j).copied().flatten() == Some(m))
        {
            inside += 1;
            inside_other += usize::from(m != c);
        }
    }
    let agree = same as f64 / both.max(1) as f64;
    println!(
        "{both} pixels covered both ways, {agree:.3} by the same member; {inside_other} of the \
         {inside} inside a silhouette by another"
    );
    // With the card's plane as its depth (a scratch build): 0.847, and 67 of 619 inside.
    assert!(both > 1500 && inside > 400, "{both} and {inside} pixels");
    assert!(
        agree > 0.92,
        "{agree:.3} of the pixels show the same member"
    );
    assert!(
        inside_other <= 5,
        "{inside_other} pixels inside show another member"
    );
}
