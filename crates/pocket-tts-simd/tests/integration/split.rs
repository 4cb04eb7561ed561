//! `SplitMut` and the `Team::for_each_split*` helpers: every element of the split part of
//! a buffer lands in exactly one piece, at the place `split_range` says, pieces are handed
//! out once, and team jobs fill disjoint pieces (one buffer or two) correctly.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use pocket_tts_simd::{split_range, SplitMut, Team};

// Fewer shapes and rounds under Miri (`cargo +nightly miri test -p pocket-tts-simd --test
// split`), which checks the pieces for aliasing and out-of-bounds access.
const ROWS: &[usize] = if cfg!(miri) {
    &[0, 1, 3, 9, 65]
} else {
    &[0, 1, 2, 3, 5, 7, 8, 9, 16, 31, 64, 65, 100, 257]
};
const PARTS: &[usize] = if cfg!(miri) {
    &[1, 2, 7, 64]
} else {
    &[1, 2, 3, 4, 5, 7, 16, 63, 64]
};
const ALIGNS: &[usize] = if cfg!(miri) {
    &[0, 3, 8]
} else {
    &[0, 1, 2, 3, 8, 16, 48]
};
const ROUNDS: usize = if cfg!(miri) { 3 } else { 200 };

/// Element `(hits, position)`: each piece increments `hits` and records where it thinks
/// the element is.
type Cell = (u32, usize);

#[test]
fn pieces_tile_the_buffer_exactly_once() {
    for &rows in ROWS {
        for unit in [0usize, 1, 3, 8] {
            for &parts in PARTS {
                for &align in ALIGNS {
                    let what = format!("rows {rows} unit {unit} parts {parts} align {align}");
                    let n = rows * unit;
                    // A few spare elements past `rows·unit` must stay untouched.
                    let mut data: Vec<Cell> = vec![(0, 0); n + 5];
                    let split = SplitMut::new(&mut data, rows, unit, parts, align);
                    assert_eq!((split.rows(), split.parts()), (rows, parts), "{what}");
                    let mut next_row = 0;
                    for i in 0..parts {
                        let peek = split.range(i);
                        let (r, piece) = split.take(i);
                        assert_eq!(r, peek, "{what}");
                        assert_eq!(r, split_range(rows, parts, align, i), "{what}");
                        assert_eq!(r.start, next_row, "{what}: piece {i} not contiguous");
                        next_row = r.end;
                        assert_eq!(piece.len(), r.len() * unit, "{what}: piece {i}");
                        for (k, e) in piece.iter_mut().enumerate() {
                            e.0 += 1;
                            e.1 = r.start * unit + k;
                        }
                    }
                    assert_eq!(next_row, rows, "{what}");
                    for (j, e) in data.iter().enumerate() {
                        let want = if j < n { (1, j) } else { (0, 0) };
                        assert_eq!(*e, want, "{what}: element {j}");
                    }
                }
            }
        }
    }
}

#[test]
fn strided_pieces_cover_their_rows_exactly_once() {
    for &rows in ROWS {
        for (stride, row_len) in [(0usize, 0usize), (1, 0), (1, 1), (5, 3), (8, 8), (7, 1)] {
            for &parts in PARTS {
                for &align in ALIGNS {
                    let what = format!(
                        "rows {rows} stride {stride} row_len {row_len} parts {parts} align {align}"
                    );
                    // Exactly the needed length: the last row is short.
                    let needed = if rows == 0 {
                        0
                    } else {
                        (rows - 1) * stride + row_len
                    };
                    let mut data: Vec<Cell> = vec![(0, 0); needed];
                    let split =
                        SplitMut::with_stride(&mut data, rows, stride, row_len, parts, align);
                    for i in 0..parts {
                        let (r, piece) = split.take(i);
                        assert_eq!(r, split_range(rows, parts, align, i), "{what}");
                        let want_len = if r.is_empty() {
                            0
                        } else {
                            (r.len() - 1) * stride + row_len
                        };
                        assert_eq!(piece.len(), want_len, "{what}: piece {i}");
                        for (k, e) in piece.iter_mut().enumerate() {
                            e.0 += 1;
                            e.1 = r.start * stride + k;
                        }
                    }
                    for (j, e) in data.iter().enumerate() {
                        let in_row = stride == 0 || j % stride < row_len;
                        if in_row {
                            assert_eq!(*e, (1, j), "{what}: element {j}");
                        } else {
                            // A gap between rows: part of at most one piece.
                            assert!(*e == (1, j) || *e == (0, 0), "{what}: gap {j}: {e:?}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn pieces_can_be_taken_in_any_order() {
    let mut data = vec![0usize; 40];
    let split = SplitMut::new(&mut data, 10, 4, 4, 2);
    let mut pieces: Vec<_> = [3, 0, 2, 1].into_iter().map(|i| split.take(i)).collect();
    for (r, p) in &mut pieces {
        p.fill(r.start);
    }
    drop(pieces);
    let starts: Vec<usize> = (0..4).map(|i| split_range(10, 4, 2, i).start).collect();
    for (j, v) in data.iter().enumerate() {
        let row = j / 4;
        let piece = starts.iter().rposition(|&s| s <= row).unwrap();
        assert_eq!(*v, starts[piece], "element {j}");
    }
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "piece 1 was already taken")]
fn taking_a_piece_twice_panics() {
    let mut data = vec![0f32; 16];
    let split = SplitMut::new(&mut data, 16, 1, 4, 1);
    let _first = split.take(1);
    let _second = split.take(1);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "already taken")]
fn taking_an_empty_piece_twice_panics() {
    let mut data = vec![0f32; 2];
    // 2 rows, 4 parts: pieces 2 and 3 are empty.
    let split = SplitMut::new(&mut data, 2, 1, 4, 1);
    let (r, p) = split.take(3);
    assert!(r.is_empty() && p.is_empty());
    let _ = split.take(3);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "piece 4 out of range")]
fn taking_a_piece_past_parts_panics() {
    let mut data = vec![0f32; 16];
    let split = SplitMut::new(&mut data, 16, 1, 4, 1);
    let _ = split.take(4);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "buffer has 29 elements")]
fn too_short_data_panics() {
    let mut data = vec![0f32; 29];
    let _ = SplitMut::new(&mut data, 10, 3, 2, 1);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "need 13")]
fn too_short_strided_data_panics() {
    let mut data = vec![0f32; 12];
    // (3 − 1)·5 + 3 = 13.
    let _ = SplitMut::with_stride(&mut data, 3, 5, 3, 2, 1);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "overflow")]
fn overflowing_shape_panics() {
    let mut data = vec![0f32; 4];
    let _ = SplitMut::new(&mut data, usize::MAX, 2, 2, 1);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "row_len = 6 exceeds stride = 5")]
fn row_longer_than_stride_panics() {
    let mut data = vec![0f32; 100];
    let _ = SplitMut::with_stride(&mut data, 3, 5, 6, 2, 1);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "parts = 65")]
fn too_many_parts_panics() {
    let mut data = vec![0f32; 100];
    let _ = SplitMut::new(&mut data, 100, 1, 65, 1);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "parts = 0")]
fn zero_parts_panics() {
    let mut data = vec![0f32; 100];
    let _ = SplitMut::new(&mut data, 100, 1, 0, 1);
}

#[test]
fn split_mut_is_send_and_sync_for_send_elements() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<SplitMut<'_, f32>>();
    send_sync::<SplitMut<'_, std::cell::Cell<u8>>>();
    let mut data = [1u8, 2, 3];
    let split = SplitMut::new(&mut data, 3, 1, 2, 1);
    let _ = split.take(0);
    // Debug shows the shape and which pieces are gone, not the elements.
    let dbg = format!("{split:?}");
    assert!(
        dbg.contains("parts: 2") && dbg.contains("taken: 0b1"),
        "{dbg}"
    );
}

/// The value row `i` holds after round `round`.
fn tag(round: usize, i: usize) -> u32 {
    (round * 1000 + i) as u32
}

#[test]
fn teams_fill_disjoint_pieces_with_run_chunks() {
    for threads in [1, 2, 3] {
        let team = Team::with_spin(threads, Duration::from_micros(20));
        for (rows, unit, chunks, align) in [
            (0, 4, 3, 1),
            (1, 4, 3, 1),
            (2, 5, 6, 1),
            (37, 3, 6, 8),
            (100, 1, 7, 16),
            (1000, 2, 12, 8),
        ] {
            let what = format!("threads {threads} rows {rows} unit {unit} chunks {chunks}");
            let mut y = vec![u32::MAX; rows * unit];
            for round in 0..ROUNDS {
                let calls = AtomicUsize::new(0);
                {
                    let split = SplitMut::new(&mut y, rows, unit, chunks, align);
                    team.run_chunks(chunks, |c| {
                        let (r, piece) = split.take(c);
                        assert_eq!(piece.len(), r.len() * unit);
                        for (i, row) in r.zip(piece.chunks_exact_mut(unit.max(1))) {
                            row.fill(tag(round, i));
                        }
                        calls.fetch_add(1, Ordering::Relaxed);
                    });
                }
                assert_eq!(calls.load(Ordering::Relaxed), chunks, "{what}");
                for (j, v) in y.iter().enumerate() {
                    assert_eq!(*v, tag(round, j / unit), "{what} round {round}");
                }
                if round % 50 == 1 {
                    // Let the helpers park, then wake them again.
                    std::thread::sleep(Duration::from_micros(100));
                }
            }
        }
    }
}

#[test]
fn two_buffers_split_alike_share_one_job() {
    // Attention-like: each head writes `len` scores into its row of `[heads, cap]` and
    // `dim` outputs into its row of `[heads, dim]`.
    let (heads, cap, dim, len) = (16, 12, 8, 9);
    for threads in [1, 2, 3] {
        let team = Team::new(threads);
        let mut scores = vec![-1f32; heads * cap];
        let mut out = vec![-1f32; heads * dim];
        for round in 0..ROUNDS {
            {
                let s = SplitMut::new(&mut scores, heads, cap, heads, 1);
                let o = SplitMut::new(&mut out, heads, dim, heads, 1);
                team.run_chunks(heads, |h| {
                    let (rs, sh) = s.take(h);
                    let (ro, oh) = o.take(h);
                    assert_eq!((rs.clone(), ro), (h..h + 1, h..h + 1));
                    for (k, v) in sh[..len].iter_mut().enumerate() {
                        *v = (round + h * 100 + k) as f32;
                    }
                    let total: f32 = sh[..len].iter().sum();
                    oh.fill(total);
                });
            }
            for h in 0..heads {
                for k in 0..len {
                    assert_eq!(scores[h * cap + k], (round + h * 100 + k) as f32);
                }
                // Untouched tail of each score row keeps its old value.
                assert!(scores[h * cap + len..(h + 1) * cap]
                    .iter()
                    .all(|&v| v == -1.0));
                let total: f32 = (0..len).map(|k| (round + h * 100 + k) as f32).sum();
                assert!(out[h * dim..(h + 1) * dim].iter().all(|&v| v == total));
            }
        }
    }
}

#[test]
fn strided_rows_split_across_a_team() {
    // Rows of 5 elements every 8 (a column block of a wider matrix), last row short.
    let (rows, stride, row_len) = (50, 8, 5);
    let needed = (rows - 1) * stride + row_len;
    for threads in [2, 3] {
        let team = Team::new(threads);
        let mut c = vec![0u32; needed];
        let split = SplitMut::with_stride(&mut c, rows, stride, row_len, 5, 4);
        team.run_chunks(5, |i| {
            let (r, piece) = split.take(i);
            for (k, row) in r.clone().enumerate() {
                piece[k * stride..k * stride + row_len].fill(row as u32 + 1);
            }
        });
        for (j, v) in c.iter().enumerate() {
            let want = if j % stride < row_len {
                (j / stride) as u32 + 1
            } else {
                0
            };
            assert_eq!(*v, want, "threads {threads} element {j}");
        }
    }
}

#[test]
fn for_each_split_visits_every_nonempty_piece_once() {
    for threads in [1, 2, 3] {
        let team = Team::with_spin(threads, Duration::from_micros(20));
        for (rows, unit, chunks, align) in [
            (0, 3, 4, 1),
            (3, 2, 8, 1),
            (37, 3, 6, 8),
            (1000, 1, 0, 8),
            (1000, 4, 64, 8),
        ] {
            let what = format!("threads {threads} rows {rows} unit {unit} chunks {chunks}");
            let mut y = vec![0u32; rows * unit + 3];
            let calls = AtomicUsize::new(0);
            team.for_each_split(&mut y, rows, unit, chunks, align, |r, piece| {
                assert!(!r.is_empty(), "{what}");
                assert_eq!(r.start % align, 0, "{what}");
                assert_eq!(piece.len(), r.len() * unit, "{what}");
                for v in piece.iter_mut() {
                    *v += 1;
                }
                calls.fetch_add(1, Ordering::Relaxed);
            });
            let nonempty = (0..chunks.max(1))
                .filter(|&i| !split_range(rows, chunks, align, i).is_empty())
                .count();
            assert_eq!(calls.load(Ordering::Relaxed), nonempty, "{what}");
            assert!(y[..rows * unit].iter().all(|&v| v == 1), "{what}");
            assert!(y[rows * unit..].iter().all(|&v| v == 0), "{what}");
        }
    }
}

#[test]
fn for_each_split_per_thread_gives_thread_i_piece_i() {
    for threads in [1, 2, 3] {
        let team = Team::new(threads);
        let (rows, unit) = (100, 2);
        let mut y = vec![usize::MAX; rows * unit];
        team.for_each_split_per_thread(&mut y, rows, unit, 16, |r, piece| {
            let i = (0..threads)
                .find(|&i| split_range(rows, threads, 16, i) == r)
                .expect("a piece of this split");
            piece.fill(i);
        });
        for (j, v) in y.iter().enumerate() {
            let i = (0..threads)
                .find(|&i| split_range(rows, threads, 16, i).contains(&(j / unit)))
                .unwrap();
            assert_eq!(*v, i, "threads {threads} element {j}");
        }
    }
}

#[test]
fn a_piece_taken_twice_in_a_team_job_panics_and_the_team_recovers() {
    for threads in [1, 2, 3] {
        let team = Team::new(threads);
        let mut y = vec![0f32; 64];
        let r = catch_unwind(AssertUnwindSafe(|| {
            let split = SplitMut::new(&mut y, 64, 1, 4, 1);
            // Every chunk takes piece 0: all but the first must panic.
            team.run_chunks(4, |_| {
                split.take(0).1.fill(1.0);
            });
        }));
        assert!(r.is_err(), "threads {threads}");
        let mut z = vec![0f32; 64];
        team.for_each_split(&mut z, 64, 1, 4, 1, |_, p| p.fill(2.0));
        assert!(z.iter().all(|&v| v == 2.0));
    }
}
