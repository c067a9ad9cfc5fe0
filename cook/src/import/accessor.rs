//! Checked accessor reading (glTF 2.0 §3.6.2). Every offset, stride, count and sparse index is
//! checked against the loaded buffers before a byte is read, so a malformed file is an error,
//! never a panic or an out-of-bounds read.

use gltf::accessor::{sparse::IndexType, DataType, Dimensions};
use gltf::Accessor;

use super::CookError;

/// Upper bound on the components of one accessor (256 MiB of f32), so a forged count cannot make
/// us allocate without bound (an accessor with no buffer view reads as zeros of any count).
const MAX_COMPONENTS: usize = 1 << 26;

/// The loaded buffers of one file, and its name for errors.
pub(super) struct Buffers<'a> {
    pub file: &'a str,
    pub data: &'a [gltf::buffer::Data],
}

impl Buffers<'_> {
    fn err(&self, accessor: &Accessor, reason: impl Into<String>) -> CookError {
        CookError::Accessor {
            file: self.file.to_string(),
            accessor: accessor.index(),
            reason: reason.into(),
        }
    }

    /// Components of a float accessor with `dims` per element, flattened. Normalised integer types
    /// are converted to [0, 1] / [-1, 1] as glTF §3.11 specifies; `allowed` lists the accepted
    /// component types. Values are not checked for finiteness here (callers name the place).
    pub fn floats(
        &self,
        accessor: &Accessor,
        dims: Dimensions,
        allowed: &[DataType],
    ) -> Result<Vec<f32>, CookError> {
        let ty = accessor.data_type();
        if ty != DataType::F32 && !accessor.normalized() {
            return Err(self.err(
                accessor,
                format!("{ty:?} components must be normalized here"),
            ));
        }
        self.read(accessor, dims, allowed, |b| decode_float(ty, b))
    }

    /// Components of an unsigned integer accessor (indices, joint indices), flattened.
    pub fn uints(
        &self,
        accessor: &Accessor,
        dims: Dimensions,
        allowed: &[DataType],
    ) -> Result<Vec<u32>, CookError> {
        let ty = accessor.data_type();
        self.read(accessor, dims, allowed, |b| decode_uint(ty, b))
    }

    fn read<T: Copy + Default>(
        &self,
        accessor: &Accessor,
        dims: Dimensions,
        allowed: &[DataType],
        decode: impl Fn(&[u8]) -> T,
    ) -> Result<Vec<T>, CookError> {
        let ty = accessor.data_type();
        if accessor.dimensions() != dims {
            return Err(self.err(
                accessor,
                format!("is {:?}, expected {dims:?}", accessor.dimensions()),
            ));
        }
        if !allowed.contains(&ty) {
            return Err(self.err(
                accessor,
                format!("has component type {ty:?}, expected one of {allowed:?}"),
            ));
        }
        if matches!(dims, Dimensions::Mat2 | Dimensions::Mat3) {
            // Column padding rules of small matrices are not needed by anything Throng reads.
            return Err(self.err(accessor, "2x2 and 3x3 matrix accessors are not supported"));
        }
        let count = accessor.count();
        let comp = ty.size();
        let n = dims.multiplicity();
        let elem = comp * n;
        if count == 0 || count.saturating_mul(n) > MAX_COMPONENTS {
            return Err(self.err(
                accessor,
                format!(
                    "has count {count}; expected 1 to {} components",
                    MAX_COMPONENTS
                ),
            ));
        }
        // Check the whole range before allocating, so a forged count cannot reserve memory.
        let dense = match accessor.view() {
            Some(view) => {
                let bytes = self.view_bytes(accessor, &view)?;
                let stride = view.stride().unwrap_or(elem);
                if stride < elem {
                    return Err(self.err(
                        accessor,
                        format!("byte stride {stride} is smaller than its element ({elem} bytes)"),
                    ));
                }
                let start = accessor.offset();
                let end = stride
                    .checked_mul(count - 1)
                    .and_then(|x| x.checked_add(start))
                    .and_then(|x| x.checked_add(elem))
                    .filter(|&end| end <= bytes.len())
                    .ok_or_else(|| self.err(accessor, "reaches past the end of its buffer view"))?;
                Some((&bytes[start..end], stride))
            }
            None => None,
        };
        let mut out = vec![T::default(); count * n];
        if let Some((bytes, stride)) = dense {
            for (i, dst) in out.chunks_exact_mut(n).enumerate() {
                let e = &bytes[i * stride..i * stride + elem];
                for (d, c) in dst.iter_mut().zip(e.chunks_exact(comp)) {
                    *d = decode(c);
                }
            }
        }
        if let Some(sparse) = accessor.sparse() {
            let k = sparse.count();
            if k == 0 || k > count {
                return Err(self.err(accessor, format!("sparse count {k} is not in 1..={count}")));
            }
            let idx = sparse.indices();
            let idx_size = match idx.index_type() {
                IndexType::U8 => 1,
                IndexType::U16 => 2,
                IndexType::U32 => 4,
            };
            let idx_ty = match idx.index_type() {
                IndexType::U8 => DataType::U8,
                IndexType::U16 => DataType::U16,
                IndexType::U32 => DataType::U32,
            };
            let idx_bytes = self.sparse_bytes(accessor, &idx.view(), idx.offset(), k * idx_size)?;
            let values = sparse.values();
            let val_bytes =
                self.sparse_bytes(accessor, &values.view(), values.offset(), k * elem)?;
            let mut previous: Option<usize> = None;
            for (ib, vb) in idx_bytes
                .chunks_exact(idx_size)
                .zip(val_bytes.chunks_exact(elem))
            {
                let i = decode_uint(idx_ty, ib) as usize;
                if i >= count || previous.is_some_and(|p| i <= p) {
                    return Err(self.err(
                        accessor,
                        "sparse indices must be strictly increasing and below count",
                    ));
                }
                previous = Some(i);
                for (d, c) in out[i * n..(i + 1) * n]
                    .iter_mut()
                    .zip(vb.chunks_exact(comp))
                {
                    *d = decode(c);
                }
            }
        }
        Ok(out)
    }

    /// The bytes of a buffer view, checked against the loaded buffer.
    fn view_bytes(
        &self,
        accessor: &Accessor,
        view: &gltf::buffer::View,
    ) -> Result<&[u8], CookError> {
        let buffer = self
            .data
            .get(view.buffer().index())
            .ok_or_else(|| self.err(accessor, "names a buffer that was not loaded"))?;
        let start = view.offset();
        start
            .checked_add(view.length())
            .and_then(|end| buffer.get(start..end))
            .ok_or_else(|| {
                self.err(
                    accessor,
                    format!("buffer view {} lies outside its buffer", view.index()),
                )
            })
    }

    /// `len` bytes at `offset` of a sparse indices / values view (tightly packed per glTF).
    fn sparse_bytes(
        &self,
        accessor: &Accessor,
        view: &gltf::buffer::View,
        offset: usize,
        len: usize,
    ) -> Result<&[u8], CookError> {
        let bytes = self.view_bytes(accessor, view)?;
        offset
            .checked_add(len)
            .and_then(|end| bytes.get(offset..end))
            .ok_or_else(|| {
                self.err(
                    accessor,
                    "sparse data reaches past the end of its buffer view",
                )
            })
    }
}

fn decode_float(ty: DataType, b: &[u8]) -> f32 {
    match ty {
        DataType::I8 => (b[0] as i8 as f32 / 127.0).max(-1.0),
        DataType::U8 => b[0] as f32 / 255.0,
        DataType::I16 => (i16::from_le_bytes([b[0], b[1]]) as f32 / 32767.0).max(-1.0),
        DataType::U16 => u16::from_le_bytes([b[0], b[1]]) as f32 / 65535.0,
        DataType::U32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32 / u32::MAX as f32,
        DataType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
    }
}

fn decode_uint(ty: DataType, b: &[u8]) -> u32 {
    match ty {
        DataType::I8 | DataType::U8 => b[0] as u32,
        DataType::I16 | DataType::U16 => u16::from_le_bytes([b[0], b[1]]) as u32,
        DataType::U32 | DataType::F32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
    }
}
