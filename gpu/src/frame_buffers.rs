//! The frame's buffers, sized once from [`Capacities`]: seven per-instance streams, cut
//! into pages (throng-shaders `FrameLayout`), the per-frame inputs (records, placements,
//! dispatch parameters), the animated bounds, the inertialization history and the decode cache.
//!
//! [`STREAMS`] is the one table of per-instance outputs: each stream's element, elements per
//! instance and instance capacity. Buffer sizes, page sizes, the shaders' strides and readback
//! all derive from it.

use throng_cpu_ref::Outputs;
use throng_shaders::prelude::{FAR_HEADER, GROUP_BASE};
use throng_shaders::{FrameLayout, Paging, Stream};

use crate::attach::AttachBuffers;
use crate::capacity::Capacities;
use crate::layout::{align_up, OFFSET_ALIGNMENT};
use crate::GpuError;

/// Bytes of one joint's inertialization offset in the history buffer.
pub const HISTORY_JOINT_BYTES: u64 = 16 * throng_shaders::HISTORY_VEC4S as u64;

/// Bytes of one slot's animated bounds.
pub const BOUNDS_BYTES: u64 = 32;

/// Per stream: elements per instance and instances, from the capacities and the optional
/// outputs the runtime keeps (local poses, motion vectors).
pub(crate) fn stream_extent(s: Stream, c: &Capacities, o: Outputs) -> (u32, u32) {
    let kept = |on: bool, n: u32| if on { n } else { 0 };
    match s {
        Stream::Locals => (c.joints, kept(o.locals, c.instances)),
        Stream::Components => (c.joints, c.instances),
        Stream::Palettes => (c.palette, c.instances),
        Stream::Skinned => (c.vertices, c.skinned_instances),
        Stream::LastPalettes => (c.palette, kept(o.motion, c.instances)),
        Stream::Previous => (c.vertices, kept(o.motion, c.skinned_instances)),
        Stream::Curves => (c.curves, kept(c.curves > 0, c.instances)),
    }
}

/// The streams as a table: `(stream, label)`; element types and sizes come from
/// [`Stream::element`], counts from [`stream_extent`].
pub(crate) const STREAMS: [(Stream, &str); 7] = [
    (Stream::Locals, "local poses"),
    (Stream::Components, "component transforms"),
    (Stream::Palettes, "palettes"),
    (Stream::Skinned, "skinned vertices"),
    (Stream::LastPalettes, "last palettes"),
    (Stream::Previous, "previous positions"),
    (Stream::Curves, "curve values"),
];

/// Bytes the streams hold per instance of a batch of `joints` joints and, when skinned, a
/// palette of `palette` entries and `vertices` vertices (locals not counted).
pub fn output_bytes(joints: u32, skin: Option<(u32, u32)>) -> u64 {
    let bytes = |s: Stream, n: u32| s.element().1 * u64::from(n);
    bytes(Stream::Components, joints)
        + skin.map_or(0, |(p, v)| {
            bytes(Stream::Palettes, p) + bytes(Stream::Skinned, v)
        })
}

/// One stream's pages.
pub(crate) struct StreamBuffers {
    pub paging: Paging,
    pub pages: Vec<wgpu::Buffer>,
    /// Bytes per instance.
    pub instance_bytes: u64,
}

impl StreamBuffers {
    /// Page and byte offset of element `e` of slot `slot`.
    pub fn locate(&self, slot: u32, e: u32) -> (usize, u64) {
        let per = self.paging.page_instances.max(1);
        let page = slot / per;
        let element = self.instance_bytes / u64::from(self.paging.stride.max(1));
        let at = u64::from(slot - page * per) * self.instance_bytes + u64::from(e) * element;
        (page as usize, at)
    }
}

/// Bytes of one card (raster.wgsl `Card`, [`crate::impostor::Card`]).
pub(crate) const CARD_BYTES: u64 = std::mem::size_of::<crate::impostor::Card>() as u64;

/// Clips of one package the far tier's table holds.
pub(crate) const FAR_MAX_CLIPS: u32 = 1024;

/// Words of the far tier's table.
pub(crate) fn far_words() -> u32 {
    FAR_HEADER + 4 * FAR_MAX_CLIPS
}

/// What culling, the skinned budget and the indirect dispatches and draws use (docs/gpu.md,
/// "Culling and the skinned budget").
pub(crate) struct CullBuffers {
    /// Per frame slot, its visibility mark (u32; zeroed at the start of each frame).
    pub marks: wgpu::Buffer,
    /// The significance histogram (`SIGNIFICANCE_BUCKETS` u32, zeroed at the start of each
    /// frame), the budget's threshold key and the slots it takes there, then from `GROUP_BASE`
    /// per bounds workgroup its tallies (seen, above the threshold, at it; then the counts of
    /// the workgroups before) (u32; tally.wgsl).
    pub groups: wgpu::Buffer,
    /// Per frame slot its clock: the clip and time of the first clip its program samples (two
    /// u32; present.wgsl, or the host in a frame of batches).
    pub clocks: wgpu::Buffer,
    /// The far tier's impostor table (`FAR_HEADER` u32, then four per clip; scatter.wgsl,
    /// [`crate::Runtime::set_far_tier`]).
    pub far: wgpu::Buffer,
    /// The cards of the visible slots past the skinned budget (48 bytes each, raster.wgsl
    /// `Card`), one per frame slot at most; the card draw's arguments are in `indirect` at
    /// [`CullBuffers::card_base`].
    pub cards: wgpu::Buffer,
    /// Per unit (a skinned kind at one level of detail; partition.wgsl) (first rank, skinned,
    /// first skinning workgroup, first morph-pass workgroup), per draw its first instance within
    /// its page, then from [`CullBuffers::total_base`] the frame's (carded, skinned, seen,
    /// skinning workgroups, morph-pass workgroups) (u32).
    pub ranks: wgpu::Buffer,
    /// Where each frame's per-unit ranks and totals are copied for
    /// [`crate::Runtime::visibility`].
    pub counts: wgpu::Buffer,
    /// Per rank of the skinned pool, the frame slot the budget chose there, in frame-slot
    /// order (u32).
    pub budgeted: wgpu::Buffer,
    /// Per rank of the skinned pool, the frame slot skinned there, by level; then from
    /// [`CullBuffers::morph_list`], per unit from its first rank, the ranks of its instances the
    /// morph pass re-skins (u32).
    pub order: wgpu::Buffer,
    /// The skinning dispatch's arguments (3 u32, then one unused), the morph pass's (the same),
    /// then draw arguments from
    /// [`CullBuffers::draw_base`] (5 u32 per unit and page of the skinned pool), then the card
    /// draw's (4 u32) at [`CullBuffers::card_base`], then from [`CullBuffers::coarser_base`]
    /// per unit and page the draw of its next coarser level's triangles (5 u32).
    pub indirect: wgpu::Buffer,
    /// Units a frame may have (kinds × `LOD_TIERS`), and pages of the skinned pool.
    pub units: u32,
    pub pages: u32,
    /// Ranks of the skinned pool.
    pub pool: u32,
}

impl CullBuffers {
    /// The u32 index in `order` where the morph pass's ranks start.
    pub fn morph_list(&self) -> u32 {
        self.pool
    }

    /// The u32 index of the first draw's arguments in `indirect`.
    pub fn draw_base(&self) -> u32 {
        8
    }

    /// The u32 index of the card draw's arguments in `indirect`.
    pub fn card_base(&self) -> u32 {
        self.draw_base() + 5 * self.units * self.pages
    }

    /// The u32 index of the first coarser-level draw's arguments in `indirect`.
    pub fn coarser_base(&self) -> u32 {
        self.card_base() + 4
    }

    /// The u32 index of the first draw's first instance in `ranks`.
    pub fn rank_base(&self) -> u32 {
        4 * self.units
    }

    /// The u32 index of the frame's totals in `ranks`.
    pub fn total_base(&self) -> u32 {
        self.rank_base() + self.units * self.pages
    }
}

/// Every buffer a frame writes.
pub(crate) struct FrameBuffers {
    pub layout: FrameLayout,
    pub streams: [StreamBuffers; 7],
    /// Instance records (vec4<u32>).
    pub records: wgpu::Buffer,
    /// Placements: three rows per slot.
    pub placements: wgpu::Buffer,
    /// Motion vectors: the last frame's placements (copied from `placements` at the end of each
    /// frame) and per frame slot its reset flag (u32); 16 bytes each without motion vectors.
    pub last_placements: wgpu::Buffer,
    pub resets: wgpu::Buffer,
    /// Per frame slot its kind word (`kind | level << 24`, or `NO_KIND`).
    pub slot_kinds: wgpu::Buffer,
    /// Dispatch parameters, one 256-byte slot per dispatch.
    pub params: wgpu::Buffer,
    /// Animated bounds: per slot, min and max (two vec4<f32>), written by the bounds pass.
    pub bounds: wgpu::Buffer,
    /// Culling, the skinned budget and indirect arguments.
    pub cull: CullBuffers,
    /// Inertialization history: `history_slots` slots of `joints` joint offsets
    /// (`HISTORY_VEC4S` vec4s each), in pages of whole slots (`layout.history`). Zeroed at
    /// creation and kept across frames.
    pub history: Vec<wgpu::Buffer>,
    /// Attachments (`Runtime::set_attachments`): empty until some are set.
    pub attach: AttachBuffers,
    /// The decode cache (decode.wgsl): `decoded_samples` vec4s, rewritten each frame.
    pub decoded: wgpu::Buffer,
    /// [`Capacities::decoded_samples`] within one binding.
    pub decoded_samples: u32,
}

impl FrameBuffers {
    pub fn stream(&self, s: Stream) -> &StreamBuffers {
        &self.streams[STREAMS.iter().position(|(x, _)| *x == s).unwrap_or(0)]
    }

    /// Creates the buffers for `c` under `binding_limit` bytes per binding and `max_buffer`
    /// bytes per buffer, with the optional `outputs`.
    pub fn new(
        device: &wgpu::Device,
        c: &Capacities,
        binding_limit: u64,
        outputs: Outputs,
        adapter: &str,
    ) -> Result<FrameBuffers, GpuError> {
        let make = |label: &str, size: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: align_up(size.max(16), 16),
                usage,
                mapped_at_creation: false,
            })
        };
        let output = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        let build = |(s, label): (Stream, &str)| {
            let (per, instances) = stream_extent(s, c, outputs);
            let instance_bytes = s.element().1 * u64::from(per.max(1));
            let page_instances = (binding_limit / instance_bytes).min(u64::from(u32::MAX)) as u32;
            if page_instances == 0 {
                return Err(GpuError::BindingLimit {
                    what: s.name(),
                    bytes: instance_bytes,
                    limit: binding_limit,
                    adapter: adapter.to_string(),
                });
            }
            let pages = instances.div_ceil(page_instances).max(1);
            let paging = Paging {
                pages,
                page_instances,
                stride: per.max(1),
            };
            let pages = (0..pages)
                .map(|p| {
                    let n = instances
                        .saturating_sub(p * page_instances)
                        .min(page_instances);
                    make(label, u64::from(n) * instance_bytes, output)
                })
                .collect();
            Ok(StreamBuffers {
                paging,
                pages,
                instance_bytes,
            })
        };
        let [l, m, p, k, lp, pv, cv] = STREAMS.map(build);
        let streams = [l?, m?, p?, k?, lp?, pv?, cv?];
        let slot_bytes = u64::from(c.joints.max(1)) * HISTORY_JOINT_BYTES;
        let per_page = (binding_limit / slot_bytes).min(u64::from(u32::MAX)) as u32;
        if per_page == 0 && c.history_slots > 0 {
            return Err(GpuError::BindingLimit {
                what: "one inertialization history slot",
                bytes: slot_bytes,
                limit: binding_limit,
                adapter: adapter.to_string(),
            });
        }
        let history = Paging {
            pages: c.history_slots.div_ceil(per_page.max(1)).max(1),
            page_instances: per_page.max(1),
            stride: c.joints,
        };
        let layout = FrameLayout {
            locals: streams[0].paging,
            components: streams[1].paging,
            palettes: streams[2].paging,
            skinned: streams[3].paging,
            last_palettes: streams[4].paging,
            previous: streams[5].paging,
            curves: streams[6].paging,
            history,
        };
        let input = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let record_bytes = 16 * u64::from(c.instances) * u64::from(c.record_stride());
        let placement_bytes = 48 * u64::from(c.instances);
        let bounds_bytes = BOUNDS_BYTES * u64::from(c.instances);
        let units = crate::kinds::Kinds::unit_capacity(c.kinds);
        let pages = streams[3].paging.pages;
        let groups = c.instances.div_ceil(throng_shaders::prelude::WORKGROUP);
        let storage = wgpu::BufferUsages::STORAGE;
        let decoded_samples = c.decoded_samples.min((binding_limit / 16) as u32);
        let cull = CullBuffers {
            marks: make(
                "visibility marks",
                4 * u64::from(c.instances),
                storage | wgpu::BufferUsages::COPY_DST,
            ),
            groups: make(
                "cull workgroup tallies",
                4 * u64::from(GROUP_BASE + 4 * groups),
                storage | wgpu::BufferUsages::COPY_DST,
            ),
            clocks: make("clocks", 8 * u64::from(c.instances), input),
            far: make("far tier table", 4 * u64::from(far_words()), input),
            cards: make(
                "cards past the skinned budget",
                CARD_BYTES * u64::from(c.instances),
                storage | wgpu::BufferUsages::COPY_SRC,
            ),
            ranks: make(
                "skinned ranks",
                4 * u64::from(4 * units + units * pages + 8),
                storage | wgpu::BufferUsages::COPY_SRC,
            ),
            counts: make(
                "skinned ranks readback",
                16 * u64::from(units + 1),
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
            budgeted: make(
                "budgeted instances",
                4 * u64::from(c.skinned_instances),
                storage,
            ),
            order: make(
                "skinned order",
                4 * 2 * u64::from(c.skinned_instances),
                storage | wgpu::BufferUsages::COPY_SRC,
            ),
            indirect: make(
                "indirect arguments",
                4 * u64::from(8 + 5 * units * pages + 4 + 5 * units * pages),
                storage | wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::COPY_SRC,
            ),
            units,
            pages,
            pool: c.skinned_instances,
        };
        Ok(FrameBuffers {
            cull,
            layout,
            streams,
            records: make("instance records", record_bytes, input),
            placements: make(
                "placements",
                placement_bytes,
                input | wgpu::BufferUsages::COPY_SRC,
            ),
            last_placements: make(
                "last placements",
                if outputs.motion { placement_bytes } else { 0 },
                input,
            ),
            resets: make(
                "motion resets",
                if outputs.motion {
                    4 * u64::from(c.instances)
                } else {
                    0
                },
                input,
            ),
            slot_kinds: make("slot kinds", 4 * u64::from(c.instances), input),
            bounds: make("animated bounds", bounds_bytes, output),
            params: make(
                "dispatch parameters",
                u64::from(c.dispatches) * OFFSET_ALIGNMENT,
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            ),
            history: (0..history.pages)
                .map(|p| {
                    let slots = c
                        .history_slots
                        .saturating_sub(p * history.page_instances)
                        .min(history.page_instances);
                    let bytes = u64::from(slots) * slot_bytes;
                    make("inertialization history", bytes.max(slot_bytes), output)
                })
                .collect(),
            attach: AttachBuffers::new(device, 0, 0, 0, 0),
            decoded: make("decode cache", 16 * u64::from(decoded_samples), storage),
            decoded_samples,
        })
    }

    /// GPU memory the frame buffers hold.
    pub fn bytes(&self) -> u64 {
        let streams: u64 = self
            .streams
            .iter()
            .flat_map(|s| &s.pages)
            .map(|b| b.size())
            .sum();
        streams
            + self.records.size()
            + self.placements.size()
            + self.last_placements.size()
            + self.resets.size()
            + self.slot_kinds.size()
            + self.bounds.size()
            + [
                &self.cull.marks,
                &self.cull.groups,
                &self.cull.clocks,
                &self.cull.far,
                &self.cull.cards,
                &self.cull.ranks,
                &self.cull.counts,
                &self.cull.order,
                &self.cull.budgeted,
                &self.cull.indirect,
                &self.attach.table,
                &self.attach.props,
                &self.attach.draws,
            ]
            .iter()
            .map(|b| b.size())
            .sum::<u64>()
            + self.params.size()
            + self.history.iter().map(|b| b.size()).sum::<u64>()
            + self.decoded.size()
    }
}
