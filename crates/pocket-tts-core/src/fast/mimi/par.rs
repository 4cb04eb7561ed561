//! Threading of the Mimi fast path: [`Par`] (a [`pocket_tts_simd::Team`]; one thread runs
//! everything inline), a GEMM split across the threads ([`par_gemm`]) and the parallel
//! element-wise passes (ELU in place, copy + ELU).
//!
//! Each job cuts its output into one piece per thread (at most [`MAX_PARTS`]): row blocks
//! handed out as slices by [`SplitMut`] (through [`Team::for_each_split`]), or, for the
//! GEMM split by column panels, column blocks handed out by [`ColumnSplit`].
//!
//! No counterpart in the reference (`pocket-tts` 4.0.1), which leaves threading to
//! PyTorch's intra-op pool.

use pocket_tts_simd::gemm::{self, BView, Groups, Init, PackedMatrix};
use pocket_tts_simd::{SplitMut, Team};

use crate::fast::columns::{ColumnBlock, ColumnSplit};

/// The threading knob of the Mimi runtimes: a team of `threads` threads (`threads == 1`
/// spawns nothing and runs every job inline; more threads spin briefly between jobs and
/// allocate nothing per job).
pub(super) type Par = Team;

/// Most pieces a job is cut into (the limit of [`SplitMut`] and [`ColumnSplit`]); threads
/// past it get no piece.
pub(super) const MAX_PARTS: usize = SplitMut::<f32>::MAX_PARTS;

/// Pieces per job: one per thread of `par`, at most [`MAX_PARTS`].
pub(super) fn part_count(par: &Par) -> usize {
    par.threads().min(MAX_PARTS)
}

/// Below this many multiply-adds a GEMM is not worth splitting.
const PAR_MIN_WORK: usize = 1 << 21;

/// [`gemm::gemm_packed`], split across `par`'s threads by rows (tall `B`) or by column
/// panels.
pub(super) fn par_gemm(
    par: &Par,
    a: &PackedMatrix,
    b: BView,
    c: &mut [f32],
    ldc: usize,
    init: Init,
) {
    let parts = part_count(par);
    let work = b.rows * a.m() * a.k();
    if parts == 1 || work < PAR_MIN_WORK {
        gemm::gemm_packed(a, b, c, ldc, init);
        return;
    }
    let m = a.m();
    if b.rows >= 96 * parts {
        // Row blocks (48-aligned) of `B` and `C`; rows of `C` start every `ldc`.
        let split = SplitMut::with_stride(c, b.rows, ldc, m, parts, 48);
        par.run_chunks(parts, |i| {
            let (r, sub_c) = split.take(i);
            if r.is_empty() {
                return;
            }
            let sub_b = BView {
                data: &b.data[r.start * b.ldb..],
                rows: r.len(),
                ..b
            };
            gemm::gemm_packed(a, sub_b, sub_c, ldc, init);
        });
    } else {
        // Blocks of whole column panels of `C`, every row.
        let split = ColumnSplit::new(c, b.rows, ldc, m, parts, gemm::PANEL);
        par.run_chunks(parts, |i| gemm_block(a, b, &split.take(i), init));
    }
}

/// [`gemm::gemm_packed_grouped`]: one group is [`par_gemm`] (split across the threads);
/// several (the streams of a batch) run as one grouped product on the calling thread
/// (a batch is split over threads by streams, not within a product).
pub(super) fn par_gemm_grouped(
    par: &Par,
    a: &PackedMatrix,
    b: BView,
    groups: Groups,
    c: &mut [f32],
    ldc: usize,
    init: Init,
) {
    if groups.count == 1 {
        par_gemm(par, a, b, c, ldc, init);
    } else {
        gemm::gemm_packed_grouped(a, b, groups, c, ldc, init);
    }
}

/// [`gemm::gemm_packed`] for the columns of one block of a [`ColumnSplit`] of `C`, which
/// must be whole panels ([`gemm::PANEL`]); `C` is the split's matrix: at least `b.rows`
/// rows of `a.m()` columns.
///
/// # Panics
/// If the block's matrix is not `≥ b.rows × a.m()`, or as
/// [`pocket_tts_simd::Isa::gemm_packed_cols`] (columns not whole panels, `B` and `A`
/// disagreeing on `k`, `B` or a bias too short).
fn gemm_block(a: &PackedMatrix, b: BView, c: &ColumnBlock, init: Init) {
    assert_eq!(
        c.width(),
        a.m(),
        "gemm: C has {} columns, A has m = {}",
        c.width(),
        a.m()
    );
    assert!(
        b.rows <= c.rows(),
        "gemm: C has {} rows, B has {}",
        c.rows(),
        b.rows
    );
    // SAFETY: the GEMM touches `c.base() + i·c.ld() + j` for `i < b.rows <= c.rows()` and
    // `j` in `c.cols()` only, which the block lets this call read and write exclusively
    // ([`ColumnBlock::base`]).
    unsafe { gemm::gemm_packed_cols(a, b, c.base(), c.ld(), c.cols(), init) }
}

/// Applies `f` to `x` in chunks, in parallel when `x` is large.
pub(super) fn par_map(par: &Par, x: &mut [f32], f: impl Fn(&mut [f32]) + Sync + Send) {
    let parts = part_count(par);
    if parts == 1 || x.len() < 1 << 16 {
        f(x);
        return;
    }
    let n = x.len();
    par.for_each_split(x, n, 1, parts, 64, |_, piece| f(piece));
}

pub(super) fn elu_inplace(par: &Par, x: &mut [f32]) {
    par_map(par, x, |c| pocket_tts_simd::elu(c, 1.0));
}

/// `dst = src`, then ELU when `elu`, in cache-sized pieces (one pass over memory),
/// in parallel for large buffers.
pub(super) fn copy_elu(par: &Par, src: &[f32], dst: &mut [f32], elu: bool) {
    assert_eq!(src.len(), dst.len(), "copy_elu: length mismatch");
    let piece = |s: &[f32], d: &mut [f32]| {
        for (sc, dc) in s.chunks(4096).zip(d.chunks_mut(4096)) {
            dc.copy_from_slice(sc);
            if elu {
                pocket_tts_simd::elu(dc, 1.0);
            }
        }
    };
    let parts = part_count(par);
    let n = dst.len();
    if parts == 1 || n < 1 << 16 {
        piece(src, dst);
        return;
    }
    par.for_each_split(dst, n, 1, parts, 64, |r, d| piece(&src[r], d));
}
