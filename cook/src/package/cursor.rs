//! A bounds-checked little-endian reader over one section of a package.

use super::PackageError;

/// Reads fields front to back. Every read checks the remaining length first and reports the
/// section, field and absolute byte offset when it falls short.
pub(super) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// File offset of `bytes[0]`.
    base: u64,
    section: &'static str,
}

impl<'a> Cursor<'a> {
    pub fn new(bytes: &'a [u8], base: u64, section: &'static str) -> Self {
        Cursor {
            bytes,
            pos: 0,
            base,
            section,
        }
    }

    pub fn section(&self) -> &'static str {
        self.section
    }

    /// File offset of the next byte to read.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn truncated(&self, what: &'static str, needed: u64) -> PackageError {
        PackageError::Truncated {
            section: self.section,
            what,
            offset: self.offset(),
            needed,
            available: self.remaining() as u64,
        }
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: u64, what: &'static str) -> Result<&'a [u8], PackageError> {
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| self.pos.checked_add(n));
        let slice = end
            .and_then(|end| self.bytes.get(self.pos..end))
            .ok_or_else(|| self.truncated(what, n))?;
        self.pos += slice.len();
        Ok(slice)
    }

    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], PackageError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N as u64, what)?);
        Ok(out)
    }

    pub fn u16(&mut self, what: &'static str) -> Result<u16, PackageError> {
        self.array(what).map(u16::from_le_bytes)
    }

    pub fn u32(&mut self, what: &'static str) -> Result<u32, PackageError> {
        self.array(what).map(u32::from_le_bytes)
    }

    pub fn u64(&mut self, what: &'static str) -> Result<u64, PackageError> {
        self.array(what).map(u64::from_le_bytes)
    }

    pub fn f32(&mut self, what: &'static str) -> Result<f32, PackageError> {
        self.array(what).map(f32::from_le_bytes)
    }

    pub fn f64(&mut self, what: &'static str) -> Result<f64, PackageError> {
        self.array(what).map(f64::from_le_bytes)
    }

    pub fn f32s<const N: usize>(&mut self, what: &'static str) -> Result<[f32; N], PackageError> {
        let mut out = [0f32; N];
        for v in &mut out {
            *v = self.f32(what)?;
        }
        Ok(out)
    }

    /// `n` bytes that must be zero (reserved fields and padding).
    pub fn zeros(&mut self, n: u64, what: &'static str) -> Result<(), PackageError> {
        let start = self.offset();
        let bytes = self.take(n, what)?;
        match bytes.iter().position(|&b| b != 0) {
            Some(i) => Err(PackageError::NonZeroPadding {
                section: self.section,
                offset: start + i as u64,
            }),
            None => Ok(()),
        }
    }

    /// Skips zero padding up to the next file offset that is a multiple of `align`.
    pub fn align(&mut self, align: u64) -> Result<(), PackageError> {
        let pad = self.offset().next_multiple_of(align) - self.offset();
        self.zeros(pad, "padding")
    }

    /// Reads `count` items of at least `item_size` bytes each. The count is checked against the
    /// remaining bytes before anything is allocated.
    pub fn vec<T>(
        &mut self,
        count: u32,
        item_size: u64,
        what: &'static str,
        mut read: impl FnMut(&mut Self, usize) -> Result<T, PackageError>,
    ) -> Result<Vec<T>, PackageError> {
        let needed = u64::from(count) * item_size;
        if needed > self.remaining() as u64 {
            return Err(self.truncated(what, needed));
        }
        let mut items = Vec::with_capacity(count as usize);
        for i in 0..count as usize {
            items.push(read(self, i)?);
        }
        Ok(items)
    }

    /// A cursor over the next `len` bytes, which this cursor skips.
    pub fn sub(&mut self, len: u64, what: &'static str) -> Result<Cursor<'a>, PackageError> {
        let base = self.offset();
        let bytes = self.take(len, what)?;
        Ok(Cursor::new(bytes, base, self.section))
    }

    /// Errors unless every byte has been read.
    pub fn finish(&self) -> Result<(), PackageError> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(PackageError::TrailingBytes {
                section: self.section,
                offset: self.offset(),
                count: count as u64,
            }),
        }
    }
}
