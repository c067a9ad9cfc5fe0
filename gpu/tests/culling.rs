//! Frustum culling and the skinned budget on the GPU: the set of visible instances equals the
//! CPU reference's over a seeded camera sweep, in frame-slot order; visible instances are
//! skinned compacted, the budget going to the most significant (the CPU reference computes the
//! same significance keys), and every other visible instance gets a card; the counts, skinned
//! vertices and triangles the runtime reports follow them; each level of detail skins and draws
//! its own mesh LOD.

mod common;

use glam::{Affine3A, Quat, Vec3};
use throng_cpu_ref::bounds::{Bounds, Frustum};
use throng_cpu_ref::impostor::{Impostor, ImpostorClip};
use throng_cpu_ref::{CpuRuntime, Outputs, Package, PoseOp, Program};
use throng_fixtures::SplitMix64;
use throng_gpu::impostor::Card;
use throng_gpu::raster::Camera;
use throng_gpu::{significance, Batch, Capacities, GpuContext, Instance, PackageId, Pose, Runtime};

/// A 12 × 8 grid of instances 3 m apart, each at its own yaw and clip time.
fn crowd(package: &Package, rng: &mut SplitMix64) -> (Vec<Program>, Vec<Affine3A>) {
    let clips = ["walk", "run", "idle"].map(|c| package.find_clip(c).expect("clip") as u32);
    let mut programs = Vec::new();
    let mut placements = Vec::new();
    for k in 0..96 {
        let clip = clips[k % clips.len()];
        let time = rng.range(0.0, package.clips[clip as usize].duration as f32);
        programs.push(Program {
            ops: vec![
                PoseOp::sample(0, clip, time),
                PoseOp::to_component(0),
                PoseOp::palette(0),
            ],
            weights: vec![],
        });
        let at = Vec3::new(
            (k % 12) as f32 * 3.0 - 16.5,
            0.0,
            (k / 12) as f32 * 3.0 - 10.5,
        );
        placements.push(Affine3A::from_rotation_translation(
            Quat::from_rotation_y(rng.range(0.0, std::f32::consts::TAU)),
            at,
        ));
    }
    (programs, placements)
}

/// Seeded cameras around the grid at 6–45 m, looking near it (one looks away from it).
fn cameras(rng: &mut SplitMix64) -> Vec<Frustum> {
    let mut out: Vec<Frustum> = (0..11)
        .map(|_| {
            let angle = rng.range(0.0, std::f32::consts::TAU);
            let distance = rng.range(6.0, 45.0);
            let camera = Camera {
                eye: Vec3::new(
                    angle.cos() * distance,
                    rng.range(1.0, 20.0),
                    angle.sin() * distance,
                ),
                target: Vec3::new(rng.range(-15.0, 15.0), 0.5, rng.range(-10.0, 10.0)),
                fov_y: rng.range(0.4, 1.2),
                near: 0.1,
                far: rng.range(20.0, 200.0),
            };
            Frustum::from_view_proj(&camera.view_proj(16.0 / 9.0))
        })
        .collect();
    let away = Camera {
        eye: Vec3::new(0.0, 2.0, 40.0),
        target: Vec3::new(0.0, 2.0, 80.0),
        fov_y: 0.8,
        near: 0.1,
        far: 100.0,
    };
    out.push(Frustum::from_view_proj(&away.view_proj(16.0 / 9.0)));
    out
}

/// Each program at its placement.
fn instances<'a>(programs: &'a [Program], placements: &[Affine3A]) -> Vec<Instance<'a>> {
    programs
        .iter()
        .zip(placements)
        .map(|(p, &placement)| Instance {
            pose: Pose::Program(p),
            placement,
        })
        .collect()
}

/// Each program at its placement, at skeleton LOD `level(k)` for the `k`-th.
fn instances_at<'a>(
    programs: &'a [Program],
    placements: &[Affine3A],
    level: impl Fn(usize) -> u8,
) -> Vec<Instance<'a>> {
    programs
        .iter()
        .zip(placements)
        .enumerate()
        .map(|(k, (p, &placement))| Instance {
            pose: Pose::Lod(p, level(k)),
            placement,
        })
        .collect()
}

/// One skinned batch of the character per list, for the runtime that calls it `package`.
fn batches<'a>(package: PackageId, lists: &[&'a [Instance<'a>]]) -> Vec<Batch<'a>> {
    lists
        .iter()
        .map(|&instances| Batch {
            package,
            skeleton: 0,
            skin: Some(0),
            instances,
        })
        .collect()
}

/// A GPU runtime with `package` resident.
fn runtime(ctx: &GpuContext, package: &Package, capacities: Capacities) -> (Runtime, PackageId) {
    let mut gpu = Runtime::new(ctx, capacities).unwrap();
    let id = gpu.add_package(package).unwrap();
    (gpu, id)
}

/// What the CPU reference decides for frame slots of boxes `bounds` seen through `frustum`
/// with a skinned budget of `pool`: the visible slots the budget skins (the `pool` with the
/// largest significance keys, ties to the lower slot) and the visible rest, which get cards,
/// each ascending.
fn decide(frustum: Option<&Frustum>, bounds: &[Bounds], pool: usize) -> (Vec<u32>, Vec<u32>) {
    let mut seen: Vec<(u32, u32)> = (bounds.iter().enumerate())
        .filter(|(_, b)| frustum.map_or(!b.is_empty(), |f| f.intersects(b)))
        .map(|(i, b)| (significance(frustum, b), i as u32))
        .collect();
    seen.sort_by_key(|&(key, slot)| (std::cmp::Reverse(key), slot));
    let mut skinned: Vec<u32> = seen.iter().take(pool).map(|s| s.1).collect();
    let mut carded: Vec<u32> = seen.iter().skip(pool).map(|s| s.1).collect();
    skinned.sort_unstable();
    carded.sort_unstable();
    (skinned, carded)
}

/// The CPU reference after one frame of `lists`.
fn reference(package: &Package, lists: &[&[Instance]]) -> CpuRuntime {
    let mut cpu = CpuRuntime::new(Default::default(), Outputs::default(), 1);
    let id = cpu.add_package(package);
    cpu.frame(&batches(id, lists)).unwrap();
    cpu
}

#[test]
fn gpu_culling_keeps_exactly_the_cpu_set_over_a_seeded_camera_sweep() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let mut rng = SplitMix64::new(2026);
    let (programs, placements) = crowd(&package, &mut rng);
    let instances = instances(&programs, &placements);
    let cpu = reference(&package, &[&instances]);
    let reference = &cpu.outputs()[0];
    let capacities = Capacities::for_packages(&[&package], instances.len() as u32);
    let (mut gpu, gpu_id) = runtime(&ctx, &package, capacities);
    let (mut partial, mut seen) = (0, 0);
    for (c, frustum) in cameras(&mut rng).iter().enumerate() {
        gpu.set_frustum(Some(*frustum));
        gpu.frame(&batches(gpu_id, &[&instances])).unwrap();
        gpu.finish().unwrap();
        let got = gpu.skinned_slots().unwrap().remove(0);
        let want: Vec<u32> = (0..instances.len() as u32)
            .filter(|&i| frustum.intersects(&reference.bounds[i as usize]))
            .collect();
        assert_eq!(got, want, "camera {c}: visible slots, GPU vs CPU");
        let visibility = gpu.visibility();
        assert_eq!(visibility.visible, want.len() as u64, "camera {c}");
        let n = want.len() as u32;
        assert_eq!((visibility.skinned, visibility.over_budget), (n.into(), 0));
        let vertices = reference.vertex_count as u64;
        assert_eq!(visibility.skinned_vertices, vertices * want.len() as u64);
        let triangles = package.meshes[0].indices.len() as u64 / 3;
        assert_eq!(visibility.triangles, triangles * want.len() as u64);
        // The culled instances' boxes are wholly outside: no skinned vertex of theirs is seen.
        for i in (0..instances.len()).filter(|i| !want.contains(&(*i as u32))) {
            let n = reference.vertex_count;
            let vertices = &reference.skinned[i * n..(i + 1) * n];
            let b = Bounds::of_points(vertices.iter().map(|v| v.position));
            assert!(
                !frustum.intersects(&b),
                "camera {c}: instance {i} was culled but is seen"
            );
        }
        partial += usize::from(!want.is_empty() && want.len() < instances.len());
        seen += want.len();
        eprintln!("camera {c}: {} of {} visible", want.len(), instances.len());
    }
    assert!(
        partial >= 6,
        "the sweep should mostly cut the crowd: {partial} partial views"
    );
    assert!(seen > 0);
}

#[test]
fn culled_frames_skin_the_visible_instances_compacted_like_the_cpu() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let mut rng = SplitMix64::new(7);
    let (programs, placements) = crowd(&package, &mut rng);
    let instances = instances(&programs, &placements);
    let cpu = reference(&package, &[&instances]);
    let reference = &cpu.outputs()[0];
    let capacities = Capacities::for_packages(&[&package], instances.len() as u32);
    let (mut gpu, gpu_id) = runtime(&ctx, &package, capacities);
    let camera = Camera {
        eye: Vec3::new(-20.0, 6.0, 14.0),
        target: Vec3::new(-8.0, 0.5, 0.0),
        fov_y: 0.7,
        near: 0.1,
        far: 60.0,
    };
    gpu.set_frustum(Some(Frustum::from_view_proj(&camera.view_proj(1.5))));
    gpu.frame(&batches(gpu_id, &[&instances])).unwrap();
    gpu.finish().unwrap();
    let visible = gpu.skinned_slots().unwrap().remove(0);
    assert!(
        !visible.is_empty() && visible.len() < instances.len(),
        "{} of {} visible",
        visible.len(),
        instances.len()
    );
    let out = gpu.readback().unwrap().remove(0);
    let n = reference.vertex_count;
    let diagonal = package.meshes[0].bounds_diagonal();
    let mut worst = 0.0f32;
    for (i, &slot) in visible.iter().enumerate() {
        let got = &out.skinned[i * n..(i + 1) * n];
        let want = &reference.skinned[slot as usize * n..(slot as usize + 1) * n];
        for (g, w) in got.iter().zip(want) {
            worst = worst.max((g.position - w.position).length() / diagonal);
        }
    }
    eprintln!("compacted skinning, worst vertex error {worst:.2e} of the mesh diagonal");
    assert!(worst <= 1e-4, "worst vertex error {worst:.2e}");
}

#[test]
fn a_budget_skins_the_most_significant_visible_instances_and_cards_the_rest_like_the_cpu() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let mut rng = SplitMix64::new(9);
    let (programs, placements) = crowd(&package, &mut rng);
    let instances = instances(&programs, &placements);
    // Two skinned batches of 48: the budget of 60 runs out among the visible instances of
    // both, nearest first.
    let (a, b) = instances.split_at(48);
    let cpu = reference(&package, &[a, b]);
    let mut capacities = Capacities::for_packages(&[&package], instances.len() as u32);
    capacities.skinned_instances = 60;
    // Pages of 16 skinned instances: the budget spans four pages.
    capacities.binding_limit = Some(16 * 16 * u64::from(capacities.vertices));
    let (mut gpu, gpu_id) = runtime(&ctx, &package, capacities);
    let camera = Camera {
        eye: Vec3::new(0.0, 25.0, 30.0),
        target: Vec3::new(-5.0, 0.0, 0.0),
        fov_y: 0.8,
        near: 0.1,
        far: 100.0,
    };
    let frustum = Frustum::from_view_proj(&camera.view_proj(1.5));
    gpu.set_frustum(Some(frustum));
    gpu.frame(&batches(gpu_id, &[a, b])).unwrap();
    gpu.finish().unwrap();
    let bounds: Vec<Bounds> = (cpu.outputs().iter())
        .flat_map(|o| o.bounds.iter().copied())
        .collect();
    let (skinned, carded) = decide(Some(&frustum), &bounds, 60);
    let seen = skinned.len() + carded.len();
    assert!(seen > 60, "{seen} visible: the budget must bind");
    let first_visible: Vec<u32> = (0..96)
        .filter(|&s| frustum.intersects(&bounds[s as usize]))
        .take(60)
        .collect();
    assert_ne!(
        skinned, first_visible,
        "significance must not be slot order here"
    );
    let want = [
        skinned
            .iter()
            .copied()
            .filter(|&s| s < 48)
            .collect::<Vec<_>>(),
        skinned.iter().copied().filter(|&s| s >= 48).collect(),
    ];
    assert_eq!(gpu.skinned_slots().unwrap(), want);
    let cards: Vec<u32> = gpu.cards().unwrap().iter().map(|c| c.slot).collect();
    assert_eq!(
        cards, carded,
        "the visible slots past the budget have cards"
    );
    let v = gpu.visibility();
    assert_eq!(
        (v.visible, v.skinned, v.over_budget, v.carded, v.drawn),
        (seen as u64, 60, seen as u64 - 60, 0, 60),
        "without a far tier the cards are empty and not counted as drawn"
    );
    let out = gpu.readback().unwrap();
    let n = cpu.outputs()[0].vertex_count;
    let diagonal = package.meshes[0].bounds_diagonal();
    for (b, slots) in want.iter().enumerate() {
        assert_eq!(out[b].skinned.len(), slots.len() * n);
        for (i, &slot) in slots.iter().enumerate() {
            let k = slot as usize - 48 * b;
            let got = &out[b].skinned[i * n..(i + 1) * n];
            let reference = &cpu.outputs()[b].skinned[k * n..(k + 1) * n];
            for (g, r) in got.iter().zip(reference) {
                let e = (g.position - r.position).length() / diagonal;
                assert!(e <= 1e-4, "batch {b} slot {slot}: vertex off by {e:.2e}");
            }
        }
    }
    eprintln!(
        "budget 60: visible {seen}, skinned {} of {}",
        v.skinned, v.visible
    );
}

/// An impostor of the character's skin 0 whose atlas is never drawn: walk and idle baked (10
/// and 20 frames, 8 views at two elevations), run not.
fn impostor(package: &Package) -> Impostor {
    let clip = |name| package.find_clip(name).expect("clip") as u32;
    Impostor {
        skin: 0,
        width: 64,
        height: 64,
        cell: 16,
        views: 8,
        elevations: vec![0.0, 0.5],
        centre: Vec3::new(0.1, 0.9, -0.2),
        radius: 1.0,
        clips: vec![
            ImpostorClip {
                clip: clip("walk"),
                frames: 10,
            },
            ImpostorClip {
                clip: clip("idle"),
                frames: 20,
            },
        ],
    }
}

#[test]
fn every_visible_slot_is_drawn_once_as_a_mesh_or_a_card_at_every_budget_and_camera() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let mut rng = SplitMix64::new(47);
    let (programs, placements) = crowd(&package, &mut rng);
    let instances = instances(&programs, &placements);
    let cpu = reference(&package, &[&instances]);
    let bounds = &cpu.outputs()[0].bounds;
    let far = impostor(&package);
    let mut views: Vec<Option<Frustum>> = cameras(&mut rng).into_iter().map(Some).collect();
    views.push(None);
    let (mut frames, mut partial) = (0, 0);
    for pool in [0u32, 1, 17, 40, 95, 96] {
        let mut capacities = Capacities::for_packages(&[&package], instances.len() as u32);
        capacities.skinned_instances = pool;
        let (mut gpu, id) = runtime(&ctx, &package, capacities);
        gpu.set_far_tier(Some((id, &far))).unwrap();
        for (c, frustum) in views.iter().enumerate() {
            gpu.set_frustum(*frustum);
            gpu.frame(&batches(id, &[&instances])).unwrap();
            gpu.finish().unwrap();
            let (skinned, carded) = decide(frustum.as_ref(), bounds, pool as usize);
            let at = format!("budget {pool}, camera {c}");
            assert_eq!(gpu.skinned_slots().unwrap()[0], skinned, "{at}: meshes");
            let cards = gpu.cards().unwrap();
            let slots: Vec<u32> = cards.iter().map(|c| c.slot).collect();
            assert_eq!(slots, carded, "{at}: cards");
            let v = gpu.visibility();
            let seen = (skinned.len() + carded.len()) as u64;
            assert_eq!(
                (v.visible, v.skinned, v.carded, v.drawn),
                (seen, skinned.len() as u64, carded.len() as u64, seen),
                "{at}"
            );
            for card in &cards {
                let slot = card.slot as usize;
                let op = programs[slot].ops[0];
                let frame = far.card_frame(&package, op.a, f64::from(op.time));
                let want = Card::new(
                    &far,
                    &placements[slot],
                    card.slot,
                    frame.unwrap_or_default(),
                );
                assert_eq!(
                    (card.first, card.tier, card.fade),
                    (want.first, 0, 1.0),
                    "{at}: slot {slot}"
                );
                // The neighbouring frame matters only where the card mixes it in.
                assert!(
                    (card.blend - want.blend).abs() < 1e-4
                        && (want.blend < 1e-3 || card.next == want.next),
                    "{at}: slot {slot}: {card:?} against {want:?}"
                );
                let yaw = (card.yaw - want.yaw + std::f32::consts::PI)
                    .rem_euclid(std::f32::consts::TAU)
                    - std::f32::consts::PI;
                let centre = Vec3::from(card.centre).distance(Vec3::from(want.centre));
                assert!(
                    centre < 1e-5 && yaw.abs() < 1e-5 && (card.scale - want.scale).abs() < 1e-6,
                    "{at}: slot {slot}: {card:?} against {want:?}"
                );
            }
            frames += 1;
            partial += usize::from(!skinned.is_empty() && !carded.is_empty());
        }
    }
    assert!(
        partial >= 20,
        "{partial} of {frames} frames mixed meshes and cards"
    );
    eprintln!("{frames} frames, {partial} with both meshes and cards");
}

#[test]
fn a_kind_without_a_far_tier_gets_empty_cards_counted_as_not_drawn() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let mut rng = SplitMix64::new(5);
    let (programs, placements) = crowd(&package, &mut rng);
    let instances = instances(&programs, &placements);
    let mut capacities = Capacities::for_packages(&[&package], instances.len() as u32);
    capacities.skinned_instances = 30;
    let (mut gpu, id) = runtime(&ctx, &package, capacities);
    let far = impostor(&package);
    // Set, then removed: the table the cull pass reads names no kind again.
    gpu.set_far_tier(Some((id, &far))).unwrap();
    gpu.frame(&batches(id, &[&instances])).unwrap();
    gpu.finish().unwrap();
    assert_eq!(gpu.visibility().drawn, 96);
    gpu.set_far_tier(None).unwrap();
    gpu.frame(&batches(id, &[&instances])).unwrap();
    gpu.finish().unwrap();
    let v = gpu.visibility();
    assert_eq!(
        (v.visible, v.skinned, v.over_budget, v.carded, v.drawn),
        (96, 30, 66, 0, 30)
    );
    let cards = gpu.cards().unwrap();
    assert_eq!(cards.len(), 66);
    assert!(
        cards.iter().all(|c| c.scale == 0.0),
        "empty cards draw nothing"
    );
    // A package that is not resident, or a skin the package lacks, is refused.
    assert!(gpu.set_far_tier(Some((PackageId(7), &far))).is_err());
    let mut skinless = far.clone();
    skinless.skin = 9;
    assert!(gpu.set_far_tier(Some((id, &skinless))).is_err());
}

#[test]
fn each_level_of_detail_skins_its_mesh_lods_vertices_and_draws_its_triangles() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    assert_eq!(
        package.skeletons[0].lods.len(),
        2,
        "the character has two levels"
    );
    let mut rng = SplitMix64::new(11);
    let (programs, placements) = crowd(&package, &mut rng);
    // Instance k at level k % 3, in slot order, so the skinned order (level, slot) differs.
    let instances = instances_at(&programs, &placements, |k| (k % 3) as u8);
    let cpu = reference(&package, &[&instances]);
    let reference = &cpu.outputs()[0];
    let capacities = Capacities::for_packages(&[&package], instances.len() as u32);
    let (mut gpu, gpu_id) = runtime(&ctx, &package, capacities);
    gpu.frame(&batches(gpu_id, &[&instances])).unwrap();
    gpu.finish().unwrap();
    let tiers = gpu.package(gpu_id).unwrap().skins[0].tiers.clone();
    let v = gpu.visibility();
    let per = |l: usize| instances.len() as u64 / 3 * u64::from(tiers[l].vertex_count);
    assert_eq!(v.skinned_vertices, per(0) + per(1) + per(2));
    for (l, tier) in tiers.iter().enumerate() {
        let drawn = instances.len() as u64 / 3;
        assert_eq!(
            v.per_level[l],
            (drawn, drawn * u64::from(tier.index_count / 3))
        );
        let lod = package.meshes[0].level_indices(l);
        assert_eq!(tier.index_count as usize, lod.len(), "level {l}");
    }
    assert!(tiers[2].vertex_count * 10 < tiers[0].vertex_count);
    let out = gpu.readback().unwrap().remove(0);
    let n = reference.vertex_count;
    let diagonal = package.meshes[0].bounds_diagonal();
    let (mut worst, mut compared) = (0.0f32, [0usize; 3]);
    for i in 0..instances.len() {
        let level = i % 3;
        for v in 0..n {
            let (g, w) = (&out.skinned[i * n + v], &reference.skinned[i * n + v]);
            let used = level == 0 || tiers[level].vertices.binary_search(&(v as u32)).is_ok();
            if !used {
                assert!(
                    g.position.is_nan(),
                    "level {level} skinned vertex {v} it does not draw"
                );
                continue;
            }
            compared[level] += 1;
            worst = worst.max((g.position - w.position).length() / diagonal);
        }
    }
    eprintln!(
        "per level {:?}; vertices compared {compared:?}, worst {worst:.2e}",
        v.per_level
    );
    assert!(worst <= 1e-4, "worst vertex error {worst:.2e}");
}

#[test]
fn the_budget_serves_the_most_significant_slots_first_whatever_their_level_of_detail() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let mut rng = SplitMix64::new(13);
    let (programs, placements) = crowd(&package, &mut rng);
    // The first slots at the coarsest level, the later ones finer: a budget by level would
    // serve the later ones first, a budget by slot the first ones.
    let level = |k: usize| 2 - (3 * k / programs.len()) as u8;
    let instances = instances_at(&programs, &placements, level);
    let mut capacities = Capacities::for_packages(&[&package], instances.len() as u32);
    capacities.skinned_instances = 40;
    let (mut gpu, gpu_id) = runtime(&ctx, &package, capacities);
    // Seen from past the last rows (slots 84..96): the nearest are the last slots.
    let camera = Camera {
        eye: Vec3::new(0.0, 8.0, 30.0),
        target: Vec3::new(0.0, 0.0, 0.0),
        fov_y: 1.0,
        near: 0.1,
        far: 100.0,
    };
    let frustum = Frustum::from_view_proj(&camera.view_proj(1.5));
    gpu.set_frustum(Some(frustum));
    gpu.frame(&batches(gpu_id, &[&instances])).unwrap();
    gpu.finish().unwrap();
    let cpu = reference(&package, &[&instances]);
    let (want, carded) = decide(Some(&frustum), &cpu.outputs()[0].bounds, 40);
    assert_eq!(want.len(), 40);
    assert_eq!(carded.len(), 56, "every instance is visible");
    assert!(
        want.iter().all(|&s| s >= 48),
        "the nearest are the last slots: {want:?}"
    );
    assert_eq!(gpu.skinned_slots().unwrap(), vec![want.clone()]);
    let v = gpu.visibility();
    let mut levels = [0u64; 3];
    for &s in &want {
        levels[level(s as usize) as usize] += 1;
    }
    let got: Vec<u64> = v.per_level.iter().map(|l| l.0).collect();
    assert_eq!(got, levels, "{v:?}");
    assert_eq!((v.visible, v.skinned, v.over_budget), (96, 40, 56));
    let out = gpu.readback().unwrap().remove(0);
    let n = cpu.outputs()[0].vertex_count;
    let tiers = &gpu.package(gpu_id).unwrap().skins[0].tiers;
    let diagonal = package.meshes[0].bounds_diagonal();
    for (i, &slot) in want.iter().enumerate() {
        let s = slot as usize;
        for &v in &tiers[level(s) as usize].vertices {
            let (g, w) = (
                &out.skinned[i * n + v as usize],
                &cpu.outputs()[0].skinned[s * n + v as usize],
            );
            let e = (g.position - w.position).length() / diagonal;
            assert!(e <= 1e-4, "slot {slot} vertex {v}: off by {e:.2e}");
        }
    }
}

#[test]
fn hidden_instances_are_neither_bounded_skinned_nor_drawn_and_show_again_when_evaluated() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let mut rng = SplitMix64::new(11);
    let (programs, placements) = crowd(&package, &mut rng);
    let shown = instances(&programs, &placements);
    let mut hidden = shown.clone();
    for x in hidden.iter_mut().step_by(3) {
        x.pose = Pose::Hidden;
    }
    let capacities = Capacities::for_packages(&[&package], shown.len() as u32);
    let (mut gpu, id) = runtime(&ctx, &package, capacities);
    gpu.frame(&batches(id, &[&hidden])).unwrap();
    gpu.finish().unwrap();
    let want: Vec<u32> = (0..shown.len() as u32).filter(|s| s % 3 != 0).collect();
    assert_eq!(gpu.skinned_slots().unwrap()[0], want);
    assert_eq!(gpu.visibility().visible, want.len() as u64);
    let out = gpu.readback().unwrap().remove(0);
    let cpu = reference(&package, &[&hidden]);
    for s in (0..shown.len()).step_by(3) {
        assert!(out.bounds[s].is_empty(), "slot {s}: {:?}", out.bounds[s]);
        assert!(cpu.outputs()[0].bounds[s].is_empty());
        let n = cpu.outputs()[0].vertex_count;
        assert!(cpu.outputs()[0].skinned[s * n].position.is_nan());
    }
    // Evaluated again, every instance is seen and skinned.
    gpu.frame(&batches(id, &[&shown])).unwrap();
    gpu.finish().unwrap();
    assert_eq!(gpu.skinned_slots().unwrap()[0].len(), shown.len());
}
