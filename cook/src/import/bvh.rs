//! BVH (Biovision Hierarchy) motion import: one skeleton and one clip, as an [`Imported`] with no
//! skin, for `throng cook` and `throng retarget` (docs/retargeting.md, "BVH").
//!
//! - **Hierarchy.** `ROOT` and `JOINT` blocks become joints in file order (depth-first, parent
//!   first); `End Site` blocks mark chain ends and are not joints. A joint's rest pose is its
//!   `OFFSET` (× the scale), identity rotation and unit scale; the skeleton's `root_transform` is
//!   identity (BVH has no scene above its root).
//! - **Channels.** Any of the six (`Xposition` … `Zrotation`) in any order and number per joint.
//!   Position channels set the joint's translation to its offset plus the position (× the
//!   scale); rotation channels, in degrees, compose in the order listed, left to right, as
//!   intrinsic rotations: `Zrotation Xrotation Yrotation` is `Rz · Rx · Ry`. Each joint with a
//!   rotation channel gets a rotation curve, each with a position channel a translation curve.
//! - **Motion.** `Frames:` and `Frame Time:`, then one line of values per frame. The first
//!   `skip` frames are dropped (CMU's first frame is a T-pose calibration frame); the clip's keys
//!   are the remaining frames at `k · frame_time` seconds, LINEAR, rotations sign-continuous
//!   (each quaternion on the same side as the one before).
//! - **Units.** Lengths × `scale` metres per BVH unit. The default is CMU's, `0.0564444`
//!   ((1 / 0.45) · 2.54 / 100: the CMU skeletons' BVH unit is 1/0.45 inch), since CMU's is the
//!   BVH corpus Throng reads; give a file in centimetres `0.01`.
//!
//! Every error is [`CookError::Bvh`] with the file, the line and what was expected.

use glam::{Quat, Vec3};
use throng_cpu_ref::{Channel, ChannelPath, Interpolation, Package, Skeleton, SourceClip, Trs};

use super::{CookError, Imported};

/// CMU's metres per BVH unit: (1 / 0.45) · 2.54 / 100.
pub const CMU_SCALE: f32 = 0.056_444_443;

/// How a BVH file is read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BvhOptions {
    /// Metres per BVH unit (> 0).
    pub scale: f32,
    /// Frames dropped from the start.
    pub skip: usize,
}

impl Default for BvhOptions {
    fn default() -> Self {
        BvhOptions {
            scale: CMU_SCALE,
            skip: 0,
        }
    }
}

/// One channel of a joint.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Dof {
    Position(usize),
    Rotation(usize),
}

struct Joint {
    name: String,
    parent: Option<usize>,
    offset: Vec3,
    dofs: Vec<Dof>,
}

/// Whitespace-separated words with their line numbers.
struct Words<'a> {
    words: Vec<(usize, &'a str)>,
    at: usize,
    file: &'a str,
}

impl<'a> Words<'a> {
    fn new(text: &'a str, file: &'a str) -> Words<'a> {
        let words = text
            .lines()
            .enumerate()
            .flat_map(|(n, line)| line.split_whitespace().map(move |w| (n + 1, w)))
            .collect();
        Words { words, at: 0, file }
    }

    /// The line of the next word (or of the last one, at the end).
    fn line(&self) -> usize {
        self.words
            .get(self.at)
            .or(self.words.last())
            .map_or(1, |w| w.0)
    }

    fn error(&self, message: String) -> CookError {
        CookError::Bvh {
            file: self.file.to_owned(),
            line: self.line(),
            message,
        }
    }

    fn peek(&self) -> Option<&'a str> {
        self.words.get(self.at).map(|w| w.1)
    }

    fn next(&mut self, what: &str) -> Result<&'a str, CookError> {
        let w = self
            .peek()
            .ok_or_else(|| self.error(format!("the file ends where {what} was expected")))?;
        self.at += 1;
        Ok(w)
    }

    fn expect(&mut self, word: &str) -> Result<(), CookError> {
        let line = self.line();
        let got = self.next(&format!("`{word}`"))?;
        if got.eq_ignore_ascii_case(word) {
            Ok(())
        } else {
            Err(CookError::Bvh {
                file: self.file.to_owned(),
                line,
                message: format!("expected `{word}`, found `{got}`"),
            })
        }
    }

    fn number<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, CookError> {
        let line = self.line();
        let w = self.next(what)?;
        w.parse().map_err(|_| CookError::Bvh {
            file: self.file.to_owned(),
            line,
            message: format!("{what}: `{w}` is not a number"),
        })
    }

    fn float(&mut self, what: &str) -> Result<f32, CookError> {
        let line = self.line();
        let v: f32 = self.number(what)?;
        if v.is_finite() {
            Ok(v)
        } else {
            Err(CookError::Bvh {
                file: self.file.to_owned(),
                line,
                message: format!("{what} is not finite"),
            })
        }
    }
}

/// Imports BVH `text` (from `file`, for errors) as one skeleton and one clip named `name`.
pub fn import_bvh(
    text: &str,
    file: &str,
    name: &str,
    options: BvhOptions,
) -> Result<Imported, CookError> {
    let mut w = Words::new(text, file);
    if !(options.scale.is_finite() && options.scale > 0.0) {
        return Err(w.error(format!(
            "the scale {} is not a positive length in metres per unit",
            options.scale
        )));
    }
    w.expect("HIERARCHY")?;
    w.expect("ROOT")?;
    let mut joints = Vec::new();
    read_joint(&mut w, None, 0, &mut joints, options.scale)?;
    if !w.peek().is_some_and(|x| x.eq_ignore_ascii_case("MOTION")) {
        let found = w.peek().unwrap_or("the end of the file");
        return Err(w.error(format!(
            "expected `MOTION` after the root joint, found `{found}`"
        )));
    }
    w.expect("MOTION")?;
    w.expect("Frames:")?;
    let frames: usize = w.number("the frame count")?;
    w.expect("Frame")?;
    w.expect("Time:")?;
    let frame_time = w.float("the frame time")?;
    if frame_time <= 0.0 {
        return Err(w.error(format!("the frame time {frame_time} is not positive")));
    }
    if frames <= options.skip {
        return Err(w.error(format!(
            "{frames} frame(s), all skipped (skip {}): no motion left",
            options.skip
        )));
    }
    let per_frame: usize = joints.iter().map(|j| j.dofs.len()).sum();
    // Buffers sized by what the file holds, not by what its header claims; a header that claims
    // more fails where the values run out.
    let held = (w.words.len() - w.at) / per_frame.max(1);
    let keys = frames - options.skip;
    let mut translations: Vec<Vec<f32>> = joints
        .iter()
        .map(|j| {
            Vec::with_capacity(if has_position(j) {
                keys.min(held) * 3
            } else {
                0
            })
        })
        .collect();
    let mut rotations: Vec<Vec<f32>> = joints
        .iter()
        .map(|_| Vec::with_capacity(keys.min(held) * 4))
        .collect();
    let mut values = vec![0.0f32; per_frame];
    let mut first_kept_is_zero = false;
    for frame in 0..frames {
        let line = w.line();
        for (k, v) in values.iter_mut().enumerate() {
            *v = w.float(&format!("frame {frame} value {k} of {per_frame}"))?;
        }
        if w.words.get(w.at - 1).map(|x| x.0) != Some(line) {
            return Err(CookError::Bvh {
                file: file.to_owned(),
                line,
                message: format!(
                    "frame {frame} does not have the {per_frame} values the hierarchy's channels \
                     need on one line"
                ),
            });
        }
        if frame < options.skip {
            continue;
        }
        if frame == options.skip {
            first_kept_is_zero = values.iter().all(|&v| v == 0.0);
        }
        let mut at = 0;
        for (j, joint) in joints.iter().enumerate() {
            let (t, q) = pose(joint, &values[at..at + joint.dofs.len()], options.scale);
            at += joint.dofs.len();
            if has_position(joint) {
                translations[j].extend_from_slice(&t.to_array());
            }
            if has_rotation(joint) {
                let q = match rotations[j].len() {
                    0 => q,
                    n => {
                        let r = &rotations[j][n - 4..];
                        let last = Quat::from_xyzw(r[0], r[1], r[2], r[3]);
                        if last.dot(q) < 0.0 {
                            -q
                        } else {
                            q
                        }
                    }
                };
                rotations[j].extend_from_slice(&q.to_array());
            }
        }
    }
    if let Some(extra) = w.peek() {
        return Err(w.error(format!(
            "`{extra}` after the {frames} frame(s) the header declares"
        )));
    }
    // Some CMU files hold a second calibration frame of zeros (07_12.bvh): the root at the
    // origin, every joint unrotated. Kept, it stands the character in the floor for a frame and
    // skews every measure taken over the clip; say so and how to drop it.
    let mut warnings = Vec::new();
    if first_kept_is_zero {
        warnings.push(format!(
            "{file}: frame {} (the first kept) is all zeros, a calibration frame rather than \
             motion: --bvh-skip {} drops it",
            options.skip,
            options.skip + 1
        ));
    }
    let times: Vec<f32> = (0..keys).map(|k| k as f32 * frame_time).collect();
    let mut channels = Vec::new();
    for (j, joint) in joints.iter().enumerate() {
        for (path, values) in [
            (ChannelPath::Translation, &mut translations[j]),
            (ChannelPath::Rotation, &mut rotations[j]),
        ] {
            let wanted = match path {
                ChannelPath::Translation => has_position(joint),
                _ => has_rotation(joint),
            };
            if wanted {
                channels.push(Channel {
                    joint: j as u32,
                    path,
                    interpolation: Interpolation::Linear,
                    times: times.clone(),
                    values: std::mem::take(values),
                });
            }
        }
    }
    let skeleton = Skeleton::new(
        joints
            .iter()
            .map(|j| j.parent.map_or(throng_cpu_ref::NO_PARENT, |p| p as u32))
            .collect(),
        joints
            .iter()
            .map(|j| Trs {
                translation: j.offset,
                ..Trs::IDENTITY
            })
            .collect(),
        joints.iter().map(|j| j.name.clone()).collect(),
        (0..joints.len() as u32).collect(),
        glam::Affine3A::IDENTITY,
    )
    .map_err(|e| w.error(format!("the hierarchy is not a skeleton: {e}")))?;
    let duration = times.last().copied().unwrap_or(0.0);
    Ok(Imported {
        source: file.to_owned(),
        package: Package {
            skeletons: vec![skeleton],
            skins: Vec::new(),
            meshes: Vec::new(),
            clips: Vec::new(),
            masks: Vec::new(),
            impostors: Vec::new(),
            motion_databases: Vec::new(),
            scene: Default::default(),
            curves: Default::default(),
        },
        source_clips: vec![SourceClip {
            name: name.to_owned(),
            skeleton: 0,
            channels,
            duration,
        }],
        source_weight_clips: Vec::new(),
        clip_meta: Vec::new(),
        lod_pins: Vec::new(),
        warnings,
    })
}

fn has_position(j: &Joint) -> bool {
    j.dofs.iter().any(|d| matches!(d, Dof::Position(_)))
}

fn has_rotation(j: &Joint) -> bool {
    j.dofs.iter().any(|d| matches!(d, Dof::Rotation(_)))
}

/// A joint's local translation and rotation from its channels' `values` of one frame.
fn pose(joint: &Joint, values: &[f32], scale: f32) -> (Vec3, Quat) {
    let (mut t, mut q) = (joint.offset, Quat::IDENTITY);
    for (dof, &v) in joint.dofs.iter().zip(values) {
        match *dof {
            Dof::Position(axis) => t[axis] += v * scale,
            Dof::Rotation(axis) => {
                let a = v.to_radians();
                let r = match axis {
                    0 => Quat::from_rotation_x(a),
                    1 => Quat::from_rotation_y(a),
                    _ => Quat::from_rotation_z(a),
                };
                q *= r;
            }
        }
    }
    (t, q.normalize())
}

/// Deepest joint nesting read: far past any rig's, and it bounds the reader's recursion.
const MAX_DEPTH: usize = 256;

/// Reads a joint's block (after its `ROOT` / `JOINT` keyword) and its children's, `depth` joints
/// below the root.
fn read_joint(
    w: &mut Words,
    parent: Option<usize>,
    depth: usize,
    joints: &mut Vec<Joint>,
    scale: f32,
) -> Result<(), CookError> {
    if depth >= MAX_DEPTH {
        return Err(w.error(format!(
            "joints nested deeper than {MAX_DEPTH}: not a skeleton Throng reads"
        )));
    }
    let name = w.next("a joint name")?.to_owned();
    if joints.iter().any(|j| j.name == name) {
        return Err(w.error(format!("a second joint named `{name}`")));
    }
    w.expect("{")?;
    w.expect("OFFSET")?;
    let offset = read_offset(w, scale)?;
    let index = joints.len();
    joints.push(Joint {
        name,
        parent,
        offset,
        dofs: Vec::new(),
    });
    if w.peek().is_some_and(|x| x.eq_ignore_ascii_case("CHANNELS")) {
        w.expect("CHANNELS")?;
        let line = w.line();
        let count: usize = w.number("the channel count")?;
        if count > 6 {
            return Err(CookError::Bvh {
                file: w.file.to_owned(),
                line,
                message: format!("{count} channels; a joint has at most 6"),
            });
        }
        for _ in 0..count {
            let line = w.line();
            let word = w.next("a channel name")?;
            let dof = match word.to_ascii_lowercase().as_str() {
                "xposition" => Dof::Position(0),
                "yposition" => Dof::Position(1),
                "zposition" => Dof::Position(2),
                "xrotation" => Dof::Rotation(0),
                "yrotation" => Dof::Rotation(1),
                "zrotation" => Dof::Rotation(2),
                _ => {
                    return Err(CookError::Bvh {
                        file: w.file.to_owned(),
                        line,
                        message: format!(
                            "`{word}` is not a channel (Xposition, Yposition, Zposition, \
                             Xrotation, Yrotation or Zrotation)"
                        ),
                    })
                }
            };
            if joints[index].dofs.contains(&dof) {
                return Err(CookError::Bvh {
                    file: w.file.to_owned(),
                    line,
                    message: format!("`{word}` twice on one joint"),
                });
            }
            joints[index].dofs.push(dof);
        }
    }
    loop {
        let word = w.next("`JOINT`, `End Site` or `}`")?;
        match word.to_ascii_lowercase().as_str() {
            "joint" => read_joint(w, Some(index), depth + 1, joints, scale)?,
            "end" => {
                w.expect("Site")?;
                w.expect("{")?;
                w.expect("OFFSET")?;
                read_offset(w, scale)?;
                w.expect("}")?;
            }
            "}" => return Ok(()),
            _ => {
                w.at -= 1;
                return Err(w.error(format!(
                    "expected `JOINT`, `End Site` or `}}` in joint `{}`, found `{word}`",
                    joints[index].name
                )));
            }
        }
    }
}

fn read_offset(w: &mut Words, scale: f32) -> Result<Vec3, CookError> {
    let mut v = Vec3::ZERO;
    for axis in 0..3 {
        v[axis] = w.float("an OFFSET component")? * scale;
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::EulerRot;

    const TWO_JOINTS: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Yrotation Xrotation Zrotation
    End Site
    {
      OFFSET 0 5 0
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.5
0 0 0 0 0 0 0 0 0
1 2 3 90 0 0 10 20 30
2 4 6 0 90 0 0 0 180
";

    fn import(text: &str, options: BvhOptions) -> Result<Imported, CookError> {
        import_bvh(text, "test.bvh", "test", options)
    }

    #[test]
    fn channels_compose_in_their_listed_order_and_lengths_scale() {
        let options = BvhOptions {
            scale: 0.01,
            skip: 1,
        };
        let imported = import(TWO_JOINTS, options).unwrap();
        let skeleton = &imported.package.skeletons[0];
        assert_eq!(skeleton.names, ["Hips", "Spine"]);
        assert!(skeleton.rest[1]
            .translation
            .abs_diff_eq(Vec3::new(0.0, 0.1, 0.0), 1e-7));
        let clip = &imported.source_clips[0];
        assert_eq!(clip.duration, 0.5);
        let find = |j: u32, p: ChannelPath| {
            clip.channels
                .iter()
                .find(|c| c.joint == j && c.path == p)
                .unwrap()
        };
        let t = find(0, ChannelPath::Translation);
        assert_eq!(t.times, [0.0, 0.5]);
        let want = [0.01, 0.02, 0.03, 0.02, 0.04, 0.06];
        assert!(
            t.values.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-7),
            "{:?}",
            t.values
        );
        // Hips' first kept frame: Zrotation 90 then Xrotation 0 then Yrotation 0.
        let r = find(0, ChannelPath::Rotation);
        let q = Quat::from_slice(&r.values[..4]);
        assert!(q.abs_diff_eq(Quat::from_rotation_z(90f32.to_radians()), 1e-6));
        // Spine: Y 10, X 20, Z 30 = Ry · Rx · Rz (intrinsic, in the listed order).
        let s = Quat::from_slice(&find(1, ChannelPath::Rotation).values[..4]);
        let want = Quat::from_euler(
            EulerRot::YXZ,
            10f32.to_radians(),
            20f32.to_radians(),
            30f32.to_radians(),
        );
        assert!(
            s.abs_diff_eq(want, 1e-6) || s.abs_diff_eq(-want, 1e-6),
            "{s} vs {want}"
        );
        // Sign-continuous: the second key is on the side of the first.
        let keys = &find(1, ChannelPath::Rotation).values;
        let (a, b) = (Quat::from_slice(&keys[..4]), Quat::from_slice(&keys[4..]));
        assert!(a.dot(b) >= 0.0);
        assert!(
            b.abs_diff_eq(Quat::from_rotation_z(std::f32::consts::PI), 1e-6)
                || b.abs_diff_eq(-Quat::from_rotation_z(std::f32::consts::PI), 1e-6)
        );
    }

    #[test]
    fn a_first_kept_frame_of_zeros_is_named_with_the_skip_that_drops_it() {
        let two = BvhOptions {
            scale: 1.0,
            skip: 0,
        };
        let zeros = import(TWO_JOINTS, two).unwrap();
        assert_eq!(zeros.warnings.len(), 1);
        assert!(
            zeros.warnings[0].contains("--bvh-skip 1"),
            "{:?}",
            zeros.warnings
        );
        let moving = import(TWO_JOINTS, BvhOptions { skip: 1, ..two }).unwrap();
        assert!(moving.warnings.is_empty(), "{:?}", moving.warnings);
    }

    fn bvh_error(text: &str) -> (usize, String) {
        match import(text, BvhOptions::default()) {
            Err(CookError::Bvh { line, message, .. }) => (line, message),
            other => panic!("expected a BVH error, got {other:?}"),
        }
    }

    #[test]
    fn malformed_files_name_the_line_and_what_was_expected() {
        let bad_channel = TWO_JOINTS.replace(
            "Yrotation Xrotation Zrotation",
            "Yrotation Wobble Zrotation",
        );
        let (line, message) = bvh_error(&bad_channel);
        assert_eq!(line, 9);
        assert!(message.contains("`Wobble` is not a channel"), "{message}");

        let short = TWO_JOINTS.replace("1 2 3 90 0 0 10 20 30", "1 2 3 90 0 0 10 20");
        let (line, message) = bvh_error(&short);
        assert_eq!(line, 20);
        assert!(message.contains("9 values"), "{message}");

        let nan = TWO_JOINTS.replace("2 4 6 0 90", "2 4 x 0 90");
        let (line, message) = bvh_error(&nan);
        assert_eq!(line, 21);
        assert!(message.contains("`x` is not a number"), "{message}");

        let unclosed = TWO_JOINTS.replace("MOTION", "JOINT Extra { OFFSET 0 0 0 }\nMOTION");
        let (line, message) = bvh_error(&unclosed);
        assert_eq!(line, 16);
        assert!(message.contains("`MOTION`"), "{message}");

        let (line, message) = bvh_error(&TWO_JOINTS[..120]);
        assert!(line >= 5, "{line}");
        assert!(message.contains("the file ends"), "{message}");

        let extra = format!("{TWO_JOINTS}3 3 3 3 3 3 3 3 3\n");
        let (line, message) = bvh_error(&extra);
        assert_eq!(line, 22);
        assert!(message.contains("after the 3 frame(s)"), "{message}");

        let all_skipped = import(
            TWO_JOINTS,
            BvhOptions {
                scale: 1.0,
                skip: 3,
            },
        );
        assert!(matches!(all_skipped, Err(CookError::Bvh { .. })));
        let bad_scale = import(
            TWO_JOINTS,
            BvhOptions {
                scale: -1.0,
                skip: 0,
            },
        );
        assert!(matches!(bad_scale, Err(CookError::Bvh { .. })));
    }
}
