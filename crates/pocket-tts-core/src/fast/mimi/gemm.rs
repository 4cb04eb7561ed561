//! Tiled f32 GEMM for the Mimi fast path: `C[n, m] (+)= Σ_k B[n, k] · A[k, m]`. It stands
//! in for the matrix products under the reference's convs and linear layers
//! (`modules/conv.py`, `modules/transformer.py`, `modules/attention.py` of `pocket-tts`
//! 4.0.1).
//!
//! Activations are time-major (`[T, C]`, one row per step), so every Mimi op is a GEMM
//! with the activations as `B` (rows `n` = steps) and the weights as `A`:
//!
//! * linear layers: `A[k, m] = W[m, k]`;
//! * causal convs: the im2col row of output step `t` is the run of input rows
//!   `t·S .. t·S + K` of the time-major input buffer, which is *contiguous* in memory
//!   (dilation 1), so `B` is read in place with a row stride of `S·C_in` and no im2col copy.
//!   Dilated convs use several "taps" (`B[n, (j, c)] = x[n·ldb + j·tap_stride + c]`);
//! * transposed convs: one GEMM to `[T, K·C_out]` followed by an overlap-add.
//!
//! `A` is either packed once into column panels of [`PANEL`] columns (`[K][PANEL]`
//! each, the last panel rounded up to 16 columns with zeros) or a plain strided
//! row-major matrix (attention: `Kᵀ` and `V`). The loops here are blocked over `n`
//! ([`NC`] rows) and `k` ([`KC`]) so a panel block stays in L1/L2; each block goes to a
//! micro-kernel of `gemm_kernels.rs` (AVX-512F, AVX2+FMA or portable scalar, chosen at run
//! time by `pocket_tts_simd::detected()`, so `POCKET_TTS_SIMD` applies).

use std::ops::Range;

use super::gemm_kernels::{block, Mode, Tile};
use crate::fast::columns::ColumnBlock;

/// Columns per packed panel (four AVX-512 vectors).
pub(super) const PANEL: usize = 64;
/// `k` block: a `KC × PANEL` block of `A` is 64 KiB.
const KC: usize = 256;
/// `n` block: rows of `B`/`C` processed per pass over the panels (a multiple of every
/// micro-tile height).
const NC: usize = 192;

/// How the first `k` block initialises `C`.
#[derive(Clone, Copy, Debug)]
pub(super) enum Init<'a> {
    /// `C = A·B`.
    Zero,
    /// `C += A·B`.
    Accumulate,
    /// `C = A·B + bias` (`bias` has at least `m` entries).
    Bias(&'a [f32]),
}

/// A weight matrix `A[k, m]` packed into column panels.
#[derive(Debug, Clone)]
pub(super) struct PackedMatrix {
    k: usize,
    m: usize,
    data: Vec<f32>,
}

impl PackedMatrix {
    /// Packs `A[k, m] = f(k, m)`.
    pub(super) fn from_fn(k: usize, m: usize, f: impl Fn(usize, usize) -> f32) -> Self {
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
        Self { k, m, data }
    }

    /// Packs a row-major `[m, k]` matrix (a `nn.Linear` weight) as `A = Wᵀ`, each row
    /// `i` scaled by `scale(i)`.
    pub(super) fn from_linear(w: &[f32], m: usize, k: usize, scale: impl Fn(usize) -> f32) -> Self {
        assert_eq!(w.len(), m * k, "linear weight size");
        Self::from_fn(k, m, |kk, mm| w[mm * k + kk] * scale(mm))
    }

    pub(super) fn k(&self) -> usize {
        self.k
    }

    pub(super) fn m(&self) -> usize {
        self.m
    }

    fn panels(&self) -> usize {
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
fn panel_geometry(k: usize, m: usize, p: usize) -> (usize, usize, usize) {
    let panels = m.div_ceil(PANEL);
    let off = p * k * PANEL;
    if p + 1 == panels {
        (off, last_width(m), m - p * PANEL)
    } else {
        (off, PANEL, PANEL)
    }
}

/// The `B` operand: `B[n, (j, c)] = data[n·ldb + j·tap_stride + c]` for `j < taps`,
/// `c < tap_len` (so `k = taps · tap_len`).
#[derive(Clone, Copy, Debug)]
pub(super) struct BView<'a> {
    pub(super) data: &'a [f32],
    pub(super) rows: usize,
    pub(super) ldb: usize,
    pub(super) taps: usize,
    pub(super) tap_stride: usize,
    pub(super) tap_len: usize,
}

impl<'a> BView<'a> {
    /// A plain row-major `[rows, k]` matrix with row stride `ldb`.
    pub(super) fn dense(data: &'a [f32], rows: usize, k: usize, ldb: usize) -> Self {
        Self {
            data,
            rows,
            ldb,
            taps: 1,
            tap_stride: 0,
            tap_len: k,
        }
    }

    fn k(&self) -> usize {
        self.taps * self.tap_len
    }

    fn check(&self) {
        if self.rows == 0 || self.k() == 0 {
            return;
        }
        let last = (self.rows - 1) * self.ldb + (self.taps - 1) * self.tap_stride + self.tap_len;
        assert!(
            last <= self.data.len(),
            "gemm: B view needs {last} elements, has {}",
            self.data.len()
        );
    }
}

/// Raw description of `A` for the drivers.
#[derive(Clone, Copy)]
enum ASrc {
    /// Packed panels: base pointer, k, m.
    Packed(*const f32, usize, usize),
    /// Strided row-major `[k, m]`: base pointer, lda, m.
    Strided(*const f32, usize, usize),
}

impl ASrc {
    fn m(&self) -> usize {
        match *self {
            ASrc::Packed(_, _, m) | ASrc::Strided(_, _, m) => m,
        }
    }

    /// `(pointer to row 0 of panel p, lda, real width)`, for `p` below the panel count
    /// (`m.div_ceil(PANEL)`). Only computes the pointer (wrapping: with `k = 0` it may
    /// point past an empty matrix, and is then never read).
    fn panel(&self, p: usize) -> (*const f32, usize, usize) {
        match *self {
            ASrc::Packed(ptr, k, m) => {
                let (off, lda, w) = panel_geometry(k, m, p);
                (ptr.wrapping_add(off), lda, w)
            }
            ASrc::Strided(ptr, lda, m) => {
                (ptr.wrapping_add(p * PANEL), lda, (m - p * PANEL).min(PANEL))
            }
        }
    }
}

#[derive(Clone, Copy)]
struct BRaw {
    ptr: *const f32,
    rows: usize,
    ldb: usize,
    taps: usize,
    tap_stride: usize,
    tap_len: usize,
}

impl BRaw {
    fn from_view(b: &BView) -> Self {
        Self {
            ptr: b.data.as_ptr(),
            rows: b.rows,
            ldb: b.ldb,
            taps: b.taps,
            tap_stride: b.tap_stride,
            tap_len: b.tap_len,
        }
    }
}

/// `C[n, m] (+)= Σ B[n, k]·A[k, m]` with packed `A`; `C` row `i` at `c[i·ldc..]`.
pub(super) fn gemm_packed(a: &PackedMatrix, b: BView, c: &mut [f32], ldc: usize, init: Init) {
    assert_eq!(
        b.k(),
        a.k,
        "gemm: B has k = {} but A has k = {}",
        b.k(),
        a.k
    );
    b.check();
    check_c(c.len(), b.rows, a.m, ldc);
    check_init(&init, a.m);
    // SAFETY: `a` is a whole packed matrix with `k` matching `b`, `b` and `c` were checked
    // to hold `b.rows` rows (`check_c`: `(rows − 1)·ldc + m <= c.len()`, so every column
    // of every row), `init`'s bias has `m` entries, and `c` is exclusively borrowed.
    unsafe {
        drive(
            ASrc::Packed(a.data.as_ptr(), a.k, a.m),
            BRaw::from_view(&b),
            c.as_mut_ptr(),
            ldc,
            init,
            0..a.panels(),
        )
    }
}

/// Like [`gemm_packed`] but only for the columns of `c` (one block of a
/// [`ColumnSplit`](crate::internals::fast::columns::ColumnSplit) of `C`, for splitting one GEMM across
/// threads by columns), which must be whole panels: the block's columns start at a
/// multiple of [`PANEL`] and end at one or at `m`. `C` is the split's matrix: `b.rows`
/// rows (at most) of `a.m()` columns with leading dimension `c.ld()`.
///
/// # Panics
/// If `B` and `A` disagree on `k`, `B` is too short, the block's matrix is not
/// `≥ b.rows × a.m()`, its columns are not whole panels, or a bias is too short.
pub(super) fn gemm_packed_cols(a: &PackedMatrix, b: BView, c: &ColumnBlock, init: Init) {
    let cols = c.cols();
    if cols.is_empty() {
        return;
    }
    assert_eq!(
        b.k(),
        a.k,
        "gemm: B has k = {} but A has k = {}",
        b.k(),
        a.k
    );
    assert_eq!(
        c.width(),
        a.m,
        "gemm: C has {} columns, A has m = {}",
        c.width(),
        a.m
    );
    assert!(
        b.rows <= c.rows(),
        "gemm: C has {} rows, B has {}",
        c.rows(),
        b.rows
    );
    assert!(
        cols.start.is_multiple_of(PANEL) && (cols.end == a.m || cols.end.is_multiple_of(PANEL)),
        "gemm: columns {cols:?} are not whole panels of {PANEL}"
    );
    b.check();
    check_init(&init, a.m);
    // SAFETY: `drive` touches, for each panel `p` of `panels`, the elements of `C` in rows
    // `0..b.rows` (`<= c.rows()`) and columns `p·PANEL .. p·PANEL + width(p)` with
    // `width(p) = min(PANEL, m − p·PANEL)`; for `p` in `panels` those columns lie in
    // `cols` (whole panels, checked above), which the block gives this call exclusive
    // access to (`ColumnBlock::base`) with leading dimension `c.ld()`. `A` and `B` are
    // read within their bounds (packed `A` holds every panel of `a`, `b` checked above).
    unsafe {
        drive(
            ASrc::Packed(a.data.as_ptr(), a.k, a.m),
            BRaw::from_view(&b),
            c.base(),
            c.ld(),
            init,
            cols.start / PANEL..cols.end.div_ceil(PANEL),
        )
    }
}

/// `C[n, m] (+)= Σ B[n, k]·A[k, m]` with a strided row-major `A` (`A[k, m] = a[k·lda + m]`).
#[allow(clippy::too_many_arguments)]
pub(super) fn gemm_strided(
    a: &[f32],
    lda: usize,
    k: usize,
    m: usize,
    b: BView,
    c: &mut [f32],
    ldc: usize,
    init: Init,
) {
    assert_eq!(b.k(), k, "gemm: B has k = {} but A has k = {k}", b.k());
    if k > 0 && m > 0 {
        assert!((k - 1) * lda + m <= a.len(), "gemm: A too short");
    }
    b.check();
    check_c(c.len(), b.rows, m, ldc);
    check_init(&init, m);
    // SAFETY: `a` holds `k` rows of `m` columns at stride `lda` (checked when both are
    // non-zero; with `k = 0` nothing of `A` or `B` is read), `b` and `c` were checked to
    // hold `b.rows` rows, `init`'s bias has `m` entries, and `c` is exclusively borrowed.
    unsafe {
        drive(
            ASrc::Strided(a.as_ptr(), lda, m),
            BRaw::from_view(&b),
            c.as_mut_ptr(),
            ldc,
            init,
            0..m.div_ceil(PANEL),
        )
    }
}

fn check_c(len: usize, rows: usize, m: usize, ldc: usize) {
    if rows == 0 || m == 0 {
        return;
    }
    assert!(ldc >= m || rows == 1, "gemm: ldc {ldc} < m {m}");
    let need = (rows - 1) * ldc + m;
    assert!(need <= len, "gemm: C needs {need} elements, has {len}");
}

fn check_init(init: &Init, m: usize) {
    if let Init::Bias(b) = init {
        assert!(b.len() >= m, "gemm: bias has {} entries, need {m}", b.len());
    }
}

/// Blocked loops shared by every ISA: the columns of panels `panels` of
/// `C[n, m] (+)= Σ B[n, k]·A[k, m]` (`n = b.rows`, `k = b.taps·b.tap_len`).
///
/// # Safety
/// * `a` describes a readable matrix with `k` rows: every panel `p` of `panels` (below
///   `m.div_ceil(PANEL)`) has its `k` rows of `width(p)` values at `a.panel(p)`;
/// * `b` is readable: `b.ptr[i·ldb + j·tap_stride + c]` for `i < n`, `j < taps`,
///   `c < tap_len`;
/// * `c[i·ldc + col]` is readable and writable for `i < n` and every column `col` of the
///   panels `panels` (`p·PANEL .. p·PANEL + width(p)`, `width(p) = min(PANEL, m −
///   p·PANEL)`), and nothing else accesses those elements during the call;
/// * a bias in `init` has at least `m` entries.
unsafe fn drive(a: ASrc, b: BRaw, c: *mut f32, ldc: usize, init: Init, panels: Range<usize>) {
    let n = b.rows;
    if n == 0 || a.m() == 0 || panels.is_empty() {
        return;
    }
    let isa = pocket_tts_simd::detected();
    let (first_mode, bias) = match init {
        Init::Zero => (Mode::Zero, std::ptr::null()),
        Init::Accumulate => (Mode::Load, std::ptr::null()),
        Init::Bias(bs) => (Mode::Bias, bs.as_ptr()),
    };
    // k blocks: (offset in A rows, offset in a B row, depth).
    let tap_blocks = b.tap_len.div_ceil(KC).max(1);
    let mut nc0 = 0;
    while nc0 < n {
        let nc = NC.min(n - nc0);
        for p in panels.clone() {
            let (ap, lda, width) = a.panel(p);
            for tap in 0..b.taps {
                for blk in 0..tap_blocks {
                    let c0 = blk * KC;
                    let kc = KC.min(b.tap_len - c0.min(b.tap_len));
                    let first = tap == 0 && blk == 0;
                    // Rows `nc0..nc0 + nc` of `B`/`C`, `A` rows `tap·tap_len + c0 ..
                    // + kc` of panel `p`. The pointers are only computed here (wrapping:
                    // with `kc = 0` they may point past empty operands, never read).
                    let tile = Tile {
                        a: ap.wrapping_add((tap * b.tap_len + c0) * lda),
                        lda,
                        b: b.ptr.wrapping_add(nc0 * b.ldb + tap * b.tap_stride + c0),
                        ldb: b.ldb,
                        c: c.wrapping_add(nc0 * ldc + p * PANEL),
                        ldc,
                        kc,
                        width,
                        mode: if first { first_mode } else { Mode::Load },
                        bias: if bias.is_null() {
                            bias
                        } else {
                            bias.wrapping_add(p * PANEL)
                        },
                    };
                    // SAFETY: the tile is valid for `nc` rows (see `Tile`): its rows
                    // `nc0 + i < n` of `B` and `C`, its depth `c0 + kc <= tap_len` within
                    // tap `tap < taps`, its columns the `width <= PANEL` real columns of
                    // panel `p`, and its bias entries `p·PANEL + j < m`, all of which the
                    // caller vouches for, `C`'s exclusively; `isa` is the detected one.
                    unsafe { block(isa, nc, tile) };
                }
            }
        }
        nc0 += nc;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> f32 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 40) as f32 / (1u64 << 24) as f32) - 0.5
    }

    fn reference(
        a: impl Fn(usize, usize) -> f32,
        b: &BView,
        m: usize,
        init: &[f32],
        ldc: usize,
    ) -> Vec<f32> {
        let mut c = init.to_vec();
        for n in 0..b.rows {
            for mm in 0..m {
                let mut acc = c[n * ldc + mm] as f64;
                for j in 0..b.taps {
                    for cc in 0..b.tap_len {
                        acc += b.data[n * b.ldb + j * b.tap_stride + cc] as f64
                            * a(j * b.tap_len + cc, mm) as f64;
                    }
                }
                c[n * ldc + mm] = acc as f32;
            }
        }
        c
    }

    #[test]
    fn packed_and_strided_match_reference() {
        let mut seed = 1u64;
        for &(rows, m, taps, tap_len, tap_stride, ldb) in &[
            (1, 1, 1, 7, 0, 1),
            (16, 1536, 1, 512, 0, 512),
            (37, 100, 3, 33, 40, 50),
            (200, 64, 1, 300, 0, 310),
            (13, 17, 2, 5, 9, 3),
            (250, 130, 1, 600, 0, 600),
        ] {
            let k = taps * tap_len;
            let a: Vec<f32> = (0..k * m).map(|_| lcg(&mut seed)).collect();
            let need = (rows - 1) * ldb + (taps - 1) * tap_stride + tap_len;
            let bd: Vec<f32> = (0..need).map(|_| lcg(&mut seed)).collect();
            let b = BView {
                data: &bd,
                rows,
                ldb,
                taps,
                tap_stride,
                tap_len,
            };
            let ldc = m + 3;
            let c0: Vec<f32> = (0..rows * ldc).map(|_| lcg(&mut seed)).collect();
            let bias: Vec<f32> = (0..m).map(|_| lcg(&mut seed)).collect();
            let packed = PackedMatrix::from_fn(k, m, |kk, mm| a[kk * m + mm]);
            let af = |kk: usize, mm: usize| a[kk * m + mm];
            let tol = 1e-4 * (k as f32).sqrt();
            let check = |got: &[f32], want: &[f32], what: &str| {
                for n in 0..rows {
                    for j in 0..ldc {
                        let (g, w) = (got[n * ldc + j], want[n * ldc + j]);
                        assert!(
                            (g - w).abs() <= tol,
                            "{what} rows={rows} m={m} k={k} at ({n},{j}): {g} vs {w}"
                        );
                    }
                }
            };
            // Accumulate.
            let want = reference(af, &b, m, &c0, ldc);
            let mut c = c0.clone();
            gemm_packed(&packed, b, &mut c, ldc, Init::Accumulate);
            check(&c, &want, "packed acc");
            let mut c = c0.clone();
            gemm_strided(&a, m, k, m, b, &mut c, ldc, Init::Accumulate);
            check(&c, &want, "strided acc");
            // Zero and bias.
            let mut zeroed = c0.clone();
            let mut biased = c0.clone();
            for n in 0..rows {
                zeroed[n * ldc..n * ldc + m].fill(0.0);
                biased[n * ldc..n * ldc + m].copy_from_slice(&bias);
            }
            let mut c = c0.clone();
            gemm_packed(&packed, b, &mut c, ldc, Init::Zero);
            check(&c, &reference(af, &b, m, &zeroed, ldc), "packed zero");
            let mut c = c0.clone();
            gemm_packed(&packed, b, &mut c, ldc, Init::Bias(&bias));
            check(&c, &reference(af, &b, m, &biased, ldc), "packed bias");
        }
    }
}

#[cfg(test)]
mod perf {
    use super::*;
    #[test]
    #[ignore]
    fn gemm_shapes_gflops() {
        let shapes = [
            ("tr in_proj", 1536, 16, 512),
            ("tr out", 512, 16, 512),
            ("tr ff1", 2048, 16, 512),
            ("tr ff2", 512, 16, 2048),
            ("conv0", 512, 16, 3584),
            ("convtr1", 3072, 16, 512),
            ("res1a", 128, 96, 768),
            ("res1b", 256, 96, 128),
            ("convtr2", 1280, 96, 256),
            ("res2a", 64, 480, 384),
            ("res2b", 128, 480, 64),
            ("convtr3", 512, 480, 128),
            ("res3a", 32, 1920, 192),
            ("res3b", 64, 1920, 32),
            ("final", 1, 1920, 192),
            ("enc big", 1536, 2208, 512),
            ("enc res", 64, 66000, 384),
        ];
        let mut total = 0.0;
        for &(name, m, n, k) in &shapes {
            let a = PackedMatrix::from_fn(k, m, |i, j| ((i * 31 + j * 7) % 100) as f32 * 1e-3);
            let b: Vec<f32> = (0..n * k).map(|i| ((i * 13) % 100) as f32 * 1e-3).collect();
            let mut c = vec![0f32; n * m];
            let fl = 2.0 * (m * n * k) as f64;
            let iters = ((1e9 / fl) as usize).max(3);
            let mut best = f64::MAX;
            for _ in 0..5 {
                let t0 = std::time::Instant::now();
                for _ in 0..iters {
                    gemm_packed(&a, BView::dense(&b, n, k, k), &mut c, m, Init::Zero);
                }
                best = best.min(t0.elapsed().as_secs_f64() / iters as f64);
            }
            if n <= 1920 {
                total += best;
            }
            println!(
                "{name:12} m={m:5} n={n:5} k={k:5}: {:8.1} us {:6.1} GF/s",
                best * 1e6,
                fl / best * 1e-9
            );
        }
        println!("decoder-ish total {:.3} ms", total * 1e3);
    }
}
