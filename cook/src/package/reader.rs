//! Checked package reader: header, section table, then each section, then semantic validation.

use glam::{Affine3A, Quat, Vec3};
use throng_cpu_ref::codec::layout::segment_table;
use throng_cpu_ref::codec::{segment_count, CompressedClip, COMPRESSED_CODEC_VERSION};
use throng_cpu_ref::impostor::{Impostor, ImpostorClip};
use throng_cpu_ref::lod::check_levels;
use throng_cpu_ref::morph::{
    MeshNode, MeshRef, MorphTarget, NodePrimitive, StaticMesh, WeightClip, WeightTrack,
};
use throng_cpu_ref::motion_db::{DatabaseClip, MotionDatabase, FEATURES, GROUPS, HORIZONS};
use throng_cpu_ref::{
    clip::REFERENCE_CODEC_VERSION, Clip, ClipEvent, Composition, CurveChannel, CurveTrack, Curves,
    LoopPolicy, Package, QuantizedTrack, RootMotion, RootMotionPolicy, Skeleton, SkeletonLod,
    SkinBinding, SkinnedMesh, SubTrack, SubTrackKind, SyncMarker, Trs,
};
use xxhash_rust::xxh3::xxh3_64;

use super::codec::CodecFault;
use super::cursor::Cursor;
use super::validate::validate_package;
use super::writer::{MESH_SKINNED, MESH_STATIC, NO_SKIN};
use super::{
    PackageError, SectionKind, ENCODING_COMPRESSED, ENCODING_UNCOMPRESSED, EVENT_REVERSIBLE,
    FORMAT_VERSION, HEADER_SIZE, IMPOSTOR_VERSION, MAGIC, MOTION_DATABASE_VERSION, SECTION_ALIGN,
    SECTION_ENTRY_SIZE, SECTION_OPTIONAL,
};
use throng_cpu_ref::scalar::{MAX_CURVE_BITS, RAW_CURVE_BITS};

/// Bytes of a skeleton record before its joint arrays.
const SKELETON_HEADER: u64 = 64;
/// Bytes of a skin record before its palette arrays.
const SKIN_HEADER: u64 = 16;
/// Bytes of a mesh record before its vertex arrays.
const MESH_HEADER: u64 = 24;
/// Bytes of a clip record before its events.
const CLIP_HEADER: u64 = 80;
/// Bytes of an event: time, name, flags, reserved.
const EVENT_SIZE: u64 = 24;
/// Bytes of a sync marker: time, name.
const MARKER_SIZE: u64 = 16;

/// Parses and validates a package. Never panics and allocates no more than the input's size
/// justifies; every failure says what was wrong and where.
pub fn read_package(bytes: &[u8]) -> Result<Package, PackageError> {
    let section_count = read_header(bytes)?;
    let (sections, [lods, mesh_lods, impostors, databases, scene, curves]) =
        read_section_table(bytes, section_count)?;
    let [strings, skeletons, skins, meshes, clips] = sections;
    let mut names = Names::new(strings);
    let mut package = Package {
        skeletons: read_items(skeletons, SKELETON_HEADER, |c, i| {
            read_skeleton(c, i, &mut names)
        })?,
        skins: read_items(skins, SKIN_HEADER, |c, _| read_skin(c, &mut names))?,
        meshes: read_items(meshes, MESH_HEADER, |c, i| read_mesh(c, i, &mut names))?,
        clips: read_items(clips, CLIP_HEADER, |c, i| read_clip(c, i, &mut names))?,
        masks: Vec::new(),
        impostors: Vec::new(),
        motion_databases: Vec::new(),
        scene: Default::default(),
        curves: Default::default(),
    };
    if let Some(lods) = lods {
        read_lods(lods, &mut package.skeletons)?;
    }
    if let Some(section) = mesh_lods {
        read_mesh_lods(section, &mut package)?;
    }
    if let Some(section) = impostors {
        package.impostors = read_impostors(section, &package)?;
    }
    if let Some(section) = databases {
        package.motion_databases = read_motion_databases(section, &package)?;
    }
    if let Some(section) = scene {
        read_scene(section, &mut package, &mut names)?;
    }
    if let Some(section) = curves {
        package.curves = read_curves(section, &mut names)?;
    }
    names.check_all_used()?;
    validate_package(&package)?;
    Ok(package)
}

/// Checks magic, version, declared size and content hash; returns the section count.
fn read_header(bytes: &[u8]) -> Result<u32, PackageError> {
    let mut c = Cursor::new(bytes, 0, "header");
    let found: [u8; 8] = c.array("magic")?;
    if found != MAGIC {
        return Err(PackageError::BadMagic { found });
    }
    let version = c.u32("format version")?;
    if version != FORMAT_VERSION {
        return Err(PackageError::UnsupportedVersion {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let section_count = c.u32("section count")?;
    let stored = c.u64("content hash")?;
    let declared = c.u64("total size")?;
    let actual = bytes.len() as u64;
    if declared > actual {
        return Err(PackageError::Truncated {
            section: "package",
            what: "declared size",
            offset: 0,
            needed: declared,
            available: actual,
        });
    }
    if declared != actual {
        return Err(PackageError::SizeMismatch { declared, actual });
    }
    let computed = xxh3_64(bytes.get(HEADER_SIZE..).unwrap_or_default());
    if computed != stored {
        return Err(PackageError::HashMismatch { stored, computed });
    }
    Ok(section_count)
}

/// The bytes of one known section and their file offset.
#[derive(Clone, Copy)]
struct Section<'a> {
    kind: SectionKind,
    offset: u64,
    bytes: &'a [u8],
}

/// Reads the table and checks that sections are aligned, in bounds, packed in table order with
/// zero padding, and that each required kind appears exactly once and an optional one at most
/// once. Returns the required ones in kind order, and LODS, MESH_LODS, IMPOSTORS and
/// MOTION_DATABASES if present.
fn read_section_table(
    bytes: &[u8],
    count: u32,
) -> Result<([Section<'_>; 5], [Option<Section<'_>>; 6]), PackageError> {
    let total = bytes.len() as u64;
    let mut c = Cursor::new(
        bytes.get(HEADER_SIZE..).unwrap_or_default(),
        HEADER_SIZE as u64,
        "section table",
    );
    let entries = c.vec(count, SECTION_ENTRY_SIZE as u64, "entries", |c, _| {
        Ok((
            c.u32("kind")?,
            c.u32("flags")?,
            c.u64("offset")?,
            c.u64("size")?,
        ))
    })?;
    let align = SECTION_ALIGN as u64;
    let mut found: [Option<Section>; 11] = [None; 11];
    let mut end = c.offset();
    for (index, (kind, flags, offset, size)) in (0u32..).zip(entries) {
        if offset % align != 0 {
            return Err(PackageError::MisalignedSection {
                index,
                kind,
                offset,
            });
        }
        let section_end = offset.checked_add(size).filter(|&e| e <= total);
        let section = section_end.and_then(|e| slice(bytes, offset, e));
        let (Some(section_end), Some(section)) = (section_end, section) else {
            return Err(PackageError::SectionOutOfBounds {
                index,
                kind,
                offset,
                size,
                total,
            });
        };
        if offset != end.next_multiple_of(align) {
            return Err(PackageError::BadSection {
                index,
                kind,
                what: "does not start at the first 16-byte boundary after the previous section",
            });
        }
        zero_gap(bytes, end, offset)?;
        end = section_end;
        match SectionKind::from_u32(kind) {
            Some(k) if flags != u32::from(k.optional()) * SECTION_OPTIONAL => {
                return Err(PackageError::BadSection {
                    index,
                    kind,
                    what: if k.optional() {
                        "an optional known section carries exactly the optional flag"
                    } else {
                        "required sections carry no flags"
                    },
                })
            }
            Some(k) => {
                let slot = &mut found[k as usize - 1];
                if slot.is_some() {
                    return Err(PackageError::BadSection {
                        index,
                        kind,
                        what: "a section of this kind came earlier",
                    });
                }
                *slot = Some(Section {
                    kind: k,
                    offset,
                    bytes: section,
                });
            }
            None if flags == SECTION_OPTIONAL => {}
            None if flags & !SECTION_OPTIONAL != 0 => {
                return Err(PackageError::BadSection {
                    index,
                    kind,
                    what: "reserved flag bits are set",
                })
            }
            None => return Err(PackageError::UnknownSection { index, kind }),
        }
    }
    let padded_end = end.next_multiple_of(align);
    if total < padded_end {
        return Err(PackageError::Truncated {
            section: "package",
            what: "final padding",
            offset: total,
            needed: padded_end - total,
            available: 0,
        });
    }
    if total > padded_end {
        return Err(PackageError::TrailingBytes {
            section: "package",
            offset: padded_end,
            count: total - padded_end,
        });
    }
    zero_gap(bytes, end, total)?;
    let mut sections = [Section {
        kind: SectionKind::Strings,
        offset: 0,
        bytes: &[],
    }; 5];
    for ((slot, kind), found) in sections.iter_mut().zip(SectionKind::ALL).zip(found) {
        *slot = found.ok_or(PackageError::MissingSection { kind: kind.name() })?;
    }
    let optional = [
        SectionKind::Lods,
        SectionKind::MeshLods,
        SectionKind::Impostors,
        SectionKind::MotionDatabases,
        SectionKind::Scene,
        SectionKind::Curves,
    ]
    .map(|k| found[k as usize - 1]);
    Ok((sections, optional))
}

/// The CURVES section (docs/package-format.md, "CURVES"): channels and clip tracks. Values and
/// references are checked by `validate_package`; here only structure: counts against the bytes
/// left and composition codes.
fn read_curves(section: Section, names: &mut Names) -> Result<Curves, PackageError> {
    let mut c = Cursor::new(section.bytes, section.offset, section.kind.name());
    let channel_count = c.u32("channel count")?;
    let track_count = c.u32("track count")?;
    if channel_count == 0 {
        return Err(PackageError::Invalid {
            section: "CURVES",
            index: 0,
            field: "channel count",
            what: "a package without curve channels has no CURVES section".into(),
        });
    }
    let channels = c.vec(channel_count, 28, "channels", |c, i| {
        let name = names.read(c, "name")?;
        let skeleton = c.u32("skeleton")?;
        let [default, min, max] = c.f32s("default and range")?;
        let code = c.u32("composition")?;
        let composition = Composition::from_u32(code).ok_or(PackageError::Invalid {
            section: "CURVES",
            index: i,
            field: "composition",
            what: format!("{code} is not a composition (0 to 4)"),
        })?;
        Ok(CurveChannel {
            name,
            skeleton,
            default,
            min,
            max,
            composition,
        })
    })?;
    let tracks = c.vec(track_count, 16, "tracks", |c, i| {
        let clip = c.u32("clip")?;
        let channel = c.u32("channel")?;
        let count = c.u32("value count")?;
        let bits = c.u32("bits per sample")?;
        if bits == RAW_CURVE_BITS {
            let values = c.vec(count, 4, "values", |c, _| c.f32("value"))?;
            return Ok(CurveTrack {
                clip,
                channel,
                values,
                quantized: None,
            });
        }
        if bits > MAX_CURVE_BITS {
            return Err(PackageError::Invalid {
                section: "CURVES",
                index: i,
                field: "bits per sample",
                what: format!("{bits} (0 to {MAX_CURVE_BITS}, or {RAW_CURVE_BITS} for f32)"),
            });
        }
        let [base, step] = c.f32s("base and step")?;
        let words = QuantizedTrack::words_for(count as usize, bits);
        let words = c.vec(words as u32, 4, "samples", |c, _| c.u32("word"))?;
        let quantized = QuantizedTrack {
            base,
            step,
            bits,
            words,
        };
        Ok(CurveTrack {
            clip,
            channel,
            values: quantized.decode(count as usize),
            quantized: Some(quantized),
        })
    })?;
    c.finish()?;
    Ok(Curves {
        channels,
        tracks,
        selections: Vec::new(),
    })
}

/// The SCENE section (docs/package-format.md, "SCENE") into the package: static meshes, the
/// morph targets of skinned and static meshes, mesh nodes and weight clips. References and values
/// are checked by `validate_package`; here only structure: counts against the bytes left, kind
/// words, one target set per mesh in ascending order (skinned before static), 8-aligned clips.
fn read_scene(
    section: Section,
    package: &mut Package,
    names: &mut Names,
) -> Result<(), PackageError> {
    let invalid = |index: usize, field: &'static str, what: String| PackageError::Invalid {
        section: "SCENE",
        index,
        field,
        what,
    };
    let mut c = Cursor::new(section.bytes, section.offset, section.kind.name());
    let mesh_count = c.u32("static mesh count")?;
    let set_count = c.u32("target set count")?;
    let node_count = c.u32("node count")?;
    let clip_count = c.u32("clip count")?;
    if [mesh_count, set_count, node_count, clip_count] == [0; 4] {
        // The writer leaves the section out when it would be empty: one byte string per package.
        return Err(invalid(
            0,
            "counts",
            "an empty SCENE section is written as none".into(),
        ));
    }
    let vec3 = |c: &mut Cursor, _| c.f32s("vector").map(Vec3::from_array);
    package.scene.meshes = c.vec(mesh_count, 20, "static meshes", |c, i| {
        let name = names.read(c, "name")?;
        let vertex_count = c.u32("vertex_count")?;
        let normal_count = c.u32("normal_count")?;
        if normal_count != 0 && normal_count != vertex_count {
            return Err(invalid(
                i,
                "normal_count",
                format!(
                    "{normal_count} normals for {vertex_count} vertices; it must be 0 or equal"
                ),
            ));
        }
        let index_count = c.u32("index_count")?;
        Ok(StaticMesh {
            name,
            positions: c.vec(vertex_count, 12, "positions", vec3)?,
            normals: c.vec(normal_count, 12, "normals", vec3)?,
            indices: c.vec(index_count, 4, "indices", |c, _| c.u32("index"))?,
            targets: Vec::new(),
        })
    })?;
    let mut previous: Option<(u32, u32)> = None;
    for set in 0..set_count as usize {
        let kind = c.u32("target set mesh kind")?;
        let mesh = c.u32("target set mesh")?;
        if kind != MESH_SKINNED && kind != MESH_STATIC {
            return Err(PackageError::BadValue {
                section: "SCENE",
                field: "target set mesh kind",
                offset: c.offset() - 8,
                value: u64::from(kind),
            });
        }
        if previous.is_some_and(|p| (kind, mesh) <= p) {
            return Err(invalid(
                set,
                "target set mesh",
                "target sets must be in ascending (kind, mesh) order, one per mesh".into(),
            ));
        }
        previous = Some((kind, mesh));
        let count = c.u32("target count")?;
        if count == 0 {
            return Err(invalid(set, "target count", "is zero".into()));
        }
        let targets = c.vec(count, 8, "targets", |c, _| {
            let n = c.u32("target vertex count")?;
            let has_normals = c.u32("target has normals")?;
            if has_normals > 1 {
                return Err(PackageError::BadValue {
                    section: "SCENE",
                    field: "target has normals",
                    offset: c.offset() - 4,
                    value: u64::from(has_normals),
                });
            }
            Ok(MorphTarget {
                vertices: c.vec(n, 4, "target vertices", |c, _| c.u32("vertex"))?,
                positions: c.vec(n, 12, "target positions", vec3)?,
                normals: c.vec(n * has_normals, 12, "target normals", vec3)?,
            })
        })?;
        let slot = match kind {
            MESH_SKINNED => package
                .meshes
                .get_mut(mesh as usize)
                .map(|m| &mut m.targets),
            _ => package
                .scene
                .meshes
                .get_mut(mesh as usize)
                .map(|m| &mut m.targets),
        };
        match slot {
            Some(slot) => *slot = targets,
            None => {
                return Err(invalid(
                    set,
                    "target set mesh",
                    format!("names mesh {mesh}, which does not exist"),
                ))
            }
        }
    }
    package.scene.nodes = c.vec(node_count, 72, "mesh nodes", |c, _| {
        let node = c.u32("node")?;
        let name = names.read(c, "name")?;
        let skin = match c.u32("skin")? {
            NO_SKIN => None,
            s => Some(s),
        };
        let world = Affine3A::from_cols_array(&c.f32s("world")?);
        let primitive_count = c.u32("primitive count")?;
        let weight_count = c.u32("weight count")?;
        let primitives = c.vec(primitive_count, 12, "primitives", |c, _| {
            let primitive = c.u32("primitive")?;
            let kind = c.u32("mesh kind")?;
            let index = c.u32("mesh")?;
            let mesh = match kind {
                MESH_SKINNED => MeshRef::Skinned(index),
                MESH_STATIC => MeshRef::Static(index),
                _ => {
                    return Err(PackageError::BadValue {
                        section: "SCENE",
                        field: "mesh kind",
                        offset: c.offset() - 8,
                        value: u64::from(kind),
                    })
                }
            };
            Ok(NodePrimitive { primitive, mesh })
        })?;
        let weights = c.vec(weight_count, 4, "weights", |c, _| c.f32("weight"))?;
        Ok(MeshNode {
            node,
            name,
            world,
            skin,
            primitives,
            weights,
        })
    })?;
    let mut clips = Vec::new();
    for _ in 0..clip_count {
        c.align(8)?;
        let name = names.read(&mut c, "name")?;
        let duration = c.f64("duration")?;
        let sample_rate = c.f32("sample_rate")?;
        let sample_count = c.u32("sample_count")?;
        let track_count = c.u32("track count")?;
        c.zeros(4, "reserved")?;
        let tracks = c.vec(track_count, 8, "tracks", |c, _| {
            let node = c.u32("node")?;
            let n = c.u32("value count")?;
            Ok(WeightTrack {
                node,
                values: c.vec(n, 4, "values", |c, _| c.f32("value"))?,
            })
        })?;
        clips.push(WeightClip {
            name,
            duration,
            sample_rate,
            sample_count,
            tracks,
        });
    }
    package.scene.clips = clips;
    c.finish()
}

/// The LODS section into the skeletons it names: at least one record, skeletons ascending, each
/// with at least one level; every level ancestor-closed, nested and coarser than the one before
/// (throng-cpu-ref `lod::check_levels`), with a valid held pose per dropped joint.
fn read_lods(section: Section, skeletons: &mut [Skeleton]) -> Result<(), PackageError> {
    let invalid = |index: usize, field: &'static str, what: String| PackageError::Invalid {
        section: "LODS",
        index,
        field,
        what,
    };
    let mut next = 0usize;
    let records = read_items(section, 20, |c, index| {
        let skeleton = next_target(c, index, &mut next, skeletons.len(), "LODS", "skeleton")?;
        let levels = c.u32("level count")?;
        if levels == 0 {
            return Err(invalid(index, "level count", "is zero".into()));
        }
        let s = &skeletons[skeleton];
        let lods = c.vec(levels, 12, "levels", |c, _| {
            let count = c.u32("joint count")?;
            let error = c.f32("error")?;
            let joints = c.vec(count, 4, "joints", |c, _| c.u32("joint"))?;
            let dropped = (s.joint_count() as u32).saturating_sub(count);
            let pose = c.vec(dropped, 40, "held pose", |c, _| read_trs(c))?;
            SkeletonLod::new(s, joints, &pose, error)
                .map_err(|e| invalid(index, "joints", e.to_string()))
        })?;
        check_levels(s, &lods).map_err(|e| invalid(index, "levels", e.to_string()))?;
        Ok((skeleton, lods))
    })?;
    for (skeleton, lods) in non_empty(records, "LODS")? {
        skeletons[skeleton].lods = lods;
    }
    Ok(())
}

/// An optional section's records, refused when there are none: a package without what the
/// section holds has no such section, so each package has one byte string.
fn non_empty<T>(records: Vec<T>, section: &'static str) -> Result<Vec<T>, PackageError> {
    if records.is_empty() {
        return Err(PackageError::Invalid {
            section,
            index: 0,
            field: "item count",
            what: format!("is zero; a package with nothing for {section} has no such section"),
        });
    }
    Ok(records)
}

/// The next record's target (field `what`: a skeleton or mesh index), which must come after the
/// last record's (`next`) and exist (below `count`).
fn next_target(
    c: &mut Cursor,
    index: usize,
    next: &mut usize,
    count: usize,
    section: &'static str,
    what: &'static str,
) -> Result<usize, PackageError> {
    let target = c.u32(what)? as usize;
    if target < *next || target >= count {
        return Err(PackageError::Invalid {
            section,
            index,
            field: what,
            what: format!("{target} is not a {what} after the last record's (there are {count})"),
        });
    }
    *next = target + 1;
    Ok(target)
}

/// The MESH_LODS section into the meshes it names: at least one record, meshes ascending, each
/// with one to as many levels as its skin's skeleton has; every level a whole number of
/// triangles inside the mesh, no more than the level before, with a finite error ≥ 0.
fn read_mesh_lods(section: Section, package: &mut Package) -> Result<(), PackageError> {
    let invalid = |index: usize, field: &'static str, what: String| PackageError::Invalid {
        section: "MESH_LODS",
        index,
        field,
        what,
    };
    let mut next = 0usize;
    let records = read_items(section, 16, |c, index| {
        let m = next_target(
            c,
            index,
            &mut next,
            package.meshes.len(),
            "MESH_LODS",
            "mesh",
        )?;
        let mesh = &package.meshes[m];
        let levels = (package.skins.get(mesh.skin as usize))
            .and_then(|k| package.skeletons.get(k.skeleton as usize))
            .map_or(0, |s| s.lods.len());
        let count = c.u32("level count")?;
        if count == 0 || count as usize > levels {
            return Err(invalid(
                index,
                "level count",
                format!("is {count}; the mesh's skeleton has {levels} LOD levels"),
            ));
        }
        let mut previous = mesh.indices.len();
        c.vec(count, 12, "levels", |c, _| {
            let n = c.u32("index count")?;
            let error = c.f32("error")?;
            let shell = c.f32("shell")?;
            let indices = c.vec(n, 4, "indices", |c, _| c.u32("index"))?;
            let vertices = mesh.positions.len();
            if !indices.len().is_multiple_of(3) || indices.len() > previous {
                return Err(invalid(
                    index,
                    "index count",
                    format!(
                        "{n} is not a whole number of triangles no more than the {previous} before"
                    ),
                ));
            }
            if let Some(i) = indices.iter().find(|&&i| i as usize >= vertices) {
                return Err(invalid(
                    index,
                    "indices",
                    format!("{i} is outside the mesh's {vertices} vertices"),
                ));
            }
            if !(error.is_finite() && error >= 0.0) {
                return Err(invalid(
                    index,
                    "error",
                    format!("{error} is not a finite distance"),
                ));
            }
            if !(shell.is_finite() && (0.0..=error).contains(&shell)) {
                return Err(invalid(
                    index,
                    "shell",
                    format!("{shell} is not a distance from 0 to the level's error {error}"),
                ));
            }
            previous = indices.len();
            Ok(throng_cpu_ref::MeshLod {
                indices,
                error,
                shell,
            })
        })
        .map(|lods| (m, lods))
    })?;
    for (m, lods) in non_empty(records, "MESH_LODS")? {
        package.meshes[m].lods = lods;
    }
    Ok(())
}

/// The IMPOSTORS section: at least one record, skins ascending, each of layout version
/// [`IMPOSTOR_VERSION`] and valid for the package (throng-cpu-ref `Impostor::validate`).
fn read_impostors(section: Section, package: &Package) -> Result<Vec<Impostor>, PackageError> {
    let invalid = |index: usize, field: &'static str, what: String| PackageError::Invalid {
        section: "IMPOSTORS",
        index,
        field,
        what,
    };
    let mut next = 0usize;
    let records = read_items(section, 48, |c, index| {
        let skin = next_target(
            c,
            index,
            &mut next,
            package.skins.len(),
            "IMPOSTORS",
            "skin",
        )?;
        let version = c.u32("version")?;
        if version != IMPOSTOR_VERSION {
            return Err(invalid(
                index,
                "version",
                format!("{version} is not supported (this build reads version {IMPOSTOR_VERSION}); bake the impostors again"),
            ));
        }
        let [width, height, cell, views] = [
            c.u32("width")?,
            c.u32("height")?,
            c.u32("cell")?,
            c.u32("views")?,
        ];
        let rows = c.u32("row count")?;
        let clips = c.u32("clip count")?;
        let centre = Vec3::new(c.f32("centre")?, c.f32("centre")?, c.f32("centre")?);
        let radius = c.f32("radius")?;
        let elevations = c.vec(rows, 4, "elevations", |c, _| c.f32("elevation"))?;
        let clips = c.vec(clips, 8, "clips", |c, _| {
            Ok(ImpostorClip {
                clip: c.u32("clip")?,
                frames: c.u32("frames")?,
            })
        })?;
        let impostor = Impostor {
            skin: skin as u32,
            width,
            height,
            cell,
            views,
            elevations,
            centre,
            radius,
            clips,
        };
        impostor
            .validate(package)
            .map_err(|e| invalid(index, e.field, e.what))?;
        Ok(impostor)
    })?;
    non_empty(records, "IMPOSTORS")
}

/// The MOTION_DATABASES section: at least one record, skeletons ascending, each of layout
/// version [`MOTION_DATABASE_VERSION`], naming clips of its skeleton, and consistent
/// (throng-cpu-ref `MotionDatabase::new`).
fn read_motion_databases(
    section: Section,
    package: &Package,
) -> Result<Vec<MotionDatabase>, PackageError> {
    let invalid = |index: usize, field: &'static str, what: String| PackageError::Invalid {
        section: "MOTION_DATABASES",
        index,
        field,
        what,
    };
    let mut next = 0usize;
    let records = read_items(section, 268, |c, index| {
        let skeleton = next_target(
            c,
            index,
            &mut next,
            package.skeletons.len(),
            "MOTION_DATABASES",
            "skeleton",
        )?;
        let version = c.u32("version")?;
        if version != MOTION_DATABASE_VERSION {
            return Err(invalid(
                index,
                "version",
                format!("{version} is not supported (this build reads version {MOTION_DATABASE_VERSION}); build the database again (throng motion-database)"),
            ));
        }
        let rate = c.f32("rate")?;
        let horizons = c.f32s::<HORIZONS>("horizons")?;
        let weights = c.f32s::<{ GROUPS.len() }>("weights")?;
        let clip_count = c.u32("clip count")?;
        let row_count = c.u32("row count")?;
        let mean = c.f32s::<FEATURES>("mean")?;
        let scale = c.f32s::<FEATURES>("scale")?;
        let clips = c.vec(clip_count, 16, "clips", |c, k| {
            let clip = c.u32("clip")?;
            let valid = package
                .clips
                .get(clip as usize)
                .is_some_and(|x| x.skeleton as usize == skeleton);
            if !valid {
                return Err(invalid(
                    index,
                    "clips",
                    format!(
                        "entry {k} names clip {clip}, which is not a clip of skeleton {skeleton}"
                    ),
                ));
            }
            Ok(DatabaseClip {
                clip,
                first: c.u32("first row")?,
                frames: c.u32("frames")?,
                playable: c.u32("playable")?,
            })
        })?;
        let rows = c.vec(row_count, FEATURES as u64 * 4, "rows", |c, _| {
            c.f32s::<FEATURES>("row")
        })?;
        let tags = c.take(u64::from(row_count), "tags")?.to_vec();
        c.align(4)?;
        MotionDatabase::new(
            skeleton as u32,
            rate,
            horizons,
            weights,
            clips,
            mean,
            scale,
            rows,
            tags,
        )
        .map_err(|e| invalid(index, "database", e.to_string()))
    })?;
    non_empty(records, "MOTION_DATABASES")
}

fn slice(bytes: &[u8], start: u64, end: u64) -> Option<&[u8]> {
    bytes.get(usize::try_from(start).ok()?..usize::try_from(end).ok()?)
}

/// Padding between sections must be zero, so that every byte of a package has one meaning.
fn zero_gap(bytes: &[u8], start: u64, end: u64) -> Result<(), PackageError> {
    let gap = slice(bytes, start, end).unwrap_or_default();
    match gap.iter().position(|&b| b != 0) {
        Some(i) => Err(PackageError::NonZeroPadding {
            section: "package",
            offset: start + i as u64,
        }),
        None => Ok(()),
    }
}

/// A table section: item count, reserved word, then the items, with no bytes left over.
fn read_items<T>(
    section: Section,
    item_size: u64,
    read: impl FnMut(&mut Cursor, usize) -> Result<T, PackageError>,
) -> Result<Vec<T>, PackageError> {
    let mut c = Cursor::new(section.bytes, section.offset, section.kind.name());
    let count = c.u32("item count")?;
    c.zeros(4, "reserved")?;
    let items = c.vec(count, item_size, "items", read)?;
    c.finish()?;
    Ok(items)
}

/// The STRINGS section, and which of its bytes some name has used.
struct Names<'a> {
    section: Section<'a>,
    used: Vec<bool>,
}

impl<'a> Names<'a> {
    fn new(section: Section<'a>) -> Self {
        Names {
            section,
            used: vec![false; section.bytes.len()],
        }
    }

    /// Reads a string reference (byte offset and length in STRINGS) and resolves it.
    fn read(&mut self, c: &mut Cursor, what: &'static str) -> Result<String, PackageError> {
        let offset = c.offset();
        let start = c.u32(what)?;
        let len = c.u32(what)?;
        let bad = |what| PackageError::BadString {
            section: c.section(),
            offset,
            start,
            len,
            what,
        };
        let range = (start as usize)..(start as usize).saturating_add(len as usize);
        let bytes = self
            .section
            .bytes
            .get(range.clone())
            .ok_or_else(|| bad("lies outside STRINGS"))?;
        let name = std::str::from_utf8(bytes).map_err(|_| bad("is not UTF-8"))?;
        self.used.get_mut(range).unwrap_or_default().fill(true);
        Ok(name.to_owned())
    }

    /// Every byte of STRINGS belongs to some name, so its size cannot hide anything.
    fn check_all_used(&self) -> Result<(), PackageError> {
        match self.used.iter().position(|&u| !u) {
            Some(i) => Err(PackageError::UnusedString {
                offset: self.section.offset + i as u64,
            }),
            None => Ok(()),
        }
    }
}

fn read_skeleton(
    c: &mut Cursor,
    index: usize,
    names: &mut Names,
) -> Result<Skeleton, PackageError> {
    let n = c.u32("joint_count")?;
    c.zeros(4, "reserved")?;
    let stored = c.u64("identity_hash")?;
    let root = Affine3A::from_cols_array(&c.f32s("root_transform")?);
    let parents = c.vec(n, 4, "parents", |c, _| c.u32("parent"))?;
    let source_nodes = c.vec(n, 4, "source_nodes", |c, _| c.u32("source_node"))?;
    let joint_names = c.vec(n, 8, "names", |c, _| names.read(c, "name"))?;
    let rest = c.vec(n, 40, "rest", |c, _| read_trs(c))?;
    let skeleton = Skeleton::new(parents, rest, joint_names, source_nodes, root)
        .map_err(|source| PackageError::Skeleton { index, source })?;
    let rebuilt = skeleton.identity_hash();
    if rebuilt != stored {
        return Err(PackageError::SkeletonHashMismatch {
            index,
            stored,
            rebuilt,
        });
    }
    Ok(skeleton)
}

fn read_trs(c: &mut Cursor) -> Result<Trs, PackageError> {
    Ok(Trs {
        translation: Vec3::from_array(c.f32s("rest translation")?),
        rotation: Quat::from_array(c.f32s("rest rotation")?),
        scale: Vec3::from_array(c.f32s("rest scale")?),
    })
}

fn read_skin(c: &mut Cursor, names: &mut Names) -> Result<SkinBinding, PackageError> {
    let name = names.read(c, "name")?;
    let skeleton = c.u32("skeleton")?;
    let n = c.u32("joint_count")?;
    let joints = c.vec(n, 4, "joints", |c, _| c.u32("joint"))?;
    let inverse_bind = c.vec(n, 48, "inverse_bind", |c, _| {
        Ok(Affine3A::from_cols_array(&c.f32s("inverse_bind")?))
    })?;
    Ok(SkinBinding {
        name,
        skeleton,
        joints,
        inverse_bind,
    })
}

fn read_mesh(c: &mut Cursor, index: usize, names: &mut Names) -> Result<SkinnedMesh, PackageError> {
    let name = names.read(c, "name")?;
    let skin = c.u32("skin")?;
    let vertex_count = c.u32("vertex_count")?;
    let normal_count = c.u32("normal_count")?;
    if normal_count != 0 && normal_count != vertex_count {
        return Err(PackageError::Invalid {
            section: "MESHES",
            index,
            field: "normal_count",
            what: format!(
                "{normal_count} normals for {vertex_count} vertices; it must be 0 or equal"
            ),
        });
    }
    let index_count = c.u32("index_count")?;
    let vec3 = |c: &mut Cursor, _| c.f32s("vertex").map(Vec3::from_array);
    let positions = c.vec(vertex_count, 12, "positions", vec3)?;
    let normals = c.vec(normal_count, 12, "normals", vec3)?;
    let joints = c.vec(vertex_count, 8, "joints", |c, _| {
        Ok([
            c.u16("joint")?,
            c.u16("joint")?,
            c.u16("joint")?,
            c.u16("joint")?,
        ])
    })?;
    let weights = c.vec(vertex_count, 16, "weights", |c, _| c.f32s("weight"))?;
    let indices = c.vec(index_count, 4, "indices", |c, _| c.u32("index"))?;
    Ok(SkinnedMesh {
        name,
        skin,
        positions,
        normals,
        joints,
        weights,
        indices,
        lods: Vec::new(),
        targets: Vec::new(),
    })
}

fn read_clip(c: &mut Cursor, index: usize, names: &mut Names) -> Result<Clip, PackageError> {
    let name = names.read(c, "name")?;
    let profile = names.read(c, "profile")?;
    let skeleton = c.u32("skeleton")?;
    let loop_policy = read_enum(c, "loop_policy", [LoopPolicy::Once, LoopPolicy::Loop])?;
    let skeleton_hash = c.u64("skeleton_hash")?;
    let duration = c.f64("duration")?;
    let sample_rate = c.f32("sample_rate")?;
    let sample_count = c.u32("sample_count")?;
    let encoding = c.u32("encoding")?;
    let version = c.u32("codec_version")?;
    let supported = [
        (ENCODING_UNCOMPRESSED, REFERENCE_CODEC_VERSION),
        (ENCODING_COMPRESSED, COMPRESSED_CODEC_VERSION),
    ];
    if !supported.contains(&(encoding, version)) {
        return Err(PackageError::UnsupportedEncoding {
            clip: index,
            encoding,
            version,
        });
    }
    let event_count = c.u32("event_count")?;
    let marker_count = c.u32("marker_count")?;
    let payload_size = c.u64("payload_size")?;
    let policy_offset = c.offset();
    let policy = c.u32("root_motion_policy")?;
    let joint_offset = c.offset();
    let joint = c.u32("root_motion_joint")?;
    let policy = match policy {
        0 if joint != 0 => {
            return Err(PackageError::NonZeroPadding {
                section: c.section(),
                offset: joint_offset + u64::from(joint.trailing_zeros() / 8),
            })
        }
        0 => None,
        1 => Some(RootMotionPolicy::Planar),
        2 => Some(RootMotionPolicy::Full),
        value => {
            return Err(PackageError::BadValue {
                section: c.section(),
                field: "root_motion_policy",
                offset: policy_offset,
                value: value.into(),
            })
        }
    };
    let events = c.vec(event_count, EVENT_SIZE, "events", |c, _| {
        read_event(c, names)
    })?;
    let markers = c.vec(marker_count, MARKER_SIZE, "markers", |c, _| {
        read_marker(c, names)
    })?;
    let root_motion = match policy {
        None => None,
        Some(policy) => Some(RootMotion {
            joint,
            policy,
            translations: c.vec(sample_count, 12, "root_motion translations", |c, _| {
                c.f32s("root_motion translation").map(Vec3::from_array)
            })?,
            rotations: c.vec(sample_count, 16, "root_motion rotations", |c, _| {
                c.f32s("root_motion rotation").map(Quat::from_array)
            })?,
        }),
    };
    let mut p = c.sub(payload_size, "payload")?;
    let (sub_tracks, values, compressed) = if encoding == ENCODING_COMPRESSED {
        let (sub_tracks, compressed) = read_compressed(&mut p, index, sample_count)?;
        (sub_tracks, Vec::new(), Some(compressed))
    } else {
        let (sub_tracks, values) = read_reference(&mut p)?;
        (sub_tracks, values, None)
    };
    p.finish()?;
    c.align(8)?;
    Ok(Clip {
        name,
        skeleton,
        skeleton_hash,
        duration,
        sample_rate,
        sample_count,
        loop_policy,
        profile,
        sub_tracks,
        values,
        events,
        markers,
        root_motion,
        compressed,
    })
}

/// The reference encoding's payload: the sub-track table and the f32 values.
fn read_reference(p: &mut Cursor) -> Result<(Vec<SubTrack>, Vec<f32>), PackageError> {
    let sub_track_count = p.u32("sub_track_count")?;
    let value_count = p.u32("value_count")?;
    let sub_tracks = p.vec(sub_track_count, 8, "sub_tracks", |p, _| {
        let kind = read_enum(
            p,
            "sub-track kind",
            [
                SubTrackKind::Default,
                SubTrackKind::Constant,
                SubTrackKind::Animated,
            ],
        )?;
        Ok(SubTrack {
            kind,
            offset: p.u32("sub-track offset")?,
        })
    })?;
    let values = p.vec(value_count, 4, "values", |p, _| p.f32("value"))?;
    Ok((sub_tracks, values))
}

/// Bits per sub-track kind in the compressed payload's kind table.
const KIND_BITS: u64 = 2;

/// The compressed encoding's payload: counts, the 2-bit kind table and the word stream. Sub-track
/// offsets are derived (animated sub-tracks numbered in order; constants packed in order after the
/// segment table, 3 words for t/s and 4 for q); the stream is checked by validation.
fn read_compressed(
    p: &mut Cursor,
    clip: usize,
    sample_count: u32,
) -> Result<(Vec<SubTrack>, CompressedClip), PackageError> {
    let sub_track_count = p.u32("sub_track_count")?;
    let segment_length = p.u32("segment_length")?;
    let animated = p.u32("animated_count")?;
    let word_count = p.u32("word_count")?;
    let kind_words = (u64::from(sub_track_count) * KIND_BITS).div_ceil(32) as u32;
    let kinds_at = p.offset();
    let kinds = p.vec(kind_words, 4, "sub-track kinds", |p, _| {
        p.u32("sub-track kinds")
    })?;
    let words = p.vec(word_count, 4, "codec words", |p, _| p.u32("codec word"))?;
    let fault = |fault| PackageError::Codec { clip, fault };
    let segments =
        segment_count(sample_count, segment_length).ok_or(fault(CodecFault::ZeroSegmentLength))?;
    let mut next_constant = segment_table(animated) as u64 + u64::from(segments);
    let mut next_animated = 0u32;
    let mut sub_tracks = Vec::with_capacity(sub_track_count as usize);
    for t in 0..u64::from(sub_track_count) {
        let bit = t * KIND_BITS;
        let kind = (kinds[(bit / 32) as usize] >> (bit % 32)) & 3;
        let offset = match kind {
            0 => 0,
            1 => {
                let at = u32::try_from(next_constant).map_err(|_| {
                    fault(CodecFault::TooLarge {
                        words: next_constant,
                    })
                })?;
                next_constant += if t % 3 == 1 { 4 } else { 3 };
                at
            }
            2 => {
                next_animated += 1;
                next_animated - 1
            }
            value => {
                return Err(PackageError::BadValue {
                    section: p.section(),
                    field: "sub-track kind",
                    offset: kinds_at + bit / 8,
                    value: value.into(),
                })
            }
        };
        let kind = [
            SubTrackKind::Default,
            SubTrackKind::Constant,
            SubTrackKind::Animated,
        ][kind as usize];
        sub_tracks.push(SubTrack { kind, offset });
    }
    let used = u64::from(sub_track_count) * KIND_BITS;
    if let Some(last) = kinds.last() {
        let spare = (u64::from(kind_words) * 32 - used) as u32;
        if spare > 0 && last >> (32 - spare) != 0 {
            return Err(PackageError::NonZeroPadding {
                section: p.section(),
                offset: kinds_at + used / 8,
            });
        }
    }
    let compressed = CompressedClip::new(segment_length, animated, words, &sub_tracks);
    Ok((sub_tracks, compressed))
}

/// A u32 enumeration: stored value `i` is `variants[i]`.
fn read_enum<T: Copy, const N: usize>(
    c: &mut Cursor,
    field: &'static str,
    variants: [T; N],
) -> Result<T, PackageError> {
    let offset = c.offset();
    let value = c.u32(field)?;
    variants
        .get(value as usize)
        .copied()
        .ok_or(PackageError::BadValue {
            section: c.section(),
            field,
            offset,
            value: value.into(),
        })
}

fn read_event(c: &mut Cursor, names: &mut Names) -> Result<ClipEvent, PackageError> {
    let time = c.f64("event time")?;
    let name = names.read(c, "event name")?;
    let flags_offset = c.offset();
    let flags = c.u32("event flags")?;
    if flags & !EVENT_REVERSIBLE != 0 {
        return Err(PackageError::BadValue {
            section: c.section(),
            field: "event flags",
            offset: flags_offset,
            value: flags.into(),
        });
    }
    c.zeros(4, "reserved")?;
    Ok(ClipEvent {
        name,
        time,
        reversible: flags & EVENT_REVERSIBLE != 0,
    })
}

fn read_marker(c: &mut Cursor, names: &mut Names) -> Result<SyncMarker, PackageError> {
    let time = c.f64("marker time")?;
    Ok(SyncMarker {
        time,
        name: names.read(c, "marker name")?,
    })
}
