//! Host mirrors of the WGSL structs the host writes (`PoseParams` of pose.wgsl, `SkinParams`
//! of skinning.wgsl, `BoundsParams` of bounds.wgsl, `BudgetParams` of budget.wgsl,
//! `PartitionParams` of partition.wgsl, `ScatterParams` of scatter.wgsl, `AttachParams` of
//! attach.wgsl, `DecodeParams` of decode.wgsl), byte for byte; a test checks every member offset against naga's layout.

use bytemuck::{Pod, Zeroable};

/// `PoseParams::lod_base` of a dispatch at skeleton LOD level 0: every joint runs its program.
pub const NO_LOD: u32 = u32::MAX;

/// A clip's entry in its package's decode table when this frame did not decode it into the
/// decode cache (decode.wgsl): its instances decode their own samples.
pub const NO_DECODE: u32 = u32::MAX;

/// `PoseParams` of pose.wgsl: one (batch, shape) dispatch of the pose pass (80 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct PoseParams {
    pub count: u32,
    pub record_base: u32,
    pub record_stride: u32,
    pub joint_count: u32,
    pub clip_base: u32,
    pub parent_base: u32,
    pub depth_base: u32,
    pub rest_base: u32,
    pub skin_len: u32,
    pub skin_joint_base: u32,
    pub skin_range_base: u32,
    pub skin_order_base: u32,
    pub ibm_base: u32,
    pub mask_base: u32,
    pub shape_base: u32,
    pub shape_ops: u32,
    pub max_depth: u32,
    /// `tables`: the retained-joint bitset of the dispatch's skeleton LOD, or [`NO_LOD`].
    pub lod_base: u32,
    /// `pool`: the held pose of that LOD's dropped joints (three vec4s per joint).
    pub held_base: u32,
    pub pad: [u32; 1],
}

/// `SkinParams` of skinning.wgsl: one skinned batch (32 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct SkinParams {
    pub unit: u32,
    pub vertex_base: u32,
    pub vertex_count: u32,
    pub skin_len: u32,
    pub rows: u32,
    pub pad: [u32; 3],
}

/// `BudgetParams` of budget.wgsl (16 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct BudgetParams {
    pub batches: u32,
    pub pool: u32,
    pub batch_base: u32,
    pub pad: u32,
}

/// `PartitionParams` of partition.wgsl (32 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct PartitionParams {
    pub batches: u32,
    pub page_instances: u32,
    pub pages: u32,
    pub rows: u32,
    pub draw_base: u32,
    pub rank_base: u32,
    pub batch_base: u32,
    pub pad: u32,
}

/// `ScatterParams` of scatter.wgsl (16 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct ScatterParams {
    pub slots: u32,
    pub pool: u32,
    pub pad: [u32; 2],
}

/// `BoundsParams` of bounds.wgsl: one skinned batch (128 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BoundsParams {
    pub count: u32,
    pub first_slot: u32,
    pub box_base: u32,
    pub entry_base: u32,
    pub boxes: u32,
    pub cull: u32,
    pub group_base: u32,
    pub pad: u32,
    pub planes: [[f32; 4]; 6],
}

/// `AttachParams` of attach.wgsl (16 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct AttachParams {
    pub batches: u32,
    pub pool: u32,
    pub attachments: u32,
    pub batch_base: u32,
}

/// `DecodeParams` of decode.wgsl: one package's clips decoded into the frame's decode cache
/// (16 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct DecodeParams {
    /// `tables`: the package's clip headers (as `PoseParams::clip_base`).
    pub clip_base: u32,
    /// The decode table's first job (clip index and decode list; one per workgroup row).
    pub jobs_base: u32,
    pub jobs: u32,
    pub pad: u32,
}

/// Member names and byte offsets of the host structs, for the layout test.
pub fn host_offsets() -> [(&'static str, Vec<(&'static str, usize)>); 8] {
    use std::mem::offset_of;
    macro_rules! members {
        ($t:ty: $($m:ident),*) => { vec![$((stringify!($m), offset_of!($t, $m))),*] };
    }
    [
        (
            "PoseParams",
            members!(PoseParams: count, record_base, record_stride, joint_count, clip_base, parent_base, depth_base,
                rest_base, skin_len, skin_joint_base, skin_range_base, skin_order_base, ibm_base, mask_base,
                shape_base, shape_ops, max_depth, lod_base, held_base),
        ),
        (
            "SkinParams",
            members!(SkinParams: unit, vertex_base, vertex_count, skin_len, rows),
        ),
        (
            "BoundsParams",
            members!(BoundsParams: count, first_slot, box_base, entry_base, boxes, cull, group_base, planes),
        ),
        (
            "BudgetParams",
            members!(BudgetParams: batches, pool, batch_base),
        ),
        (
            "PartitionParams",
            members!(PartitionParams: batches, page_instances, pages, rows, draw_base, rank_base, batch_base),
        ),
        ("ScatterParams", members!(ScatterParams: slots, pool)),
        (
            "AttachParams",
            members!(AttachParams: batches, pool, attachments, batch_base),
        ),
        (
            "DecodeParams",
            members!(DecodeParams: clip_base, jobs_base, jobs),
        ),
    ]
}
