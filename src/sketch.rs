//! CPU sketches of poses, for looking at one without a GPU: skinned meshes flat-shaded with a
//! depth buffer and skeletons as lines, in an orthographic side view (the camera on -X looking
//! along +X: scene +Z runs right, +Y up), each figure fitted to a panel of the image.

use glam::{Vec2, Vec3};

use crate::gpu::raster::Image;

/// An RGBA image with a depth buffer.
pub struct Sketch {
    width: u32,
    height: u32,
    rgba: Vec<u8>,
    depth: Vec<f32>,
}

/// A scene-to-pixel mapping: `pixel = offset + scale · (z, -y)`, depth = x.
#[derive(Clone, Copy, Debug)]
pub struct View {
    scale: f32,
    offset: Vec2,
}

impl View {
    /// Fits `points` (scene space) into the pixel rectangle `min..max`, with a margin, keeping
    /// proportions.
    pub fn fit(points: &[Vec3], min: Vec2, max: Vec2) -> View {
        let flat = |p: &Vec3| Vec2::new(p.z, -p.y);
        let lo = points
            .iter()
            .map(flat)
            .fold(Vec2::splat(f32::MAX), Vec2::min);
        let hi = points
            .iter()
            .map(flat)
            .fold(Vec2::splat(f32::MIN), Vec2::max);
        let size = (hi - lo).max(Vec2::splat(1e-6));
        let room = (max - min) * 0.85;
        let scale = (room.x / size.x).min(room.y / size.y);
        let offset = (min + max) * 0.5 - (lo + hi) * 0.5 * scale;
        View { scale, offset }
    }

    fn project(&self, p: Vec3) -> (Vec2, f32) {
        (self.offset + Vec2::new(p.z, -p.y) * self.scale, p.x)
    }
}

impl Sketch {
    pub fn new(width: u32, height: u32, background: [u8; 3]) -> Sketch {
        let n = width as usize * height as usize;
        let rgba = (0..n)
            .flat_map(|_| [background[0], background[1], background[2], 255])
            .collect();
        Sketch {
            width,
            height,
            rgba,
            depth: vec![f32::INFINITY; n],
        }
    }

    fn put(&mut self, x: i32, y: i32, depth: f32, colour: [u8; 3]) {
        if x < 0 || y < 0 || x >= self.width as i32 || y >= self.height as i32 {
            return;
        }
        let i = y as usize * self.width as usize + x as usize;
        if depth > self.depth[i] {
            return;
        }
        self.depth[i] = depth;
        self.rgba[i * 4..i * 4 + 3].copy_from_slice(&colour);
    }

    /// Triangles `indices` of `positions`, lit from the camera and above by their face normals.
    pub fn mesh(&mut self, view: &View, positions: &[Vec3], indices: &[u32], colour: [f32; 3]) {
        let light = Vec3::new(-0.6, 0.7, 0.2).normalize();
        for tri in indices.chunks_exact(3) {
            if tri.iter().any(|&i| i as usize >= positions.len()) {
                continue;
            }
            let p = [0, 1, 2].map(|k| positions[tri[k] as usize]);
            let normal = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero();
            let shade = 0.35 + 0.65 * normal.dot(light).abs();
            let c = colour.map(|c| (c * shade * 255.0).clamp(0.0, 255.0) as u8);
            self.triangle(p.map(|v| view.project(v)), c);
        }
    }

    fn triangle(&mut self, q: [(Vec2, f32); 3], colour: [u8; 3]) {
        let (a, b, c) = (q[0].0, q[1].0, q[2].0);
        let area = (b - a).perp_dot(c - a);
        if area.abs() < 1e-9 {
            return;
        }
        let lo = a.min(b).min(c).floor().max(Vec2::ZERO);
        let hi = a
            .max(b)
            .max(c)
            .ceil()
            .min(Vec2::new(self.width as f32 - 1.0, self.height as f32 - 1.0));
        for y in lo.y as i32..=hi.y as i32 {
            for x in lo.x as i32..=hi.x as i32 {
                let p = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
                let w0 = (c - b).perp_dot(p - b) / area;
                let w1 = (a - c).perp_dot(p - c) / area;
                let w2 = 1.0 - w0 - w1;
                if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                    continue;
                }
                let depth = w0 * q[0].1 + w1 * q[1].1 + w2 * q[2].1;
                self.put(x, y, depth, colour);
            }
        }
    }

    /// Line segments between scene points, `thickness` pixels wide, drawn over everything.
    pub fn lines(
        &mut self,
        view: &View,
        segments: &[(Vec3, Vec3)],
        colour: [u8; 3],
        thickness: i32,
    ) {
        for &(a, b) in segments {
            let (pa, pb) = (view.project(a).0, view.project(b).0);
            let steps = (pb - pa).length().ceil().max(1.0) as i32;
            for k in 0..=steps {
                let p = pa.lerp(pb, k as f32 / steps as f32);
                for dy in -thickness / 2..=thickness / 2 {
                    for dx in -thickness / 2..=thickness / 2 {
                        self.put(p.x as i32 + dx, p.y as i32 + dy, f32::NEG_INFINITY, colour);
                    }
                }
            }
        }
    }

    pub fn into_image(self) -> Image {
        Image {
            width: self.width,
            height: self.height,
            rgba: self.rgba,
        }
    }
}
