//! Reading and writing bit fields in a u32 word stream, least significant bit first
//! (the layout of [`super::layout`]).

/// The `n` bits (0 ..= 32) at bit `pos` of `words`, or `None` when they reach past the end.
/// Touches the second word only when the field crosses a word boundary.
pub fn read(words: &[u32], pos: u64, n: u32) -> Option<u32> {
    if n == 0 {
        return Some(0);
    }
    if n > 32 {
        return None;
    }
    let word = usize::try_from(pos / 32).ok()?;
    let shift = (pos % 32) as u32;
    let low = *words.get(word)? >> shift;
    let value = if shift + n > 32 {
        // shift > 0 here, so 32 - shift < 32.
        low | (*words.get(word.checked_add(1)?)? << (32 - shift))
    } else {
        low
    };
    Some(if n == 32 {
        value
    } else {
        value & ((1u32 << n) - 1)
    })
}

/// The bits of `words` from bit `pos` on, as many as the four words from `pos`'s hold (at least
/// 97: three 32-bit fields), bit 0 of the result being bit `pos`; words past the end read as
/// zero (the caller checks that the bits it uses lie in the stream).
pub fn window(words: &[u32], pos: u64) -> u128 {
    let word = usize::try_from(pos / 32).unwrap_or(usize::MAX);
    let four: [u32; 4] = match words.get(word..word.saturating_add(4)) {
        Some(&[a, b, c, d]) => [a, b, c, d],
        // Near the end of the stream: the words that exist, zeros past them.
        _ => std::array::from_fn(|k| {
            let w = word.checked_add(k).and_then(|i| words.get(i));
            w.copied().unwrap_or(0)
        }),
    };
    window_of(four, pos)
}

/// The bits of the four words `four` from bit `pos % 32` of the first on ([`window`] of the
/// words `pos` lies in).
#[inline]
pub fn window_of(four: [u32; 4], pos: u64) -> u128 {
    let [a, b, c, d] = four.map(u128::from);
    (a | b << 32 | c << 64 | d << 96) >> (pos % 32)
}

/// Appends bit fields to a word stream.
#[derive(Clone, Debug, Default)]
pub struct Writer {
    pub words: Vec<u32>,
    /// Bits written in total.
    pub len: u64,
}

impl Writer {
    /// Appends the low `n` bits (0 ..= 32) of `value`.
    pub fn write(&mut self, value: u32, n: u32) {
        debug_assert!(n <= 32);
        if n == 0 {
            return;
        }
        let value = if n == 32 {
            value
        } else {
            value & ((1u32 << n) - 1)
        };
        let shift = (self.len % 32) as u32;
        if shift == 0 {
            self.words.push(value);
        } else {
            if let Some(last) = self.words.last_mut() {
                *last |= value << shift;
            }
            if shift + n > 32 {
                self.words.push(value >> (32 - shift));
            }
        }
        self.len += u64::from(n);
    }

    /// Pads with zero bits to the next word boundary.
    pub fn align(&mut self) {
        self.len = self.words.len() as u64 * 32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_fields_read_back_across_word_boundaries() {
        let fields: Vec<(u32, u32)> = (0..200u32)
            .map(|i| (i.wrapping_mul(2_654_435_761), i % 33))
            .collect();
        let mut w = Writer::default();
        for &(v, n) in &fields {
            w.write(v, n);
        }
        let mut pos = 0;
        for &(v, n) in &fields {
            let want = if n == 32 { v } else { v & ((1u32 << n) - 1) };
            assert_eq!(
                read(&w.words, pos, n),
                Some(want),
                "field of {n} bits at {pos}"
            );
            pos += u64::from(n);
        }
        assert_eq!(pos, w.len);
    }

    #[test]
    fn a_window_holds_the_fields_a_read_gives() {
        let words = [
            0x8765_4321,
            0xfedc_ba98,
            0x0f0f_0f0f,
            0x1234_5678,
            0x9abc_def0,
        ];
        for pos in 0..160u64 {
            let window = window(&words, pos);
            // Three fields of up to 32 bits each, side by side, as a sample's x, y and z.
            let mut at = 0;
            for n in [32, 32, 32, 1, 7, 24, 13] {
                if pos + at + u64::from(n) > 160 || at + n as u64 > 96 {
                    break;
                }
                let field = (window >> at) as u32 & (u32::MAX >> (32 - n));
                assert_eq!(
                    Some(field),
                    read(&words, pos + at, n),
                    "{n} bits at {}",
                    pos + at
                );
                at += u64::from(n);
            }
        }
        assert_eq!(window(&words, 200), 0, "past the end reads as zero");
    }

    #[test]
    fn reads_past_the_end_are_none() {
        assert_eq!(read(&[0xffff_ffff], 16, 16), Some(0xffff));
        assert_eq!(read(&[0xffff_ffff], 17, 16), None);
        assert_eq!(read(&[], 0, 1), None);
        assert_eq!(read(&[], 0, 0), Some(0));
        assert_eq!(read(&[1, 2], 0, 33), None);
    }
}
