//! Tests of the GEMM drivers: every ISA against the scalar kernel's bits.

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
