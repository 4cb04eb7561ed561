//! `QuantizedRows` and `gemv_i8` on every ISA this CPU has, against `f64` sums of the
//! dequantized weights; the quantization error bound; row sub-ranges.

use pocket_tts_simd::{available, Isa, QuantizedRows, QuantizedVector};

/// A deterministic pseudo-random matrix in [-1, 1) with a few large values per row.
fn matrix(rows: usize, cols: usize, seed: u64) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..rows * cols)
        .map(|i| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = ((s >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0;
            if i % 97 == 0 {
                v * 8.0
            } else {
                v
            }
        })
        .collect()
}

#[test]
fn quantization_error_is_at_most_half_a_step() {
    let (rows, cols) = (37, 300);
    let w = matrix(rows, cols, 1);
    let q = QuantizedRows::quantize(&w, rows, cols);
    assert_eq!(q.bytes(), rows * cols + 4 * rows);
    let d = q.dequantize();
    for r in 0..rows {
        let scale = q.scales()[r];
        let max = w[r * cols..(r + 1) * cols]
            .iter()
            .fold(0f32, |m, v| m.max(v.abs()));
        assert!(
            (scale - max / 127.0).abs() <= f32::EPSILON * max,
            "row {r} scale"
        );
        for c in 0..cols {
            let e = (w[r * cols + c] - d[r * cols + c]).abs();
            assert!(
                e <= scale * 0.5 * (1.0 + 1e-5),
                "row {r} col {c}: error {e} > scale/2 {scale}"
            );
        }
    }
    // A row of zeros.
    let z = QuantizedRows::quantize(&[0.0; 8], 2, 4);
    assert_eq!(z.scales(), &[0.0, 0.0]);
    assert!(z.values().iter().all(|&v| v == 0));
}

#[test]
fn gemv_i8_matches_an_f64_sum_on_every_isa() {
    for isa in available() {
        for (rows, cols) in [
            (1, 1),
            (3, 15),
            (4, 16),
            (5, 17),
            (9, 33),
            (64, 1024),
            (13, 250),
        ] {
            let w = matrix(rows, cols, (rows * 1000 + cols) as u64);
            let q = QuantizedRows::quantize(&w, rows, cols);
            let d = q.dequantize();
            let x = matrix(1, cols, 7);
            let bias = matrix(1, rows, 9);
            for (with_bias, accumulate) in [(false, false), (true, false), (true, true)] {
                let mut y = vec![0.5f32; rows];
                isa.gemv_i8(
                    &q,
                    0,
                    &x,
                    &mut y,
                    with_bias.then_some(&bias[..]),
                    accumulate,
                );
                for r in 0..rows {
                    let row = &d[r * cols..(r + 1) * cols];
                    let exact: f64 = row
                        .iter()
                        .zip(&x)
                        .map(|(a, b)| *a as f64 * *b as f64)
                        .sum::<f64>()
                        + if with_bias { bias[r] as f64 } else { 0.0 }
                        + if accumulate { 0.5 } else { 0.0 };
                    let mag: f64 = row
                        .iter()
                        .zip(&x)
                        .map(|(a, b)| (*a as f64 * *b as f64).abs())
                        .sum::<f64>()
                        + 1.0;
                    let err = (y[r] as f64 - exact).abs();
                    assert!(
                        err <= 1e-5 * mag,
                        "{isa:?} {rows}x{cols} bias {with_bias} acc {accumulate} row {r}: {} vs {exact} (err {err:e})",
                        y[r]
                    );
                }
            }
        }
    }
}

#[test]
fn a_row_range_gives_the_same_rows() {
    let (rows, cols) = (21, 70);
    let q = QuantizedRows::quantize(&matrix(rows, cols, 3), rows, cols);
    let x = matrix(1, cols, 4);
    for isa in available() {
        let mut whole = vec![0f32; rows];
        isa.gemv_i8(&q, 0, &x, &mut whole, None, false);
        let mut part = vec![0f32; 8];
        isa.gemv_i8(&q, 5, &x, &mut part, None, false);
        assert_eq!(part, whole[5..13], "{isa:?}");
    }
    // The scalar kernel and the best one agree closely.
    let mut a = vec![0f32; rows];
    let mut b = vec![0f32; rows];
    Isa::Scalar.gemv_i8(&q, 0, &x, &mut a, None, false);
    pocket_tts_simd::gemv_i8(&q, &x, &mut b, None, false);
    for (u, v) in a.iter().zip(&b) {
        assert!((u - v).abs() <= 1e-4 * (1.0 + u.abs()), "{u} vs {v}");
    }
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "outside the matrix")]
fn rows_outside_the_matrix_panic() {
    let q = QuantizedRows::quantize(&[1.0; 8], 2, 4);
    let mut y = vec![0f32; 2];
    Isa::Scalar.gemv_i8(&q, 1, &[1.0; 4], &mut y, None, false);
}

#[test]
fn quantized_vector_error_is_at_most_half_a_step() {
    let x = matrix(1, 333, 5);
    let mut v = QuantizedVector::default();
    v.quantize(&x);
    let max = x.iter().fold(0f32, |m, a| m.max(a.abs()));
    assert!((v.scale() - max / 127.0).abs() <= f32::EPSILON * max);
    assert_eq!(v.len(), x.len());
    for (a, &q) in x.iter().zip(v.values()) {
        let e = (a - f32::from(q) * v.scale()).abs();
        assert!(e <= v.scale() * 0.5 * (1.0 + 1e-5), "{a}: error {e}");
    }
    // Reuse with a shorter vector, then zeros.
    v.quantize(&x[..10]);
    assert_eq!(v.len(), 10);
    v.quantize(&[0.0; 4]);
    assert_eq!((v.scale(), v.values()), (0.0, &[0i8; 4][..]));
}

#[test]
fn gemv_i8_q8_is_the_exact_integer_product_on_every_isa() {
    for isa in available() {
        for (rows, cols) in [
            (1, 1),
            (3, 31),
            (4, 32),
            (5, 33),
            (9, 65),
            (64, 1024),
            (13, 250),
        ] {
            let q =
                QuantizedRows::quantize(&matrix(rows, cols, (rows * 7 + cols) as u64), rows, cols);
            let mut x = QuantizedVector::default();
            x.quantize(&matrix(1, cols, 8));
            let bias = matrix(1, rows, 9);
            for (with_bias, accumulate) in [(false, false), (true, false), (true, true)] {
                let mut y = vec![0.5f32; rows];
                isa.gemv_i8_q8(
                    &q,
                    0,
                    &x,
                    &mut y,
                    with_bias.then_some(&bias[..]),
                    accumulate,
                );
                for r in 0..rows {
                    let dot: i64 = q.values()[r * cols..(r + 1) * cols]
                        .iter()
                        .zip(x.values())
                        .map(|(&a, &b)| i64::from(a) * i64::from(b))
                        .sum();
                    let exact = dot as f64 * f64::from(q.scales()[r]) * f64::from(x.scale())
                        + if with_bias { f64::from(bias[r]) } else { 0.0 }
                        + if accumulate { 0.5 } else { 0.0 };
                    let mag = (dot.unsigned_abs() as f64)
                        * f64::from(q.scales()[r])
                        * f64::from(x.scale())
                        + 1.0;
                    let err = (f64::from(y[r]) - exact).abs();
                    assert!(
                        err <= 1e-6 * mag,
                        "{isa:?} {rows}x{cols} bias {with_bias} acc {accumulate} row {r}: {} vs {exact}",
                        y[r]
                    );
                }
            }
        }
    }
}

#[test]
fn gemv_i8_q8_rows_and_isas_agree_bit_for_bit() {
    let (rows, cols) = (21, 100);
    let q = QuantizedRows::quantize(&matrix(rows, cols, 3), rows, cols);
    let mut x = QuantizedVector::default();
    x.quantize(&matrix(1, cols, 4));
    let mut reference = vec![0f32; rows];
    Isa::Scalar.gemv_i8_q8(&q, 0, &x, &mut reference, None, false);
    for isa in available() {
        let mut whole = vec![0f32; rows];
        isa.gemv_i8_q8(&q, 0, &x, &mut whole, None, false);
        // Integer sums are exact: every ISA gives the same bits.
        assert_eq!(whole, reference, "{isa:?}");
        let mut part = vec![0f32; 8];
        isa.gemv_i8_q8(&q, 5, &x, &mut part, None, false);
        assert_eq!(part, whole[5..13], "{isa:?}");
    }
}

#[test]
fn quantizers_round_half_away_from_zero() {
    // Values landing exactly on halves of a step, and just around them.
    let x = [
        0.5f32,
        -0.5,
        1.5,
        -1.5,
        2.5,
        126.5,
        -126.5,
        0.49999997,
        -0.49999997,
        127.0,
        -127.0,
    ];
    let mut v = QuantizedVector::default();
    // Scale 1: max |x| = 127.
    v.quantize(&x);
    assert_eq!(v.scale(), 1.0);
    let expected: Vec<i8> = x.iter().map(|a| a.round() as i8).collect();
    assert_eq!(v.values(), &expected[..]);
    let q = QuantizedRows::quantize(&x, 1, x.len());
    assert_eq!(q.values(), &expected[..]);
}

#[test]
fn tokens_kernel_gives_each_tokens_gemv_i8_q8_bits() {
    for cols in [1usize, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 200, 1024] {
        let rows = 11;
        let w = QuantizedRows::quantize(&matrix(rows + 5, cols, cols as u64), rows + 5, cols);
        for n_tokens in 1usize..=9 {
            let xs: Vec<QuantizedVector> = (0..n_tokens)
                .map(|t| {
                    let mut q = QuantizedVector::with_capacity(cols);
                    q.quantize(&matrix(1, cols, 100 + t as u64));
                    q
                })
                .collect();
            for isa in available() {
                let first = 3;
                let mut out = vec![f32::NAN; n_tokens * rows];
                isa.gemv_i8_q8_tokens(&w, first, rows, &xs, &mut out);
                for (t, x) in xs.iter().enumerate() {
                    let mut want = vec![0f32; rows];
                    isa.gemv_i8_q8(&w, first, x, &mut want, None, false);
                    assert_eq!(
                        &out[t * rows..(t + 1) * rows],
                        &want[..],
                        "{isa:?}: {n_tokens} tokens × {cols} columns, token {t}"
                    );
                }
            }
        }
    }
}

/// A zero token (scale 0), tokens and weights at ±127 (the largest sums the offsets meet),
/// and 4096 columns (the FFN's second linear), against each token's `gemv_i8_q8`.
#[test]
fn tokens_kernel_gives_gemv_i8_q8_bits_at_the_extremes() {
    for cols in [130usize, 4096] {
        let rows = 9;
        let mut wf = matrix(rows, cols, 7);
        for (i, v) in wf.iter_mut().enumerate() {
            if i % 3 == 0 {
                *v = if i % 2 == 0 { 1.0 } else { -1.0 };
            }
        }
        let w = QuantizedRows::quantize(&wf, rows, cols);
        let tokens: Vec<Vec<f32>> = vec![
            vec![0.0; cols],
            (0..cols)
                .map(|i| if i % 2 == 0 { 3.0 } else { -3.0 })
                .collect(),
            vec![-2.0; cols],
            vec![5.0; cols],
            matrix(1, cols, 9),
        ];
        let xs: Vec<QuantizedVector> = tokens
            .iter()
            .map(|x| {
                let mut q = QuantizedVector::with_capacity(cols);
                q.quantize(x);
                q
            })
            .collect();
        for isa in available() {
            let mut out = vec![f32::NAN; xs.len() * rows];
            isa.gemv_i8_q8_tokens(&w, 0, rows, &xs, &mut out);
            for (t, x) in xs.iter().enumerate() {
                let mut want = vec![0f32; rows];
                Isa::Scalar.gemv_i8_q8(&w, 0, x, &mut want, None, false);
                let got = &out[t * rows..(t + 1) * rows];
                assert_eq!(
                    got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    "{isa:?}: {cols} columns, token {t}"
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
#[should_panic(expected = "token 1 has 5 elements")]
fn tokens_kernel_refuses_a_token_of_another_length() {
    let w = QuantizedRows::quantize(&matrix(4, 6, 1), 4, 6);
    let mut a = QuantizedVector::with_capacity(6);
    a.quantize(&[1.0; 6]);
    let mut b = QuantizedVector::with_capacity(5);
    b.quantize(&[1.0; 5]);
    let mut out = vec![0f32; 8];
    Isa::Scalar.gemv_i8_q8_tokens(&w, 0, 4, &[a, b], &mut out);
}
