//! Threading of the Mimi fast path: [`Par`] (run inline, or as one job of a
//! [`pocket_tts_simd::Team`]), [`split_range`], a GEMM split across the threads
//! ([`par_gemm`]) and the parallel element-wise passes (ELU in place, copy + ELU).
//!
//! No counterpart in the reference (`pocket-tts` 4.0.1), which leaves threading to
//! PyTorch's intra-op pool.

use super::gemm::{self, BView, Init, PackedMatrix};
use crate::Result;

/// A raw pointer that may cross threads (the users guarantee disjoint access).
#[derive(Clone, Copy)]
pub(super) struct SyncPtr(pub(super) *mut f32);
// SAFETY: only used to hand disjoint regions of one buffer to the parts of a parallel job.
unsafe impl Send for SyncPtr {}
// SAFETY: as above.
unsafe impl Sync for SyncPtr {}

impl SyncPtr {
    /// The pointer (a method, so closures capture the whole `SyncPtr`, not its field).
    pub(super) fn get(&self) -> *mut f32 {
        self.0
    }
}

/// The threading knob: `threads == 1` runs everything inline; more threads use a
/// [`pocket_tts_simd::Team`] (helpers spin briefly between jobs, no allocation per job).
#[derive(Debug)]
pub(super) struct Par {
    threads: usize,
    team: Option<pocket_tts_simd::Team>,
}

impl Par {
    pub(super) fn new(threads: usize) -> Result<Self> {
        let threads = threads.max(1);
        let team = (threads > 1).then(|| pocket_tts_simd::Team::new(threads));
        Ok(Self { threads, team })
    }

    pub(super) fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `f(0..threads)`, in parallel when there is a team.
    pub(super) fn run<F: Fn(usize) + Sync + Send>(&self, f: F) {
        match &self.team {
            None => f(0),
            Some(team) => team.run(f),
        }
    }
}

/// Splits `0..n` into `parts` ranges with boundaries multiple of `align`; returns range `i`.
pub(super) fn split_range(
    n: usize,
    parts: usize,
    align: usize,
    i: usize,
) -> std::ops::Range<usize> {
    let blocks = n.div_ceil(align);
    let per = blocks / parts;
    let extra = blocks % parts;
    let start = i * per + i.min(extra);
    let end = start + per + usize::from(i < extra);
    (start * align).min(n)..(end * align).min(n)
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
    let parts = par.threads();
    let work = b.rows * a.m() * a.k();
    if parts == 1 || work < PAR_MIN_WORK {
        gemm::gemm_packed(a, b, c, ldc, init);
        return;
    }
    let m = a.m();
    assert!(
        ldc >= m && c.len() >= (b.rows - 1) * ldc + m,
        "par_gemm: C too short"
    );
    let cp = SyncPtr(c.as_mut_ptr());
    if b.rows >= 96 * parts {
        par.run(|i| {
            let r = split_range(b.rows, parts, 48, i);
            if r.is_empty() {
                return;
            }
            let sub_b = BView {
                data: &b.data[r.start * b.ldb..],
                rows: r.len(),
                ..b
            };
            let len = (r.len() - 1) * ldc + m;
            // SAFETY: rows `r` of C are disjoint from the other parts' rows (ldc >= m).
            let sub_c = unsafe { std::slice::from_raw_parts_mut(cp.get().add(r.start * ldc), len) };
            gemm::gemm_packed(a, sub_b, sub_c, ldc, init);
        });
    } else {
        let panels = gemm::panel_count(a);
        par.run(|i| {
            let pr = split_range(panels, parts, 1, i);
            if pr.is_empty() {
                return;
            }
            // SAFETY: C was bounds-checked above; each part writes its own column panels.
            unsafe { gemm::gemm_packed_panels(a, b, cp.get(), ldc, init, pr) };
        });
    }
}

/// Applies `f` to `x` in chunks, in parallel when `x` is large.
pub(super) fn par_map(par: &Par, x: &mut [f32], f: impl Fn(&mut [f32]) + Sync + Send) {
    let parts = par.threads();
    if parts == 1 || x.len() < 1 << 16 {
        f(x);
        return;
    }
    let n = x.len();
    let p = SyncPtr(x.as_mut_ptr());
    par.run(|i| {
        let r = split_range(n, parts, 64, i);
        if r.is_empty() {
            return;
        }
        // SAFETY: disjoint ranges of `x`.
        f(unsafe { std::slice::from_raw_parts_mut(p.get().add(r.start), r.len()) });
    });
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
    let parts = par.threads();
    let n = dst.len();
    if parts == 1 || n < 1 << 16 {
        piece(src, dst);
        return;
    }
    let p = SyncPtr(dst.as_mut_ptr());
    par.run(|i| {
        let r = split_range(n, parts, 64, i);
        if r.is_empty() {
            return;
        }
        // SAFETY: disjoint ranges of `dst`.
        let d = unsafe { std::slice::from_raw_parts_mut(p.get().add(r.start), r.len()) };
        piece(&src[r.clone()], d);
    });
}
