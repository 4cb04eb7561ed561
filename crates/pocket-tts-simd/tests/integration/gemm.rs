//! The GEMM's public API ([`pocket_tts_simd::gemm`]) on every ISA available on this
//! machine: bit-identical to the scalar kernel (packed and strided `A`, dense and tapped
//! `B`, every [`Init`], panels split by columns as threads do), and the documented panics.

use crate::common::data;

use pocket_tts_simd::gemm::{self, BView, Groups, Init, PackedMatrix, PANEL};
use pocket_tts_simd::{available, Isa};

/// (rows, m, taps, tap_len, tap_stride, ldb): every micro-tile height, panel widths below,
/// at and past one panel and one vector, several `k` blocks, taps.
const SHAPES: &[(usize, usize, usize, usize, usize, usize)] = &[
    (1, 1, 1, 7, 0, 7),
    (5, 17, 1, 3, 0, 4),
    (6, 64, 1, 33, 0, 40),
    (13, 100, 3, 33, 40, 120),
    (17, 130, 2, 300, 310, 640),
    (40, 48, 1, 600, 0, 600),
    (200, 65, 1, 20, 0, 20),
    (7, 192, 4, 5, 9, 31),
];

/// `B` data for a view of the given geometry, exactly as long as the view needs.
fn b_data(rows: usize, taps: usize, tap_len: usize, tap_stride: usize, ldb: usize) -> Vec<f32> {
    let need = (rows - 1) * ldb + (taps - 1) * tap_stride + tap_len;
    data(need, 11 + rows as u64)
}

fn assert_same_bits(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "{what}: element {i}: {g} vs {w}");
    }
}

#[test]
fn packed_strided_and_column_blocks_give_the_scalar_bits_on_every_isa() {
    for &(rows, m, taps, tap_len, tap_stride, ldb) in SHAPES {
        let k = taps * tap_len;
        let a = data(k * m, 1 + m as u64);
        let packed = PackedMatrix::from_fn(k, m, |kk, mm| a[kk * m + mm]);
        assert_eq!((packed.k(), packed.m()), (k, m));
        let bd = b_data(rows, taps, tap_len, tap_stride, ldb);
        let b = BView {
            data: &bd,
            rows,
            ldb,
            taps,
            tap_stride,
            tap_len,
        };
        assert_eq!(b.k(), k);
        let ldc = m + 3;
        let c0 = data(rows * ldc, 5);
        let bias = data(m, 6);
        for init in [Init::Zero, Init::Accumulate, Init::Bias(&bias)] {
            let run_packed = |isa: Isa| {
                let mut c = c0.clone();
                isa.gemm_packed(&packed, b, &mut c, ldc, init);
                c
            };
            let want = run_packed(Isa::Scalar);
            // Padding past `m` in each row is untouched.
            for i in 0..rows {
                assert_same_bits(
                    &want[i * ldc + m..(i + 1) * ldc],
                    &c0[i * ldc + m..(i + 1) * ldc],
                    "padding",
                );
            }
            for isa in available() {
                let what = format!("{isa} rows={rows} m={m} k={k} {init:?}");
                assert_same_bits(&run_packed(isa), &want, &format!("packed {what}"));
                let mut c = c0.clone();
                isa.gemm_strided(&a, m, k, m, b, &mut c, ldc, init);
                assert_same_bits(&c, &want, &format!("strided {what}"));
                // Column blocks of whole panels, one after the other, as threads do.
                let mut c = c0.clone();
                let mut start = 0;
                while start < m {
                    let end = (start + 2 * PANEL).min(m);
                    // SAFETY: `c` holds `rows` rows of `ldc >= m` columns, exclusively ours.
                    unsafe {
                        isa.gemm_packed_cols(&packed, b, c.as_mut_ptr(), ldc, start..end, init)
                    };
                    start = end;
                }
                assert_same_bits(&c, &want, &format!("column blocks {what}"));
            }
        }
    }
}

/// Groups of rows (each after a gap in `B`, in `C`) computed as one GEMM give each group
/// the bits of the group alone, on every ISA: the batched Mimi decoder's streams.
#[test]
fn grouped_products_give_each_group_its_own_bits_on_every_isa() {
    for &(rows, m, taps, tap_len, tap_stride, ldb) in SHAPES {
        let k = taps * tap_len;
        let a = data(k * m, 3 + m as u64);
        let packed = PackedMatrix::from_fn(k, m, |kk, mm| a[kk * m + mm]);
        let one = (rows - 1) * ldb + (taps - 1) * tap_stride + tap_len;
        let ldc = m + 1;
        for count in [1, 2, 5] {
            let groups = Groups {
                count,
                b_step: one + 7,
                c_step: rows * ldc + 5,
            };
            let bd = data((count - 1) * groups.b_step + one, 21 + count as u64);
            let c0 = data((count - 1) * groups.c_step + rows * ldc, 9);
            let bias = data(m, 6);
            for init in [Init::Zero, Init::Accumulate, Init::Bias(&bias)] {
                for isa in available() {
                    let mut got = c0.clone();
                    let b = BView {
                        data: &bd,
                        rows,
                        ldb,
                        taps,
                        tap_stride,
                        tap_len,
                    };
                    isa.gemm_packed_grouped(&packed, b, groups, &mut got, ldc, init);
                    let mut want = c0.clone();
                    for g in 0..count {
                        let bg = BView {
                            data: &bd[g * groups.b_step..],
                            ..b
                        };
                        Isa::Scalar.gemm_packed(
                            &packed,
                            bg,
                            &mut want[g * groups.c_step..],
                            ldc,
                            init,
                        );
                    }
                    let what = format!("{isa} rows={rows} m={m} k={k} groups={count} {init:?}");
                    assert_same_bits(&got, &want, &what);
                }
            }
        }
    }
    // The free function runs the detected ISA.
    let (rows, m, k) = (3, 20, 10);
    let packed = PackedMatrix::from_fn(k, m, |kk, mm| (kk * m + mm) as f32 * 1e-2);
    let bd = data(2 * rows * k + 4, 4);
    let groups = Groups {
        count: 2,
        b_step: rows * k + 4,
        c_step: rows * m,
    };
    let b = BView::dense(&bd, rows, k, k);
    let mut want = vec![0f32; 2 * rows * m];
    pocket_tts_simd::detected().gemm_packed_grouped(&packed, b, groups, &mut want, m, Init::Zero);
    let mut got = vec![1f32; 2 * rows * m];
    gemm::gemm_packed_grouped(&packed, b, groups, &mut got, m, Init::Zero);
    assert_same_bits(&got, &want, "gemm_packed_grouped");
}

#[test]
#[should_panic(expected = "overlap")]
fn grouped_products_refuse_overlapping_groups_of_c() {
    let packed = PackedMatrix::from_fn(4, 3, |_, _| 1.0);
    let bd = data(40, 1);
    let groups = Groups {
        count: 2,
        b_step: 8,
        c_step: 3,
    };
    let mut c = vec![0f32; 12];
    gemm::gemm_packed_grouped(
        &packed,
        BView::dense(&bd, 2, 4, 4),
        groups,
        &mut c,
        3,
        Init::Zero,
    );
}

#[test]
fn the_dispatching_functions_run_the_detected_isa() {
    let (rows, m, k) = (9, 70, 45);
    let a = data(k * m, 1);
    let packed = PackedMatrix::from_linear(&a, m, k, |r| 1.0 + r as f32 / 64.0);
    let bd = data(rows * k, 2);
    let b = BView::dense(&bd, rows, k, k);
    let mut want = vec![0f32; rows * m];
    pocket_tts_simd::detected().gemm_packed(&packed, b, &mut want, m, Init::Zero);
    let mut got = vec![1f32; rows * m];
    gemm::gemm_packed(&packed, b, &mut got, m, Init::Zero);
    assert_same_bits(&got, &want, "gemm_packed");
    // `from_linear` packs `Wᵀ` with the rows of `W` scaled.
    let mut wt = vec![0f32; k * m];
    for mm in 0..m {
        for kk in 0..k {
            wt[kk * m + mm] = a[mm * k + kk] * (1.0 + mm as f32 / 64.0);
        }
    }
    let mut strided = vec![0f32; rows * m];
    gemm::gemm_strided(&wt, m, k, m, b, &mut strided, m, Init::Zero);
    assert_same_bits(&strided, &want, "gemm_strided");
}

#[test]
fn add_assign_adds_over_the_common_length() {
    let mut dst = data(37, 1);
    let src = data(40, 2);
    let want: Vec<f32> = dst.iter().zip(&src).map(|(d, s)| d + s).collect();
    gemm::add_assign(&mut dst, &src);
    assert_same_bits(&dst, &want, "add_assign");
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "B has k = 4 but A has k = 5")]
fn mismatched_depths_are_refused() {
    let packed = PackedMatrix::from_fn(5, 3, |_, _| 1.0);
    let bd = vec![0f32; 8];
    let mut c = vec![0f32; 6];
    gemm::gemm_packed(&packed, BView::dense(&bd, 2, 4, 4), &mut c, 3, Init::Zero);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "C needs 6 elements, has 5")]
fn a_short_output_is_refused() {
    let packed = PackedMatrix::from_fn(4, 3, |_, _| 1.0);
    let bd = vec![0f32; 8];
    let mut c = vec![0f32; 5];
    gemm::gemm_packed(&packed, BView::dense(&bd, 2, 4, 4), &mut c, 3, Init::Zero);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "B view needs 9 elements, has 8")]
fn a_short_b_is_refused() {
    let packed = PackedMatrix::from_fn(4, 3, |_, _| 1.0);
    let bd = vec![0f32; 8];
    let mut c = vec![0f32; 6];
    gemm::gemm_packed(&packed, BView::dense(&bd, 2, 4, 5), &mut c, 3, Init::Zero);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "bias has 2 entries, need 3")]
fn a_short_bias_is_refused() {
    let packed = PackedMatrix::from_fn(4, 3, |_, _| 1.0);
    let bd = vec![0f32; 8];
    let mut c = vec![0f32; 6];
    let bias = [0f32; 2];
    gemm::gemm_packed(
        &packed,
        BView::dense(&bd, 2, 4, 4),
        &mut c,
        3,
        Init::Bias(&bias),
    );
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "not whole panels")]
fn column_blocks_must_be_whole_panels() {
    let packed = PackedMatrix::from_fn(4, 100, |_, _| 1.0);
    let bd = vec![0f32; 4];
    let mut c = vec![0f32; 100];
    // SAFETY: `c` holds the one row of 100 columns, exclusively ours (the call panics
    // before touching it).
    unsafe {
        gemm::gemm_packed_cols(
            &packed,
            BView::dense(&bd, 1, 4, 4),
            c.as_mut_ptr(),
            100,
            0..32,
            Init::Zero,
        )
    };
}
