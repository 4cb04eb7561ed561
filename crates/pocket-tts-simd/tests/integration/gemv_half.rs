//! `HalfRows` (f16/bf16 weights) and `gemv_half` on every ISA this CPU has, against `f64`
//! sums of the converted weights; the rounding of `HalfRows::from_f32` against the `half`
//! crate; out-of-range and non-finite values; row sub-ranges and panels.

use crate::common;

use common::{data, tol};
use half::{bf16, f16};
use pocket_tts_simd::{available, HalfKind, HalfRows, Isa};

const KINDS: [HalfKind; 2] = [HalfKind::F16, HalfKind::Bf16];

/// Shapes covering every column tail (multiples of 8, 16, 32, 64 and not) and row counts.
const SHAPES: &[(usize, usize)] = &[
    (1, 1),
    (1, 7),
    (2, 8),
    (3, 15),
    (4, 16),
    (5, 17),
    (7, 31),
    (8, 32),
    (9, 33),
    (6, 63),
    (3, 64),
    (11, 65),
    (2, 127),
    (5, 128),
    (4, 129),
    (13, 250),
    (64, 1024),
    (3, 1031),
    (5, 4096),
];

/// The ISAs to test: every one available, and the scalar kernel at least.
fn isas() -> Vec<Isa> {
    let isas = available();
    assert!(isas.contains(&Isa::Scalar));
    eprintln!("ISAs tested: {isas:?}");
    isas
}

/// Checks `y` (the result of rows `first..first + y.len()` of `w` with `x`, `bias` and
/// `accumulate` over `y0`) against an `f64` sum of the converted weights.
#[allow(clippy::too_many_arguments)]
fn check(
    what: &str,
    d: &[f32],
    cols: usize,
    first: usize,
    x: &[f32],
    bias: Option<&[f32]>,
    y0: &[f32],
    accumulate: bool,
    y: &[f32],
) {
    for (i, &got) in y.iter().enumerate() {
        let row = &d[(first + i) * cols..(first + i + 1) * cols];
        let mut want: f64 = row
            .iter()
            .zip(x)
            .map(|(&a, &b)| f64::from(a) * f64::from(b))
            .sum();
        let mag: f64 = row
            .iter()
            .zip(x)
            .map(|(&a, &b)| (f64::from(a) * f64::from(b)).abs())
            .sum::<f64>()
            + 2.0;
        if let Some(b) = bias {
            want += f64::from(b[i]);
        }
        if accumulate {
            want += f64::from(y0[i]);
        }
        let err = (f64::from(got) - want).abs();
        assert!(
            err <= tol(cols, mag),
            "{what} row {}: {got} vs {want} (err {err:e}, tol {:e})",
            first + i,
            tol(cols, mag)
        );
    }
}

#[test]
fn gemv_half_matches_an_f64_sum_on_every_isa() {
    for isa in isas() {
        for kind in KINDS {
            for &(rows, cols) in SHAPES {
                let w = data(rows * cols, 10 + (rows * 7919 + cols) as u64);
                let h = HalfRows::from_f32(&w, rows, cols, kind);
                let d = h.dequantize();
                let x = data(cols, 20 + cols as u64);
                let b = data(rows, 30);
                let y0 = data(rows, 40);
                for (bias, acc) in [(false, false), (true, false), (false, true), (true, true)] {
                    let bias = bias.then_some(&b[..]);
                    let mut y = y0.clone();
                    isa.gemv_half(&h, 0, &x, &mut y, bias, acc);
                    let what = format!(
                        "{isa} {kind:?} {rows}x{cols} bias {} acc {acc}",
                        bias.is_some()
                    );
                    check(&what, &d, cols, 0, &x, bias, &y0, acc, &y);
                }
            }
        }
    }
}

#[test]
fn row_ranges_give_the_same_rows_and_match_f64() {
    let (rows, cols) = (37, 200);
    let w = data(rows * cols, 5);
    let x = data(cols, 6);
    for kind in KINDS {
        let h = HalfRows::from_f32(&w, rows, cols, kind);
        let d = h.dequantize();
        for isa in isas() {
            let mut whole = vec![0f32; rows];
            isa.gemv_half(&h, 0, &x, &mut whole, None, false);
            for (first, n) in [(0, 1), (1, 8), (5, 13), (30, 7), (36, 1), (12, 0)] {
                let b = data(n, 7 + first as u64);
                let y0 = data(n, 8);
                let mut part = y0.clone();
                isa.gemv_half(&h, first, &x, &mut part, Some(&b), true);
                let what = format!("{isa} {kind:?} rows {first}..{}", first + n);
                check(&what, &d, cols, first, &x, Some(&b), &y0, true, &part);
                // Without bias and accumulation, a range gives exactly the whole's rows.
                let mut plain = vec![0f32; n];
                isa.gemv_half(&h, first, &x, &mut plain, None, false);
                assert_eq!(plain, whole[first..first + n], "{what}");
            }
        }
    }
}

#[test]
fn dispatch_uses_the_detected_isa() {
    let (rows, cols) = (19, 77);
    let w = data(rows * cols, 50);
    let x = data(cols, 51);
    for kind in KINDS {
        let h = HalfRows::from_f32(&w, rows, cols, kind);
        let mut a = vec![0f32; rows];
        let mut b = vec![0f32; rows];
        pocket_tts_simd::gemv_half(&h, &x, &mut a, None, false);
        pocket_tts_simd::detected().gemv_half(&h, 0, &x, &mut b, None, false);
        assert_eq!(a, b, "{kind:?}");
        // Fewer outputs than rows: the first rows.
        let mut c = vec![0f32; 4];
        pocket_tts_simd::gemv_half(&h, &x, &mut c, None, false);
        assert_eq!(c, a[..4], "{kind:?}");
    }
}

#[test]
fn from_f32_rounds_like_the_half_crate() {
    // Random values over many binades, the f16 subnormal range, and exact ties.
    let mut w: Vec<f32> = data(20_000, 60)
        .iter()
        .enumerate()
        .map(|(i, v)| v * 2f32.powi((i % 60) as i32 - 30))
        .collect();
    let one = 1.0f32;
    w.extend([
        0.0,
        -0.0,
        one + 2f32.powi(-11),       // f16 tie: 1 (even)
        one + 3.0 * 2f32.powi(-11), // f16 tie: 1 + 2^-9 (even)
        one + 2f32.powi(-8),        // bf16 tie: 1 (even)
        one + 3.0 * 2f32.powi(-8),  // bf16 tie: 1 + 2^-6 (even)
        -(one + 2f32.powi(-11)),
        2f32.powi(-24),       // smallest f16 subnormal
        2f32.powi(-25),       // tie between 0 and it: 0 (even)
        1.5 * 2f32.powi(-25), // rounds up to 2^-24
        65504.0,
        65519.0,
        65520.0, // f16 tie between 65504 and "65536": inf
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-40, // f32 subnormal
    ]);
    let n = w.len();
    let f = HalfRows::from_f32(&w, 1, n, HalfKind::F16);
    let b = HalfRows::from_f32(&w, n, 1, HalfKind::Bf16);
    assert_eq!((f.rows(), f.cols(), f.kind()), (1, n, HalfKind::F16));
    assert_eq!((b.rows(), b.cols(), b.kind()), (n, 1, HalfKind::Bf16));
    assert_eq!((f.bytes(), b.bytes()), (2 * n, 2 * n));
    let fd = f.dequantize();
    let bd = b.dequantize();
    for (i, &v) in w.iter().enumerate() {
        let fb = f16::from_f32(v).to_bits();
        let bb = bf16::from_f32(v).to_bits();
        assert_eq!(f.bits()[i], fb, "f16 of {v:e}");
        assert_eq!(b.bits()[i], bb, "bf16 of {v:e}");
        assert_eq!(
            fd[i].to_bits(),
            f16::from_bits(fb).to_f32().to_bits(),
            "{v:e}"
        );
        assert_eq!(
            bd[i].to_bits(),
            bf16::from_bits(bb).to_f32().to_bits(),
            "{v:e}"
        );
        // Round to nearest: within half a step of the f32 value (normal f16 range).
        if v.abs() >= 2f32.powi(-14) && v.abs() <= 65504.0 {
            assert!(
                (fd[i] - v).abs() <= v.abs() * 2f32.powi(-11),
                "f16 of {v:e}"
            );
        }
        if v.is_normal() && bd[i].is_finite() {
            assert!(
                (bd[i] - v).abs() <= v.abs() * 2f32.powi(-8),
                "bf16 of {v:e}"
            );
        }
    }
    // The ties, explicitly.
    let tail = &fd[n - 16..];
    assert_eq!(tail[2], 1.0);
    assert_eq!(tail[3], 1.0 + 2f32.powi(-9));
    assert_eq!(tail[6], -1.0);
    assert_eq!(tail[7], 2f32.powi(-24));
    assert_eq!(tail[8], 0.0);
    assert_eq!(tail[9], 2f32.powi(-24));
    assert_eq!(tail[10], 65504.0);
    assert_eq!(tail[11], 65504.0);
    let btail = &bd[n - 16..];
    assert_eq!(btail[4], 1.0);
    assert_eq!(btail[5], 1.0 + 2f32.powi(-6));
}

#[test]
fn out_of_range_and_non_finite_values_are_as_documented() {
    let w = [
        70000.0f32,
        -70000.0,
        65520.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MAX,
        1e-9,
        -1e-9,
        3.0e38,
    ];
    let f = HalfRows::from_f32(&w, 1, w.len(), HalfKind::F16).dequantize();
    assert_eq!(
        &f[..5],
        &[
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::INFINITY,
            f32::INFINITY,
            f32::NEG_INFINITY
        ]
    );
    assert!(f[5].is_nan());
    assert_eq!(f[6], f32::INFINITY);
    assert_eq!(
        (f[7].to_bits(), f[8].to_bits()),
        (0f32.to_bits(), (-0f32).to_bits())
    );
    let b = HalfRows::from_f32(&w, 1, w.len(), HalfKind::Bf16).dequantize();
    assert_eq!(&b[..2], &[70144.0, -70144.0]); // bf16 keeps the range, rounds to 8 bits
    assert_eq!(&b[3..5], &[f32::INFINITY, f32::NEG_INFINITY]);
    assert!(b[5].is_nan());
    assert_eq!(b[6], f32::INFINITY, "f32::MAX rounds up to inf in bf16");
    assert!(b[7] > 0.0 && b[8] < 0.0, "bf16 keeps tiny values");
    assert!(b[9].is_finite());

    // A non-finite weight propagates through the product on every ISA (as in f32):
    // +inf · positive = +inf in its row; NaN makes its row NaN; other rows are finite.
    let cols = 40;
    let mut m = vec![0.5f32; 3 * cols];
    m[3] = 1e6; // +inf in f16, finite in bf16
    m[cols + 37] = f32::NAN;
    let x = vec![1.0f32; cols];
    for isa in isas() {
        let mut y = [0f32; 3];
        isa.gemv_half(
            &HalfRows::from_f32(&m, 3, cols, HalfKind::F16),
            0,
            &x,
            &mut y,
            None,
            false,
        );
        assert_eq!(y[0], f32::INFINITY, "{isa}");
        assert!(y[1].is_nan(), "{isa}");
        assert_eq!(y[2], 20.0, "{isa}");
        isa.gemv_half(
            &HalfRows::from_f32(&m, 3, cols, HalfKind::Bf16),
            0,
            &x,
            &mut y,
            None,
            false,
        );
        assert_eq!(y[0], 999_424.0 + 19.5, "{isa}"); // 1e6 in bf16 is 999 424
        assert!(y[1].is_nan(), "{isa}");
    }
}

#[test]
fn dequantized_panels_are_exact_on_every_isa() {
    let (rows, cols) = (23, 37);
    let mut w = data(rows * cols, 70);
    // Some f16 subnormals, which the SIMD conversions must keep.
    for (i, v) in w.iter_mut().enumerate().step_by(11) {
        *v *= 1e-5 * (i % 3) as f32;
    }
    for kind in KINDS {
        let h = HalfRows::from_f32(&w, rows, cols, kind);
        let want: Vec<f32> = h
            .bits()
            .iter()
            .map(|&b| match kind {
                HalfKind::F16 => f16::from_bits(b).to_f32(),
                HalfKind::Bf16 => bf16::from_bits(b).to_f32(),
            })
            .collect();
        assert!(
            want.iter().any(|v| *v != 0.0 && v.abs() < 6.1e-5),
            "no subnormals tested"
        );
        assert_eq!(h.dequantize(), want, "{kind:?}");
        for isa in isas() {
            for (first, n) in [(0, rows), (0, 1), (4, 9), (22, 1), (10, 0)] {
                let mut out = vec![f32::NAN; n * cols];
                isa.dequantize_half_rows(&h, first, &mut out);
                assert_eq!(
                    out,
                    want[first * cols..(first + n) * cols],
                    "{isa} {kind:?} {first}+{n}"
                );
            }
            let mut out = vec![0f32; 2 * cols];
            h.dequantize_rows_into(3, &mut out);
            assert_eq!(out, want[3 * cols..5 * cols]);
        }
    }
    // `from_bits` wraps existing values.
    let h = HalfRows::from_bits(vec![0x3c00, 0xc000], 1, 2, HalfKind::F16);
    assert_eq!(h.dequantize(), [1.0, -2.0]);
    let h = HalfRows::from_bits(vec![0x3f80, 0xc000], 2, 1, HalfKind::Bf16);
    assert_eq!(h.dequantize(), [1.0, -2.0]);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "gemv_half: x has 3 elements, expected 4")]
fn wrong_x_length_panics() {
    let h = HalfRows::from_f32(&[1.0; 8], 2, 4, HalfKind::F16);
    Isa::Scalar.gemv_half(&h, 0, &[1.0; 3], &mut [0.0; 2], None, false);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "gemv_half: rows 1..3 outside the matrix's 2")]
fn rows_outside_the_matrix_panic() {
    let h = HalfRows::from_f32(&[1.0; 8], 2, 4, HalfKind::Bf16);
    pocket_tts_simd::detected().gemv_half(&h, 1, &[1.0; 4], &mut [0.0; 2], None, false);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "gemv_half: bias has 1 elements, expected 2")]
fn wrong_bias_length_panics() {
    let h = HalfRows::from_f32(&[1.0; 8], 2, 4, HalfKind::F16);
    pocket_tts_simd::gemv_half(&h, &[1.0; 4], &mut [0.0; 2], Some(&[1.0]), false);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "HalfRows::from_f32: w has 7 elements, expected 2 × 4")]
fn wrong_matrix_length_panics() {
    HalfRows::from_f32(&[1.0; 7], 2, 4, HalfKind::F16);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "dequantize_half_rows: buffer length 5 is not a multiple of cols = 4")]
fn ragged_panel_panics() {
    let h = HalfRows::from_f32(&[1.0; 8], 2, 4, HalfKind::F16);
    h.dequantize_rows_into(0, &mut [0.0; 5]);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "dequantize_half_rows: rows 1..3 outside the matrix's 2")]
fn panel_past_the_matrix_panics() {
    let h = HalfRows::from_f32(&[1.0; 8], 2, 4, HalfKind::Bf16);
    h.dequantize_rows_into(1, &mut [0.0; 8]);
}

/// Several tokens through `gemv_half_tokens`: each value bit-identical to `gemv_half` on
/// that token (then the caller's bias), on every ISA, for every column tail, token counts
/// that fill and do not fill the groups of three, and a row sub-range.
#[test]
fn tokens_give_each_tokens_gemv_bits_on_every_isa() {
    for isa in isas() {
        for kind in KINDS {
            for &(rows, cols) in SHAPES {
                let w = data(rows * cols, (rows * 31 + cols) as u64);
                let h = HalfRows::from_f32(&w, rows, cols, kind);
                for tokens in [1, 2, 3, 4, 5, 7] {
                    let xs = data(tokens * cols, (cols * 7 + tokens) as u64);
                    let first = rows / 3;
                    let n = rows - first;
                    let mut out = vec![f32::NAN; tokens * n];
                    isa.gemv_half_tokens(&h, first, n, &xs, &mut out);
                    for t in 0..tokens {
                        let mut want = vec![0f32; n];
                        isa.gemv_half(
                            &h,
                            first,
                            &xs[t * cols..(t + 1) * cols],
                            &mut want,
                            None,
                            false,
                        );
                        let got = &out[t * n..(t + 1) * n];
                        assert_eq!(
                            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                            want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                            "{isa:?} {kind:?} {rows}×{cols}, {tokens} tokens, token {t}"
                        );
                    }
                }
            }
        }
    }
}
