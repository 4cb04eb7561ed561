//! Tests of the GEMM drivers: every ISA against the scalar kernel's bits.

use super::*;
use crate::gemv_half::{half_to_f32, round_to_half};

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

/// A 16-bit packed matrix gives, on every ISA (and split by column panels, and grouped),
/// the bits of the `f32` GEMM over its widened values on the scalar kernel: the widening
/// is exact and the micro-kernels are the `f32` ones.
#[test]
fn half_matrices_give_the_bits_of_their_widened_values_on_every_isa() {
    let mut seed = 3u64;
    for kind in [HalfKind::F16, HalfKind::Bf16] {
        for &(rows, m, taps, tap_len, tap_stride, ldb) in &[
            (1, 1, 1, 7, 0, 7),
            (2, 512, 7, 64, 64, 64),
            (16, 1536, 1, 512, 0, 512),
            (37, 100, 3, 33, 40, 50),
            (13, 17, 2, 300, 301, 3),
            (250, 130, 1, 600, 0, 600),
            // Small matrices over several row blocks: widened whole once per call.
            (400, 64, 3, 32, 40, 100),
            (300, 100, 1, 70, 0, 70),
        ] {
            let k = taps * tap_len;
            let a: Vec<f32> = (0..k * m).map(|_| lcg(&mut seed)).collect();
            let need = (rows - 1) * ldb + (taps - 1) * tap_stride + tap_len;
            let bd: Vec<f32> = (0..need + 2 * ldb).map(|_| lcg(&mut seed)).collect();
            let b = BView {
                data: &bd,
                rows,
                ldb,
                taps,
                tap_stride,
                tap_len,
            };
            let ldc = m + 3;
            let c0: Vec<f32> = (0..3 * rows * ldc).map(|_| lcg(&mut seed)).collect();
            let bias: Vec<f32> = (0..m).map(|_| lcg(&mut seed)).collect();
            let packed = PackedMatrix::from_fn(k, m, |kk, mm| a[kk * m + mm]);
            let half = packed.to_half(kind).unwrap();
            assert_eq!(half.half_kind(), Some(kind));
            assert_eq!(2 * half.bytes(), packed.bytes());
            let widened = PackedMatrix::from_fn(k, m, |kk, mm| {
                half_to_f32(round_to_half(a[kk * m + mm], kind), kind)
            });
            let groups = Groups {
                count: 2,
                b_step: ldb,
                c_step: rows * ldc,
            };
            for init in [Init::Zero, Init::Accumulate, Init::Bias(&bias)] {
                let mut want = c0.clone();
                Isa::Scalar.gemm_packed_grouped(&widened, b, groups, &mut want, ldc, init);
                for isa in crate::available() {
                    let mut got = c0.clone();
                    isa.gemm_packed_grouped(&half, b, groups, &mut got, ldc, init);
                    let mut by_cols = c0.clone();
                    let panels = m.div_ceil(PANEL);
                    for p in 0..panels {
                        let cols = p * PANEL..((p + 1) * PANEL).min(m);
                        // SAFETY: `by_cols` holds `rows` rows of `ldc >= m` columns and
                        // is only touched by this call.
                        unsafe {
                            isa.gemm_packed_cols(&half, b, by_cols.as_mut_ptr(), ldc, cols, init)
                        };
                    }
                    let mut one = c0.clone();
                    isa.gemm_packed(&half, b, &mut one, ldc, init);
                    for (i, w) in want.iter().enumerate() {
                        assert_eq!(
                            got[i].to_bits(),
                            w.to_bits(),
                            "{kind:?} {isa:?} grouped rows={rows} m={m} k={k} {init:?} at {i}"
                        );
                        if i < rows * ldc {
                            assert_eq!(by_cols[i].to_bits(), w.to_bits(), "{kind:?} {isa:?} cols");
                            assert_eq!(one[i].to_bits(), w.to_bits(), "{kind:?} {isa:?} one");
                        }
                    }
                }
            }
        }
    }
}

/// A value that `f16` cannot hold is refused with its place; `bf16` holds it.
#[test]
fn half_matrices_refuse_values_out_of_range() {
    let packed = PackedMatrix::from_fn(
        3,
        70,
        |kk, mm| {
            if (kk, mm) == (2, 65) {
                70000.0
            } else {
                0.5
            }
        },
    );
    assert_eq!(
        packed.to_half(HalfKind::F16).unwrap_err(),
        HalfOutOfRange {
            value: 70000.0,
            row: 2,
            col: 65
        }
    );
    assert!(packed.to_half(HalfKind::Bf16).is_ok());
}
