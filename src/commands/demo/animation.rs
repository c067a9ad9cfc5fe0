//! `throng demo --gif`: the rendered frames as one looping animated GIF, written frame by frame
//! as they are rendered (nothing kept but the encoder's state).
//!
//! GIF holds 256 colours per frame; each frame is quantised on its own by the `gif` crate's
//! NeuQuant (Anthony Dekker, "Kohonen neural networks for optimal colour quantization", 1994).
//! Frame delays are whole hundredths of a second, so the demo's 30 Hz becomes 3 cs (33.3 fps).
//! After the first frame, a pixel whose colour did not change is written transparent over the
//! frame before (disposal "keep"): the camera is fixed, so most of each frame compresses to runs
//! of one index.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use throng_gpu::raster::Image;

use super::super::CliError;

/// NeuQuant sampling step: 1 is slowest and best, 30 fastest; 10 is the crate's usual choice.
const QUANTISE_SPEED: i32 = 10;

/// An animated GIF being written.
pub struct GifWriter {
    path: PathBuf,
    encoder: gif::Encoder<BufWriter<File>>,
    width: u16,
    height: u16,
    /// Delay of each frame, hundredths of a second.
    delay: u16,
    rgba: Vec<u8>,
    /// The last frame pushed, as rendered (empty before the first).
    previous: Vec<u8>,
}

impl GifWriter {
    /// Creates `path` for `width` × `height` frames shown `frame_seconds` apart, looping.
    pub fn create(
        path: &Path,
        width: u32,
        height: u32,
        frame_seconds: f64,
    ) -> Result<GifWriter, CliError> {
        let (Ok(w), Ok(h)) = (u16::try_from(width), u16::try_from(height)) else {
            return Err(CliError::Usage(format!(
                "--gif: GIF images are at most 65 535 pixels a side; this one is {width} × {height}"
            )));
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| CliError::Io {
                path: dir.to_owned(),
                source,
            })?;
        }
        let file = File::create(path).map_err(|source| CliError::Io {
            path: path.to_owned(),
            source,
        })?;
        let fail = |e| gif_error(path, e);
        let mut encoder = gif::Encoder::new(BufWriter::new(file), w, h, &[]).map_err(fail)?;
        encoder.set_repeat(gif::Repeat::Infinite).map_err(fail)?;
        Ok(GifWriter {
            path: path.to_owned(),
            encoder,
            width: w,
            height: h,
            delay: (frame_seconds * 100.0).round().clamp(1.0, 65_535.0) as u16,
            rgba: Vec::new(),
            previous: Vec::new(),
        })
    }

    /// Appends `image` (the size the writer was created for) as the next frame.
    pub fn push(&mut self, image: &Image) -> Result<(), CliError> {
        if (image.width, image.height) != (u32::from(self.width), u32::from(self.height)) {
            return Err(CliError::Usage(format!(
                "{}: a {} × {} frame in a {} × {} GIF",
                self.path.display(),
                image.width,
                image.height,
                self.width,
                self.height
            )));
        }
        let pixels = usize::from(self.width) * usize::from(self.height);
        if image.rgba.len() != 4 * pixels {
            return Err(CliError::Usage(format!(
                "{}: a frame of {} bytes for {pixels} pixels",
                self.path.display(),
                image.rgba.len()
            )));
        }
        // The quantiser rewrites its input; the image stays the caller's.
        self.rgba.clear();
        self.rgba.extend_from_slice(&image.rgba);
        let unchanged = self
            .previous
            .chunks_exact(4)
            .zip(image.rgba.chunks_exact(4));
        for (out, _) in self
            .rgba
            .chunks_exact_mut(4)
            .zip(unchanged)
            .filter(|(_, (a, b))| a == b)
        {
            out.fill(0);
        }
        self.previous.clear();
        self.previous.extend_from_slice(&image.rgba);
        let mut frame =
            gif::Frame::from_rgba_speed(self.width, self.height, &mut self.rgba, QUANTISE_SPEED);
        frame.delay = self.delay;
        frame.dispose = gif::DisposalMethod::Keep;
        self.encoder
            .write_frame(&frame)
            .map_err(|e| gif_error(&self.path, e))
    }
}

impl GifWriter {
    /// Writes the trailer and flushes the file.
    pub fn finish(self) -> Result<(), CliError> {
        let io = |source| CliError::Io {
            path: self.path.clone(),
            source,
        };
        let mut file = self.encoder.into_inner().map_err(io)?;
        std::io::Write::flush(&mut file).map_err(io)
    }
}

fn gif_error(path: &Path, e: gif::EncodingError) -> CliError {
    match e {
        gif::EncodingError::Io(source) => CliError::Io {
            path: path.to_owned(),
            source,
        },
        e => CliError::Usage(format!("{}: GIF encoding failed: {e}", path.display())),
    }
}
