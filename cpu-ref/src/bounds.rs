//! Axis-aligned bounding boxes (metres, in whatever space the points are).

use glam::{Affine3A, Vec3};

/// An axis-aligned box; `min > max` on some axis means empty.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub min: Vec3,
    pub max: Vec3,
}

impl Bounds {
    pub const EMPTY: Bounds = Bounds {
        min: Vec3::splat(f32::INFINITY),
        max: Vec3::splat(f32::NEG_INFINITY),
    };

    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }

    /// The smallest box holding `points`.
    pub fn of_points(points: impl IntoIterator<Item = Vec3>) -> Bounds {
        points.into_iter().fold(Bounds::EMPTY, |b, p| Bounds {
            min: b.min.min(p),
            max: b.max.max(p),
        })
    }

    pub fn union(&self, other: &Bounds) -> Bounds {
        Bounds {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// The eight corners (none when empty).
    pub fn corners(&self) -> impl Iterator<Item = Vec3> + '_ {
        let n = if self.is_empty() { 0 } else { 8 };
        (0..n).map(|i| {
            Vec3::new(
                if i & 1 == 0 { self.min.x } else { self.max.x },
                if i & 2 == 0 { self.min.y } else { self.max.y },
                if i & 4 == 0 { self.min.z } else { self.max.z },
            )
        })
    }

    /// The box holding this one's corners transformed by `m`.
    pub fn transformed(&self, m: &Affine3A) -> Bounds {
        Bounds::of_points(self.corners().map(|c| m.transform_point3(c)))
    }

    pub fn centre(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }
}
