//! [`PackedMatrix`]: the GEMM's weight operand `A[k, m]`, packed once into column panels
//! of [`PANEL`] columns, in `f32` or 16-bit floats; its panel geometry.

use super::{ASrc, PANEL};
use crate::gemv_half::{half_to_f32, round_to_half};
use crate::HalfKind;

/// A weight matrix `A[k, m]` packed into column panels of [`PANEL`] columns: panel `p`
/// holds the columns `p·PANEL ..` of every row `0..k`, row-major, so the micro-kernels
/// read `A` sequentially. Built once, read by any number of threads.
///
/// The values are `f32`, or 16-bit floats ([`PackedMatrix::to_half`]: half the bytes)
/// that the GEMM widens to `f32` exactly, one `KC × PANEL` block at a time (F16C /
/// AVX-512 `vcvtph2ps`, NEON `fcvtl`, a shift for `bf16`, or the scalar conversion),
/// before the same `f32` micro-kernels run: a 16-bit matrix gives, on every ISA, the bits
/// of the `f32` GEMM over its widened values.
#[derive(Debug, Clone)]
pub struct PackedMatrix {
    k: usize,
    m: usize,
    data: Store,
}

/// The packed values of a [`PackedMatrix`].
#[derive(Debug, Clone)]
enum Store {
    F32(Vec<f32>),
    Half(Vec<u16>, HalfKind),
}

/// A value that a 16-bit [`PackedMatrix::to_half`] cannot hold: it would round to an
/// infinity (or is not finite).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HalfOutOfRange {
    /// The offending value.
    pub value: f32,
    /// Its row `kk` of `A` (the input channel, or the conv tap and channel).
    pub row: usize,
    /// Its column `mm` of `A` (the output channel).
    pub col: usize,
}

impl PackedMatrix {
    /// Packs `A[k, m] = f(k, m)` (`f` is called once per element, `kk < k`, `mm < m`).
    pub fn from_fn(k: usize, m: usize, f: impl Fn(usize, usize) -> f32) -> Self {
        let panels = m.div_ceil(PANEL);
        let mut data = vec![0f32; panels.saturating_sub(1) * k * PANEL + k * last_width(m)];
        for p in 0..panels {
            let (off, lda, w) = panel_geometry(k, m, p);
            for kk in 0..k {
                let row = &mut data[off + kk * lda..off + kk * lda + w];
                for (j, v) in row.iter_mut().enumerate() {
                    *v = f(kk, p * PANEL + j);
                }
            }
        }
        Self {
            k,
            m,
            data: Store::F32(data),
        }
    }

    /// The same matrix stored as 16-bit floats of `kind` (each value rounded to nearest,
    /// ties to even, as PyTorch's `.half()` / `.bfloat16()`): half the bytes; every GEMM
    /// with it computes in `f32` on the exactly widened values. A 16-bit matrix is
    /// returned as it is when `kind` is its kind, and converted otherwise (rounding its
    /// widened values).
    ///
    /// # Errors
    /// [`HalfOutOfRange`] for the first value (row by row of `A`) that is not finite or
    /// that rounds to an infinity in `kind` (`|v| ≥ 65520` for `f16`).
    pub fn to_half(&self, kind: HalfKind) -> Result<Self, HalfOutOfRange> {
        if self.half_kind() == Some(kind) {
            return Ok(self.clone());
        }
        let mut bits = Vec::with_capacity(self.len());
        for p in 0..self.panels() {
            let (off, lda, w) = panel_geometry(self.k, self.m, p);
            for kk in 0..self.k {
                for j in 0..lda {
                    let v = self.value(off + kk * lda + j);
                    let h = round_to_half(v, kind);
                    if j < w && !half_to_f32(h, kind).is_finite() {
                        return Err(HalfOutOfRange {
                            value: v,
                            row: kk,
                            col: p * PANEL + j,
                        });
                    }
                    bits.push(h);
                }
            }
        }
        Ok(Self {
            k: self.k,
            m: self.m,
            data: Store::Half(bits, kind),
        })
    }

    /// The 16-bit format of the values, `None` for `f32`.
    pub fn half_kind(&self) -> Option<HalfKind> {
        match self.data {
            Store::F32(_) => None,
            Store::Half(_, kind) => Some(kind),
        }
    }

    /// Bytes the packed values take (padding included).
    pub fn bytes(&self) -> usize {
        match &self.data {
            Store::F32(v) => 4 * v.len(),
            Store::Half(v, _) => 2 * v.len(),
        }
    }

    /// Packed values (padding included).
    fn len(&self) -> usize {
        match &self.data {
            Store::F32(v) => v.len(),
            Store::Half(v, _) => v.len(),
        }
    }

    /// Packed value `i` as `f32`.
    fn value(&self, i: usize) -> f32 {
        match &self.data {
            Store::F32(v) => v[i],
            Store::Half(v, kind) => half_to_f32(v[i], *kind),
        }
    }

    /// The drivers' description of the matrix.
    pub(super) fn src(&self) -> ASrc {
        match &self.data {
            Store::F32(v) => ASrc::Packed(v.as_ptr(), self.k, self.m),
            Store::Half(v, kind) => ASrc::PackedHalf(v.as_ptr(), self.k, self.m, *kind),
        }
    }

    /// Packs a row-major `[m, k]` matrix `w` (an `nn.Linear` weight `[out, in]`) as
    /// `A = Wᵀ` (`A[kk, mm] = w[mm·k + kk] · scale(mm)`): each row `mm` of `w` (output
    /// channel) scaled by `scale(mm)`, e.g. a LayerScale folded into the weights.
    ///
    /// # Panics
    /// If `w.len() != m · k`.
    pub fn from_linear(w: &[f32], m: usize, k: usize, scale: impl Fn(usize) -> f32) -> Self {
        assert_eq!(
            w.len(),
            m * k,
            "PackedMatrix::from_linear: weight has {} elements, expected {m} × {k}",
            w.len()
        );
        Self::from_fn(k, m, |kk, mm| w[mm * k + kk] * scale(mm))
    }

    /// Rows of `A` (the depth `k` of the product).
    pub fn k(&self) -> usize {
        self.k
    }

    /// Columns of `A` (the outputs `m` of the product).
    pub fn m(&self) -> usize {
        self.m
    }

    pub(super) fn panels(&self) -> usize {
        self.m.div_ceil(PANEL)
    }
}

/// Width in floats of the last panel of an `m`-column matrix.
fn last_width(m: usize) -> usize {
    if m == 0 {
        return 0;
    }
    let rem = m - (m.div_ceil(PANEL) - 1) * PANEL;
    rem.div_ceil(16) * 16
}

/// `(offset, lda, real width)` of panel `p`.
pub(super) fn panel_geometry(k: usize, m: usize, p: usize) -> (usize, usize, usize) {
    let panels = m.div_ceil(PANEL);
    let off = p * k * PANEL;
    if p + 1 == panels {
        (off, last_width(m), m - p * PANEL)
    } else {
        (off, PANEL, PANEL)
    }
}
