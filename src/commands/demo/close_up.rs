//! `--close-up`: the camera follows one crowd member's face instead of framing the crowd, near
//! enough to see its morph targets (the generated character blinks in `idle` and opens its mouth
//! in `wave`; docs/morph-targets.md). The member is the nearest one to the crowd's framing whose
//! program samples one of the clips that move the face when the first frame is drawn, else the
//! nearest; the camera stands in front of the face (the character faces +Z) and moves with the
//! member's placement.

use glam::{Affine3A, Vec3};
use serde::Serialize;
use throng::{Animator, MemberId};
use throng_cpu_ref::program::op;
use throng_cpu_ref::Package;
use throng_gpu::raster::{Camera, Scene};

use crate::commands::CliError;

/// The camera's distance in front of the face, metres, and how far above it it looks from.
const DISTANCE: f32 = 0.7;
const RISE: f32 = 0.04;
/// Vertical field of view: head and shoulders at [`DISTANCE`].
const FOV_Y: f32 = 0.6;

/// The member the camera follows.
#[derive(Clone, Debug, Serialize)]
pub(super) struct CloseUp {
    /// Its index in the demo's crowd (0 the nearest to the framing's camera), and its id.
    pub member: usize,
    #[serde(skip)]
    pub id: MemberId,
    /// The face-moving clip its program sampled when it was chosen (`None`: none did).
    pub clip: Option<String>,
    /// The centroid of the vertices the morph targets move, in the character's bind space.
    #[serde(skip)]
    face: Vec3,
}

impl CloseUp {
    /// Chooses among `nearest` (crowd members, nearest the framing's camera first) of a
    /// character of `package`; an error when its skins have no morph targets (no face to show).
    pub fn choose(
        animator: &mut Animator,
        package: &Package,
        nearest: &[MemberId],
    ) -> Result<CloseUp, CliError> {
        let moved: Vec<Vec3> = (package.meshes.iter())
            .flat_map(|m| {
                (m.targets.iter())
                    .flat_map(|t| &t.vertices)
                    .map(|&v| m.positions[v as usize])
            })
            .collect();
        if moved.is_empty() {
            return Err(CliError::Usage(
                "--close-up frames a face its morph targets move: this character has none".into(),
            ));
        }
        let face = moved.iter().copied().sum::<Vec3>() / moved.len() as f32;
        let faces: Vec<(u32, &str)> = (package.clips.iter().enumerate())
            .filter(|(_, c)| c.name == "idle" || c.name == "wave")
            .map(|(i, c)| (i as u32, c.name.as_str()))
            .collect();
        let first = *nearest.first().ok_or_else(|| {
            CliError::Usage("--close-up needs a crowd member (--instances at least 1)".into())
        })?;
        for (member, &id) in nearest.iter().enumerate() {
            let Some(program) = animator.presented_program(id, 1.0) else {
                continue;
            };
            let sampled = (program.ops.iter())
                .filter(|o| o.code == op::SAMPLE)
                .find_map(|o| faces.iter().find(|(c, _)| *c == o.a));
            if let Some((_, name)) = sampled {
                return Ok(CloseUp {
                    member,
                    id,
                    clip: Some(name.to_string()),
                    face,
                });
            }
        }
        Ok(CloseUp {
            member: 0,
            id: first,
            clip: None,
            face,
        })
    }

    /// `framing` seen from in front of the member's face, the member placed by `placement`.
    pub fn scene(&self, framing: &Scene, placement: Affine3A) -> Scene {
        let target = placement.transform_point3(self.face);
        let eye = placement.transform_point3(self.face + Vec3::new(0.0, RISE, DISTANCE));
        Scene {
            camera: Camera {
                eye,
                target,
                fov_y: FOV_Y,
                near: 0.05,
                far: framing.camera.far,
            },
            ..*framing
        }
    }
}
