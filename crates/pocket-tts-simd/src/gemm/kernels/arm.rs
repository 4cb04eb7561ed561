//! The NEON micro-kernel of the GEMM (aarch64): [`super::block`] for
//! [`Isa::Neon`](crate::Isa::Neon).
//!
//! Like the AVX2 kernel, a panel is cut into 16-column groups; a group is `MV ≤ 4`
//! four-lane vectors × `NT` rows of `C` kept in registers (`MV·NT ≤ 24` of NEON's 32
//! vector registers), `MV` vectors of `A` loaded per `k` and one `B` value per row
//! multiplied in by element (`fmla v.4s, v.4s, v.s[0]`). NEON has no masked loads, so a
//! group's last `width mod 4` columns (only in a panel's last group) go to the scalar
//! kernel. Every output is the same `k`-ordered chain of fused multiply-adds as in the
//! scalar and x86 kernels, so the results are bit-identical to theirs.

use super::{block_scalar, vector_rows, MicroKernel, Mode, Tile};
use std::arch::aarch64::*;

/// `NT` rows × `MV` full vectors: the columns `0..4·MV` of tile `t`.
///
/// # Safety
/// NEON is available; `t` is valid for `NT` rows (see [`Tile`]) and `4·MV <= t.width`.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn kn<const MV: usize, const NT: usize>(t: &Tile) {
    // Every access below is to `C[i, 4v + l]`, `bias[4v + l]` or `A[kk, 4v + l]` with
    // `i < NT`, `kk < kc` and `4v + l < 4·MV <= width`, or to `B[i, kk]`: all allowed by
    // the tile's validity for `NT` rows (caller).
    let mut acc = [[vdupq_n_f32(0.0); MV]; NT];
    match t.mode {
        Mode::Zero => {}
        Mode::Load => {
            for (i, row) in acc.iter_mut().enumerate() {
                for (v, r) in row.iter_mut().enumerate() {
                    // SAFETY: `C[i, 4v .. 4v + 4]` (see above).
                    *r = unsafe { vld1q_f32(t.c.add(i * t.ldc + 4 * v)) };
                }
            }
        }
        Mode::Bias => {
            for v in 0..MV {
                // SAFETY: `bias[4v .. 4v + 4]` (see above).
                let bv = unsafe { vld1q_f32(t.bias.add(4 * v)) };
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
        let mut av = [vdupq_n_f32(0.0); MV];
        for (v, x) in av.iter_mut().enumerate() {
            // SAFETY: `A[kk, 4v .. 4v + 4]` (see above).
            *x = unsafe { vld1q_f32(a.add(4 * v)) };
        }
        for (i, row) in acc.iter_mut().enumerate() {
            // SAFETY: `B[i, kk]` with `i < NT`.
            let bb = unsafe { *b.add(i * t.ldb) };
            for (r, x) in row.iter_mut().zip(av.iter()) {
                *r = vfmaq_n_f32(*r, *x, bb);
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
            unsafe { vst1q_f32(t.c.add(i * t.ldc + 4 * v), *r) };
        }
    }
}

/// [`kn`] as a [`MicroKernel`]: `MV` full vectors of 4 columns.
struct Kn;

impl MicroKernel for Kn {
    #[inline(always)]
    unsafe fn tile<const MV: usize, const NT: usize>(&self, t: &Tile) {
        // SAFETY: NEON is available and enabled (caller); the tile is valid for `NT` rows
        // with at least `4·MV` columns (caller).
        unsafe { kn::<MV, NT>(t) }
    }
}

/// [`super::block`] on NEON: 16-column groups of four 4-lane vectors; the last
/// `width mod 4` columns by the scalar kernel.
///
/// # Safety
/// NEON is available; `t` is valid for `rows` rows (see [`Tile`]).
#[target_feature(enable = "neon")]
pub(super) unsafe fn block_neon(rows: usize, t: Tile) {
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
        // SAFETY: as just said, `1 <= mv <= 4`; NEON is available (caller) and enabled
        // here.
        unsafe { vector_rows(&Kn, mv, rows, tg) };
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
