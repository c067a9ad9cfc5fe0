//! Kernel sources: the fused pose pass in three forms and the skinning pass, each with the
//! bindings it declares (docs/gpu.md, "The pose pass").
//!
//! - [`interpreter`]: one thread per instance; any shape (read from the resident shape table),
//!   any skeleton; walks the joints parent-first, running the whole program per joint over a
//!   private register file, composing FK through the component output and writing the palette.
//! - [`thread`]: one thread per instance, straight-line code for one shape, walking the joints
//!   parent-first with FK through the component stream and the palette inline, per-instance
//!   values (clip headers, brackets, normalised weights) hoisted out of the joint loop. The
//!   mapping for software adapters, where every lane's load and store costs alike.
//! - [`group`]: one workgroup per instance (or a few small ones), lanes over joints padded to
//!   [`SUBGROUP`], straight-line code for one shape, FK level by level in workgroup memory.
//!   The mapping for hardware GPUs.
//!
//! Every pose kernel writes, per instance, the outputs [`Outputs`] asks for into paged streams
//! ([`FrameLayout`]): a stream is cut into pages of whole instances, each page one binding, so a
//! frame larger than the adapter's binding limit still takes one dispatch per shape.

use std::fmt::Write;

use throng_cpu_ref::program::{op, NO_MASK};

use crate::prelude::{MAX_GROUP_LANES, SUBGROUP, WORKGROUP};
use crate::shape::Shape;

const MATH: &str = include_str!("wgsl/math.wgsl");
const SAMPLE: &str = include_str!("wgsl/sample.wgsl");
const CURVES: &str = include_str!("wgsl/curves.wgsl");
const CODEC: &str = include_str!("wgsl/codec.wgsl");
const INTERPRETER: &str = include_str!("wgsl/interpreter.wgsl");
const INERTIALIZE: &str = include_str!("wgsl/inertialize.wgsl");
const SKINNING: &str = include_str!("wgsl/skinning.wgsl");
const MOTION: &str = include_str!("wgsl/motion.wgsl");
const MORPH: &str = include_str!("wgsl/morph.wgsl");
const MORPH_PASS: &str = include_str!("wgsl/morph_pass.wgsl");
const BOUNDS: &str = include_str!("wgsl/bounds.wgsl");
const ATTACH: &str = include_str!("wgsl/attach.wgsl");
const BUDGET: &str = include_str!("wgsl/budget.wgsl");
const SCATTER: &str = include_str!("wgsl/scatter.wgsl");
const TALLY: &str = include_str!("wgsl/tally.wgsl");
const PARTITION: &str = include_str!("wgsl/partition.wgsl");
const SCAN: &str = include_str!("wgsl/scan.wgsl");
const POSE_COMMON: &str = include_str!("wgsl/pose.wgsl");
const KINDS: &str = include_str!("wgsl/kinds.wgsl");
const DECODE: &str = include_str!("wgsl/decode.wgsl");
const PRESENT: &str = include_str!("wgsl/present.wgsl");
const PATCH: &str = include_str!("wgsl/patch.wgsl");

/// Entry point of every compute kernel.
pub const ENTRY: &str = "main";

/// A per-instance output stream of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stream {
    /// Final local poses (`TrsRecord`, 48 B per joint).
    Locals,
    /// Component transforms (`Affine`, 48 B per joint).
    Components,
    /// Palettes (`Affine`, 48 B per entry).
    Palettes,
    /// Skinned vertices (`vec4<u32>`, 16 B: position bits and the octahedral normal).
    Skinned,
    /// Motion vectors: the last frame's palettes (`Affine`), by frame slot like `Palettes`.
    LastPalettes,
    /// Motion vectors: each skinned vertex's previous position (`vec4<f32>`, w = 1), in the
    /// skinned pool's order like `Skinned`.
    Previous,
    /// Scalar curve values (`f32`, 4 B per channel of the instance's skeleton; curves.wgsl).
    Curves,
}

impl Stream {
    pub const ALL: [Stream; 7] = [
        Stream::Locals,
        Stream::Components,
        Stream::Palettes,
        Stream::Skinned,
        Stream::LastPalettes,
        Stream::Previous,
        Stream::Curves,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stream::Locals => "locals",
            Stream::Components => "components",
            Stream::Palettes => "palettes",
            Stream::Skinned => "skinned",
            Stream::LastPalettes => "last_palettes",
            Stream::Previous => "previous",
            Stream::Curves => "curves",
        }
    }

    /// The WGSL element type and its size in bytes.
    pub fn element(self) -> (&'static str, u64) {
        match self {
            Stream::Locals => ("TrsRecord", 48),
            Stream::Components | Stream::Palettes | Stream::LastPalettes => ("Affine", 48),
            Stream::Skinned => ("vec4<u32>", 16),
            Stream::Previous => ("vec4<f32>", 16),
            Stream::Curves => ("f32", 4),
        }
    }

    /// What the kernels load and store an element as.
    fn value(self) -> &'static str {
        match self {
            Stream::Skinned => "vec4<u32>",
            Stream::Previous => "vec4<f32>",
            Stream::Locals => "TrsRecord",
            Stream::Curves => "f32",
            _ => "Affine",
        }
    }
}

/// How one stream is cut into pages: `pages` bindings of `page_instances` instances of
/// `stride` elements each. Instance slot `s` is in page `s / page_instances`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Paging {
    pub pages: u32,
    pub page_instances: u32,
    pub stride: u32,
}

/// The paging of every stream of a runtime and of the inertialization history.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FrameLayout {
    pub locals: Paging,
    pub components: Paging,
    pub palettes: Paging,
    pub skinned: Paging,
    pub last_palettes: Paging,
    pub previous: Paging,
    pub curves: Paging,
    /// History slots per page; `stride`: joints per slot ([`HISTORY_VEC4S`] vec4s each).
    pub history: Paging,
}

/// vec4s of one joint's offset in the history buffer: translation, its velocity, rotation, its
/// velocity, scale, its velocity (xyz each).
pub const HISTORY_VEC4S: u32 = 6;

impl FrameLayout {
    pub fn paging(&self, s: Stream) -> Paging {
        match s {
            Stream::Locals => self.locals,
            Stream::Components => self.components,
            Stream::Palettes => self.palettes,
            Stream::Skinned => self.skinned,
            Stream::LastPalettes => self.last_palettes,
            Stream::Previous => self.previous,
            Stream::Curves => self.curves,
        }
    }
}

/// What a kernel binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resource {
    /// The dispatch's parameters (uniform, at a dynamic offset).
    Params,
    /// Package: u32 tables (clip headers, hierarchy, skin maps, masks, codec streams).
    Tables,
    /// Package: per clip and joint, the t, q, s sub-track references.
    Tracks,
    /// Package: f32 vec4 pool (rest poses, samples, constants, inverse binds, mask weights).
    Pool,
    /// Package: skinning vertex records.
    Vertices,
    /// Frame: instance records.
    Records,
    /// Runtime: per kind of instance its `KindRow` (kinds.wgsl).
    Kinds,
    /// Runtime: per skinning unit its `UnitRow` (kinds.wgsl).
    Units,
    /// Frame: the decode cache, decoded samples of the clips the frame samples most
    /// (vec4<f32>; decode.wgsl).
    Decoded,
    /// Package: per clip its base in the decode cache or `NO_DECODE`, then the frame's decode
    /// jobs (u32, written per frame; decode.wgsl).
    DecodeTable,
    /// Frame: placements (3 rows per slot).
    Placements,
    /// Runtime: the interpreter's shape table.
    Shapes,
    /// Runtime: page `n` of the inertialization history, [`HISTORY_VEC4S`] vec4s per joint of
    /// each slot.
    History(u32),
    /// Frame: per slot, its animated bounds (two vec4<f32>: min, max).
    Bounds,
    /// Frame: per frame slot, its visibility mark (u32; bounds.wgsl).
    Marks,
    /// Frame: the significance histogram, the budget's threshold, then per bounds workgroup its
    /// tallies, then the counts before it (u32; bounds.wgsl, tally.wgsl, budget.wgsl).
    Groups,
    /// Frame: per frame slot its clock, the clip and time of the first clip its program samples
    /// (two u32; present.wgsl, or the host in a frame of batches).
    Clocks,
    /// Runtime: the far tier's impostor table (u32; scatter.wgsl).
    FarTier,
    /// Frame: the cards of the visible slots past the skinned budget (two vec4 each, raster.wgsl
    /// `Card`; scatter.wgsl).
    Cards,
    /// Frame: per unit (skinned batch and level) its first rank and skinned count, per draw its
    /// first instance within its page (partition.wgsl), then per skinned batch its first rank,
    /// skinned and seen counts (budget.wgsl) (u32).
    Ranks,
    /// Frame: per rank of the skinned pool, the frame slot the budget chose there, in frame-slot
    /// order (u32; scatter.wgsl).
    Budgeted,
    /// Frame: per rank of the skinned pool, the frame slot skinned there, by level (u32;
    /// partition.wgsl).
    Order,
    /// Frame: indirect dispatch and draw arguments (u32).
    Indirect,
    /// Frame: page `n` of a stream.
    Page(Stream, u32),
    /// Frame, motion vectors: the last frame's placements (3 rows per slot).
    LastPlacements,
    /// Frame, motion vectors: per frame slot, 1 when its motion history resets (u32).
    Resets,
    /// Frame: per frame slot, its kind word (`kind | level << 24`, or `NO_KIND`; bounds.wgsl).
    SlotKinds,
    /// Runtime: per (skinned batch, attachment) whether the attachment applies, its palette
    /// entry and its map into the entry's bind space (four vec4<f32>; attach.wgsl).
    AttachTable,
    /// Frame: per (attachment, rank of the skinned pool) the prop's scene transform (three
    /// vec4<f32> rows).
    Props,
    /// Frame: per attachment its indexed indirect draw arguments (5 u32).
    PropDraws,
    /// Retained: per slot its row and record template (vec4<u32>; present.wgsl).
    Statics,
    /// Retained: the two last ticks' value arenas (f32).
    Values,
    /// Retained: the two last ticks' placements, two vec4<f32> per slot.
    PlacementsIn,
    /// Retained: per program shape its `BinRow`.
    Bins,
    /// Retained: per program shape the records present.wgsl took this frame (atomic u32).
    Fill,
    /// Retained: the last tick's patches of `Statics` (vec4<u32>; patch.wgsl).
    Patches,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    Uniform,
    Read,
    ReadWrite,
}

/// One `@binding` of group 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Binding {
    pub binding: u32,
    pub resource: Resource,
    pub access: Access,
}

/// A kernel's WGSL and what it binds.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub label: String,
    pub source: String,
    pub bindings: Vec<Binding>,
    /// Threads per workgroup.
    pub workgroup: u32,
}

impl Kernel {
    /// Storage buffers the kernel binds (every page of a paged stream is one).
    pub fn storage_buffers(&self) -> u32 {
        (self.bindings.iter())
            .filter(|b| b.access != Access::Uniform)
            .count() as u32
    }
}

/// Which outputs a pose kernel writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outputs {
    pub locals: bool,
    /// FK and the component stream; without it the kernel only evaluates the program (and must
    /// write locals).
    pub components: bool,
    /// The palette of the batch's skin (needs `components`).
    pub palettes: bool,
    /// Each instance's scalar curve values (the `Curves` stream; needs a layout with room).
    pub curves: bool,
}

/// Declarations and accessors (`load_<stream>`, `store_<stream>`) of the streams in `streams`,
/// bound from `*next` on.
fn stream_bindings(
    layout: &FrameLayout,
    streams: &[(Stream, Access)],
    next: &mut u32,
    bindings: &mut Vec<Binding>,
) -> String {
    let mut s = String::new();
    for &(stream, access) in streams {
        let p = layout.paging(stream);
        let (ty, _) = stream.element();
        let name = stream.name();
        let mode = if access == Access::ReadWrite {
            "read_write"
        } else {
            "read"
        };
        for page in 0..p.pages.max(1) {
            let _ = writeln!(
                s,
                "@group(0) @binding({}) var<storage, {mode}> {name}_{page}: array<{ty}>;",
                *next
            );
            bindings.push(Binding {
                binding: *next,
                resource: Resource::Page(stream, page),
                access,
            });
            *next += 1;
        }
        let value = stream.value();
        let stride = p.stride;
        if p.pages <= 1 {
            let _ = writeln!(s, "fn load_{name}(slot: u32, e: u32) -> {value} {{\n    return {name}_0[slot * {stride}u + e];\n}}");
            if access == Access::ReadWrite {
                let _ = writeln!(s, "fn store_{name}(slot: u32, e: u32, v: {value}) {{\n    {name}_0[slot * {stride}u + e] = v;\n}}");
            }
            continue;
        }
        let per = p.page_instances;
        let _ = writeln!(s, "fn load_{name}(slot: u32, e: u32) -> {value} {{\n    let page = slot / {per}u;\n    let at = (slot - page * {per}u) * {stride}u + e;\n    switch page {{");
        for page in 1..p.pages {
            let _ = writeln!(s, "        case {page}u: {{ return {name}_{page}[at]; }}");
        }
        let _ = writeln!(s, "        default: {{ return {name}_0[at]; }}\n    }}\n}}");
        if access == Access::ReadWrite {
            let _ = writeln!(s, "fn store_{name}(slot: u32, e: u32, v: {value}) {{\n    let page = slot / {per}u;\n    let at = (slot - page * {per}u) * {stride}u + e;\n    switch page {{");
            for page in 1..p.pages {
                let _ = writeln!(s, "        case {page}u: {{ {name}_{page}[at] = v; }}");
            }
            let _ = writeln!(s, "        default: {{ {name}_0[at] = v; }}\n    }}\n}}");
        }
    }
    s
}

/// The pose kernels' resident and frame bindings 0–6, the interpreter's shape table and the
/// history buffer.
fn pose_bindings(shapes: bool, history: Option<Paging>) -> (String, Vec<Binding>, u32) {
    let mut list = vec![
        (
            Resource::Params,
            Access::Uniform,
            "var<uniform> params: PoseParams".to_string(),
        ),
        (
            Resource::Tables,
            Access::Read,
            "var<storage, read> tables: array<u32>".to_string(),
        ),
        (
            Resource::Tracks,
            Access::Read,
            "var<storage, read> tracks: array<vec4<u32>>".to_string(),
        ),
        (
            Resource::Pool,
            Access::Read,
            "var<storage, read> pool: array<vec4<f32>>".to_string(),
        ),
        (
            Resource::Records,
            Access::Read,
            "var<storage, read> records: array<vec4<u32>>".to_string(),
        ),
        (
            Resource::Kinds,
            Access::Read,
            "var<storage, read> kinds: array<KindRow>".to_string(),
        ),
        (
            Resource::Decoded,
            Access::Read,
            "var<storage, read> decoded: array<vec4<f32>>".to_string(),
        ),
        (
            Resource::DecodeTable,
            Access::Read,
            "var<storage, read> decode_table: array<u32>".to_string(),
        ),
    ];
    if shapes {
        list.push((
            Resource::Shapes,
            Access::Read,
            "var<storage, read> shapes: array<vec4<u32>>".to_string(),
        ));
    }
    for page in 0..history.map_or(0, |h| h.pages.max(1)) {
        list.push((
            Resource::History(page),
            Access::ReadWrite,
            format!("var<storage, read_write> history_{page}: array<vec4<f32>>"),
        ));
    }
    let mut s = String::new();
    let mut bindings = Vec::new();
    for (i, (resource, access, decl)) in list.into_iter().enumerate() {
        let _ = writeln!(s, "@group(0) @binding({i}) {decl};");
        bindings.push(Binding {
            binding: i as u32,
            resource,
            access,
        });
    }
    let next = bindings.len() as u32;
    (s, bindings, next)
}

/// The output streams a pose kernel with `outputs` writes, and (`interpreter`) reads back.
fn pose_streams(outputs: Outputs) -> Vec<(Stream, Access)> {
    let mut streams = Vec::new();
    if outputs.locals {
        streams.push((Stream::Locals, Access::ReadWrite));
    }
    if outputs.components {
        streams.push((Stream::Components, Access::ReadWrite));
    }
    if outputs.palettes && outputs.components {
        streams.push((Stream::Palettes, Access::ReadWrite));
    }
    if outputs.curves {
        streams.push((Stream::Curves, Access::ReadWrite));
    }
    streams
}

/// Everything before a pose kernel's body: prelude, math, bindings, sampling, accessors.
fn pose_head(
    layout: &FrameLayout,
    outputs: Outputs,
    shapes: bool,
    history: bool,
) -> (String, Vec<Binding>) {
    let history = history.then_some(layout.history);
    let (decls, mut bindings, mut next) = pose_bindings(shapes, history);
    let mut accessors = stream_bindings(layout, &pose_streams(outputs), &mut next, &mut bindings);
    if outputs.curves {
        // A kind with more channels than the stream holds writes only what fits (the host
        // refuses such frames; this keeps a missed check inside the buffer).
        let _ = writeln!(
            accessors,
            "fn curve_channels() -> u32 {{\n    return min(kind.curve_count, {}u);\n}}",
            layout.curves.stride
        );
    }
    if let Some(h) = history {
        accessors.push_str(&history_accessors(h));
    }
    let source = [
        crate::prelude::source().as_str(),
        MATH,
        KINDS,
        POSE_COMMON,
        &decls,
        SAMPLE,
        CURVES,
        CODEC,
        INERTIALIZE,
        &accessors,
    ]
    .join("\n");
    (source, bindings)
}

/// `load_history(slot, j)` and `store_history(slot, j, offset)` over the history's pages
/// (a `switch` on the page only when there is more than one).
fn history_accessors(h: Paging) -> String {
    let (joints, per) = (h.stride, h.page_instances.max(1));
    let load = |p: u32| {
        format!(
            "Offset(history_{p}[at].xyz, history_{p}[at + 1u].xyz, history_{p}[at + 2u].xyz, \
             history_{p}[at + 3u].xyz, history_{p}[at + 4u].xyz, history_{p}[at + 5u].xyz)"
        )
    };
    let store = |p: u32| {
        format!(
            "history_{p}[at] = vec4<f32>(o.t, 0.0); history_{p}[at + 1u] = vec4<f32>(o.tv, 0.0); \
             history_{p}[at + 2u] = vec4<f32>(o.r, 0.0); history_{p}[at + 3u] = vec4<f32>(o.rv, 0.0); \
             history_{p}[at + 4u] = vec4<f32>(o.s, 0.0); history_{p}[at + 5u] = vec4<f32>(o.sv, 0.0);"
        )
    };
    let mut s = format!(
        "fn history_at(slot: u32, j: u32) -> u32 {{
    return ((slot % {per}u) * {joints}u + j) * {HISTORY_VEC4S}u;
}}
"
    );
    if h.pages <= 1 {
        let _ = write!(
            s,
            "fn load_history(slot: u32, j: u32) -> Offset {{
    let at = history_at(slot, j);
    return {};
}}
fn store_history(slot: u32, j: u32, o: Offset) {{
    let at = history_at(slot, j);
    {}
}}
",
            load(0),
            store(0)
        );
        return s;
    }
    let cases = |f: &dyn Fn(u32) -> String| {
        (1..h.pages)
            .map(|p| format!("        case {p}u: {{ {} }}\n", f(p)))
            .collect::<String>()
            + &format!("        default: {{ {} }}\n", f(0))
    };
    let _ = write!(
        s,
        "fn load_history(slot: u32, j: u32) -> Offset {{
    let at = history_at(slot, j);
    switch slot / {per}u {{
{}    }}
}}
fn store_history(slot: u32, j: u32, o: Offset) {{
    let at = history_at(slot, j);
    switch slot / {per}u {{
{}    }}
}}
",
        cases(&|p| format!("return {};", load(p))),
        cases(&store)
    );
    s
}

/// `main` of a one-thread-per-instance pose kernel: the record at `stride` vec4s per instance,
/// the per-instance statements `hoist`, then per joint its local pose and the outputs (local
/// pose, FK through the component stream, palette entries): first the joints of the dispatch's
/// skeleton LOD level with `local`, then the dropped ones with their held pose, each group parent
/// before child. Two loops rather than a branch per joint: lavapipe ran the branch's program code
/// for dropped joints too (the same pose-pass time at every level). With curves, then each
/// curve channel's value with `curve` (at every level: curves have no skeleton LOD).
fn per_thread_main(
    outputs: Outputs,
    stride: &str,
    hoist: &str,
    local: &str,
    curve: &str,
) -> String {
    let mut body = String::new();
    if outputs.locals {
        body.push_str("        store_locals(slot, j, trs_store(local));\n");
    }
    if outputs.components {
        body.push_str(
            "        let m = trs_to_affine(local);
        let parent = tables[kind.parent_base + j];
        var c = m;
        if parent != NO_PARENT {
            c = affine_mul(load_components(slot, parent), m);
        }
        store_components(slot, j, c);
",
        );
        if outputs.palettes {
            body.push_str(
                "        if kind.skin_len > 0u {
            let first = tables[kind.skin_range_base + 2u * j];
            let count = tables[kind.skin_range_base + 2u * j + 1u];
            for (var e = first; e < first + count; e++) {
                let k = tables[kind.skin_order_base + e];
                store_palettes(slot, k, affine_mul(c, inverse_bind(k)));
            }
        }
",
            );
        }
    }
    let curves = if outputs.curves {
        format!(
            "    for (var ch = 0u; ch < curve_channels(); ch++) {{
        store_curves(slot, ch, {curve});
    }}
"
        )
    } else {
        String::new()
    };
    format!(
        "
@compute @workgroup_size({WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {{
    let k = gid.y * groups.x * {WORKGROUP}u + gid.x;
    if k >= params.count {{
        return;
    }}
    let rec = params.record_base + k * {stride};
    let slot = records[rec].x;
    enter_instance(records[rec].y);
{hoist}    let retained = lod_retained();
    for (var i = 0u; i < retained; i++) {{
        let j = lod_joint(i);
        let rest = rest_joint(j);
        let local = {local};
{body}    }}
    for (var i = retained; i < kind.joint_count; i++) {{
        let j = lod_joint(i);
        let local = held_joint(j);
{body}    }}
{curves}}}
"
    )
}

/// The general interpreter: any shape (the shape table at `params.shape_base`), any skeleton.
pub fn interpreter(layout: &FrameLayout, outputs: Outputs) -> Kernel {
    let (head, bindings) = pose_head(layout, outputs, true, true);
    let main = per_thread_main(
        outputs,
        "params.record_stride",
        "",
        "interpret(rec, j, rest)",
        "interpret_curve(rec, ch)",
    );
    Kernel {
        label: format!("pose interpreter {}", variant(outputs)),
        source: [head.as_str(), INTERPRETER, &main].join("\n"),
        bindings,
        workgroup: WORKGROUP,
    }
}

fn variant(o: Outputs) -> String {
    let mut v = Vec::new();
    if o.locals {
        v.push("locals");
    }
    if o.components {
        v.push("components");
    }
    if o.palettes {
        v.push("palettes");
    }
    if o.curves {
        v.push("curves");
    }
    v.join("+")
}

/// A shape as values: each op's result is one node; registers are resolved away.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    Rest,
    Sample {
        word: u32,
        encoding: u32,
    },
    Blend {
        inputs: Vec<usize>,
        word: u32,
    },
    /// `curves`: the layer's curve selection (`ShapeOp::d`).
    Override {
        dst: usize,
        src: usize,
        mask: u32,
        curves: u32,
        word: u32,
    },
    Additive {
        dst: usize,
        src: usize,
        reference: usize,
        mask: u32,
        curves: u32,
        word: u32,
    },
    /// Writes history; its value is the captured offset.
    Capture {
        dst: usize,
        src: usize,
        prev: usize,
        prev_dst: usize,
        word: u32,
    },
    /// `captured`: the shape's earlier `Capture`, whose offset it adds without a history load.
    Inertialize {
        dst: usize,
        captured: Option<usize>,
        word: u32,
    },
}

/// The nodes of `shape` and the node its `ToComponent` converts. A register read before any
/// write (validation rules it out) reads as the rest pose.
fn nodes(shape: &Shape) -> (Vec<Node>, usize) {
    let mut nodes = vec![Node::Rest];
    let mut regs: Vec<usize> = Vec::new();
    let reg = |regs: &Vec<usize>, r: u32| regs.get(r as usize).copied().unwrap_or(0);
    let mut output = 0;
    let mut captured = None;
    for o in &shape.ops {
        let node = match o.code {
            op::REST => Node::Rest,
            op::SAMPLE => Node::Sample {
                word: o.word,
                encoding: o.encoding,
            },
            op::BLEND => Node::Blend {
                inputs: (0..o.b).map(|k| reg(&regs, o.a + k)).collect(),
                word: o.word,
            },
            op::OVERRIDE => Node::Override {
                dst: reg(&regs, o.dst),
                src: reg(&regs, o.a),
                mask: o.c,
                curves: o.d,
                word: o.word,
            },
            op::ADDITIVE => Node::Additive {
                dst: reg(&regs, o.dst),
                src: reg(&regs, o.a),
                reference: reg(&regs, o.b),
                mask: o.c,
                curves: o.d,
                word: o.word,
            },
            op::TO_COMPONENT => {
                output = reg(&regs, o.a);
                continue;
            }
            op::CAPTURE => {
                nodes.push(Node::Capture {
                    dst: reg(&regs, o.dst),
                    src: reg(&regs, o.a),
                    prev: reg(&regs, o.b),
                    prev_dst: reg(&regs, o.d),
                    word: o.word,
                });
                captured = Some(nodes.len() - 1);
                continue;
            }
            op::INERTIALIZE => Node::Inertialize {
                dst: reg(&regs, o.dst),
                captured,
                word: o.word,
            },
            _ => continue,
        };
        nodes.push(node);
        if regs.len() <= o.dst as usize {
            regs.resize(o.dst as usize + 1, 0);
        }
        regs[o.dst as usize] = nodes.len() - 1;
    }
    (nodes, output)
}

/// Nodes the output and the history writes depend on; with `curves`, the nodes the output's
/// curves depend on: captures touch no curve and an inertialization passes its destination's
/// curves through, so these are some of the joints' live nodes, never more.
fn live(nodes: &[Node], output: usize, curves: bool) -> Vec<bool> {
    let mut live: Vec<bool> = nodes
        .iter()
        .map(|n| !curves && matches!(n, Node::Capture { .. }))
        .collect();
    live[output] = true;
    for n in (0..nodes.len()).rev() {
        if !live[n] {
            continue;
        }
        let inputs: Vec<usize> = match &nodes[n] {
            Node::Blend { inputs, .. } => inputs.clone(),
            Node::Override { dst, src, .. } => vec![*dst, *src],
            Node::Additive {
                dst,
                src,
                reference,
                ..
            } => vec![*dst, *src, *reference],
            Node::Capture {
                dst,
                src,
                prev,
                prev_dst,
                ..
            } => vec![*dst, *src, *prev, *prev_dst],
            Node::Inertialize { dst, .. } if curves => vec![*dst],
            Node::Inertialize { dst, captured, .. } => {
                [Some(*dst), *captured].into_iter().flatten().collect()
            }
            _ => Vec::new(),
        };
        for i in inputs {
            live[i] = true;
        }
    }
    live
}

/// The live masked layers of a shape (their nodes), in order: each reads its mask id from the
/// record, after its weight.
fn masked_layers(nodes: &[Node], live: &[bool]) -> Vec<usize> {
    (nodes.iter().enumerate())
        .filter(|&(n, node)| {
            live[n]
                && matches!(node, Node::Override { mask, .. } | Node::Additive { mask, .. }
                    if *mask != NO_MASK)
        })
        .map(|(n, _)| n)
        .collect()
}

/// `hoist(rec)` (per-instance values: clip headers, brackets, weights) and `shape_joint(h, joint,
/// rest, mask_m...)` (one joint's local pose) of `shape`, straight-line; with `decoded`, its
/// compressed samples read the decode cache (every clip they sample is in it), else they decode
/// from the stream. Only one of the two is compiled in: lavapipe runs both sides of a branch.
fn shape_functions(shape: &Shape, decoded: bool) -> (String, Vec<usize>) {
    let (nodes, output) = nodes(shape);
    let live = live(&nodes, output, false);
    let masks = masked_layers(&nodes, &live);
    let word = |w: u32| format!("r{}.{}", w / 4, ["x", "y", "z", "w"][(w % 4) as usize]);
    let f32_word = |w: u32| format!("bitcast<f32>({})", word(w));
    let mut fields = vec!["pad: u32".to_string()];
    let mut values = vec!["0u".to_string()];
    let mut hoist = String::new();
    let mut blends = String::new();
    let mut joint = String::new();
    let mut vec4s = std::collections::BTreeSet::new();
    let mut store = None;
    // A masked layer's mask id, the record word after its weight: once per instance.
    let mut masked_words = Vec::new();
    let mut hoist_mask = |n: usize, m: u32, w: u32| {
        if m != NO_MASK {
            masked_words.push((n, w + 1));
        }
    };
    let mask_arg = |n: usize, m: u32| {
        if m == NO_MASK {
            String::new()
        } else {
            format!(" * mask_{n}")
        }
    };
    for (n, node) in nodes.iter().enumerate() {
        if !live[n] {
            continue;
        }
        let value = match node {
            Node::Rest => "rest".to_string(),
            Node::Sample { word: w, encoding } => {
                vec4s.insert(w / 4);
                vec4s.insert((w + 1) / 4);
                fields.push(format!("c{n}: Clip"));
                fields.push(format!("b{n}: Bracket"));
                let _ = writeln!(hoist, "    let c{n} = clip_header({});", word(*w));
                let _ = writeln!(hoist, "    let b{n} = bracket(c{n}, {});", f32_word(w + 1));
                values.push(format!("c{n}"));
                values.push(format!("b{n}"));
                let compressed = *encoding == throng_cpu_ref::clip::encoding::COMPRESSED;
                if compressed && decoded {
                    // The clip's place in the decode cache: once per instance.
                    fields.push(format!("d{n}: u32"));
                    let _ = writeln!(hoist, "    let d{n} = decode_entry({});", word(*w));
                    values.push(format!("d{n}"));
                    format!("sample_decoded(h.c{n}, h.b{n}, h.d{n}, joint, rest)")
                } else if compressed {
                    // Where the bracket's samples lie in the stream: once per instance.
                    fields.push(format!("p{n}: CodecPair"));
                    let _ = writeln!(hoist, "    let p{n} = codec_pair(c{n}, b{n});");
                    values.push(format!("p{n}"));
                    format!("sample_compressed(h.c{n}, h.b{n}, h.p{n}, joint, rest)")
                } else {
                    format!("sample_reference(h.c{n}, h.b{n}, joint, rest)")
                }
            }
            Node::Blend { inputs, word: w } => {
                let sum: Vec<String> = (0..inputs.len() as u32)
                    .map(|k| {
                        vec4s.insert((w + k) / 4);
                        f32_word(w + k)
                    })
                    .collect();
                let _ = writeln!(hoist, "    let s{n} = {};", sum.join(" + "));
                fields.push(format!("z{n}: bool"));
                values.push(format!("s{n} < BLEND_EPSILON"));
                for (k, w) in sum.iter().enumerate() {
                    fields.push(format!("n{n}_{k}: f32"));
                    values.push(format!("{w} / s{n}"));
                }
                let params: Vec<String> = (0..inputs.len()).map(|k| format!("x{k}: Trs")).collect();
                let _ = writeln!(
                    blends,
                    "fn blend_{n}(h: Hoisted, {}, rest: Trs) -> Trs {{",
                    params.join(", ")
                );
                let _ = writeln!(blends, "    if h.z{n} {{\n        return rest;\n    }}");
                let _ = writeln!(blends, "    var t = x0.t * h.n{n}_0;\n    var q = x0.q * h.n{n}_0;\n    var s = x0.s * h.n{n}_0;");
                for k in 1..inputs.len() {
                    let _ = writeln!(blends, "    t += x{k}.t * h.n{n}_{k};\n    q += hemisphere(x0.q, x{k}.q) * h.n{n}_{k};\n    s += x{k}.s * h.n{n}_{k};");
                }
                let _ = writeln!(
                    blends,
                    "    return Trs(t, blend_rotation(q, rest.q), s);\n}}"
                );
                let args: Vec<String> = inputs.iter().map(|i| format!("n{i}")).collect();
                format!("blend_{n}(h, {}, rest)", args.join(", "))
            }
            Node::Override {
                dst,
                src,
                mask,
                word: w,
                ..
            } => {
                vec4s.insert(w / 4);
                fields.push(format!("w{n}: f32"));
                values.push(f32_word(*w));
                hoist_mask(n, *mask, *w);
                format!(
                    "override_joint(n{dst}, n{src}, h.w{n}{})",
                    mask_arg(n, *mask)
                )
            }
            Node::Additive {
                dst,
                src,
                reference,
                mask,
                word: w,
                ..
            } => {
                vec4s.insert(w / 4);
                fields.push(format!("w{n}: f32"));
                values.push(f32_word(*w));
                hoist_mask(n, *mask, *w);
                format!(
                    "additive_joint(n{dst}, n{src}, n{reference}, h.w{n}{})",
                    mask_arg(n, *mask)
                )
            }
            Node::Capture {
                dst,
                src,
                prev,
                prev_dst,
                word: w,
            } => {
                vec4s.insert(w / 4);
                vec4s.insert((w + 1) / 4);
                fields.push(format!("hs{n}: u32"));
                fields.push(format!("dt{n}: f32"));
                values.push(word(*w));
                values.push(f32_word(w + 1));
                store = Some(n);
                format!("capture_joint(n{src}, n{prev}, n{dst}, n{prev_dst}, h.dt{n})")
            }
            Node::Inertialize {
                dst,
                captured,
                word: w,
            } => {
                for k in 0..3 {
                    vec4s.insert((w + k) / 4);
                }
                fields.push(format!("hs{n}: u32"));
                fields.push(format!("e{n}: f32"));
                fields.push(format!("d{n}: f32"));
                values.push(word(*w));
                values.push(f32_word(w + 1));
                values.push(f32_word(w + 2));
                let offset = match captured {
                    Some(c) => format!("n{c}"),
                    None => format!("load_history(h.hs{n}, joint)"),
                };
                format!("inertialize_joint(n{dst}, {offset}, h.e{n}, h.d{n})")
            }
        };
        let _ = writeln!(joint, "    let n{n} = {value};");
        if let Some(c) = store.take() {
            let _ = writeln!(joint, "    store_history(h.hs{c}, joint, n{c});");
        }
    }
    for &(n, w) in &masked_words {
        vec4s.insert(w / 4);
        fields.push(format!("k{n}: u32"));
        values.push(word(w));
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "struct Hoisted {{\n{}\n}}",
        fields
            .iter()
            .map(|f| format!("    {f},"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let _ = writeln!(s, "fn hoist(rec: u32) -> Hoisted {{");
    for v in &vec4s {
        let _ = writeln!(s, "    let r{v} = records[rec + {v}u];");
    }
    s.push_str(&hoist);
    let _ = writeln!(s, "    return Hoisted({});\n}}", values.join(", "));
    s.push_str(&blends);
    let mask_params: String = masks.iter().map(|n| format!(", mask_{n}: f32")).collect();
    let _ = writeln!(
        s,
        "fn shape_joint(h: Hoisted, joint: u32, rest: Trs{mask_params}) -> Trs {{"
    );
    s.push_str(&joint);
    let _ = writeln!(s, "    return n{output};\n}}");
    s.push_str(&curve_function(&nodes, output));
    (s, masks)
}

/// `shape_curve(h, rec, ch)`: the shape's curve output of channel `ch` (`interpret_curve`,
/// straight-line) over the values `hoist` gives `shape_joint` (the curves' live nodes are joint
/// nodes too, so their values are hoisted).
fn curve_function(nodes: &[Node], output: usize) -> String {
    let live = live(nodes, output, true);
    let mut f = String::from(
        "fn shape_curve(h: Hoisted, rec: u32, ch: u32) -> f32 {\n    let c = curve_channel(ch);\n",
    );
    for (n, node) in nodes.iter().enumerate() {
        if !live[n] {
            continue;
        }
        match node {
            Node::Rest => {
                let _ = writeln!(f, "    let cn{n} = rest_curve(c);");
            }
            Node::Sample { word: w, .. } => {
                let clip = format!(
                    "records[rec + {}u].{}",
                    w / 4,
                    ["x", "y", "z", "w"][(w % 4) as usize]
                );
                let _ = writeln!(f, "    let cn{n} = sample_curve({clip}, h.b{n}, ch, c);");
            }
            Node::Blend { inputs, .. } => {
                let _ = writeln!(f, "    var acc{n} = curve_blend_start();");
                for (k, i) in inputs.iter().enumerate() {
                    let _ = writeln!(
                        f,
                        "    acc{n} = curve_blend_add(acc{n}, cn{i}, h.n{n}_{k}, c.composition);"
                    );
                }
                let _ = writeln!(
                    f,
                    "    var cn{n} = curve_blend_end(acc{n}, c);\n    if h.z{n} {{\n        cn{n} = rest_curve(c);\n    }}"
                );
            }
            Node::Override {
                dst, src, curves, ..
            } => {
                let _ = writeln!(
                    f,
                    "    let cn{n} = override_curve(cn{dst}, cn{src}, h.w{n} * curve_selected({curves}u, ch), c.composition);"
                );
            }
            Node::Additive {
                dst,
                src,
                reference,
                curves,
                ..
            } => {
                let _ = writeln!(
                    f,
                    "    let cn{n} = additive_curve(cn{dst}, cn{src}, cn{reference}, h.w{n} * curve_selected({curves}u, ch), c.composition);"
                );
            }
            Node::Inertialize { dst, .. } => {
                let _ = writeln!(f, "    let cn{n} = cn{dst};");
            }
            Node::Capture { .. } => {}
        }
    }
    let _ = writeln!(f, "    return curve_output(c, cn{output}.value);\n}}");
    f
}

/// The thread mapping for `shape`: one thread per instance walking the skeleton's joints in
/// order (parent before child), FK through the component stream, the palette written inline;
/// `decoded` as for the shape's functions (the frame decoded its compressed clips first).
pub fn thread(layout: &FrameLayout, outputs: Outputs, shape: &Shape, decoded: bool) -> Kernel {
    let (head, bindings) = pose_head(layout, outputs, false, shape.uses_history());
    let (functions, masks) = shape_functions(shape, decoded);
    let weights: String = masks
        .iter()
        .map(|n| format!(", mask_weight(h.k{n}, j)"))
        .collect();
    let stride = format!("{}u", shape.record_stride());
    let main = per_thread_main(
        outputs,
        &stride,
        "    let h = hoist(rec);\n",
        &format!("shape_joint(h, j, rest{weights})"),
        "shape_curve(h, rec, ch)",
    );
    Kernel {
        label: format!("pose thread {}", variant(outputs)),
        source: [head.as_str(), &functions, &main].join("\n"),
        bindings,
        workgroup: WORKGROUP,
    }
}

/// Lanes per instance and instances per workgroup of the workgroup mapping for `joints`
/// joints; `None` when the skeleton is too large for one workgroup.
pub fn group_size(joints: u32) -> Option<(u32, u32)> {
    let lanes = joints.max(1).div_ceil(SUBGROUP) * SUBGROUP;
    if lanes > MAX_GROUP_LANES {
        return None;
    }
    Some((lanes, (WORKGROUP / lanes).max(1)))
}

/// The workgroup mapping for `shape` on skeletons of up to `lanes` joints, `instances`
/// instances per workgroup ([`group_size`]); `decoded` as for [`thread`].
pub fn group(
    layout: &FrameLayout,
    outputs: Outputs,
    shape: &Shape,
    (lanes, instances): (u32, u32),
    decoded: bool,
) -> Kernel {
    let (head, bindings) = pose_head(layout, outputs, false, shape.uses_history());
    let (functions, masks) = shape_functions(shape, decoded);
    let size = lanes * instances;
    let stride = shape.record_stride();
    let weights: String = masks
        .iter()
        .map(|n| format!(", mask_weight(h.k{n}, j)"))
        .collect();
    let locals = if outputs.locals {
        "        store_locals(slot, j, trs_store(local));\n"
    } else {
        ""
    };
    let mut tail = String::new();
    if outputs.components {
        tail.push_str(
            "    shared_c[lane] = m;
    for (var d = 1u; d <= params.max_depth; d++) {
        workgroupBarrier();
        if live && depth == d {
            shared_c[lane] = affine_mul(shared_c[first + parent], m);
        }
    }
    workgroupBarrier();
    if live {
        store_components(slot, j, shared_c[lane]);
    }
",
        );
        if outputs.palettes {
            let _ = write!(
                tail,
                "    if k < params.count {{
        for (var e = j; e < kind.skin_len; e += {lanes}u) {{
            let joint = tables[kind.skin_joint_base + e];
            store_palettes(slot, e, affine_mul(shared_c[first + joint], inverse_bind(e)));
        }}
    }}
"
            );
        }
    }
    if outputs.curves {
        let _ = write!(
            tail,
            "    if k < params.count && j < curve_channels() {{
        let h = hoist(rec);
        for (var ch = j; ch < curve_channels(); ch += {lanes}u) {{
            store_curves(slot, ch, shape_curve(h, rec, ch));
        }}
    }}
"
        );
    }
    let source = format!(
        "{head}
{functions}
var<workgroup> shared_c: array<Affine, {size}>;

@compute @workgroup_size({size})
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {{
    let g = lane / {lanes}u;
    let j = lane - g * {lanes}u;
    let first = g * {lanes}u;
    let k = (wg.y * groups.x + wg.x) * {instances}u + g;
    let rec = params.record_base + k * {stride}u;
    var slot = 0u;
    var m = IDENTITY_AFFINE;
    var parent = 0u;
    var depth = 0u;
    if k < params.count {{
        slot = records[rec].x;
        enter_instance(records[rec].y);
    }}
    let live = k < params.count && j < kind.joint_count;
    if live {{
        var local: Trs;
        if retained(j) {{
            let h = hoist(rec);
            local = shape_joint(h, j, rest_joint(j){weights});
        }} else {{
            local = held_joint(j);
        }}
{locals}        m = trs_to_affine(local);
        parent = tables[kind.parent_base + j];
        depth = tables[kind.depth_base + j];
    }}
{tail}}}
"
    );
    Kernel {
        label: format!("pose group {lanes}x{instances} {}", variant(outputs)),
        source,
        bindings,
        workgroup: size,
    }
}

/// The skinning pass: one thread per (instance, vertex), a dispatch per skinned batch; with
/// `motion` it also writes each vertex's previous position (motion.wgsl). With `morph` it is the
/// morph pass instead (morph.wgsl, reading the curve stream): the same grid, writing only the
/// vertices morph targets move, morphed before skinning.
pub fn skinning(layout: &FrameLayout, motion: bool, morph: bool) -> Kernel {
    let mut resources = vec![
        (Resource::Params, Access::Uniform),
        (Resource::Vertices, Access::Read),
        (Resource::Placements, Access::Read),
        (Resource::Ranks, Access::Read),
        (Resource::Order, Access::Read),
        (Resource::Units, Access::Read),
    ];
    let mut decls = "@group(0) @binding(0) var<uniform> params: SkinParams;
@group(0) @binding(1) var<storage, read> vertices: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> placements: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> ranks: array<u32>;
@group(0) @binding(4) var<storage, read> order: array<u32>;
@group(0) @binding(5) var<storage, read> units: array<UnitRow>;
"
    .to_string();
    let mut streams = vec![
        (Stream::Palettes, Access::Read),
        (Stream::Skinned, Access::ReadWrite),
    ];
    if motion {
        resources.extend([
            (Resource::LastPlacements, Access::Read),
            (Resource::Resets, Access::Read),
        ]);
        decls.push_str(
            "@group(0) @binding(6) var<storage, read> last_placements: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read> resets: array<u32>;
",
        );
        streams.extend([
            (Stream::LastPalettes, Access::Read),
            (Stream::Previous, Access::ReadWrite),
        ]);
    }
    if morph {
        morph_bindings(&mut resources, &mut decls, &mut streams);
    }
    let mut bindings = numbered(&resources);
    let mut next = resources.len() as u32;
    let accessors = stream_bindings(layout, &streams, &mut next, &mut bindings);
    let hook = if motion { MOTION } else { NO_MOTION };
    let morph_hook = if morph {
        [MORPH, MORPH_PASS].join("\n")
    } else {
        NO_MORPH_HOOK.to_string()
    };
    let source = [
        crate::prelude::source().as_str(),
        MATH,
        KINDS,
        &decls,
        &accessors,
        hook,
        &morph_hook,
        SKINNING,
    ]
    .join("\n");
    Kernel {
        label: match (morph, motion) {
            (false, false) => "skinning",
            (false, true) => "skinning with motion",
            (true, false) => "morph targets",
            (true, true) => "morph targets with motion",
        }
        .into(),
        source,
        bindings,
        workgroup: WORKGROUP,
    }
}

/// skinning.wgsl's hooks in the skinning pass: every vertex of the level, unmorphed.
const NO_MORPH_HOOK: &str = "const RUN_START: u32 = 2u;
const RUN_TOTAL: u32 = 3u;
fn run_blocks(row: UnitRow) -> u32 { return row.blocks; }
fn run_first(row: UnitRow) -> u32 { return 0u; }
fn run_end(row: UnitRow) -> u32 { return row.vertex_count; }
fn run_rank(u: u32, i: u32) -> u32 { return ranks[4u * u] + i; }
struct Morphing { none: u32 }
fn morph_begin(row: UnitRow, slot: u32) -> Morphing { return Morphing(0u); }
fn morph_vertex(m: Morphing, v: u32, bind: array<vec3<f32>, 2>) -> array<vec3<f32>, 2> { return bind; }
";

/// What morph.wgsl reads in the skinning pass besides the vertices it binds anyway, added to its
/// `resources` (declared in `decls`, numbered after those there) and `streams`: the slots' kind
/// words (a hero's flag) and the curve stream.
fn morph_bindings(
    resources: &mut Vec<(Resource, Access)>,
    decls: &mut String,
    streams: &mut Vec<(Stream, Access)>,
) {
    let _ = writeln!(
        decls,
        "@group(0) @binding({}) var<storage, read> slot_kinds: array<u32>;",
        resources.len()
    );
    resources.push((Resource::SlotKinds, Access::Read));
    streams.push((Stream::Curves, Access::Read));
}

const NO_MOTION: &str = "fn motion(out: u32, slot: u32, v: u32, joints: vec4<u32>, w: vec4<f32>, p: vec3<f32>, position: vec3<f32>, skin_len: u32) {}\n";

/// The bounds pass: one thread per frame slot, one dispatch; it culls, and marks the slots it
/// sees with their significance keys.
/// With `morph`, boxes widen by the slot's morph targets (morph.wgsl, reading the curve
/// stream).
pub fn bounds(layout: &FrameLayout, morph: bool) -> Kernel {
    let mut decls = "@group(0) @binding(0) var<uniform> params: BoundsParams;
@group(0) @binding(1) var<storage, read> tables: array<u32>;
@group(0) @binding(2) var<storage, read> pool: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> placements: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> bounds: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> marks: array<u32>;
@group(0) @binding(6) var<storage, read_write> histogram: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read> slot_kinds: array<u32>;
@group(0) @binding(8) var<storage, read> kinds: array<KindRow>;
"
    .to_string();
    let mut resources = vec![
        (Resource::Params, Access::Uniform),
        (Resource::Tables, Access::Read),
        (Resource::Pool, Access::Read),
        (Resource::Placements, Access::Read),
        (Resource::Bounds, Access::ReadWrite),
        (Resource::Marks, Access::ReadWrite),
        (Resource::Groups, Access::ReadWrite),
        (Resource::SlotKinds, Access::Read),
        (Resource::Kinds, Access::Read),
    ];
    if morph {
        // The morph targets' rows (morph.wgsl).
        decls.push_str("@group(0) @binding(9) var<storage, read> vertices: array<vec4<u32>>;\n");
        resources.push((Resource::Vertices, Access::Read));
    }
    palette_reader(
        "bounds",
        layout,
        &resources,
        &decls,
        morph.then_some(Stream::Curves),
        &[KINDS, if morph { MORPH } else { NO_MORPH_BOUNDS }, BOUNDS],
    )
}

const NO_MORPH_BOUNDS: &str =
    "fn morph_bounds_reach(k: KindRow, slot: u32, hero: bool) -> f32 { return 0.0; }
fn morph_norm2(reach: f32, a: Affine) -> f32 { return 0.0; }
fn morph_pad(reach: f32, norm2: f32, placement: Affine) -> f32 { return 0.0; }
";

/// The attachments pass: one thread per (rank of the skinned pool, attachment), one dispatch
/// per frame; it places every prop from its instance's palette (attach.wgsl).
pub fn attachments(layout: &FrameLayout) -> Kernel {
    let decls = "@group(0) @binding(0) var<uniform> params: AttachParams;
@group(0) @binding(1) var<storage, read> ranks: array<u32>;
@group(0) @binding(2) var<storage, read> order: array<u32>;
@group(0) @binding(3) var<storage, read> placements: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> table: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> props: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> draws: array<u32>;
@group(0) @binding(7) var<storage, read> units: array<UnitRow>;
";
    palette_reader(
        "attachments",
        layout,
        &[
            (Resource::Params, Access::Uniform),
            (Resource::Ranks, Access::Read),
            (Resource::Order, Access::Read),
            (Resource::Placements, Access::Read),
            (Resource::AttachTable, Access::Read),
            (Resource::Props, Access::ReadWrite),
            (Resource::PropDraws, Access::ReadWrite),
            (Resource::Units, Access::Read),
        ],
        decls,
        None,
        &[KINDS, ATTACH],
    )
}

/// A one-dispatch-per-batch kernel over frame slots that reads their palettes: `resources`
/// (binding `n` is the `n`-th, declared by `decls`), then the palette pages and their
/// `load_palettes` (and those of stream `also`), then `body`.
fn palette_reader(
    label: &str,
    layout: &FrameLayout,
    resources: &[(Resource, Access)],
    decls: &str,
    also: Option<Stream>,
    body: &[&str],
) -> Kernel {
    let mut bindings = numbered(resources);
    let mut next = resources.len() as u32;
    let mut streams = vec![(Stream::Palettes, Access::Read)];
    streams.extend(also.map(|s| (s, Access::Read)));
    let accessors = stream_bindings(layout, &streams, &mut next, &mut bindings);
    let prelude = crate::prelude::source();
    let head = [prelude.as_str(), MATH, decls, &accessors];
    Kernel {
        label: label.into(),
        source: head
            .iter()
            .chain(body)
            .copied()
            .collect::<Vec<_>>()
            .join("\n"),
        bindings,
        workgroup: WORKGROUP,
    }
}

/// Bindings `0..` of `resources`, in order.
fn numbered(resources: &[(Resource, Access)]) -> Vec<Binding> {
    resources
        .iter()
        .enumerate()
        .map(|(b, &(resource, access))| Binding {
            binding: b as u32,
            resource,
            access,
        })
        .collect()
}

/// A one-dispatch kernel of `resources` (binding `n` is the `n`-th), from the prelude and
/// `body`.
fn single(label: &str, resources: &[(Resource, Access)], body: &str) -> Kernel {
    Kernel {
        label: label.into(),
        source: [crate::prelude::source().as_str(), body].join("\n"),
        bindings: numbered(resources),
        workgroup: WORKGROUP,
    }
}

/// The decode pass: a package's most-sampled compressed clips decoded into the decode cache
/// (decode.wgsl), one dispatch per package.
pub fn decode() -> Kernel {
    let decls = "@group(0) @binding(0) var<uniform> params: DecodeParams;
@group(0) @binding(1) var<storage, read> tables: array<u32>;
@group(0) @binding(2) var<storage, read> tracks: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> pool: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> decode_table: array<u32>;
@group(0) @binding(5) var<storage, read_write> decoded: array<vec4<f32>>;
";
    Kernel {
        label: "decode".into(),
        source: [
            crate::prelude::source().as_str(),
            MATH,
            decls,
            SAMPLE,
            CODEC,
            DECODE,
        ]
        .join("\n"),
        bindings: numbered(&[
            (Resource::Params, Access::Uniform),
            (Resource::Tables, Access::Read),
            (Resource::Tracks, Access::Read),
            (Resource::Pool, Access::Read),
            (Resource::DecodeTable, Access::Read),
            (Resource::Decoded, Access::ReadWrite),
        ]),
        workgroup: WORKGROUP,
    }
}

/// The present pass: retained instances' placements and records blended between their last
/// two ticks (present.wgsl), one thread per frame slot.
pub fn present() -> Kernel {
    single(
        "present",
        &[
            (Resource::Params, Access::Uniform),
            (Resource::Tables, Access::Read),
            (Resource::Kinds, Access::Read),
            (Resource::SlotKinds, Access::Read),
            (Resource::Statics, Access::Read),
            (Resource::Values, Access::Read),
            (Resource::PlacementsIn, Access::Read),
            (Resource::Placements, Access::ReadWrite),
            (Resource::Bins, Access::Read),
            (Resource::Shapes, Access::Read),
            (Resource::Fill, Access::ReadWrite),
            (Resource::Records, Access::ReadWrite),
            (Resource::Clocks, Access::ReadWrite),
        ],
        &[MATH, KINDS, PRESENT].join("\n"),
    )
}

/// The patch pass: rows and record templates of retained instances whose program changed
/// (patch.wgsl).
pub fn patch() -> Kernel {
    single(
        "patch",
        &[
            (Resource::Params, Access::Uniform),
            (Resource::Patches, Access::Read),
            (Resource::Statics, Access::ReadWrite),
        ],
        PATCH,
    )
}

/// The skinned budget: ranks of the seen instances in frame-slot order (one workgroup).
pub fn budget() -> Kernel {
    single(
        "skinned budget",
        &[
            (Resource::Params, Access::Uniform),
            (Resource::Groups, Access::ReadWrite),
            (Resource::Ranks, Access::ReadWrite),
            (Resource::Indirect, Access::ReadWrite),
        ],
        &[SCAN, BUDGET].join("\n"),
    )
}

/// The skinned order by unit and the indirect arguments (one workgroup per unit); with `morph`
/// also the morph pass's list of instances whose targets weigh anything (morph.wgsl, reading the
/// curve stream).
pub fn partition(layout: &FrameLayout, morph: bool) -> Kernel {
    let mut resources = vec![
        (Resource::Params, Access::Uniform),
        (Resource::Units, Access::Read),
        (Resource::Kinds, Access::Read),
        (Resource::SlotKinds, Access::Read),
        (Resource::Budgeted, Access::Read),
        (Resource::Ranks, Access::ReadWrite),
        (Resource::Order, Access::ReadWrite),
        (Resource::Indirect, Access::ReadWrite),
    ];
    if !morph {
        return single(
            "skinned order by level",
            &resources,
            &[KINDS, SCAN, NO_MORPH_PARTITION, PARTITION].join("\n"),
        );
    }
    // The morph targets' rows and weights (morph.wgsl).
    let decls = "@group(0) @binding(8) var<storage, read> vertices: array<vec4<u32>>;\n";
    resources.push((Resource::Vertices, Access::Read));
    let mut bindings = numbered(&resources);
    let mut next = resources.len() as u32;
    let streams = [(Stream::Curves, Access::Read)];
    let accessors = stream_bindings(layout, &streams, &mut next, &mut bindings);
    let prelude = crate::prelude::source();
    Kernel {
        label: "skinned order by level with morph targets".into(),
        source: [
            prelude.as_str(),
            MATH,
            KINDS,
            SCAN,
            decls,
            &accessors,
            MORPH,
            PARTITION,
        ]
        .join("\n"),
        bindings,
        workgroup: WORKGROUP,
    }
}

/// partition.wgsl's morph hooks when no resident skin has morph targets.
const NO_MORPH_PARTITION: &str = "const MORPHS: bool = false;
fn morph_run(row: UnitRow, slot: u32) -> u32 { return 0u; }
";

/// The skinned instances (the most significant, in frame-slot order) and the cards of the
/// rest: one thread per frame slot.
pub fn scatter() -> Kernel {
    single(
        "budgeted instances and cards",
        &[
            (Resource::Params, Access::Uniform),
            (Resource::Marks, Access::Read),
            (Resource::Groups, Access::Read),
            (Resource::Budgeted, Access::ReadWrite),
            (Resource::SlotKinds, Access::Read),
            (Resource::Placements, Access::Read),
            (Resource::Clocks, Access::Read),
            (Resource::FarTier, Access::Read),
            (Resource::Cards, Access::ReadWrite),
            (Resource::Ranks, Access::ReadWrite),
        ],
        &[SCAN, SCATTER].join("\n"),
    )
}

/// The budget's threshold key and each bounds workgroup's tallies: one thread per frame slot.
pub fn tally() -> Kernel {
    single(
        "skinned budget threshold",
        &[
            (Resource::Params, Access::Uniform),
            (Resource::Marks, Access::Read),
            (Resource::Groups, Access::ReadWrite),
        ],
        &[SCAN, TALLY].join("\n"),
    )
}
