//! Shared builders for the IK tests: random chains and the generated character.
#![allow(dead_code)]

use std::sync::OnceLock;

use glam::{Affine3A, Quat, Vec3};
use proptest::prelude::*;
use throng_cpu_ref::{fk, Package, Skeleton, Trs, NO_PARENT};

/// A posed skeleton with its component transforms.
#[derive(Clone, Debug)]
pub struct Posed {
    pub skeleton: Skeleton,
    pub local: Vec<Trs>,
    pub component: Vec<Affine3A>,
}

impl Posed {
    /// Poses `skeleton` at `local` and runs FK.
    pub fn new(skeleton: Skeleton, local: Vec<Trs>) -> Self {
        let mut component = vec![Affine3A::IDENTITY; local.len()];
        fk::local_to_component(&skeleton, &local, &mut component);
        Posed {
            skeleton,
            local,
            component,
        }
    }

    /// A single chain: joint 0 at `root`, joint i+1 at `offsets[i]` from joint i, all in the given
    /// local rotations; an extra leaf (a "finger") hangs under the last joint.
    pub fn chain(root: Trs, offsets: &[Vec3], rotations: &[Quat]) -> Self {
        let n = offsets.len() + 1;
        let mut parents = vec![NO_PARENT];
        let mut rest = vec![root];
        for (i, o) in offsets.iter().enumerate() {
            parents.push(i as u32);
            rest.push(Trs {
                translation: *o,
                rotation: rotations.get(i + 1).copied().unwrap_or(Quat::IDENTITY),
                scale: Vec3::ONE,
            });
        }
        rest[0].rotation = rotations.first().copied().unwrap_or(root.rotation);
        parents.push((n - 1) as u32);
        rest.push(Trs {
            translation: Vec3::new(0.0, 0.1, 0.0),
            ..Trs::IDENTITY
        });
        let names = (0..=n).map(|j| format!("j{j}")).collect();
        let skeleton = Skeleton::new(
            parents,
            rest.clone(),
            names,
            (0..=n as u32).collect(),
            Affine3A::IDENTITY,
        )
        .expect("valid chain");
        Posed::new(skeleton, rest)
    }

    pub fn at(&self, joint: usize) -> Vec3 {
        self.component[joint].translation.into()
    }

    /// Component transforms recomputed from `local` by FK: what the solver's rebuild must match.
    pub fn fk(&self) -> Vec<Affine3A> {
        let mut c = vec![Affine3A::IDENTITY; self.local.len()];
        fk::local_to_component(&self.skeleton, &self.local, &mut c);
        c
    }
}

/// Largest element difference between two affine lists.
pub fn affine_diff(a: &[Affine3A], b: &[Affine3A]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            (glam::Mat4::from(*x) - glam::Mat4::from(*y))
                .to_cols_array()
                .iter()
                .fold(0.0f32, |m, v| m.max(v.abs()))
        })
        .fold(0.0, f32::max)
}

pub fn unit_vector() -> impl Strategy<Value = Vec3> {
    (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0)
        .prop_map(|(x, y, z)| Vec3::new(x, y, z))
        .prop_filter("not too short", |v| v.length() > 0.1)
        .prop_map(Vec3::normalize)
}

pub fn rotation() -> impl Strategy<Value = Quat> {
    (unit_vector(), -3.1f32..3.1).prop_map(|(axis, angle)| Quat::from_axis_angle(axis, angle))
}

/// A root transform with a random rotation, translation and uniform scale.
pub fn root_trs() -> impl Strategy<Value = Trs> {
    (unit_vector(), 0.0f32..2.0, rotation(), 0.5f32..2.0).prop_map(|(d, t, r, s)| Trs {
        translation: d * t,
        rotation: r,
        scale: Vec3::splat(s),
    })
}

/// The generated character, cooked with the standard profile (once per test binary).
pub fn character() -> &'static Package {
    static PACKAGE: OnceLock<Package> = OnceLock::new();
    PACKAGE.get_or_init(|| {
        let imported = throng_cook::import_slice(&throng_fixtures::character_glb(), "character")
            .expect("character imports");
        throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)
            .expect("character cooks")
            .0
    })
}

/// The character's skeleton at its rest pose.
pub fn character_rest(package: &Package) -> Posed {
    let skeleton = package.skeletons[0].clone();
    let local = skeleton.rest.clone();
    Posed::new(skeleton, local)
}

pub fn joint(p: &Posed, name: &str) -> usize {
    p.skeleton
        .find(name)
        .unwrap_or_else(|| panic!("the character has a joint '{name}'"))
}
