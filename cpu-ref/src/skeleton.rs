//! Skeletons: flat, depth-first joint arrays, parent before child (DESIGN.md §3).

use glam::Affine3A;
use thiserror::Error;

use crate::{SkeletonLod, Trs};

/// Parent index of a root joint.
pub const NO_PARENT: u32 = u32::MAX;

/// A joint hierarchy in depth-first order. Every array has one entry per joint.
///
/// Component space is the skeleton's own space: `component[root] = local[root]`. The scene-space
/// transform of the skeleton's parent frame (the glTF ancestors above the root joint) is kept
/// separately in `root_transform`, so `scene = root_transform * component`.
#[derive(Clone, Debug, PartialEq)]
pub struct Skeleton {
    /// Parent joint index, or [`NO_PARENT`] for the root. `parents[j] < j`.
    pub parents: Vec<u32>,
    /// Exclusive end of each joint's subtree: joints `j..subtree_end[j]` are `j` and its descendants.
    pub subtree_end: Vec<u32>,
    /// Number of ancestors (root = 0).
    pub depth: Vec<u32>,
    /// Stable joint identity (hash of the joint's name), used for compatibility checks.
    pub ids: Vec<u64>,
    /// Rest local transforms.
    pub rest: Vec<Trs>,
    /// Debug names.
    pub names: Vec<String>,
    /// glTF node index each joint came from, or `u32::MAX` for a synthetic joint (debug/tools only).
    pub source_nodes: Vec<u32>,
    /// Scene-space transform of the frame the root joint lives in.
    pub root_transform: Affine3A,
    /// Reduced levels of detail 1, 2, … (`crate::lod`), cooked; empty: level 0 only.
    pub lods: Vec<SkeletonLod>,
}

#[derive(Debug, Error, PartialEq)]
pub enum SkeletonError {
    #[error("skeleton has no joints")]
    Empty,
    #[error("skeleton has {0} joints, more than the {max} supported", max = Skeleton::MAX_JOINTS)]
    TooManyJoints(usize),
    #[error("skeleton arrays disagree in length: {0}")]
    LengthMismatch(&'static str),
    #[error("joint {joint} ('{name}') has parent {parent}, which does not come before it")]
    ParentOrder {
        joint: usize,
        name: String,
        parent: u32,
    },
    #[error(
        "joint {joint} ('{name}') is a second root; a skeleton has exactly one root at index 0"
    )]
    SecondRoot { joint: usize, name: String },
    #[error("joint {joint} ('{name}') is not depth-first: it lies outside its parent's subtree")]
    NotDepthFirst { joint: usize, name: String },
    #[error("joint {joint} ('{name}') has a non-finite or non-positive rest transform")]
    BadRest { joint: usize, name: String },
}

impl Skeleton {
    /// Joint counts are stored as u32 everywhere; the GPU path may impose a smaller limit.
    pub const MAX_JOINTS: usize = 65_535;

    /// Builds a skeleton from parents (depth-first, parent before child, one root at index 0),
    /// rest transforms, names and source nodes; derives depth, subtree ends and ids.
    pub fn new(
        parents: Vec<u32>,
        rest: Vec<Trs>,
        names: Vec<String>,
        source_nodes: Vec<u32>,
        root_transform: Affine3A,
    ) -> Result<Self, SkeletonError> {
        let n = parents.len();
        if n == 0 {
            return Err(SkeletonError::Empty);
        }
        if n > Self::MAX_JOINTS {
            return Err(SkeletonError::TooManyJoints(n));
        }
        if rest.len() != n {
            return Err(SkeletonError::LengthMismatch("rest"));
        }
        if names.len() != n {
            return Err(SkeletonError::LengthMismatch("names"));
        }
        if source_nodes.len() != n {
            return Err(SkeletonError::LengthMismatch("source_nodes"));
        }
        let mut depth = vec![0u32; n];
        for (j, &p) in parents.iter().enumerate() {
            let name = || names[j].clone();
            if j == 0 {
                if p != NO_PARENT {
                    return Err(SkeletonError::ParentOrder {
                        joint: 0,
                        name: name(),
                        parent: p,
                    });
                }
                continue;
            }
            if p == NO_PARENT {
                return Err(SkeletonError::SecondRoot {
                    joint: j,
                    name: name(),
                });
            }
            if p as usize >= j {
                return Err(SkeletonError::ParentOrder {
                    joint: j,
                    name: name(),
                    parent: p,
                });
            }
            depth[j] = depth[p as usize] + 1;
        }
        // Depth-first: a joint's parent must be on the path of open ancestors of the previous joint.
        let mut subtree_end: Vec<u32> = (1..=n as u32).collect();
        for j in (1..n).rev() {
            let p = parents[j] as usize;
            subtree_end[p] = subtree_end[p].max(subtree_end[j]);
        }
        for j in 1..n {
            let p = parents[j] as usize;
            if p != j - 1 && !is_ancestor(&parents, p, j - 1) {
                return Err(SkeletonError::NotDepthFirst {
                    joint: j,
                    name: names[j].clone(),
                });
            }
        }
        for (j, t) in rest.iter().enumerate() {
            if !t.is_finite() || t.scale.min_element() <= 0.0 {
                return Err(SkeletonError::BadRest {
                    joint: j,
                    name: names[j].clone(),
                });
            }
        }
        let ids = names.iter().map(|s| fnv1a64(s.as_bytes())).collect();
        Ok(Skeleton {
            parents,
            subtree_end,
            depth,
            ids,
            rest,
            names,
            source_nodes,
            root_transform,
            lods: Vec::new(),
        })
    }

    pub fn joint_count(&self) -> usize {
        self.parents.len()
    }

    /// Index of the joint with this debug name.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Hash over ids and order, hierarchy, rest transforms and conventions: equal hashes mean
    /// poses and clips can be exchanged between the two skeletons.
    pub fn identity_hash(&self) -> u64 {
        let mut bytes = Vec::with_capacity(self.joint_count() * 52 + 16);
        bytes.extend_from_slice(b"throng:y-up:m:xyzw:trs");
        for j in 0..self.joint_count() {
            bytes.extend_from_slice(&self.ids[j].to_le_bytes());
            bytes.extend_from_slice(&self.parents[j].to_le_bytes());
            let r = &self.rest[j];
            for v in r
                .translation
                .to_array()
                .iter()
                .chain(r.rotation.to_array().iter())
                .chain(r.scale.to_array().iter())
            {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        fnv1a64(&bytes)
    }
}

fn is_ancestor(parents: &[u32], ancestor: usize, mut joint: usize) -> bool {
    while parents[joint] != NO_PARENT {
        joint = parents[joint] as usize;
        if joint == ancestor {
            return true;
        }
    }
    false
}

/// FNV-1a, 64-bit (Fowler, Noll, Vo; http://www.isthe.com/chongo/tech/comp/fnv/).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
