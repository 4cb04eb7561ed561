//! The WebAssembly SIMD128 micro-kernel of the GEMM: [`super::block`] for
//! [`Isa::Simd128`](crate::Isa::Simd128).
//!
//! The NEON kernel's layout (`arm.rs`): 16-column groups of `MV ≤ 4` four-lane vectors ×
//! `NT` rows of `C`, one `B` value per row broadcast per `k`, the last `width mod 4`
//! columns by the scalar kernel; but `MV·NT ≤ 12` accumulators, as engines map `v128` to
//! the 16 SSE/AVX registers on x86-64. The multiply-add is relaxed SIMD's
//! `f32x4.relaxed_madd`: fused where the hardware has FMA (x86-64 with FMA3, aarch64),
//! and then every output is the same `k`-ordered chain of fused multiply-adds as in the
//! scalar kernel, so the results are bit-identical to its; on hardware without FMA an
//! engine may round the product and the sum separately.

use super::{block_scalar, row_tiles, MicroKernel, Mode, Tile};
use std::arch::wasm32::*;

/// `NT` rows × `MV` full vectors: the columns `0..4·MV` of tile `t`.
///
/// # Safety
/// `t` is valid for `NT` rows (see [`Tile`]) and `4·MV <= t.width`.
#[inline(always)]
unsafe fn kn<const MV: usize, const NT: usize>(t: &Tile) {
    // Every access below is to `C[i, 4v + l]`, `bias[4v + l]` or `A[kk, 4v + l]` with
    // `i < NT`, `kk < kc` and `4v + l < 4·MV <= width`, or to `B[i, kk]`: all allowed by
    // the tile's validity for `NT` rows (caller).
    let mut acc = [[f32x4_splat(0.0); MV]; NT];
    match t.mode {
        Mode::Zero => {}
        Mode::Load => {
            for (i, row) in acc.iter_mut().enumerate() {
                for (v, r) in row.iter_mut().enumerate() {
                    // SAFETY: `C[i, 4v .. 4v + 4]` (see above).
                    *r = unsafe { v128_load(t.c.add(i * t.ldc + 4 * v) as *const v128) };
                }
            }
        }
        Mode::Bias => {
            for v in 0..MV {
                // SAFETY: `bias[4v .. 4v + 4]` (see above).
                let bv = unsafe { v128_load(t.bias.add(4 * v) as *const v128) };
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
        let mut av = [f32x4_splat(0.0); MV];
        for (v, x) in av.iter_mut().enumerate() {
            // SAFETY: `A[kk, 4v .. 4v + 4]` (see above).
            *x = unsafe { v128_load(a.add(4 * v) as *const v128) };
        }
        for (i, row) in acc.iter_mut().enumerate() {
            // SAFETY: `B[i, kk]` with `i < NT`.
            let bb = f32x4_splat(unsafe { *b.add(i * t.ldb) });
            for (r, x) in row.iter_mut().zip(av.iter()) {
                *r = f32x4_relaxed_madd(*x, bb, *r);
            }
        }
        // Wrapping: after the last `kk` these point one row past the tile and are not
        // used.
        a = a.wrapping_add(t.lda);
        b = b.wrapping_add(1);
    }
    for (i, row) in acc.iter().enumerate() {
        for (v, r) in row.iter().enumerate() {
            // SAFETY: `C[i, 4v .. 4v + 4]` (see above).
            unsafe { v128_store(t.c.add(i * t.ldc + 4 * v) as *mut v128, *r) };
        }
    }
}

/// [`kn`] as a [`MicroKernel`]: `MV` full vectors of 4 columns.
struct Kn;

impl MicroKernel for Kn {
    #[inline(always)]
    unsafe fn tile<const MV: usize, const NT: usize>(&self, t: &Tile) {
        // SAFETY: the tile is valid for `NT` rows with at least `4·MV` columns (caller).
        unsafe { kn::<MV, NT>(t) }
    }
}

/// [`super::block`] on SIMD128: 16-column groups of four 4-lane vectors; the last
/// `width mod 4` columns by the scalar kernel.
///
/// # Safety
/// `t` is valid for `rows` rows (see [`Tile`]).
pub(super) unsafe fn block_simd128(rows: usize, t: Tile) {
    let full = t.width / 4;
    let mut v = 0;
    while v < full {
        let mv = (full - v).min(4);
        // Columns `4v .. 4v + 4·mv` (`<= width`): the tile shifted right by `4v` columns
        // is valid for `rows` rows with `width − 4v >= 4·mv` columns. Wrapping: the
        // shifted pointers are dereferenced only at the positions the contract allows
        // (`bias` may be null when unused).
        let mut tg = t;
        tg.a = t.a.wrapping_add(4 * v);
        tg.c = t.c.wrapping_add(4 * v);
        tg.width = t.width - 4 * v;
        if !t.bias.is_null() {
            tg.bias = t.bias.wrapping_add(4 * v);
        }
        // SAFETY: as just said, with `mv` vectors per row and `MV·NT <= 12`.
        unsafe {
            match mv {
                4 => row_tiles::<Kn, 4, 3>(&Kn, rows, tg),
                3 => row_tiles::<Kn, 3, 4>(&Kn, rows, tg),
                2 => row_tiles::<Kn, 2, 6>(&Kn, rows, tg),
                _ => row_tiles::<Kn, 1, 12>(&Kn, rows, tg),
            }
        }
        v += mv;
    }
    let rest = t.width - 4 * full;
    if rest > 0 {
        // The last `rest` columns, shifted as above: valid for `rows` rows, width `rest`.
        let mut tr = t;
        tr.a = t.a.wrapping_add(4 * full);
        tr.c = t.c.wrapping_add(4 * full);
        tr.width = rest;
        if !t.bias.is_null() {
            tr.bias = t.bias.wrapping_add(4 * full);
        }
        // SAFETY: as just said.
        unsafe { block_scalar(rows, tr) };
    }
}
