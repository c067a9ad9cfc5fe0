//! The runtime reuses bind groups and pipelines across frames while what they bind is
//! unchanged: frames whose shapes and instance counts change, and a replaced package, must still
//! read the right bytes. Each frame's component transforms are checked against the CPU reference.

use glam::Affine3A;
use throng_bench::{CpuCrowd, Subject};
use throng_fixtures::BenchShape as Shape;
use throng_gpu::{Batch, Capacities, GpuContext, Instance, PackageId, Pose, Runtime};

fn gpu() -> Option<GpuContext> {
    GpuContext::for_tests()
}

/// Runs `shape` for `n` instances on the GPU and on the CPU and returns the worst component
/// translation difference.
fn worst_error(
    runtime: &mut Runtime,
    id: PackageId,
    subject: &Subject,
    shape: Shape,
    n: usize,
) -> f32 {
    let crowd = subject.programs(shape, n);
    let instances: Vec<Instance> = crowd
        .programs
        .iter()
        .map(|p| Instance {
            pose: Pose::Program(p),
            placement: Affine3A::IDENTITY,
        })
        .collect();
    let batch = Batch {
        package: id,
        skeleton: subject.skeleton,
        skin: subject.skin,
        instances: &instances,
    };
    runtime.frame(&[batch]).unwrap();
    runtime.finish().unwrap();
    let out = runtime.readback().unwrap();
    let mut cpu = CpuCrowd::new(subject, n, 1, 0);
    cpu.frame(subject, &crowd.programs, false, false).unwrap();
    let joints = subject.joints();
    let mut worst = 0.0f32;
    for i in 0..n {
        for (g, c) in out[0].components[i * joints..(i + 1) * joints]
            .iter()
            .zip(cpu.components(i))
        {
            worst = worst.max((g.translation - c.translation).length());
        }
    }
    worst
}

#[test]
fn cached_bind_groups_and_pipelines_follow_changed_frames_and_replaced_packages() {
    let Some(ctx) = gpu() else { return };
    let subject = Subject::character().unwrap();
    let mut runtime =
        Runtime::new(&ctx, Capacities::for_packages(&[&subject.package], 16)).unwrap();
    let id = runtime.add_package(&subject.package).unwrap();
    // The character is about 1.8 m tall: DESIGN.md §6 allows 1e-4 of its extent.
    let tolerance = 1e-4 * 2.0;
    for (shape, n) in [
        (Shape::OneClip, 5),
        (Shape::OneClip, 5),
        (Shape::Layered, 5),
        (Shape::Blend2, 16),
        (Shape::OneClip, 5),
    ] {
        let e = worst_error(&mut runtime, id, &subject, shape, n);
        assert!(
            e < tolerance,
            "{shape:?} × {n}: GPU differs from the CPU by {e} m"
        );
    }

    // A new generation with the clips in reverse order: the same programs now name other
    // clips, so groups still bound to the old buffers would give the old poses.
    let mut reversed = subject.clone();
    reversed.package.clips.reverse();
    // Curve tracks name their clip: they follow it.
    let last = reversed.package.clips.len() as u32 - 1;
    let curves = &mut reversed.package.curves;
    curves
        .tracks
        .iter_mut()
        .for_each(|t| t.clip = last - t.clip);
    curves.tracks.sort_by_key(|t| (t.clip, t.channel));
    reversed.clips = (0..reversed.package.clips.len() as u32).collect();
    runtime.replace_package(id, &reversed.package).unwrap();
    let e = worst_error(&mut runtime, id, &reversed, Shape::OneClip, 5);
    assert!(
        e < tolerance,
        "after replace_package the GPU differs from the CPU by {e} m"
    );
    // And the old package's poses really differ from the new one's.
    let stale = {
        let crowd = reversed.programs(Shape::OneClip, 5);
        let (mut a, mut b) = (
            CpuCrowd::new(&subject, 5, 1, 0),
            CpuCrowd::new(&reversed, 5, 1, 0),
        );
        a.frame(&subject, &crowd.programs, false, false).unwrap();
        b.frame(&reversed, &crowd.programs, false, false).unwrap();
        let mut worst = 0.0f32;
        for i in 0..5 {
            for (x, y) in a.components(i).iter().zip(b.components(i)) {
                worst = worst.max((x.translation - y.translation).length());
            }
        }
        worst
    };
    assert!(
        stale > 100.0 * tolerance,
        "the reversed package should pose differently ({stale} m)"
    );
}
