//! The AMX kernel of [`crate::Isa::gemv_i8_q8_tokens`] (the text and voice prefill of
//! `--quantize` on Intel Xeon from Sapphire Rapids on): `tdpbssd` tiles of 16 weight rows
//! × 16 tokens × 64 columns, 16 384 exact `i8 · i8` products each.
//!
//! - The weights are tile A as stored (16 rows of 64 bytes, stride `cols`).
//! - The tokens are tile B, which AMX wants in groups of four columns: row `k` of the tile
//!   holds, for each token `t`, its values `4k..4k + 4` of the 64 columns. They are
//!   rearranged once per call (a few KiB per token) before the weight rows stream past.
//! - Three token tiles share each weight tile (48 tokens per pass over the weights): the
//!   eight tile registers hold 3 accumulators, the weight tile and 3 token tiles.
//!
//! Every sum is the exact integer dot product (AMX accumulates `i32` exactly, as VNNI
//! does), and each output is finished as [`crate::Isa::gemv_i8_q8`] finishes it:
//! `(s as f32) · (scale[r] · x.scale) + 0`, so the bits are those of every other kernel.
//! Rows past the last multiple of 16 go to the AVX-512 VNNI kernel.
//!
//! The instructions are written in inline assembly (Rust's AMX intrinsics are not
//! stable); Linux gives a process the AMX state only on request, which [`crate::amx`]
//! makes once.

use std::arch::asm;

use crate::QuantizedVector;

/// Rows (weight rows, tokens) of a tile and its width in bytes (columns).
const TILE_ROWS: usize = 16;
const TILE_COLS: usize = 64;
/// Token tiles per pass over the weights (accumulators in tile registers 0..3, token
/// tiles in 4..7, the weight tile in 3).
const GROUPS: usize = 3;

/// Whether [`run`] takes a call of `tokens` tokens over `rows` rows of `cols` columns
/// (the rest goes to the VNNI kernel).
pub(super) fn takes(tokens: usize, rows: usize, cols: usize) -> bool {
    tokens >= 2 && rows >= TILE_ROWS && cols.is_multiple_of(TILE_COLS) && crate::amx::int8()
}

/// The 64-byte tile configuration (`ldtilecfg`): palette 1, tiles 0–7 all 16 rows × 64
/// bytes.
#[repr(C, align(64))]
struct TileConfig([u8; 64]);

impl TileConfig {
    fn full() -> Self {
        let mut c = [0u8; 64];
        c[0] = 1;
        for t in 0..8 {
            c[16 + 2 * t..18 + 2 * t].copy_from_slice(&(TILE_COLS as u16).to_le_bytes());
            c[48 + t] = TILE_ROWS as u8;
        }
        Self(c)
    }
}

/// `out[t · rows + r]` for every token `t` of `xs` and row `r` of `q` (`[rows, cols]`,
/// `rows = scales.len()`), as [`crate::Isa::gemv_i8_q8_tokens`] defines it.
///
/// # Safety
/// [`takes`] returned true for these sizes (AMX granted, `cols` a multiple of 64, at least
/// 16 rows), AVX-512F, AVX-512BW and AVX-512 VNNI are available (the tail rows), `q.len()
/// == rows · cols`, every token has `cols` values and `out.len() == xs.len() · rows`.
pub(super) unsafe fn run(
    q: &[i8],
    scales: &[f32],
    cols: usize,
    xs: &[QuantizedVector],
    out: &mut [f32],
) {
    let rows = scales.len();
    debug_assert!(takes(xs.len(), rows, cols));
    debug_assert_eq!(q.len(), rows * cols);
    debug_assert_eq!(out.len(), xs.len() * rows);
    let chunks = cols / TILE_COLS;
    let groups = xs.len().div_ceil(TILE_ROWS);
    // Tile B of token group `g`, columns `64j..64j + 64`: 1 KiB at `(g · chunks + j) ·
    // 1024`, row `k` = for each token `t` of the group its 4 values `64j + 4k..`, as i32
    // words (zeros for the missing tokens of the last group).
    let mut b = vec![0u32; groups * chunks * TILE_ROWS * TILE_ROWS];
    for (t, x) in xs.iter().enumerate() {
        let (g, tt) = (t / TILE_ROWS, t % TILE_ROWS);
        for (i, w) in x.values().chunks_exact(4).enumerate() {
            let (j, k) = (i / TILE_ROWS, i % TILE_ROWS);
            let word = u32::from_le_bytes([w[0] as u8, w[1] as u8, w[2] as u8, w[3] as u8]);
            b[((g * chunks + j) * TILE_ROWS + k) * TILE_ROWS + tt] = word;
        }
    }
    let full = rows / TILE_ROWS * TILE_ROWS;
    let cfg = TileConfig::full();
    let mut c = [[0i32; TILE_ROWS * TILE_ROWS]; GROUPS];
    // SAFETY: AMX is granted (caller, via `takes`); the configuration is valid.
    unsafe { asm!("ldtilecfg [{}]", in(reg) cfg.0.as_ptr(), options(nostack, readonly)) };
    let stride = cols;
    for r0 in (0..full).step_by(TILE_ROWS) {
        let mut g0 = 0;
        while g0 < groups {
            let ng = GROUPS.min(groups - g0);
            // SAFETY (the tile instructions): AMX is configured above; every `tileloadd`
            // reads 16 rows of 64 bytes inside `q` (rows `r0..r0 + 16 <= rows`, columns
            // `64j..64j + 64 <= cols`, stride `cols`) or inside `b` (a whole 1 KiB tile of
            // group `g0 + g < groups`, stride 64); `tilestored` writes 1 KiB into `c[g]`.
            unsafe {
                asm!(
                    "tilezero tmm0",
                    "tilezero tmm1",
                    "tilezero tmm2",
                    options(nostack, nomem)
                );
                for j in 0..chunks {
                    let a = q.as_ptr().add(r0 * cols + j * TILE_COLS);
                    asm!("tileloadd tmm3, [{p} + {s} * 1]", p = in(reg) a, s = in(reg) stride,
                         options(nostack, readonly));
                    let tile_b = |g: usize| b.as_ptr().add(((g0 + g) * chunks + j) * 256);
                    asm!("tileloadd tmm4, [{p} + {s} * 1]", p = in(reg) tile_b(0),
                         s = in(reg) TILE_COLS, options(nostack, readonly));
                    asm!("tdpbssd tmm0, tmm3, tmm4", options(nostack, nomem));
                    if ng > 1 {
                        asm!("tileloadd tmm5, [{p} + {s} * 1]", p = in(reg) tile_b(1),
                             s = in(reg) TILE_COLS, options(nostack, readonly));
                        asm!("tdpbssd tmm1, tmm3, tmm5", options(nostack, nomem));
                    }
                    if ng > 2 {
                        asm!("tileloadd tmm6, [{p} + {s} * 1]", p = in(reg) tile_b(2),
                             s = in(reg) TILE_COLS, options(nostack, readonly));
                        asm!("tdpbssd tmm2, tmm3, tmm6", options(nostack, nomem));
                    }
                }
                asm!("tilestored [{p} + {s} * 1], tmm0", p = in(reg) c[0].as_mut_ptr(),
                     s = in(reg) TILE_COLS, options(nostack));
                if ng > 1 {
                    asm!("tilestored [{p} + {s} * 1], tmm1", p = in(reg) c[1].as_mut_ptr(),
                         s = in(reg) TILE_COLS, options(nostack));
                }
                if ng > 2 {
                    asm!("tilestored [{p} + {s} * 1], tmm2", p = in(reg) c[2].as_mut_ptr(),
                         s = in(reg) TILE_COLS, options(nostack));
                }
            }
            // `c[g][r · 16 + t]`: row `r0 + r`, token `16 (g0 + g) + t`.
            for (g, cg) in c.iter().enumerate().take(ng) {
                let t0 = (g0 + g) * TILE_ROWS;
                for (tt, x) in xs[t0..].iter().take(TILE_ROWS).enumerate() {
                    let xs_scale = x.scale();
                    let dst = &mut out[(t0 + tt) * rows + r0..][..TILE_ROWS];
                    for (r, d) in dst.iter_mut().enumerate() {
                        let s = cg[r * TILE_ROWS + tt];
                        *d = s as f32 * (scales[r0 + r] * xs_scale) + 0.0;
                    }
                }
            }
            g0 += ng;
        }
    }
    // SAFETY: releases this thread's tile state (AMX is granted).
    unsafe { asm!("tilerelease", options(nostack, nomem)) };
    if full < rows {
        // The last rows through the VNNI kernel, into a `[tokens, tail]` block.
        let tail = rows - full;
        let mut tmp = vec![0f32; xs.len() * tail];
        // SAFETY: the VNNI features are present (caller); the lengths match.
        unsafe { super::tokens_vnni::run(&q[full * cols..], &scales[full..], cols, xs, &mut tmp) };
        for (t, v) in tmp.chunks_exact(tail).enumerate() {
            out[t * rows + full..(t + 1) * rows].copy_from_slice(v);
        }
    }
}
