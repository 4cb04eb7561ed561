//! Micro-kernels of the GEMM (`mod.rs` does the packing, the checks and the
//! blocking): one [`Tile`] is an `n`-row strip of `B`/`C` against a `kc`-deep slice of
//! one column panel of `A`. No counterpart in the reference (`pocket-tts` 4.0.1), whose
//! matrix products run inside PyTorch.
//!
//! The AVX-512 kernel keeps an `NT × (16·MV)` block of `C` in registers, loads `MV`
//! vectors of `A` per `k` and broadcasts `NT` values of `B` (`MV·NT ≤ 24`
//! accumulators); AVX2+FMA handles 16-column groups as two 8-lane vectors × 6 rows; NEON
//! (`arm.rs`) 16-column groups of up to four 4-lane vectors, like AVX-512; WebAssembly
//! SIMD128 (`wasm.rs`) the same groups with fewer rows per micro-tile; a portable
//! scalar loop covers the rest. Each SIMD kernel is a [`MicroKernel`] of `NT` rows, and
//! one row loop ([`row_tiles`], [`vector_rows`]) cuts a tile's rows into micro-tiles for
//! all of them. [`block`] picks the kernel from the ISA the caller resolved.
//! [`add_assign`] is the vectorised add of the transposed convs' overlap-adds.

use crate::Isa;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Zero,
    Load,
    Bias,
}

/// One micro-kernel call: rows `n` of `B`/`C` starting at `b`/`c`, a `kc`-deep slice of
/// a panel starting at `a`.
///
/// # Validity
/// The kernels below take a tile *valid for `rows` rows*, meaning, for every `i < rows`,
/// `kk < kc` and `j < width`:
///
/// * `1 <= width <= 64` (one panel);
/// * `a + kk·lda + j` and `b + i·ldb + kk` are readable `f32`s;
/// * `c + i·ldc + j` is readable and writable, and during the call nothing else (no other
///   thread, not `a`, `b` or `bias`) accesses it;
/// * if `mode == Mode::Bias`, `bias + j` is readable.
///
/// The kernels touch no other element: lanes past `width` are masked off (masked loads
/// and stores do not access them), and the row pointers they step through are only
/// dereferenced at the positions above.
#[derive(Clone, Copy)]
pub(super) struct Tile {
    pub(super) a: *const f32,
    pub(super) lda: usize,
    pub(super) b: *const f32,
    pub(super) ldb: usize,
    pub(super) c: *mut f32,
    pub(super) ldc: usize,
    pub(super) kc: usize,
    /// Real columns of this panel (1..=PANEL).
    pub(super) width: usize,
    pub(super) mode: Mode,
    pub(super) bias: *const f32,
}

/// `C (+)= A·B` over the `rows` rows of tile `t`, with the kernel of `isa`.
///
/// # Safety
/// `t` is valid for `rows` rows (see [`Tile`]), and the CPU supports `isa` (AVX-512F for
/// [`Isa::Avx512`], AVX2 and FMA for [`Isa::Avx2`], NEON for [`Isa::Neon`]), as it does
/// for a resolved ISA ([`Isa::resolve`]).
pub(super) unsafe fn block(isa: Isa, rows: usize, t: Tile) {
    // SAFETY: the tile is valid for `rows` rows (caller); each kernel runs only on the
    // ISA the caller vouches for.
    unsafe {
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => x86::block512(rows, t),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => x86::block256(rows, t),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => arm::block_neon(rows, t),
            #[cfg(all(
                target_arch = "wasm32",
                target_feature = "simd128",
                target_feature = "relaxed-simd"
            ))]
            Isa::Simd128 => wasm::block_simd128(rows, t),
            _ => block_scalar(rows, t),
        }
    }
}

/// The portable kernel.
///
/// # Safety
/// `t` is valid for `rows` rows (see [`Tile`]).
unsafe fn block_scalar(rows: usize, t: Tile) {
    for i in 0..rows {
        // SAFETY: row `i < rows` of `B` and `C` starts in bounds (tile valid for `rows`).
        let (crow, brow) = unsafe { (t.c.add(i * t.ldc), t.b.add(i * t.ldb)) };
        for j in 0..t.width {
            // SAFETY: every access is one the tile's validity allows: `C[i, j]` and
            // `bias[j]` with `j < width`, `B[i, kk]` and `A[kk, j]` with `kk < kc`.
            unsafe {
                let mut acc = match t.mode {
                    Mode::Zero => 0.0,
                    Mode::Load => *crow.add(j),
                    Mode::Bias => *t.bias.add(j),
                };
                for kk in 0..t.kc {
                    acc = (*brow.add(kk)).mul_add(*t.a.add(kk * t.lda + j), acc);
                }
                *crow.add(j) = acc;
            }
        }
    }
}

/// A SIMD micro-kernel: `NT` rows × `MV` vectors of a tile, the accumulators in
/// registers. Implemented per ISA (a zero-sized type, or one holding the column masks)
/// and run by the row loop [`row_tiles`], monomorphized inside the ISA's
/// `#[target_feature]` entry point.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "wasm32"
))]
trait MicroKernel {
    /// `C (+)= A·B` over the first `NT` rows and the kernel's `MV` vectors of columns of
    /// `t`.
    ///
    /// # Safety
    /// The CPU has the kernel's features and the caller is compiled with them (the
    /// kernel is inlined into a `#[target_feature]` function); `t` is valid for `NT` rows
    /// (see [`Tile`]) and has the columns the kernel reads (its own contract).
    unsafe fn tile<const MV: usize, const NT: usize>(&self, t: &Tile);
}

/// Every one of the `rows` rows of tile `t` with `k`'s `MV`-vector kernel: micro-tiles of
/// `MAX` rows, then one of the `rows mod MAX` left (`MAX ≤ 16`).
///
/// # Safety
/// As [`MicroKernel::tile`] for a tile valid for `rows` rows: each micro-tile covers
/// rows `done..done + NT` with `done + NT <= rows`, i.e. a tile valid for `NT` rows once
/// `b` and `c` have moved down `done` rows.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "wasm32"
))]
#[inline(always)]
unsafe fn row_tiles<K: MicroKernel, const MV: usize, const MAX: usize>(
    k: &K,
    rows: usize,
    mut t: Tile,
) {
    let mut left = rows;
    while left >= MAX {
        // SAFETY: the next `MAX <= left` rows (see above).
        unsafe { k.tile::<MV, MAX>(&t) };
        // Wrapping: after the last micro-tile these point past the tile, unused.
        t.b = t.b.wrapping_add(MAX * t.ldb);
        t.c = t.c.wrapping_add(MAX * t.ldc);
        left -= MAX;
    }
    // The last `left < MAX` rows; the arms with `n >= MAX` are never taken (and compiled
    // away).
    macro_rules! rest {
        ($($n:literal)*) => {
            match left {
                0 => {}
                // SAFETY: the last `left` rows (see above).
                $($n if $n < MAX => unsafe { k.tile::<MV, $n>(&t) },)*
                _ => unreachable!("{left} rows left of micro-tiles of {MAX}"),
            }
        };
    }
    rest!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
}

/// Every row of tile `t` with `mv` (1 to 4) vectors of `k` per row, as many rows per
/// micro-tile as keep `MV·NT ≤ 24` accumulators (6, 8, 12 or 16): the AVX-512 and NEON
/// kernels.
///
/// # Safety
/// As [`row_tiles`], for the `mv`-vector kernel.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
unsafe fn vector_rows<K: MicroKernel>(k: &K, mv: usize, rows: usize, t: Tile) {
    // SAFETY: as the caller vouches for `mv` vectors.
    unsafe {
        match mv {
            4 => row_tiles::<K, 4, 6>(k, rows, t),
            3 => row_tiles::<K, 3, 8>(k, rows, t),
            2 => row_tiles::<K, 2, 12>(k, rows, t),
            1 => row_tiles::<K, 1, 16>(k, rows, t),
            _ => unreachable!("{mv} vectors per row"),
        }
    }
}

/// `dst[i] += src[i]` for `i` below the common length of `dst` and `src` (the rest of the
/// longer one is left alone): the overlap-adds of transposed convs. Vectorised with
/// AVX-512F when [`crate::detected`] is [`Isa::Avx512`] (an addition rounds the same on
/// every ISA, so the bits do not depend on it).
pub fn add_assign(dst: &mut [f32], src: &[f32]) {
    let n = dst.len().min(src.len());
    let (dst, src) = (&mut dst[..n], &src[..n]);
    #[cfg(target_arch = "x86_64")]
    if crate::detected() == Isa::Avx512 {
        // SAFETY: AVX-512F was detected.
        unsafe { x86::add_assign512(dst, src) };
        return;
    }
    for (d, s) in dst.iter_mut().zip(src) {
        *d += *s;
    }
}

#[cfg(target_arch = "aarch64")]
mod arm;

#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    target_feature = "relaxed-simd"
))]
mod wasm;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{row_tiles, vector_rows, MicroKernel, Mode, Tile};
    use std::arch::x86_64::*;

    /// `NT` rows × `MV` vectors of 16 columns; the last vector is masked to `t.width`.
    ///
    /// # Safety
    /// AVX-512F is available; `t` is valid for `NT` rows (see [`Tile`]);
    /// `t.width.div_ceil(16) == MV` and `mask` enables exactly the lanes
    /// `0..t.width − 16·(MV − 1)` of the last vector.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn k512<const MV: usize, const NT: usize>(t: &Tile, mask: __mmask16) {
        // Every access below is to `C[i, 16v + l]`, `bias[16v + l]` or `A[kk, 16v + l]`
        // with `i < NT`, `kk < kc`, and `16v + l < width` (vectors before the last are
        // full, lanes of the last one past `width` are masked off and not accessed), or
        // to `B[i, kk]`: all allowed by the tile's validity for `NT` rows (caller).
        let mut acc = [[_mm512_setzero_ps(); MV]; NT];
        match t.mode {
            Mode::Zero => {}
            Mode::Load => {
                for (i, row) in acc.iter_mut().enumerate() {
                    for (v, r) in row.iter_mut().enumerate() {
                        // SAFETY: `C[i, 16v ..]`, within `width` (see above).
                        unsafe {
                            let p = t.c.add(i * t.ldc + 16 * v);
                            *r = if v + 1 == MV {
                                _mm512_maskz_loadu_ps(mask, p)
                            } else {
                                _mm512_loadu_ps(p)
                            };
                        }
                    }
                }
            }
            Mode::Bias => {
                for v in 0..MV {
                    // SAFETY: `bias[16v ..]`, within `width` (see above).
                    let bv = unsafe {
                        let p = t.bias.add(16 * v);
                        if v + 1 == MV {
                            _mm512_maskz_loadu_ps(mask, p)
                        } else {
                            _mm512_loadu_ps(p)
                        }
                    };
                    for row in acc.iter_mut() {
                        row[v] = bv;
                    }
                }
            }
        }
        let mut a = t.a;
        let mut b = t.b;
        for _ in 0..t.kc {
            // `a` and `b` point at `A[kk, 0]` and `B[0, kk]` for the current `kk < kc`.
            let mut av = [_mm512_setzero_ps(); MV];
            for (v, x) in av.iter_mut().enumerate() {
                // SAFETY: `A[kk, 16v ..]`, within `width` (see above).
                *x = unsafe {
                    if v + 1 == MV {
                        _mm512_maskz_loadu_ps(mask, a.add(16 * v))
                    } else {
                        _mm512_loadu_ps(a.add(16 * v))
                    }
                };
            }
            for (i, row) in acc.iter_mut().enumerate() {
                // SAFETY: `B[i, kk]` with `i < NT`.
                let bb = _mm512_set1_ps(unsafe { *b.add(i * t.ldb) });
                for (r, x) in row.iter_mut().zip(av.iter()) {
                    *r = _mm512_fmadd_ps(*x, bb, *r);
                }
            }
            // Wrapping: after the last `kk` these point one row past the tile and are
            // not used.
            a = a.wrapping_add(t.lda);
            b = b.wrapping_add(1);
        }
        for (i, row) in acc.iter().enumerate() {
            for (v, r) in row.iter().enumerate() {
                // SAFETY: `C[i, 16v ..]`, within `width` (see above).
                unsafe {
                    let p = t.c.add(i * t.ldc + 16 * v);
                    if v + 1 == MV {
                        _mm512_mask_storeu_ps(p, mask, *r);
                    } else {
                        _mm512_storeu_ps(p, *r);
                    }
                }
            }
        }
    }

    /// `dst[i] += src[i]` over the common length.
    ///
    /// # Safety
    /// AVX-512F is available.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn add_assign512(dst: &mut [f32], src: &[f32]) {
        let n = dst.len().min(src.len());
        let mut i = 0;
        while i + 16 <= n {
            // SAFETY: `i + 16 <= n`, which both slices have.
            unsafe {
                let d = _mm512_loadu_ps(dst.as_ptr().add(i));
                let s = _mm512_loadu_ps(src.as_ptr().add(i));
                _mm512_storeu_ps(dst.as_mut_ptr().add(i), _mm512_add_ps(d, s));
            }
            i += 16;
        }
        for j in i..n {
            dst[j] += src[j];
        }
    }

    /// [`super::block`] on AVX-512F: 16-column vectors, the last one masked.
    ///
    /// # Safety
    /// AVX-512F is available; `t` is valid for `rows` rows (see [`Tile`]).
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn block512(rows: usize, t: Tile) {
        let mv = t.width.div_ceil(16);
        let lanes = t.width - 16 * (mv - 1);
        let mask: __mmask16 = if lanes == 16 {
            0xffff
        } else {
            (1u16 << lanes) - 1
        };
        // `mv = width.div_ceil(16)` vectors, `mask` enables the last one's real lanes, as
        // `k512` requires; the tile is valid for `rows` rows (caller); AVX-512F is enabled
        // here.
        unsafe { vector_rows(&K512 { mask }, mv, rows, t) }
    }

    /// [`k512`] as a [`MicroKernel`]: `MV` vectors of 16 columns, the last one masked.
    struct K512 {
        /// The lanes `0..width − 16·(MV − 1)` of the last vector.
        mask: __mmask16,
    }

    impl MicroKernel for K512 {
        #[inline(always)]
        unsafe fn tile<const MV: usize, const NT: usize>(&self, t: &Tile) {
            // SAFETY: AVX-512F is available and enabled (caller); the tile is valid for
            // `NT` rows and has `MV` vectors whose last one `mask` covers (caller).
            unsafe { k512::<MV, NT>(t, self.mask) }
        }
    }

    /// AVX2: one 16-column group (two 8-lane vectors) × `NT` rows. `FULL`: all 16 columns
    /// are in range, so the `k` loop uses plain loads (with masked loads there, the
    /// compiler rebuilt the masks every iteration: 2.5× slower on Zen 3); otherwise
    /// `m0`/`m1` mask the columns past `t.width`.
    ///
    /// # Safety
    /// AVX2 and FMA are available; `t` is valid for `NT` rows (see [`Tile`]) with
    /// `t.width` counted from this group (`t.a`, `t.c`, `t.bias` at its first column):
    /// `m0`/`m1` enable exactly the lanes `l < min(16, width)` of the group's two
    /// vectors, and `FULL` implies `width >= 16`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn k256<const NT: usize, const FULL: bool>(t: &Tile, m0: __m256i, m1: __m256i) {
        // Every access below is to `C[i, l]`, `bias[l]` or `A[kk, l]` with `i < NT`,
        // `kk < kc` and `l` an enabled lane (`l < width`; all 16 when `FULL`), or to
        // `B[i, kk]`: all allowed by the tile's validity for `NT` rows (caller). Masked-off
        // lanes are not accessed.
        let mut acc = [[_mm256_setzero_ps(); 2]; NT];
        match t.mode {
            Mode::Zero => {}
            Mode::Load => {
                for (i, row) in acc.iter_mut().enumerate() {
                    // SAFETY: `C[i, 0..16]`, enabled lanes only (see above).
                    unsafe {
                        let p = t.c.add(i * t.ldc);
                        row[0] = _mm256_maskload_ps(p, m0);
                        row[1] = _mm256_maskload_ps(p.add(8), m1);
                    }
                }
            }
            Mode::Bias => {
                // SAFETY: `bias[0..16]`, enabled lanes only (see above).
                let (b0, b1) = unsafe {
                    (
                        _mm256_maskload_ps(t.bias, m0),
                        _mm256_maskload_ps(t.bias.add(8), m1),
                    )
                };
                for row in acc.iter_mut() {
                    row[0] = b0;
                    row[1] = b1;
                }
            }
        }
        let mut a = t.a;
        let mut b = t.b;
        for _ in 0..t.kc {
            // `a` and `b` point at `A[kk, 0]` and `B[0, kk]` for the current `kk < kc`.
            // SAFETY: `A[kk, 0..16]`: all 16 columns exist when `FULL`, otherwise only
            // the enabled lanes are read (see above).
            let (a0, a1) = unsafe {
                if FULL {
                    (_mm256_loadu_ps(a), _mm256_loadu_ps(a.add(8)))
                } else {
                    (_mm256_maskload_ps(a, m0), _mm256_maskload_ps(a.add(8), m1))
                }
            };
            for (i, row) in acc.iter_mut().enumerate() {
                // SAFETY: `B[i, kk]` with `i < NT`.
                let bb = _mm256_set1_ps(unsafe { *b.add(i * t.ldb) });
                row[0] = _mm256_fmadd_ps(a0, bb, row[0]);
                row[1] = _mm256_fmadd_ps(a1, bb, row[1]);
            }
            // Wrapping: after the last `kk` these point one row past the tile and are
            // not used.
            a = a.wrapping_add(t.lda);
            b = b.wrapping_add(1);
        }
        for (i, row) in acc.iter().enumerate() {
            // SAFETY: `C[i, 0..16]`, enabled lanes only (see above).
            unsafe {
                let p = t.c.add(i * t.ldc);
                _mm256_maskstore_ps(p, m0, row[0]);
                _mm256_maskstore_ps(p.add(8), m1, row[1]);
            }
        }
    }

    /// [`super::block`] on AVX2 + FMA: 16-column groups of two 8-lane vectors.
    ///
    /// # Safety
    /// AVX2 and FMA are available; `t` is valid for `rows` rows (see [`Tile`]).
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn block256(rows: usize, t: Tile) {
        let groups = t.width.div_ceil(16);
        for g in 0..groups {
            let lanes = (t.width - 16 * g).min(16) as i32;
            let lane = |l: i32| if l < lanes { -1 } else { 0 };
            let m0 = _mm256_setr_epi32(
                lane(0),
                lane(1),
                lane(2),
                lane(3),
                lane(4),
                lane(5),
                lane(6),
                lane(7),
            );
            let m1 = _mm256_setr_epi32(
                lane(8),
                lane(9),
                lane(10),
                lane(11),
                lane(12),
                lane(13),
                lane(14),
                lane(15),
            );
            // Group `g` starts at column `16g < width`: the tile shifted right by `16g`
            // columns, valid for `rows` rows with `width − 16g` columns, of which `m0`/`m1`
            // enable the first `lanes`. Wrapping: the shifted pointers are dereferenced
            // only by `k256`, at the positions its contract allows (and `bias` may be
            // null when unused).
            let mut tg = t;
            tg.a = t.a.wrapping_add(16 * g);
            tg.c = t.c.wrapping_add(16 * g);
            if !t.bias.is_null() {
                tg.bias = t.bias.wrapping_add(16 * g);
            }
            // SAFETY: as just said, in 6-row micro-tiles; `FULL` only when all 16 lanes are
            // in range; AVX2 and FMA are enabled here.
            unsafe {
                if lanes == 16 {
                    row_tiles::<_, 2, 6>(&K256::<true> { m0, m1 }, rows, tg);
                } else {
                    row_tiles::<_, 2, 6>(&K256::<false> { m0, m1 }, rows, tg);
                }
            }
        }
    }

    /// [`k256`] as a [`MicroKernel`] of `MV = 2` vectors (one 16-column group).
    struct K256<const FULL: bool> {
        m0: __m256i,
        m1: __m256i,
    }

    impl<const FULL: bool> MicroKernel for K256<FULL> {
        #[inline(always)]
        unsafe fn tile<const MV: usize, const NT: usize>(&self, t: &Tile) {
            const { assert!(MV == 2, "the AVX2 kernel has two vectors per row") };
            // SAFETY: AVX2 and FMA are available and enabled (caller); the tile is valid
            // for `NT` rows with its group's columns as `m0`/`m1` and `FULL` say (caller).
            unsafe { k256::<NT, FULL>(t, self.m0, self.m1) }
        }
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

    /// Every kernel available here gives the scalar kernel's bits (the same `k`-ordered
    /// chain of fused multiply-adds), on every panel width, row count and mode, with
    /// padding around `C` that must stay untouched.
    #[test]
    fn every_isa_matches_the_scalar_kernel_bit_for_bit() {
        let mut seed = 7u64;
        let isas = crate::available();
        for &width in &[1usize, 3, 4, 5, 8, 15, 16, 17, 31, 33, 48, 63, 64] {
            for &rows in &[1usize, 2, 5, 6, 7, 12, 13, 17, 40] {
                for mode in [Mode::Zero, Mode::Load, Mode::Bias] {
                    let kc = 1 + (width * 7 + rows * 3) % 37;
                    let (lda, ldb, ldc) = (width + 3, kc + 2, width + 5);
                    let a: Vec<f32> = (0..kc * lda).map(|_| lcg(&mut seed)).collect();
                    let b: Vec<f32> = (0..rows * ldb).map(|_| lcg(&mut seed)).collect();
                    let bias: Vec<f32> = (0..width).map(|_| lcg(&mut seed)).collect();
                    let c0: Vec<f32> = (0..rows * ldc).map(|_| lcg(&mut seed)).collect();
                    let run = |isa: Isa| {
                        let mut c = c0.clone();
                        let t = Tile {
                            a: a.as_ptr(),
                            lda,
                            b: b.as_ptr(),
                            ldb,
                            c: c.as_mut_ptr(),
                            ldc,
                            kc,
                            width,
                            mode,
                            bias: bias.as_ptr(),
                        };
                        // SAFETY: `a` has `kc` rows of `lda >= width` values, `b` `rows`
                        // rows of `ldb >= kc`, `c` `rows` rows of `ldc >= width`, `bias`
                        // `width` values; `c` is ours; `isa` is available here.
                        unsafe { block(isa, rows, t) };
                        c
                    };
                    let want = run(Isa::Scalar);
                    for &isa in &isas {
                        let got = run(isa);
                        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                            assert_eq!(
                                g.to_bits(),
                                w.to_bits(),
                                "{isa:?} width={width} rows={rows} {mode:?} at {i}: {g} vs {w}"
                            );
                        }
                    }
                }
            }
        }
    }
}
