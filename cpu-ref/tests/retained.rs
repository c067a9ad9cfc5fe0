//! Retained instances: programs set when their static part changes, values and placements per
//! tick, frames presented between the last two ticks; the CPU runtime presents them as it
//! evaluates a frame of the same instances.

use glam::{Affine3A, Quat, Vec3};
use throng_cook::{cook, import_slice, Profile};
use throng_cpu_ref::frame::{batch_assets, BatchAssets};
use throng_cpu_ref::present::present_time;
use throng_cpu_ref::retained::{Instances, Kind, RetainedError, Show};
use throng_cpu_ref::values::write_values;
use throng_cpu_ref::{
    Batch, CpuRuntime, Instance, Outputs, Package, PackageId, Pose, PoseOp, Program, ProgramLimits,
};

fn character() -> Package {
    let imported = import_slice(&throng_fixtures::character_glb(), "character").unwrap();
    cook(&imported, &Profile::DEFAULT).unwrap().0
}

const KIND: Kind = Kind {
    package: PackageId(0),
    skeleton: 0,
    skin: Some(0),
};

fn assets(package: &Package) -> BatchAssets<'_> {
    let batch = Batch {
        package: KIND.package,
        skeleton: KIND.skeleton,
        skin: KIND.skin,
        instances: &[],
    };
    batch_assets(0, &batch, |_| Some(package)).unwrap()
}

/// Clips 0 and 1 blended at `t`, with weight `w` on the first.
fn blend(t: f32, w: f32) -> Program {
    Program {
        ops: vec![
            PoseOp::sample(0, 0, t),
            PoseOp::sample(1, 1, t),
            PoseOp::blend(0, 0, 2, 0),
            PoseOp::to_component(0),
        ],
        weights: vec![w, 1.0 - w],
    }
}

fn limits() -> ProgramLimits {
    ProgramLimits {
        history_slots: 4,
        ..ProgramLimits::default()
    }
}

#[test]
fn a_frame_blends_the_last_two_ticks_values_and_placements_and_shows_the_ticks_at_0_and_1() {
    let package = character();
    let a = assets(&package);
    let mut store = Instances::new(limits(), 8);
    let start = Affine3A::from_rotation_translation(Quat::IDENTITY, Vec3::ZERO);
    let id = store.add(KIND, &start).unwrap();
    assert!(store.set_program(id, &blend(0.1, 0.25), &a).unwrap());
    store.commit();
    assert_eq!(store.changed(), [id.0], "a new program is a static change");
    // The second tick changes values alone.
    assert!(!store.set_program(id, &blend(0.3, 0.75), &a).unwrap());
    let moved = Affine3A::from_rotation_translation(Quat::from_rotation_y(0.2), Vec3::X);
    store.set_placement(id, &moved, false).unwrap();
    store.commit();
    assert_eq!(
        store.changed(),
        [] as [u32; 0],
        "values alone change nothing static"
    );
    let mut out = Program::default();
    let d = package.clips[0].duration as f32;
    for alpha in [0.0, 0.25, 0.5, 1.0] {
        assert!(store.present_program(id.0, alpha, &package.clips, &mut out));
        let want = present_time(0.1, 0.3, alpha, d);
        assert!((out.ops[0].time - want).abs() < 1e-6, "alpha {alpha}");
        let w = 0.25 + 0.5 * alpha;
        assert!((out.weights[0] - w).abs() < 1e-6, "alpha {alpha}");
        let p = store.present_placement(id.0, alpha);
        assert!(
            (p.translation.x - alpha).abs() < 1e-6,
            "alpha {alpha}: {p:?}"
        );
    }
    store.present_program(id.0, 1.0, &package.clips, &mut out);
    assert_eq!(out, blend(0.3, 0.75), "alpha 1 is the last tick");
    store.present_program(id.0, 0.0, &package.clips, &mut out);
    assert_eq!(out, blend(0.1, 0.25), "alpha 0 is the tick before");
}

#[test]
fn a_changed_program_shows_its_own_tick_at_every_fraction_and_unset_values_carry_over() {
    let package = character();
    let a = assets(&package);
    let mut store = Instances::new(limits(), 8);
    let id = store.add(KIND, &Affine3A::IDENTITY).unwrap();
    let other = store.add(KIND, &Affine3A::IDENTITY).unwrap();
    store.set_program(id, &blend(0.1, 0.5), &a).unwrap();
    store.set_program(other, &blend(0.2, 0.5), &a).unwrap();
    store.commit();
    let one = Program {
        ops: vec![PoseOp::sample(0, 2, 0.4), PoseOp::to_component(0)],
        weights: vec![],
    };
    assert!(store.set_program(id, &one, &a).unwrap(), "another shape");
    store.commit();
    assert_eq!(store.changed(), [id.0]);
    let mut out = Program::default();
    for alpha in [0.0, 0.5] {
        store.present_program(id.0, alpha, &package.clips, &mut out);
        assert_eq!(out, one, "no blend across a program change");
        store.present_program(other.0, alpha, &package.clips, &mut out);
        assert_eq!(out, blend(0.2, 0.5), "values not set keep the last tick's");
    }
}

#[test]
fn bad_values_placements_and_history_claims_are_refused_and_change_nothing() {
    let package = character();
    let a = assets(&package);
    let mut store = Instances::new(limits(), 2);
    let id = store.add(KIND, &Affine3A::IDENTITY).unwrap();
    let sheared =
        Affine3A::from_cols_array(&[1.0, 0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    assert!(matches!(
        store.add(KIND, &sheared),
        Err(RetainedError::Bad { .. })
    ));
    assert!(
        matches!(store.set_values(id, &[0.0]), Err(RetainedError::Bad { .. })),
        "no program yet"
    );
    store.set_program(id, &blend(0.1, 0.5), &a).unwrap();
    let mut v = [0.0; 4];
    write_values(&blend(0.1, 0.5).ops, &[0.5, 0.5], &mut v);
    assert!(store.set_values(id, &v[..3]).is_err(), "too few values");
    v[2] = -1.0;
    assert!(store.set_values(id, &v).is_err(), "a negative blend weight");
    v[2] = f32::NAN;
    assert!(store.set_values(id, &v).is_err());
    let second = store.add(KIND, &Affine3A::IDENTITY).unwrap();
    assert_eq!(
        store.add(KIND, &Affine3A::IDENTITY),
        Err(RetainedError::Full(2))
    );
    let history = |slot| Program {
        ops: vec![
            PoseOp::sample(0, 0, 0.1),
            PoseOp::inertialize(0, slot, 0.1, 0.3),
            PoseOp::to_component(0),
        ],
        weights: vec![],
    };
    store.set_program(id, &history(1), &a).unwrap();
    let err = store.set_program(second, &history(1), &a).unwrap_err();
    assert!(err.to_string().contains("history slot 1"), "{err}");
    assert!(
        store.set_level(id, 1, &a).is_err(),
        "history needs every joint"
    );
    store.remove(id).unwrap();
    store.set_program(second, &history(1), &a).unwrap();
    assert_eq!(store.remove(id), Err(RetainedError::NoInstance(id.0)));
    store.commit();
    assert_eq!(store.len(), 1);
}

#[test]
fn the_cpu_runtime_presents_retained_instances_as_it_evaluates_the_same_frame_of_batches() {
    let package = character();
    let a = assets(&package);
    let outputs = Outputs::default();
    let mut store = Instances::new(limits(), 16);
    let placements: Vec<Affine3A> = (0..6)
        .map(|i| Affine3A::from_translation(Vec3::new(i as f32, 0.0, 0.0)))
        .collect();
    let programs: Vec<Program> = (0..6).map(|i| blend(0.1 * i as f32, 0.5)).collect();
    let ids: Vec<_> = placements
        .iter()
        .map(|p| store.add(KIND, p).unwrap())
        .collect();
    for (id, p) in ids.iter().zip(&programs) {
        store.set_program(*id, p, &a).unwrap();
    }
    store.set_level(ids[2], 1, &a).unwrap();
    store.set_show(ids[4], Show::Hidden).unwrap();
    store.commit();
    let mut retained = CpuRuntime::new(limits(), outputs, 1);
    retained.add_package(&package);
    retained.present(&store, 0.5, false).unwrap();
    let instances: Vec<Instance> = (0..6)
        .map(|i| Instance {
            pose: match i {
                2 => Pose::Lod(&programs[i], 1),
                4 => Pose::Hidden,
                _ => Pose::Program(&programs[i]),
            },
            placement: placements[i],
        })
        .collect();
    let mut batches = CpuRuntime::new(limits(), outputs, 1);
    batches.add_package(&package);
    let batch = Batch {
        package: KIND.package,
        skeleton: KIND.skeleton,
        skin: KIND.skin,
        instances: &instances,
    };
    batches.frame(&[batch]).unwrap();
    assert_eq!(retained.outputs().len(), 1, "one run of one kind");
    let (r, b) = (&retained.outputs()[0], &batches.outputs()[0]);
    assert_eq!(r.components, b.components);
    assert_eq!(r.palettes, b.palettes);
    assert_eq!(r.bounds, b.bounds);
}
