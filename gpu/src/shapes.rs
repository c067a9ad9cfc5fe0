//! The runtime's shapes: each program shape seen once gets an id and its interpreter form in a
//! resident shape table; frames look shapes up without allocating.

use std::collections::HashMap;

use throng_cpu_ref::{Package, Program};
use throng_shaders::shape::SHAPE_OP_WORDS;
use throng_shaders::Shape;

use crate::context::scoped;
use crate::{GpuContext, GpuError};

/// One known shape.
pub(crate) struct ShapeEntry {
    pub shape: Shape,
    /// vec4 index of its first op in the shape table.
    pub base: u32,
    /// Word index of its value map in the table ([`Shape::value_map`]), and its values.
    pub map_base: u32,
    pub values: u32,
}

/// The known shapes and their table on the GPU.
pub(crate) struct Shapes {
    pub entries: Vec<ShapeEntry>,
    by_hash: HashMap<u64, Vec<u32>>,
    words: Vec<u32>,
    /// Words of `words` already on the GPU.
    uploaded: usize,
    pub buffer: wgpu::Buffer,
    /// Bumped when `buffer` is replaced (bind groups that bind it are rebuilt).
    pub generation: u64,
}

/// The encoding of each clip of `package`, as shapes see it.
pub(crate) fn encoding(package: &Package) -> impl Fn(u32) -> u32 + '_ {
    |c| {
        package
            .clips
            .get(c as usize)
            .map_or(throng_cpu_ref::clip::encoding::REFERENCE, |clip| {
                clip.encoding()
            })
    }
}

fn table_buffer(device: &wgpu::Device, words: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("shape table"),
        size: (4 * words).max(64),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

impl Shapes {
    pub fn new(device: &wgpu::Device) -> Shapes {
        Shapes {
            entries: Vec::new(),
            by_hash: HashMap::new(),
            words: Vec::new(),
            uploaded: 0,
            buffer: table_buffer(device, 1024),
            generation: 0,
        }
    }

    /// The id of `program`'s shape (a validated program of `package`), registering it when new.
    /// `hint`, the id of a shape the program probably has (the previous instance's), is tried
    /// first.
    pub fn id(&mut self, program: &Program, package: &Package, hint: Option<u32>) -> u32 {
        if let Some(id) = self.find(program, package, hint) {
            return id;
        }
        let enc = encoding(package);
        let hash = Shape::hash_of(program, &enc);
        let shape = Shape::of(program, &enc);
        let id = self.entries.len() as u32;
        let base = (self.words.len() / 4) as u32;
        self.words.extend(shape.table());
        debug_assert_eq!(self.words.len() % 4, 0, "{SHAPE_OP_WORDS} words per op");
        // The value map after the ops, padded to whole vec4s.
        let map = shape.value_map();
        let map_base = self.words.len() as u32;
        let values = map.len() as u32;
        self.words.extend(map);
        self.words.resize(self.words.len().next_multiple_of(4), 0);
        self.entries.push(ShapeEntry {
            shape,
            base,
            map_base,
            values,
        });
        self.by_hash.entry(hash).or_default().push(id);
        id
    }

    /// The id of `program`'s shape if it is registered; `hint` as for [`Shapes::id`].
    pub fn find(&self, program: &Program, package: &Package, hint: Option<u32>) -> Option<u32> {
        let enc = encoding(package);
        let matches = |id: u32| {
            self.entries
                .get(id as usize)
                .is_some_and(|e| e.shape.matches(program, &enc))
        };
        if let Some(h) = hint.filter(|&h| matches(h)) {
            return Some(h);
        }
        let ids = self.by_hash.get(&Shape::hash_of(program, &enc))?;
        ids.iter().copied().find(|&id| matches(id))
    }

    /// Writes shapes registered since the last upload, growing the buffer when it is full.
    pub fn upload(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        if self.uploaded == self.words.len() {
            return Ok(());
        }
        let needed = 4 * self.words.len() as u64;
        if needed > self.buffer.size() {
            let grown = scoped(&ctx.device, "shape table growth", || {
                table_buffer(&ctx.device, 2 * self.words.len() as u64)
            })?;
            self.buffer = grown;
            self.generation += 1;
            self.uploaded = 0;
        }
        let at = self.uploaded;
        ctx.queue.write_buffer(
            &self.buffer,
            4 * at as u64,
            bytemuck::cast_slice(&self.words[at..]),
        );
        self.uploaded = self.words.len();
        Ok(())
    }
}
