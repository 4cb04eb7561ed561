//! `gemv_multi` on every ISA available on this machine against `f64` sums, over shapes
//! that exercise every row block, token block and column tail, with bias, accumulation
//! and a row stride wider than the block (a column block of a wider output).

use crate::common;

use common::{data, tol};
use pocket_tts_simd::{available, Isa};

/// (rows, cols, tokens)
const SHAPES: &[(usize, usize, usize)] = &[
    (1, 1, 1),
    (2, 7, 3),
    (3, 8, 4),
    (4, 16, 5),
    (5, 17, 6),
    (7, 31, 7),
    (9, 33, 9),
    (13, 100, 2),
    (31, 129, 11),
    (64, 1024, 12),
    (11, 4096, 13),
];

fn check(isa: Isa, rows: usize, cols: usize, tokens: usize, bias: bool, accumulate: bool) {
    let ldy = rows + 3;
    let w = data(rows * cols, 1 + rows as u64);
    let x = data(tokens * cols, 2 + cols as u64);
    let b = data(rows, 3);
    let y0 = data(tokens * ldy, 4);
    let mut y = y0.clone();
    isa.gemv_multi(
        &w,
        rows,
        cols,
        &x,
        tokens,
        &mut y,
        ldy,
        bias.then_some(&b[..]),
        accumulate,
    );
    for i in 0..tokens {
        for r in 0..rows {
            let mut s = 0f64;
            for c in 0..cols {
                s += w[r * cols + c] as f64 * x[i * cols + c] as f64;
            }
            if bias {
                s += b[r] as f64;
            }
            if accumulate {
                s += y0[i * ldy + r] as f64;
            }
            let got = y[i * ldy + r] as f64;
            assert!(
                (got - s).abs() <= tol(cols + 2, 2.0),
                "{isa}: rows {rows} cols {cols} tokens {tokens} bias {bias} acc {accumulate}: \
                 y[{i}][{r}] = {got}, expected {s}"
            );
        }
        // The gap between row blocks is left alone.
        for r in rows..ldy {
            if i * ldy + r < y.len() {
                assert_eq!(y[i * ldy + r], y0[i * ldy + r], "{isa}: wrote past rows");
            }
        }
    }
}

#[test]
fn gemv_multi_matches_f64_on_every_isa() {
    for isa in available() {
        for &(rows, cols, tokens) in SHAPES {
            for (bias, accumulate) in [(false, false), (true, false), (true, true), (false, true)] {
                check(isa, rows, cols, tokens, bias, accumulate);
            }
        }
    }
}

/// Every row block remainder (rows 1..=9 against blocks of 3 or 4), every token block
/// remainder (tokens 1..=9 against blocks of 4), and column counts below, at and around
/// the vector widths (4, 8, 16) and the unrolled steps (8 on NEON).
#[test]
fn gemv_multi_matches_f64_on_small_shapes_on_every_isa() {
    for isa in available() {
        for rows in 1..=9 {
            for cols in [1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 23, 33] {
                for tokens in 1..=9 {
                    for (bias, accumulate) in
                        [(false, false), (true, false), (true, true), (false, true)]
                    {
                        check(isa, rows, cols, tokens, bias, accumulate);
                    }
                }
            }
        }
    }
}

#[test]
fn gemv_multi_equals_gemv_per_token_up_to_rounding() {
    let (rows, cols, tokens) = (24, 1024, 10);
    let w = data(rows * cols, 7);
    let x = data(tokens * cols, 8);
    for isa in available() {
        let mut y = vec![0f32; tokens * rows];
        isa.gemv_multi(&w, rows, cols, &x, tokens, &mut y, rows, None, false);
        for i in 0..tokens {
            let mut one = vec![0f32; rows];
            isa.gemv(&w, &x[i * cols..(i + 1) * cols], &mut one, None, false);
            for r in 0..rows {
                assert!(
                    (one[r] - y[i * rows + r]).abs() as f64 <= tol(cols, 1.0),
                    "{isa}: token {i} row {r}: gemv {} vs gemv_multi {}",
                    one[r],
                    y[i * rows + r]
                );
            }
        }
    }
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "gemv_multi: x has")]
fn gemv_multi_rejects_mismatched_x() {
    let mut y = vec![0f32; 4];
    pocket_tts_simd::gemv_multi(&[0.0; 8], 2, 4, &[0.0; 7], 2, &mut y, 2, None, false);
}
