//! Cook errors. Every variant names the source file and the place in it (node, accessor,
//! animation channel, key, mesh, vertex; for clip metadata the line when the file has lines, and
//! the key) so that a user can find the fault in their exporter or sidecar.

use thiserror::Error;
use throng_cpu_ref::SkeletonError;

#[derive(Debug, Error)]
pub enum CookError {
    #[error("skeleton LODs: {0}")]
    Lod(String),
    #[error("{file}: cannot read: {message}")]
    Io { file: String, message: String },
    #[error("{file}: not a valid glTF 2.0 file: {message}")]
    Parse { file: String, message: String },
    #[error("{file}:{line}: not a BVH file Throng reads: {message}")]
    Bvh {
        file: String,
        line: usize,
        message: String,
    },
    #[error("{file} has no skin: nothing to cook (Throng cooks skinned characters)")]
    NoSkin { file: String },
    #[error("{file}: {node} is the child of both node {first} and node {second}; glTF nodes form a strict tree")]
    TwoParents {
        file: String,
        node: String,
        first: usize,
        second: usize,
    },
    #[error("{file}: {node} is its own ancestor (cycle in the node hierarchy)")]
    Cycle { file: String, node: String },
    #[error("{file}: accessor {accessor}: {reason}")]
    Accessor {
        file: String,
        accessor: usize,
        reason: String,
    },
    #[error("{file}: {place} is not finite")]
    NonFinite { file: String, place: String },
    #[error("{file}: {place} has scale {scale:?}; scales must be positive and at least 1e-6 (zero, negative and near-singular scales are rejected)")]
    BadScale {
        file: String,
        place: String,
        scale: [f32; 3],
    },
    #[error("{file}: {place} is not an affine transform with a positive, non-singular linear part: {reason}")]
    BadMatrix {
        file: String,
        place: String,
        reason: String,
    },
    #[error("{file}: {node} is a skeleton joint whose matrix has shear (TRS reconstruction error {error:e}); joints must be TRS")]
    ShearedJoint {
        file: String,
        node: String,
        error: f32,
    },
    #[error(
        "{file}: {channel} targets {node}, which has a `matrix`; glTF forbids animating such nodes"
    )]
    AnimatedMatrixNode {
        file: String,
        channel: String,
        node: String,
    },
    #[error("{file}: {channel} targets {node}, which is not in any skin's skeleton")]
    ChannelOnNonJoint {
        file: String,
        channel: String,
        node: String,
    },
    #[error("{file}: {channel} and another channel of the same animation both target {target}")]
    DuplicateChannel {
        file: String,
        channel: String,
        target: String,
    },
    #[error("{file}: {channel} key {key}: {reason}")]
    KeyTime {
        file: String,
        channel: String,
        key: usize,
        reason: &'static str,
    },
    #[error("{file}: {channel} has {actual} output values for {keys} keys (expected {expected})")]
    OutputCount {
        file: String,
        channel: String,
        keys: usize,
        expected: usize,
        actual: usize,
    },
    #[error("{file}: skin {skin}: {reason}")]
    Skin {
        file: String,
        skin: String,
        reason: String,
    },
    #[error("{file}: skin {skin}: {source}")]
    Skeleton {
        file: String,
        skin: String,
        source: SkeletonError,
    },
    #[error("{file}: mesh {mesh} lacks the {attribute} attribute a skinned primitive needs")]
    MissingAttribute {
        file: String,
        mesh: String,
        attribute: &'static str,
    },
    #[error("{file}: mesh {mesh}: {attribute} has {actual} elements, POSITION has {expected}")]
    AttributeCount {
        file: String,
        mesh: String,
        attribute: &'static str,
        expected: usize,
        actual: usize,
    },
    #[error(
        "{file}: mesh {mesh} vertex {vertex} uses joint {index}, but its skin has {palette} joints"
    )]
    JointIndexOutOfRange {
        file: String,
        mesh: String,
        vertex: usize,
        index: u32,
        palette: usize,
    },
    #[error("{file}: mesh {mesh} vertex {vertex} has a negative or non-finite weight")]
    BadWeight {
        file: String,
        mesh: String,
        vertex: usize,
    },
    #[error("{file}: mesh {mesh} vertex {vertex} has all-zero weights")]
    ZeroWeights {
        file: String,
        mesh: String,
        vertex: usize,
    },
    #[error("{file}: mesh {mesh} vertex {vertex} has more than 4 influences (non-zero WEIGHTS_1 or later); Throng reads JOINTS_0/WEIGHTS_0 only")]
    TooManyInfluences {
        file: String,
        mesh: String,
        vertex: usize,
    },
    #[error("{file}: {place}: {reason}")]
    MorphTarget {
        file: String,
        place: String,
        reason: String,
    },
    #[error("{file}: mesh {mesh}: {reason}")]
    BadIndices {
        file: String,
        mesh: String,
        reason: String,
    },
    #[error("unknown quality profile '{name}'; valid profiles: {valid}")]
    UnknownProfile { name: String, valid: String },
    #[error("{file}: clip '{clip}': {reason}")]
    Clip {
        file: String,
        clip: String,
        reason: String,
    },
    #[error("{file}{}: {key}: {reason}", .line.map(|l| format!(":{l}")).unwrap_or_default())]
    Metadata {
        file: String,
        line: Option<usize>,
        key: String,
        reason: String,
    },
}
