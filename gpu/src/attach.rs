//! Attachments for presentation (docs/gpu.md, "Attachments"): a prop — a small rigid mesh such
//! as a sword — on a joint of a skin, placed every frame on the GPU from each skinned
//! instance's palette by one dispatch for every prop (throng-shaders attach.wgsl) and drawn by
//! [`crate::draw::CrowdPass`] with one instanced, indirect draw per attachment.
//!
//! Conventions: a prop's mesh is in its own frame (metres); [`Attachment::offset`] maps that
//! frame into the joint's frame, so the prop's scene transform is `P · C[joint] · offset`, with
//! P the instance's placement and C its component transform. The pass gets C from the palette:
//! `C[joint] = palette[e] · inverse(inverseBind[e])`, e the joint's palette entry, the second
//! factor composed with the offset once on the host. A gameplay socket (throng-control) is the
//! same joint and offset evaluated on the CPU; an attachment is its presentation.

use glam::{Affine3A, Vec3};

use crate::draw::range;
use crate::layout::{AffineRows, OFFSET_ALIGNMENT};
use crate::resident::ResidentPackage;
use crate::{GpuContext, GpuError, PackageId, Runtime};

/// Attachments one runtime holds at most.
pub const MAX_ATTACHMENTS: usize = 16;

/// Bytes of one row of the per-frame attachment table (four vec4<f32>: the palette entry and
/// whether the attachment applies, then the map into the entry's bind space).
pub(crate) const TABLE_ROW_BYTES: u64 = 64;

/// Bytes of one prop transform (three vec4<f32> rows).
pub(crate) const PROP_BYTES: u64 = 48;

/// Bytes of one attachment's indexed indirect draw arguments (5 u32).
pub(crate) const DRAW_ARGS_BYTES: u64 = 20;

/// A small rigid triangle mesh in its own frame (metres), drawn in one colour.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PropMesh {
    pub positions: Vec<[f32; 3]>,
    /// Unit normals, one per position.
    pub normals: Vec<[f32; 3]>,
    /// Triangle list.
    pub indices: Vec<u32>,
    /// Linear RGB.
    pub colour: [f32; 3],
}

impl PropMesh {
    /// Axis-aligned boxes `(centre, half extents)` in the prop's frame, flat-shaded (four
    /// vertices per face, so each face has its own normal), in colour `colour`.
    pub fn boxes(boxes: &[(Vec3, Vec3)], colour: [f32; 3]) -> PropMesh {
        let mut mesh = PropMesh {
            colour,
            ..PropMesh::default()
        };
        for &(centre, half) in boxes {
            for axis in 0..3 {
                for sign in [-1.0f32, 1.0] {
                    let n = Vec3::AXES[axis] * sign;
                    // u × v = n, so the face winds counter-clockwise seen from outside.
                    let u = Vec3::AXES[(axis + 1) % 3] * sign;
                    let v = Vec3::AXES[(axis + 2) % 3];
                    let first = mesh.positions.len() as u32;
                    for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                        let p = centre + half * (n + u * a + v * b);
                        mesh.positions.push(p.to_array());
                        mesh.normals.push(n.to_array());
                    }
                    mesh.indices.extend([0, 1, 2, 0, 2, 3].map(|i| first + i));
                }
            }
        }
        mesh
    }
}

/// A prop on joint `joint` of skin `skin` of a resident package: every skinned instance of a
/// batch of that package and skin carries it.
#[derive(Clone, Debug, PartialEq)]
pub struct Attachment {
    pub package: PackageId,
    pub skin: u32,
    /// Skeleton joint (an index of the skin's skeleton).
    pub joint: u32,
    /// The prop's frame → the joint's frame.
    pub offset: Affine3A,
    pub mesh: PropMesh,
}

/// One prop of a frame as [`crate::Runtime::read_props`] reads it back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlacedProp {
    /// The instance's frame slot.
    pub slot: u32,
    /// The prop's frame → scene; `None` where the attachment does not apply to the
    /// instance's batch (another package or skin).
    pub transform: Option<Affine3A>,
}

/// An attachment as the pass uses it: which kinds it applies to, the palette entry of its
/// joint, and the map from the prop's frame into that entry's bind space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Resolved {
    pub package: usize,
    pub skin: u32,
    pub entry: u32,
    pub local: Affine3A,
}

impl Resolved {
    /// The table row of this attachment for a kind of `package`'s skin `skin`.
    pub fn row(&self, package: usize, skin: Option<u32>) -> [[f32; 4]; 4] {
        if package != self.package || skin != Some(self.skin) {
            return [[0.0; 4]; 4];
        }
        let [r0, r1, r2] = AffineRows::from(&self.local).rows;
        [
            [f32::from_bits(self.entry), f32::from_bits(1), 0.0, 0.0],
            r0,
            r1,
            r2,
        ]
    }
}

/// Checks attachment number `index` against the resident package it names and resolves it.
pub(crate) fn resolve(
    index: usize,
    a: &Attachment,
    resident: Option<&ResidentPackage>,
) -> Result<Resolved, GpuError> {
    let bad = |what: String| GpuError::Attachment {
        attachment: index,
        what,
    };
    let resident =
        resident.ok_or_else(|| bad(format!("package {} is not resident", a.package.0)))?;
    let package = &resident.package;
    let skin = (package.skins.get(a.skin as usize))
        .ok_or_else(|| bad(format!("the package has no skin {}", a.skin)))?;
    let names = &package.skeletons[skin.skeleton as usize].names;
    let name = names.get(a.joint as usize).ok_or_else(|| {
        bad(format!(
            "skin {} has {} joints, no joint {}",
            a.skin,
            names.len(),
            a.joint
        ))
    })?;
    let entry = (skin.joints.iter().position(|&j| j == a.joint)).ok_or_else(|| {
        bad(format!(
            "joint '{name}' is not in skin '{}''s palette: attach the prop to one of its joints",
            skin.name
        ))
    })?;
    let inverse_bind = skin.inverse_bind[entry];
    let det = inverse_bind.matrix3.determinant();
    if !det.is_finite() || det.abs() < 1e-12 {
        return Err(bad(format!(
            "joint '{name}''s inverse bind matrix has no inverse"
        )));
    }
    let m = &a.mesh;
    if m.normals.len() != m.positions.len() {
        return Err(bad(format!(
            "its mesh has {} positions and {} normals",
            m.positions.len(),
            m.normals.len()
        )));
    }
    if let Some(&i) = m.indices.iter().find(|&&i| i as usize >= m.positions.len()) {
        return Err(bad(format!(
            "its mesh's index {i} is past its {} vertices",
            m.positions.len()
        )));
    }
    if !m.indices.len().is_multiple_of(3) {
        return Err(bad("its mesh's index count is not a multiple of 3".into()));
    }
    let finite = |v: &[f32; 3]| v.iter().all(|x| x.is_finite());
    if !m.positions.iter().chain(&m.normals).all(finite) || !a.offset.is_finite() {
        return Err(bad("its mesh or offset is not finite".into()));
    }
    Ok(Resolved {
        package: a.package.0,
        skin: a.skin,
        entry: entry as u32,
        local: inverse_bind.inverse() * a.offset,
    })
}

/// The runtime's attachment buffers: the per-frame table, the prop transforms and the draws'
/// arguments.
pub(crate) struct AttachBuffers {
    /// Rows of `TABLE_ROW_BYTES`, per (kind, attachment).
    pub table: wgpu::Buffer,
    /// Per (attachment, rank of the skinned pool) a prop transform.
    pub props: wgpu::Buffer,
    /// Per attachment its indexed indirect draw arguments.
    pub draws: wgpu::Buffer,
    /// The attachments' generation these buffers were made for (bind groups name them).
    pub generation: u64,
}

impl AttachBuffers {
    /// Buffers for `attachments` attachments over `kinds` kinds and a skinned pool of `pool`
    /// ranks, made for attachment generation `generation`.
    pub fn new(
        device: &wgpu::Device,
        attachments: u64,
        kinds: u64,
        pool: u64,
        generation: u64,
    ) -> AttachBuffers {
        let make = |label: &str, size: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: size.max(16).next_multiple_of(16),
                usage: usage | wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        AttachBuffers {
            table: make(
                "attachment table",
                TABLE_ROW_BYTES * attachments * kinds,
                wgpu::BufferUsages::empty(),
            ),
            props: make(
                "prop transforms",
                PROP_BYTES * attachments * pool,
                wgpu::BufferUsages::COPY_SRC,
            ),
            draws: make(
                "prop draws",
                DRAW_ARGS_BYTES * attachments,
                wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::COPY_SRC,
            ),
            generation,
        }
    }
}

/// A runtime's attachments and the host side of their per-frame table.
#[derive(Default)]
pub(crate) struct Attachments {
    pub list: Vec<Attachment>,
    resolved: Vec<Resolved>,
    /// The frame's table rows and draw arguments (kept between frames).
    rows: Vec<[[f32; 4]; 4]>,
    args: Vec<u32>,
    /// Counts [`Attachments::set`] calls, so a draw knows when to rebuild its meshes.
    pub generation: u64,
}

impl Attachments {
    /// Checks and resolves `list` against the resident `packages`; on success replaces the
    /// attachments and returns buffers for them over at most `kinds` kinds and a skinned pool of
    /// `pool` ranks. On error nothing changes.
    pub fn set(
        &mut self,
        device: &wgpu::Device,
        list: &[Attachment],
        packages: &[ResidentPackage],
        (kinds, pool, binding_limit): (u64, u64, u64),
    ) -> Result<AttachBuffers, GpuError> {
        if list.len() > MAX_ATTACHMENTS {
            return Err(GpuError::Capacity {
                what: "attachments",
                needed: list.len() as u64,
                capacity: MAX_ATTACHMENTS as u64,
            });
        }
        let resolved = (list.iter().enumerate())
            .map(|(i, a)| resolve(i, a, packages.get(a.package.0)))
            .collect::<Result<Vec<_>, _>>()?;
        let n = list.len() as u64;
        if PROP_BYTES * n * pool > binding_limit {
            return Err(GpuError::Capacity {
                what: "prop transforms (skinned instances × attachments)",
                needed: n * pool,
                capacity: binding_limit / PROP_BYTES,
            });
        }
        self.list = list.to_vec();
        self.resolved = resolved;
        self.generation += 1;
        Ok(AttachBuffers::new(device, n, kinds, pool, self.generation))
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The frame's table rows for every kind's `(package, skin)`, kind-major, and the draws'
    /// arguments with no instances (the pass writes the instance counts).
    pub fn stage(&mut self, kinds: impl Iterator<Item = (usize, Option<u32>)>) {
        self.rows.clear();
        for (package, skin) in kinds {
            let rows = self.resolved.iter().map(|r| r.row(package, skin));
            self.rows.extend(rows);
        }
        self.args.clear();
        for a in &self.list {
            self.args.extend([a.mesh.indices.len() as u32, 0, 0, 0, 0]);
        }
    }

    /// Queue writes of the staged rows and arguments; the bytes written.
    pub fn upload(&self, queue: &wgpu::Queue, buffers: &AttachBuffers) -> u64 {
        if self.is_empty() {
            return 0;
        }
        let rows: &[u8] = bytemuck::cast_slice(&self.rows);
        let args: &[u8] = bytemuck::cast_slice(&self.args);
        if !rows.is_empty() {
            queue.write_buffer(&buffers.table, 0, rows);
        }
        queue.write_buffer(&buffers.draws, 0, args);
        (rows.len() + args.len()) as u64
    }
}

/// `PropDraw` of raster.wgsl (32 bytes, one per 256-byte slot).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PropDrawUniform {
    base: u32,
    pad: [u32; 3],
    colour: [f32; 4],
}

/// One attachment's mesh on the GPU: two vec4s per vertex (position, w = 1; normal, w = 0)
/// and its triangle indices.
struct PropBuffers {
    vertices: wgpu::Buffer,
    indices: wgpu::Buffer,
}

/// The props of a [`crate::draw::CrowdPass`]: one instanced, indexed, indirect draw per
/// attachment of the runtime (raster.wgsl `prop_vs`, shaded by `crowd_fs`), its instances the
/// frame's skinned ones.
pub(crate) struct PropLayer {
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    uniforms: wgpu::Buffer,
    /// The runtime's attachment generation the meshes were built for.
    generation: Option<u64>,
    meshes: Vec<PropBuffers>,
    groups: Vec<wgpu::BindGroup>,
    draws: Option<wgpu::Buffer>,
    uniform_bytes: Vec<u8>,
}

impl PropLayer {
    pub fn new(
        device: &wgpu::Device,
        target: crate::draw::Target,
        frame_layout: &wgpu::BindGroupLayout,
    ) -> PropLayer {
        use crate::draw::{draw_uniform_entry, storage_entry};
        let uniform = draw_uniform_entry(std::mem::size_of::<PropDrawUniform>());
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("props"),
            entries: &[uniform, storage_entry(1), storage_entry(2)],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("props"),
            bind_group_layouts: &[Some(frame_layout), None, None, Some(&layout)],
            immediate_size: 0,
        });
        let module = crate::draw::raster_module(device, "props");
        let pipeline = crate::draw::render_pipeline(
            device,
            &module,
            ("props", &pipeline_layout),
            (throng_shaders::PROP_VS, throng_shaders::CROWD_FS),
            (target, wgpu::PrimitiveTopology::TriangleList),
        );
        let uniforms = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("prop draws"),
            size: MAX_ATTACHMENTS as u64 * OFFSET_ALIGNMENT,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        PropLayer {
            pipeline,
            layout,
            uniforms,
            generation: None,
            meshes: Vec::new(),
            groups: Vec::new(),
            draws: None,
            uniform_bytes: Vec::new(),
        }
    }

    /// Meshes (rebuilt when the runtime's attachments changed), uniforms and bind groups for
    /// `runtime`'s last frame.
    pub fn prepare(&mut self, ctx: &GpuContext, runtime: &Runtime) {
        let device = &ctx.device;
        if self.generation != Some(runtime.attachment_generation()) {
            self.meshes = (runtime.attachments().iter())
                .map(|a| prop_buffers(device, &a.mesh))
                .collect();
            self.generation = Some(runtime.attachment_generation());
        }
        let pool = runtime.capacities().skinned_instances;
        self.uniform_bytes.clear();
        for (a, attachment) in runtime.attachments().iter().enumerate() {
            let [r, g, b] = attachment.mesh.colour;
            let uniform = PropDrawUniform {
                base: a as u32 * pool,
                pad: [0; 3],
                colour: [r, g, b, 1.0],
            };
            let at = a * OFFSET_ALIGNMENT as usize;
            self.uniform_bytes.resize(at + OFFSET_ALIGNMENT as usize, 0);
            self.uniform_bytes[at..at + std::mem::size_of::<PropDrawUniform>()]
                .copy_from_slice(bytemuck::bytes_of(&uniform));
        }
        if !self.uniform_bytes.is_empty() {
            ctx.queue
                .write_buffer(&self.uniforms, 0, &self.uniform_bytes);
        }
        let uniform = range(
            &self.uniforms,
            0,
            std::mem::size_of::<PropDrawUniform>() as u64,
        );
        self.groups = (self.meshes.iter())
            .map(|m| {
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("props"),
                    layout: &self.layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: uniform.clone(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: runtime.props_buffer().as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: m.vertices.as_entire_binding(),
                        },
                    ],
                })
            })
            .collect();
        self.draws = Some(runtime.prop_draws_buffer().clone());
    }

    /// Draws [`PropLayer::render`] records: one per attachment.
    pub fn draws(&self) -> usize {
        self.groups.len()
    }

    /// Draws (instances culled or past the budget have none) for each attachment; expects
    /// group 0 bound.
    pub fn render(&self, pass: &mut wgpu::RenderPass<'_>) {
        let Some(draws) = &self.draws else {
            return;
        };
        if self.groups.is_empty() {
            return;
        }
        pass.set_pipeline(&self.pipeline);
        for (a, (mesh, group)) in self.meshes.iter().zip(&self.groups).enumerate() {
            pass.set_bind_group(3, group, &[(a as u64 * OFFSET_ALIGNMENT) as u32]);
            pass.set_index_buffer(mesh.indices.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed_indirect(draws, a as u64 * DRAW_ARGS_BYTES);
        }
    }
}

/// `mesh`'s vertex and index buffers.
fn prop_buffers(device: &wgpu::Device, mesh: &PropMesh) -> PropBuffers {
    use wgpu::util::DeviceExt;
    let vertices: Vec<[f32; 4]> = (mesh.positions.iter().zip(&mesh.normals))
        .flat_map(|(&[x, y, z], &[nx, ny, nz])| [[x, y, z, 1.0], [nx, ny, nz, 0.0]])
        .collect();
    let init = |label, contents: &[u8], usage| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage,
        })
    };
    // Buffers of at least 16 bytes: an empty mesh still binds, and draws nothing.
    let mut indices = mesh.indices.clone();
    indices.resize(indices.len().max(4), 0);
    let mut vertex_bytes: Vec<u8> = bytemuck::cast_slice(&vertices).to_vec();
    vertex_bytes.resize(vertex_bytes.len().max(32), 0);
    PropBuffers {
        vertices: init("prop vertices", &vertex_bytes, wgpu::BufferUsages::STORAGE),
        indices: init(
            "prop indices",
            bytemuck::cast_slice(&indices),
            wgpu::BufferUsages::INDEX,
        ),
    }
}
