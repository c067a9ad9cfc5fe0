//! Linear blend skinning of positions and normals.

use glam::{Affine3A, Quat, Vec3};
use throng_cpu_ref::skinning::skin_mesh;
use throng_cpu_ref::SkinnedMesh;

fn mesh(
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    joints: Vec<[u16; 4]>,
    weights: Vec<[f32; 4]>,
) -> SkinnedMesh {
    SkinnedMesh {
        name: "m/0".into(),
        skin: 0,
        positions,
        normals,
        joints,
        weights,
        indices: vec![],
        lods: vec![],
        targets: Vec::new(),
    }
}

fn skin(m: &SkinnedMesh, palette: &[Affine3A]) -> (Vec<Vec3>, Vec<Vec3>) {
    let mut p = vec![Vec3::NAN; m.positions.len()];
    let mut n = vec![Vec3::NAN; m.normals.len()];
    skin_mesh(m, palette, &mut p, &mut n);
    (p, n)
}

fn close(a: Vec3, b: Vec3) -> bool {
    (a - b).abs().max_element() < 1e-5
}

fn three_vertices() -> SkinnedMesh {
    mesh(
        vec![
            Vec3::new(1.0, 2.0, 3.0),
            Vec3::new(-1.0, 0.5, 0.0),
            Vec3::new(0.0, 0.0, -4.0),
        ],
        vec![Vec3::X, Vec3::new(0.0, 0.6, 0.8), Vec3::new(-0.6, 0.0, 0.8)],
        vec![[0, 1, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]],
        vec![
            [1.0, 0.0, 0.0, 0.0],
            [0.3, 0.7, 0.0, 0.0],
            [0.5, 0.5, 0.0, 0.0],
        ],
    )
}

#[test]
fn identity_palette_returns_the_bind_pose() {
    let m = three_vertices();
    let (p, n) = skin(&m, &[Affine3A::IDENTITY; 2]);
    assert_eq!(p, m.positions);
    for (a, b) in n.iter().zip(&m.normals) {
        assert!(close(*a, *b));
    }
}

#[test]
fn a_rigid_palette_moves_vertices_and_normals_rigidly() {
    let m = three_vertices();
    let rot = Quat::from_euler(glam::EulerRot::YXZ, 0.7, -0.3, 1.9);
    let rigid = Affine3A::from_rotation_translation(rot, Vec3::new(3.0, -1.0, 0.5));
    let (p, n) = skin(&m, &[rigid; 2]);
    for v in 0..3 {
        assert!(
            close(p[v], rot * m.positions[v] + Vec3::new(3.0, -1.0, 0.5)),
            "vertex {v}"
        );
        assert!(close(n[v], rot * m.normals[v]), "normal {v}");
    }
}

#[test]
fn weights_blend_the_palette_matrices() {
    let m = three_vertices();
    let palette = [
        Affine3A::from_translation(Vec3::new(10.0, 0.0, 0.0)),
        Affine3A::from_translation(Vec3::new(0.0, 20.0, 0.0)),
    ];
    let (p, _) = skin(&m, &palette);
    assert!(close(p[0], m.positions[0] + Vec3::new(10.0, 0.0, 0.0)));
    // Vertex 1: 0.3 on joint 1 (+20 y), 0.7 on joint 0 (+10 x).
    assert!(close(p[1], m.positions[1] + Vec3::new(7.0, 6.0, 0.0)));
    assert!(close(p[2], m.positions[2] + Vec3::new(5.0, 10.0, 0.0)));
}

#[test]
fn normals_stay_perpendicular_under_non_uniform_scale() {
    // The plane x + y = 0 (normal (1, 1, 0)/√2) scaled 2x along x becomes x + 2y = 0,
    // normal (1, 2, 0)/√5; transforming the normal by the matrix itself would give (2, 1, 0)/√5.
    let n = Vec3::new(1.0, 1.0, 0.0).normalize();
    let m = mesh(
        vec![Vec3::new(1.0, -1.0, 0.0)],
        vec![n],
        vec![[0; 4]],
        vec![[1.0, 0.0, 0.0, 0.0]],
    );
    let (p, out) = skin(&m, &[Affine3A::from_scale(Vec3::new(2.0, 1.0, 1.0))]);
    assert!(close(p[0], Vec3::new(2.0, -1.0, 0.0)));
    assert!(
        close(out[0], Vec3::new(1.0, 2.0, 0.0).normalize()),
        "{}",
        out[0]
    );
}

#[test]
fn out_of_range_joints_and_short_outputs_do_not_panic() {
    let m = mesh(
        vec![Vec3::ONE, Vec3::ONE],
        vec![Vec3::Z, Vec3::Z],
        vec![[0, 9, 0, 0], [u16::MAX; 4]],
        vec![[0.5, 0.5, 0.0, 0.0], [0.25; 4]],
    );
    let palette = [Affine3A::from_translation(Vec3::X)];
    let (p, n) = skin(&m, &palette);
    // The out-of-range influence is skipped: half of joint 0 remains.
    assert!(close(p[0], (Vec3::ONE + Vec3::X) * 0.5));
    assert!(close(n[0], Vec3::Z));
    // No influence in range: the zero matrix.
    assert_eq!(p[1], Vec3::ZERO);
    assert_eq!(n[1], Vec3::ZERO);
    let mut short = [Vec3::NAN; 1];
    skin_mesh(&m, &palette, &mut short, &mut []);
    assert!(close(short[0], (Vec3::ONE + Vec3::X) * 0.5));
}
