//! [`gemv_multi`]: `Y[t] = W·X[t]` for a few vectors at once (`X` `[tokens, cols]`,
//! `Y` `[tokens, rows]`, `W` row-major `[rows, cols]`): the text prefill of the FlowLM,
//! where a handful of tokens go through every linear layer.
//!
//! A GEMM library packs `W` before multiplying, which for the FlowLM means copying its
//! 340 MB of weights on every prefill, while the product of ~10–30 tokens is only a few
//! GFLOP. Here `W` is read in place, once: a block of weight rows (3 on AVX2, 4 on
//! AVX-512 and NEON) is multiplied with 4 tokens at a time, the `rows × 4` dot products
//! kept in vector accumulators (12 or 16 registers) and reduced once at the end, so the
//! rows stay in L1 while the tokens (`X`, a few tens of KB) come from L1/L2. Each output
//! is a dot product summed in `f32` with per-lane partial sums (like [`crate::gemv`]); the
//! last `cols % lanes` columns are masked loads on AVX-512 and a scalar `mul_add` tail on
//! AVX2 and NEON. The scalar ISA runs one [`crate::gemv`] per token.
//!
//! Meant for small `tokens` (up to a few tens: `X` should fit in L2); the caller
//! parallelises by splitting `W`'s rows (see [`crate::Team`]).

use crate::arch::{self, F32Simd, Job};
use crate::{detected, Isa};

/// `Y[i] = W·X[i] + bias` (or `Y[i] += …` with `accumulate`) for every token `i`, where
/// `W` is row-major `[rows, cols]`, `X` row-major `[tokens, cols]` and `Y` `[tokens, ldy]`
/// with the `rows` outputs of token `i` at `Y[i·ldy ..][.. rows]` (`ldy ≥ rows`, so a
/// caller can write a column block of a wider matrix). Rounding as in [`crate::gemv`]:
/// dot product, then `+ bias`, then `y + …`.
///
/// # Panics
/// If `w.len() != rows·cols`, `x.len() != tokens·cols`, `ldy < rows`, `y` is shorter than
/// `(tokens − 1)·ldy + rows`, or `bias` is given with a length other than `rows`.
#[allow(clippy::too_many_arguments)]
pub fn gemv_multi(
    w: &[f32],
    rows: usize,
    cols: usize,
    x: &[f32],
    tokens: usize,
    y: &mut [f32],
    ldy: usize,
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    detected().gemv_multi(w, rows, cols, x, tokens, y, ldy, bias, accumulate)
}

impl Isa {
    /// [`gemv_multi`] on this ISA (see [`Isa::resolve`] for unsupported ISAs).
    ///
    /// # Panics
    /// Same as [`gemv_multi`].
    #[allow(clippy::too_many_arguments)]
    pub fn gemv_multi(
        self,
        w: &[f32],
        rows: usize,
        cols: usize,
        x: &[f32],
        tokens: usize,
        y: &mut [f32],
        ldy: usize,
        bias: Option<&[f32]>,
        accumulate: bool,
    ) {
        if tokens == 0 || rows == 0 {
            return;
        }
        assert!(
            y.len() >= (tokens - 1) * ldy + rows,
            "gemv_multi: y has {} elements, expected at least (tokens − 1) × ldy + rows = {}",
            y.len(),
            (tokens - 1) * ldy + rows
        );
        // SAFETY: lengths checked above; `y` is exclusively borrowed.
        unsafe {
            self.gemv_multi_ptr(
                w,
                rows,
                cols,
                x,
                tokens,
                y.as_mut_ptr(),
                ldy,
                bias,
                accumulate,
            )
        }
    }

    /// [`Isa::gemv_multi`] writing through a raw pointer, so that threads can fill
    /// disjoint column blocks of one `[tokens, ldy]` output: only the elements
    /// `y[i·ldy + r]` (`i < tokens`, `r < rows`) are read or written.
    ///
    /// # Safety
    /// Those elements are valid for reads and writes, and nothing else (in particular not
    /// `w`, `x` or `bias`) accesses them during the call. No CPU feature is required: the
    /// ISA is resolved like every kernel method (see [`Isa::resolve`]).
    ///
    /// # Panics
    /// If `w.len() != rows·cols`, `x.len() != tokens·cols`, `ldy < rows` or `bias` is
    /// given with a length other than `rows`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn gemv_multi_ptr(
        self,
        w: &[f32],
        rows: usize,
        cols: usize,
        x: &[f32],
        tokens: usize,
        y: *mut f32,
        ldy: usize,
        bias: Option<&[f32]>,
        accumulate: bool,
    ) {
        assert_eq!(
            w.len(),
            rows * cols,
            "gemv_multi: w has {} elements, expected {rows} × {cols}",
            w.len()
        );
        assert_eq!(
            x.len(),
            tokens * cols,
            "gemv_multi: x has {} elements, expected {tokens} × {cols}",
            x.len()
        );
        assert!(ldy >= rows, "gemv_multi: ldy = {ldy} < rows = {rows}");
        if let Some(b) = bias {
            assert_eq!(
                b.len(),
                rows,
                "gemv_multi: bias has {} elements, expected rows = {rows}",
                b.len()
            );
        }
        if tokens == 0 || rows == 0 {
            return;
        }
        let p = Ptrs {
            w: w.as_ptr(),
            x: x.as_ptr(),
            y,
            bias: bias.map_or(std::ptr::null(), |b| b.as_ptr()),
            rows,
            cols,
            tokens,
            ldy,
            accumulate,
        };
        // SAFETY: `p` is valid (lengths checked above, `y` by the caller); the ISA is
        // resolved.
        unsafe { arch::run(self.resolve(), p) }
    }
}

/// The operands of one call, as raw pointers for the kernels.
///
/// *Valid* (the kernels' safety requirement) means: `w` is readable for `rows·cols`
/// elements, `x` for `tokens·cols`, `bias` is null or readable for `rows`, `ldy >= rows`,
/// and the elements `y[i·ldy + r]` (`i < tokens`, `r < rows`) are valid for reads and
/// writes and accessed by nothing else during the call.
struct Ptrs {
    w: *const f32,
    x: *const f32,
    y: *mut f32,
    bias: *const f32,
    rows: usize,
    cols: usize,
    tokens: usize,
    ldy: usize,
    accumulate: bool,
}

impl Job for Ptrs {
    #[inline(always)]
    unsafe fn simd<S: F32Simd>(self) {
        // SAFETY: as the caller vouches for.
        unsafe {
            match S::MULTI_ROWS {
                3 => multi::<S, 3>(&self),
                _ => multi::<S, 4>(&self),
            }
        }
    }

    /// One [`Isa::gemv`] per token on the scalar ISA: `W` is streamed once per token.
    unsafe fn scalar(self) {
        let p = self;
        let bias = (!p.bias.is_null()).then(|| {
            // SAFETY: a non-null bias holds `rows` elements (caller).
            unsafe { std::slice::from_raw_parts(p.bias, p.rows) }
        });
        // SAFETY: `w` holds `rows·cols` elements and `x` `tokens·cols` (caller).
        let (w, x) = unsafe {
            (
                std::slice::from_raw_parts(p.w, p.rows * p.cols),
                std::slice::from_raw_parts(p.x, p.tokens * p.cols),
            )
        };
        for i in 0..p.tokens {
            // SAFETY: `y[i·ldy ..][.. rows]` are elements of token `i` that the caller
            // guarantees valid and unaliased during the call.
            let yi = unsafe { std::slice::from_raw_parts_mut(p.y.add(i * p.ldy), p.rows) };
            let xi = &x[i * p.cols..(i + 1) * p.cols];
            Isa::Scalar.gemv(w, xi, yi, bias, p.accumulate);
        }
    }
}

/// Writes the finished dot product `s` of row `r` for token `i`.
///
/// # Safety
/// `p` is valid (see [`Ptrs`]), `r < rows` and `i < tokens`.
#[inline(always)]
unsafe fn finish(p: &Ptrs, r: usize, i: usize, s: f32) {
    // SAFETY: `r < rows` and `i < tokens`: `bias[r]` (when non-null) and
    // `y[i·ldy + r]` are valid and ours (caller).
    unsafe {
        let s = if p.bias.is_null() {
            s
        } else {
            s + *p.bias.add(r)
        };
        let dst = p.y.add(i * p.ldy + r);
        *dst = if p.accumulate { *dst + s } else { s };
    }
}

/// Adds the columns `c..c + n` (`n = LANES`, or `n < LANES` with
/// [`F32Simd::MASKED_TAIL`]) of the `R` rows at `w` times the `T` tokens at `x` (both
/// with stride `cols`) to `acc[row][token]`.
///
/// # Safety
/// The CPU has `S`'s features and the caller enables them; elements `c..c + n` of each
/// of the `R` rows of `w` and of the `T` rows of `x` are readable.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // acc is indexed by row and token together
unsafe fn step<S: F32Simd, const R: usize, const T: usize>(
    acc: &mut [[S::V; T]; R],
    (w, x, cols): (*const f32, *const f32, usize),
    c: usize,
    n: usize,
) {
    // SAFETY: the elements read are the caller's; `S`'s features are enabled (caller).
    unsafe {
        let mut wv = [S::zero(); R];
        for (k, v) in wv.iter_mut().enumerate() {
            *v = S::load_n(w.add(k * cols + c), n);
        }
        for j in 0..T {
            let xv = S::load_n(x.add(j * cols + c), n);
            for k in 0..R {
                acc[k][j] = S::fmadd(wv[k], xv, acc[k][j]);
            }
        }
    }
}

/// Rows `r..r + R` × tokens `i..i + T`: `R·T` vector accumulators (12 or 16 registers),
/// [`F32Simd::MULTI_UNROLL`] vectors of columns per iteration, then single vectors, then
/// the last `cols mod LANES` columns by a masked load ([`F32Simd::MASKED_TAIL`]) or a
/// scalar `mul_add` tail after the reduction.
///
/// # Safety
/// The CPU has `S`'s features and the caller enables them; `p` is valid (see [`Ptrs`]),
/// `r + R <= p.rows` and `i + T <= p.tokens`.
#[inline(always)]
unsafe fn tile<S: F32Simd, const R: usize, const T: usize>(p: &Ptrs, r: usize, i: usize) {
    let cols = p.cols;
    let l = S::LANES;
    // SAFETY: rows `r..r + R` of `w` and tokens `i..i + T` of `x` exist (caller), so
    // their starts are in bounds.
    let wx = unsafe { (p.w.add(r * cols), p.x.add(i * cols), cols) };
    // SAFETY: `S`'s features are enabled (caller).
    let mut acc = [[unsafe { S::zero() }; T]; R];
    let (n_unrolled, n_vectors) = (
        cols / (S::MULTI_UNROLL * l) * (S::MULTI_UNROLL * l),
        cols / l * l,
    );
    let mut c = 0;
    while c < n_unrolled {
        for u in 0..S::MULTI_UNROLL {
            // SAFETY: columns `c + u·LANES ..` + LANES `<= cols` of those rows (caller).
            unsafe { step::<S, R, T>(&mut acc, wx, c + u * l, l) };
        }
        c += S::MULTI_UNROLL * l;
    }
    while c < n_vectors {
        // SAFETY: columns `c .. c + LANES <= cols`, as above.
        unsafe { step::<S, R, T>(&mut acc, wx, c, l) };
        c += l;
    }
    if S::MASKED_TAIL && c < cols {
        // SAFETY: the `cols − c < LANES` columns `c..cols`, as above.
        unsafe { step::<S, R, T>(&mut acc, wx, c, cols - c) };
    }
    // The scalar tail (none after a masked one).
    let tail = if S::MASKED_TAIL { cols } else { n_vectors };
    let (w, x, _) = wx;
    for (k, row) in acc.iter().enumerate() {
        for (j, a) in row.iter().enumerate() {
            // SAFETY: `S`'s features are enabled; `q < cols` in row `k < R` of `w` and
            // `j < T` of `x`; output `(r + k, i + j)` is inside the call (caller).
            unsafe {
                let mut s = S::hsum(*a);
                for q in tail..cols {
                    s = (*w.add(k * cols + q)).mul_add(*x.add(j * cols + q), s);
                }
                finish(p, r + k, i + j, s);
            }
        }
    }
}

/// Rows `r..r + R`, every token, 4 tokens at a time, then the last 1 to 3.
///
/// # Safety
/// The CPU has `S`'s features and the caller enables them; `p` is valid (see [`Ptrs`])
/// and `r + R <= p.rows`.
#[inline(always)]
unsafe fn row_block<S: F32Simd, const R: usize>(p: &Ptrs, r: usize) {
    let tokens = p.tokens;
    let mut i = 0;
    while i + 4 <= tokens {
        // SAFETY: tokens `i..i + 4` are `<= tokens`; rows as given (caller).
        unsafe { tile::<S, R, 4>(p, r, i) };
        i += 4;
    }
    // SAFETY: tokens `i..tokens`; rows as given (caller).
    unsafe {
        match tokens - i {
            0 => {}
            1 => tile::<S, R, 1>(p, r, i),
            2 => tile::<S, R, 2>(p, r, i),
            3 => tile::<S, R, 3>(p, r, i),
            _ => unreachable!(),
        }
    }
}

/// [`gemv_multi`] with `S`: blocks of `R` weight rows, then single rows.
///
/// # Safety
/// The CPU has `S`'s features and the caller enables them; `p` is valid (see [`Ptrs`]).
#[inline(always)]
unsafe fn multi<S: F32Simd, const R: usize>(p: &Ptrs) {
    let rows = p.rows;
    let mut r = 0;
    while r + R <= rows {
        // SAFETY: rows `r..r + R` are `<= rows` (`p` valid: caller).
        unsafe { row_block::<S, R>(p, r) };
        r += R;
    }
    while r < rows {
        // SAFETY: row `r < rows`, as above.
        unsafe { row_block::<S, 1>(p, r) };
        r += 1;
    }
}
