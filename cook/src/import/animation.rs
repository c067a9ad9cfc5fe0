//! Animations: translation / rotation / scale channels on skeleton joints, one [`SourceClip`] per
//! (animation, skeleton it touches). Key values keep glTF semantics; rotation values are
//! normalised (tangents are not).

use std::collections::HashSet;

use glam::{Vec3, Vec4};
use gltf::accessor::{DataType, Dimensions};
use gltf::animation::{Interpolation as GltfInterpolation, Property};
use gltf::json::validation::Checked;
use gltf::scene::Transform;
use gltf::Document;
use throng_cpu_ref::morph::{Scene, SourceWeightClip, WeightChannel};
use throng_cpu_ref::{Channel, ChannelPath, Interpolation, SourceClip};

use super::accessor::Buffers;
use super::hierarchy::node_label;
use super::rig::{check_scale, unit_quat, Rig};
use super::CookError;

/// The clip name of an animation: its name, or `animation{index}`.
pub(super) fn animation_name(anim: &gltf::Animation) -> String {
    anim.name()
        .map(str::to_string)
        .unwrap_or_else(|| format!("animation{}", anim.index()))
}

/// Source clips with the index of their animation, and the weight clips.
pub(super) type Clips = (Vec<(usize, SourceClip)>, Vec<SourceWeightClip>);

/// The source clips of every animation: per skeleton it touches, each with the index of the
/// animation it comes from; and the morph-weight channels of each animation that has some.
pub(super) fn read(
    doc: &Document,
    rig: &Rig,
    scene: &Scene,
    buffers: &Buffers,
    warnings: &mut Vec<String>,
) -> Result<Clips, CookError> {
    let file = buffers.file;
    check_targets(doc, file)?;
    let mut clips = Vec::new();
    let mut weight_clips = Vec::new();
    for anim in doc.animations() {
        let name = animation_name(&anim);
        let mut per_skeleton: Vec<Vec<Channel>> = vec![Vec::new(); rig.skeletons.len()];
        let mut weight_channels = Vec::new();
        let mut targets = HashSet::new();
        let mut duration = 0.0f32;
        for channel in anim.channels() {
            let node = channel.target().node();
            let node_name = node_label(doc, node.index());
            let property = channel.target().property();
            let label = format!(
                "animation '{name}' channel {} ({node_name} {property:?})",
                channel.index()
            );
            let path = match property {
                Property::Translation => ChannelPath::Translation,
                Property::Rotation => ChannelPath::Rotation,
                Property::Scale => ChannelPath::Scale,
                Property::MorphTargetWeights => {
                    let kept = scene
                        .nodes
                        .iter()
                        .position(|n| n.node as usize == node.index());
                    let width = kept.map_or(0, |k| scene.nodes[k].weights.len());
                    let Some(k) = kept.filter(|_| width > 0) else {
                        let why = if kept.is_some() {
                            "its mesh has no morph targets"
                        } else {
                            "the node has no cooked mesh"
                        };
                        warnings.push(format!("{label}: morph-target weights skipped ({why})"));
                        continue;
                    };
                    if !targets.insert((node.index(), None)) {
                        return Err(CookError::DuplicateChannel {
                            file: file.to_string(),
                            channel: label,
                            target: format!("{node_name} {property:?}"),
                        });
                    }
                    let (times, values, interpolation) =
                        read_weight_curve(&channel, width, &label, buffers)?;
                    duration = duration.max(times.last().copied().unwrap_or(0.0));
                    weight_channels.push(WeightChannel {
                        node: k as u32,
                        width: width as u32,
                        interpolation,
                        times,
                        values,
                    });
                    continue;
                }
            };
            if matches!(node.transform(), Transform::Matrix { .. }) {
                return Err(CookError::AnimatedMatrixNode {
                    file: file.to_string(),
                    channel: label,
                    node: node_name,
                });
            }
            let joints = rig
                .node_joints
                .get(node.index())
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            if joints.is_empty() {
                return Err(CookError::ChannelOnNonJoint {
                    file: file.to_string(),
                    channel: label,
                    node: node_name,
                });
            }
            if !targets.insert((node.index(), Some(path))) {
                return Err(CookError::DuplicateChannel {
                    file: file.to_string(),
                    channel: label,
                    target: format!("{node_name} {property:?}"),
                });
            }
            let (times, values, interpolation) = read_curve(&channel, path, &label, buffers)?;
            duration = duration.max(times.last().copied().unwrap_or(0.0));
            for &(skeleton, joint) in joints {
                if let Some(list) = per_skeleton.get_mut(skeleton as usize) {
                    list.push(Channel {
                        joint,
                        path,
                        interpolation,
                        times: times.clone(),
                        values: values.clone(),
                    });
                }
            }
        }
        if !weight_channels.is_empty() {
            weight_channels.sort_by_key(|c| c.node);
            weight_clips.push(SourceWeightClip {
                name: name.clone(),
                duration,
                channels: weight_channels,
            });
        }
        for (skeleton, channels) in per_skeleton.into_iter().enumerate() {
            if !channels.is_empty() {
                let clip = SourceClip {
                    name: name.clone(),
                    skeleton: skeleton as u32,
                    channels,
                    duration,
                };
                clips.push((anim.index(), clip));
            }
        }
    }
    Ok((clips, weight_clips))
}

/// The `gltf` crate does not validate channel targets (and unwraps them on access): check that
/// each names an existing node and a known path.
fn check_targets(doc: &Document, file: &str) -> Result<(), CookError> {
    let nodes = doc.nodes().len();
    for (a, anim) in doc.as_json().animations.iter().enumerate() {
        for (c, channel) in anim.channels.iter().enumerate() {
            let node = channel.target.node.value();
            let problem = if node >= nodes {
                Some(format!(
                    "targets node {node}, but the file has {nodes} nodes"
                ))
            } else if matches!(channel.target.path, Checked::Invalid) {
                Some("has an unknown target path".to_string())
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(CookError::Parse {
                    file: file.to_string(),
                    message: format!("animation {a} channel {c} {problem}"),
                });
            }
        }
    }
    Ok(())
}

/// Key times, values and interpolation of a `weights` channel of a node with `width` targets,
/// validated: glTF 2.0 §3.11 ("Animations"): the output holds `width` scalars per key (three
/// times that for CUBICSPLINE: in-tangents, values, out-tangents).
fn read_weight_curve(
    channel: &gltf::animation::Channel,
    width: usize,
    label: &str,
    buffers: &Buffers,
) -> Result<(Vec<f32>, Vec<f32>, Interpolation), CookError> {
    let file = buffers.file;
    let sampler = channel.sampler();
    let times = read_times(&sampler, label, buffers)?;
    let interpolation = interpolation(&sampler);
    let values = buffers.floats(
        &sampler.output(),
        Dimensions::Scalar,
        &[
            DataType::F32,
            DataType::I8,
            DataType::U8,
            DataType::I16,
            DataType::U16,
        ],
    )?;
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    let expected = times.len() * per_key;
    if values.len() != expected * width {
        return Err(CookError::OutputCount {
            file: file.to_string(),
            channel: format!("{label} ({width} weights per key)"),
            keys: times.len(),
            expected,
            actual: values.len() / width,
        });
    }
    for (key, v) in values.chunks_exact(per_key * width).enumerate() {
        if v.iter().any(|x| !x.is_finite()) {
            return Err(CookError::NonFinite {
                file: file.to_string(),
                place: format!("{label} key {key}"),
            });
        }
    }
    Ok((times, values, interpolation))
}

/// Key times of a sampler, validated: finite, non-negative, strictly increasing.
fn read_times(
    sampler: &gltf::animation::Sampler,
    label: &str,
    buffers: &Buffers,
) -> Result<Vec<f32>, CookError> {
    let file = buffers.file;
    let times = buffers.floats(&sampler.input(), Dimensions::Scalar, &[DataType::F32])?;
    for (key, &t) in times.iter().enumerate() {
        let reason = if !t.is_finite() {
            Some("time is not finite")
        } else if t < 0.0 {
            Some("time is negative")
        } else if key > 0 && t <= times[key - 1] {
            Some("time is not after the previous key (glTF key times are strictly increasing)")
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(CookError::KeyTime {
                file: file.to_string(),
                channel: label.to_string(),
                key,
                reason,
            });
        }
    }
    Ok(times)
}

fn interpolation(sampler: &gltf::animation::Sampler) -> Interpolation {
    match sampler.interpolation() {
        GltfInterpolation::Step => Interpolation::Step,
        GltfInterpolation::Linear => Interpolation::Linear,
        GltfInterpolation::CubicSpline => Interpolation::CubicSpline,
    }
}

/// Key times, values and interpolation of one channel, validated.
fn read_curve(
    channel: &gltf::animation::Channel,
    path: ChannelPath,
    label: &str,
    buffers: &Buffers,
) -> Result<(Vec<f32>, Vec<f32>, Interpolation), CookError> {
    let file = buffers.file;
    let sampler = channel.sampler();
    let times = read_times(&sampler, label, buffers)?;
    let interpolation = interpolation(&sampler);
    let output = sampler.output();
    let mut values = match path {
        ChannelPath::Rotation => buffers.floats(
            &output,
            Dimensions::Vec4,
            &[
                DataType::F32,
                DataType::I8,
                DataType::U8,
                DataType::I16,
                DataType::U16,
            ],
        )?,
        _ => buffers.floats(&output, Dimensions::Vec3, &[DataType::F32])?,
    };
    let width = path.width();
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    let expected = times.len() * per_key;
    if values.len() != expected * width {
        return Err(CookError::OutputCount {
            file: file.to_string(),
            channel: label.to_string(),
            keys: times.len(),
            expected,
            actual: values.len() / width,
        });
    }
    for (key, v) in values.chunks_exact(per_key * width).enumerate() {
        if v.iter().any(|x| !x.is_finite()) {
            return Err(CookError::NonFinite {
                file: file.to_string(),
                place: format!("{label} key {key}"),
            });
        }
    }
    // The value of each key (the middle element of a CUBICSPLINE triple).
    let value_offset = if per_key == 3 { width } else { 0 };
    for (key, v) in values.chunks_exact_mut(per_key * width).enumerate() {
        let value = &mut v[value_offset..value_offset + width];
        match path {
            ChannelPath::Scale => check_scale(Vec3::from_slice(value), file, || {
                format!("{label} key {key}")
            })?,
            ChannelPath::Rotation => {
                let q = unit_quat(Vec4::from_slice(value)).ok_or_else(|| CookError::BadMatrix {
                    file: file.to_string(),
                    place: format!("{label} key {key}"),
                    reason: "zero quaternion".into(),
                })?;
                value.copy_from_slice(&q.to_array());
            }
            ChannelPath::Translation => {}
        }
    }
    Ok((times, values, interpolation))
}
