//! Sprite clips: an atlas cut into cells, clips that play cells at a frame rate, and a player
//! stepped by the fixed tick (the far tier's impostors, or any flipbook). Plain data, usable on
//! its own.
//!
//! Conventions: atlas cells are pixel rectangles `[x, y, width, height]` with the origin at the
//! image's top-left; [`Atlas::uv`] gives `[u0, v0, u1, v1]` in the same orientation (v down, as
//! image rows). A player at tick `t` is at step `floor(offset · fps + t · speed · fps / rate)`
//! (seconds formed in f64; `rate` ticks per second), and a step shows frame `step mod n` (loop),
//! `min(step, n − 1)` (once) or the to-and-fro index of period `2(n − 1)` (ping-pong).
//!
//! Events: a step *enters* its frame when it is a new step of the clip's play (every step of a
//! loop or ping-pong, the steps of a once clip up to its last frame); each frame's events fire
//! once per step that enters it, so a jump over skipped ticks delivers every crossing, in step
//! order, bounded by the caller's capacity. The start step enters its frame on the first advance.

/// How a clip's steps map to its frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Playback {
    Loop,
    /// Holds the last frame.
    Once,
    /// First to last and back, the end frames shown once per pass.
    PingPong,
}

/// Why an atlas, clip or player was refused, or an advance could not deliver.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SpriteError {
    #[error("a {columns}×{rows} grid does not cut a {width}×{height} atlas into cells (each at least 1 px)")]
    Grid {
        columns: u32,
        rows: u32,
        width: u32,
        height: u32,
    },
    #[error(
        "cell {cell} [{x}, {y}, {w}, {h}] is empty or reaches outside the {width}×{height} atlas"
    )]
    Cell {
        cell: usize,
        x: u32,
        y: u32,
        w: u32,
        h: u32,
        width: u32,
        height: u32,
    },
    #[error("a sprite clip needs at least one frame")]
    NoFrames,
    #[error("frame {index} names cell {cell}; the atlas has {cells}")]
    NoCell {
        index: usize,
        cell: u32,
        cells: usize,
    },
    #[error("an event names frame {frame}; the clip has {frames}")]
    EventFrame { frame: u32, frames: usize },
    #[error("{what} is {value}; it must be finite and {rule}")]
    Value {
        what: &'static str,
        value: f64,
        rule: &'static str,
    },
    #[error("the advance would deliver more than {capacity} events (steps {from} to {to}); the player did not move")]
    Overflow { capacity: usize, from: u64, to: u64 },
}

/// An atlas's size and its cells, `[x, y, width, height]` in pixels.
#[derive(Clone, Debug, PartialEq)]
pub struct Atlas {
    pub width: u32,
    pub height: u32,
    cells: Vec<[u32; 4]>,
}

impl Atlas {
    /// `columns × rows` equal cells, numbered left to right, then top to bottom; a remainder of
    /// pixels past the last column or row is left out.
    pub fn grid(width: u32, height: u32, columns: u32, rows: u32) -> Result<Atlas, SpriteError> {
        let bad = SpriteError::Grid {
            columns,
            rows,
            width,
            height,
        };
        let (w, h) = (width.checked_div(columns), height.checked_div(rows));
        let (Some(w @ 1..), Some(h @ 1..)) = (w, h) else {
            return Err(bad);
        };
        let cells = (0..rows)
            .flat_map(|r| (0..columns).map(move |c| [c * w, r * h, w, h]))
            .collect();
        Ok(Atlas {
            width,
            height,
            cells,
        })
    }

    /// Explicit cells, each non-empty and inside the atlas.
    pub fn rects(width: u32, height: u32, cells: Vec<[u32; 4]>) -> Result<Atlas, SpriteError> {
        for (cell, &[x, y, w, h]) in cells.iter().enumerate() {
            let fits =
                |at: u32, n: u32, size: u32| n > 0 && at.checked_add(n).is_some_and(|e| e <= size);
            if !(fits(x, w, width) && fits(y, h, height)) {
                return Err(SpriteError::Cell {
                    cell,
                    x,
                    y,
                    w,
                    h,
                    width,
                    height,
                });
            }
        }
        Ok(Atlas {
            width,
            height,
            cells,
        })
    }

    pub fn cells(&self) -> usize {
        self.cells.len()
    }

    /// Cell `cell` as `[u0, v0, u1, v1]`: its top-left and bottom-right corners over the
    /// atlas's size.
    pub fn uv(&self, cell: usize) -> Option<[f32; 4]> {
        let [x, y, w, h] = *self.cells.get(cell)?;
        let (fw, fh) = (f64::from(self.width), f64::from(self.height));
        let u = |p: u32, size: f64| (f64::from(p) / size) as f32;
        Some([u(x, fw), u(y, fh), u(x + w, fw), u(y + h, fh)])
    }
}

/// Frames of an atlas played at `fps`, with events on frames.
#[derive(Clone, Debug, PartialEq)]
pub struct SpriteClip {
    /// Cells of the atlas, in play order.
    frames: Vec<u32>,
    fps: f64,
    playback: Playback,
    /// `(frame index, event id)`, in the order given; a frame's events fire in that order.
    events: Vec<(u32, u32)>,
}

impl SpriteClip {
    /// A clip of `frames` (cells of `atlas`) at `fps` frames per second (finite, positive).
    pub fn new(
        atlas: &Atlas,
        frames: Vec<u32>,
        fps: f64,
        playback: Playback,
        events: Vec<(u32, u32)>,
    ) -> Result<SpriteClip, SpriteError> {
        if frames.is_empty() {
            return Err(SpriteError::NoFrames);
        }
        if let Some((index, &cell)) =
            (frames.iter().enumerate()).find(|(_, &c)| c as usize >= atlas.cells())
        {
            return Err(SpriteError::NoCell {
                index,
                cell,
                cells: atlas.cells(),
            });
        }
        positive("fps", fps)?;
        if let Some(&(frame, _)) = events.iter().find(|(f, _)| *f as usize >= frames.len()) {
            return Err(SpriteError::EventFrame {
                frame,
                frames: frames.len(),
            });
        }
        Ok(SpriteClip {
            frames,
            fps,
            playback,
            events,
        })
    }

    pub fn fps(&self) -> f64 {
        self.fps
    }

    /// The frame index step `step` shows.
    pub fn frame_at(&self, step: u64) -> usize {
        let n = self.frames.len() as u64;
        let index = match self.playback {
            Playback::Loop => step % n,
            Playback::Once => step.min(n - 1),
            Playback::PingPong if n == 1 => 0,
            Playback::PingPong => {
                let k = step % (2 * (n - 1));
                if k < n {
                    k
                } else {
                    2 * (n - 1) - k
                }
            }
        };
        index as usize
    }

    /// The atlas cell of frame index `frame`.
    pub fn cell(&self, frame: usize) -> Option<u32> {
        self.frames.get(frame).copied()
    }

    /// Whether step `step` enters its frame (module doc): every step but a once clip's past
    /// its last frame.
    fn enters(&self, step: u64) -> bool {
        self.playback != Playback::Once || step < self.frames.len() as u64
    }
}

/// A fired event: the step that entered the frame, the frame index and the event's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpriteHit {
    pub step: u64,
    pub frame: u32,
    pub event: u32,
}

/// One instance's play of a sprite clip, stepped by ticks.
#[derive(Clone, Debug, PartialEq)]
pub struct SpritePlayer {
    /// Seconds into the clip at tick 0 (not negative).
    offset: f64,
    /// Clip seconds per second (not negative).
    speed: f64,
    /// Ticks per second.
    rate: f64,
    ticks: u64,
    /// The first step not delivered yet; `None` before the first advance (the start step is
    /// then the first).
    next: Option<u64>,
}

impl SpritePlayer {
    /// A player at tick 0, `offset` seconds into the clip, playing at `speed` (both finite,
    /// not negative) on a tick of `rate` per second (finite, positive).
    pub fn new(offset: f64, speed: f64, rate: f64) -> Result<SpritePlayer, SpriteError> {
        not_negative("offset", offset)?;
        not_negative("speed", speed)?;
        positive("tick rate", rate)?;
        Ok(SpritePlayer {
            offset,
            speed,
            rate,
            ticks: 0,
            next: None,
        })
    }

    /// The step at tick `ticks` of `clip`: `floor(offset · fps + ticks · speed · fps / rate)`.
    pub fn step_at(&self, clip: &SpriteClip, ticks: u64) -> u64 {
        let s = self.offset * clip.fps + ticks as f64 * self.speed * clip.fps / self.rate;
        s.floor() as u64
    }

    /// The step now.
    pub fn step(&self, clip: &SpriteClip) -> u64 {
        self.step_at(clip, self.ticks)
    }

    /// The frame index now.
    pub fn frame(&self, clip: &SpriteClip) -> usize {
        clip.frame_at(self.step(clip))
    }

    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// Advances `ticks` ticks (0: deliver the start's events only) and appends, in step order,
    /// the events of every step entered since the last advance, the start step included on the
    /// first. More than `capacity` events in all is an error that leaves the player unmoved
    /// and `hits` as it was.
    pub fn advance(
        &mut self,
        clip: &SpriteClip,
        ticks: u64,
        hits: &mut Vec<SpriteHit>,
        capacity: usize,
    ) -> Result<(), SpriteError> {
        let to_tick = self.ticks.saturating_add(ticks);
        let first = self.next.unwrap_or_else(|| self.step_at(clip, 0));
        let last = self.step_at(clip, to_tick);
        let start = hits.len();
        // Loop and ping-pong visit every frame once a period, so a frame with an event comes
        // round within a period and the scan stops at the capacity; a once clip enters nothing
        // past its last frame.
        if !clip.events.is_empty() {
            for step in (first..=last).take_while(|&s| clip.enters(s)) {
                let frame = clip.frame_at(step) as u32;
                for &(_, event) in clip.events.iter().filter(|(f, _)| *f == frame) {
                    if hits.len() - start == capacity {
                        hits.truncate(start);
                        return Err(SpriteError::Overflow {
                            capacity,
                            from: first,
                            to: last,
                        });
                    }
                    hits.push(SpriteHit { step, frame, event });
                }
            }
        }
        self.ticks = to_tick;
        self.next = Some(last + 1);
        Ok(())
    }
}

fn positive(what: &'static str, value: f64) -> Result<(), SpriteError> {
    match value.is_finite() && value > 0.0 {
        true => Ok(()),
        false => Err(SpriteError::Value {
            what,
            value,
            rule: "positive",
        }),
    }
}

fn not_negative(what: &'static str, value: f64) -> Result<(), SpriteError> {
    match value.is_finite() && value >= 0.0 {
        true => Ok(()),
        false => Err(SpriteError::Value {
            what,
            value,
            rule: "not negative",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn atlas() -> Atlas {
        Atlas::grid(256, 128, 4, 2).unwrap()
    }

    fn clip(n: u32, playback: Playback, events: Vec<(u32, u32)>) -> SpriteClip {
        SpriteClip::new(&atlas(), (0..n).collect(), 10.0, playback, events).unwrap()
    }

    #[test]
    fn a_grid_numbers_cells_left_to_right_then_top_to_bottom() {
        let a = atlas();
        assert_eq!(a.cells(), 8);
        assert_eq!(a.uv(0), Some([0.0, 0.0, 0.25, 0.5]));
        assert_eq!(a.uv(5), Some([0.25, 0.5, 0.5, 1.0]), "column 1 of row 1");
        assert_eq!(a.uv(8), None);
        let rects = Atlas::rects(100, 50, vec![[10, 5, 20, 40]]).unwrap();
        assert_eq!(rects.uv(0), Some([0.1, 0.1, 0.3, 0.9]));
        assert!(matches!(
            Atlas::grid(256, 128, 0, 2),
            Err(SpriteError::Grid { .. })
        ));
        assert!(matches!(
            Atlas::grid(3, 128, 4, 2),
            Err(SpriteError::Grid { .. })
        ));
        let outside = Atlas::rects(100, 50, vec![[0, 0, 10, 10], [95, 0, 10, 10]]);
        assert!(matches!(outside, Err(SpriteError::Cell { cell: 1, .. })));
        let empty = Atlas::rects(100, 50, vec![[0, 0, 0, 10]]);
        assert!(matches!(empty, Err(SpriteError::Cell { cell: 0, .. })));
    }

    #[test]
    fn steps_follow_offset_speed_and_tick_rate() {
        // floor(0.25 · 10 + t · 1 · 10 / 30) = floor(2.5 + t / 3).
        let c = clip(4, Playback::Loop, Vec::new());
        let p = SpritePlayer::new(0.25, 1.0, 30.0).unwrap();
        let steps: Vec<u64> = (0..8).map(|t| p.step_at(&c, t)).collect();
        assert_eq!(steps, [2, 2, 3, 3, 3, 4, 4, 4]);
        let double = SpritePlayer::new(0.0, 2.0, 10.0).unwrap();
        assert_eq!(double.step_at(&c, 3), 6, "two steps a tick");
    }

    #[test]
    fn loop_once_and_ping_pong_map_steps_to_frames() {
        let frames = |playback| {
            let c = clip(4, playback, Vec::new());
            (0..10).map(|s| c.frame_at(s)).collect::<Vec<_>>()
        };
        assert_eq!(frames(Playback::Loop), [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
        assert_eq!(frames(Playback::Once), [0, 1, 2, 3, 3, 3, 3, 3, 3, 3]);
        assert_eq!(frames(Playback::PingPong), [0, 1, 2, 3, 2, 1, 0, 1, 2, 3]);
        let single = clip(1, Playback::PingPong, Vec::new());
        assert_eq!(
            (0..3).map(|s| single.frame_at(s)).collect::<Vec<_>>(),
            [0, 0, 0]
        );
    }

    #[test]
    fn events_fire_once_per_step_entering_their_frame_even_over_skipped_ticks() {
        // One step per tick; events on frame 0 (id 7) and frame 2 (id 9).
        let c = clip(4, Playback::Loop, vec![(0, 7), (2, 9)]);
        let mut p = SpritePlayer::new(0.0, 1.0, 10.0).unwrap();
        let mut hits = Vec::new();
        p.advance(&c, 0, &mut hits, 8).unwrap();
        assert_eq!(
            hits,
            [SpriteHit {
                step: 0,
                frame: 0,
                event: 7
            }],
            "the start enters frame 0"
        );
        hits.clear();
        p.advance(&c, 1, &mut hits, 8).unwrap();
        assert!(hits.is_empty(), "step 1 shows frame 1");
        // Ticks 2 to 6 at once: steps 2 (frame 2), 4 (frame 0) and 6 (frame 2).
        let ids = |hits: &[SpriteHit]| hits.iter().map(|h| (h.step, h.event)).collect::<Vec<_>>();
        let before = p.clone();
        let refused = p.advance(&c, 5, &mut hits, 2);
        assert_eq!(
            refused,
            Err(SpriteError::Overflow {
                capacity: 2,
                from: 2,
                to: 6
            })
        );
        assert_eq!(
            (hits.len(), &p),
            (0, &before),
            "a refused advance changes nothing"
        );
        p.advance(&c, 5, &mut hits, 8).unwrap();
        assert_eq!(ids(&hits), [(2, 9), (4, 7), (6, 9)]);
        assert_eq!((p.ticks(), p.step(&c), p.frame(&c)), (6, 6, 2));
    }

    #[test]
    fn a_start_offset_skips_the_frames_before_it_and_once_clips_go_quiet_at_the_end() {
        // Offset 0.15 s at 10 fps: the start is step 1; events on frames 0 and 3 (ids 1, 2).
        let c = clip(4, Playback::Once, vec![(0, 1), (3, 2)]);
        let mut p = SpritePlayer::new(0.15, 1.0, 10.0).unwrap();
        let mut hits = Vec::new();
        p.advance(&c, 10, &mut hits, 8).unwrap();
        assert_eq!(
            hits,
            [SpriteHit {
                step: 3,
                frame: 3,
                event: 2
            }]
        );
        hits.clear();
        p.advance(&c, 1_000_000, &mut hits, 8).unwrap();
        assert!(hits.is_empty(), "held on the last frame, nothing enters");
        assert_eq!(p.frame(&c), 3);
    }

    #[test]
    fn ping_pong_fires_the_end_frame_once_per_pass() {
        // n = 3, period 4: steps 0..=6 show 0 1 2 1 0 1 2; an event on frame 2.
        let c = clip(3, Playback::PingPong, vec![(2, 5)]);
        let mut p = SpritePlayer::new(0.0, 2.0, 20.0).unwrap();
        let mut hits = Vec::new();
        p.advance(&c, 6, &mut hits, 8).unwrap();
        let steps: Vec<u64> = hits.iter().map(|h| h.step).collect();
        assert_eq!(steps, [2, 6]);
    }

    #[test]
    fn bad_clips_and_players_are_refused() {
        let a = atlas();
        let new = |frames: Vec<u32>, fps, events| {
            SpriteClip::new(&a, frames, fps, Playback::Loop, events)
        };
        assert_eq!(
            new(Vec::new(), 10.0, Vec::new()),
            Err(SpriteError::NoFrames)
        );
        assert!(matches!(
            new(vec![0, 8], 10.0, Vec::new()),
            Err(SpriteError::NoCell {
                index: 1,
                cell: 8,
                ..
            })
        ));
        assert!(matches!(
            new(vec![0], 0.0, Vec::new()),
            Err(SpriteError::Value { what: "fps", .. })
        ));
        assert!(matches!(
            new(vec![0], 10.0, vec![(1, 0)]),
            Err(SpriteError::EventFrame { frame: 1, .. })
        ));
        assert!(SpritePlayer::new(-0.1, 1.0, 30.0).is_err());
        assert!(SpritePlayer::new(0.0, f64::NAN, 30.0).is_err());
        assert!(SpritePlayer::new(0.0, 1.0, 0.0).is_err());
    }
}
