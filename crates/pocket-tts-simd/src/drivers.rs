//! Loops shared by every SIMD back-end (row handling, tails, reductions).
//!
//! Each back-end module (`avx2`, `avx512`, `neon`) defines the same small vocabulary of
//! vector primitives, all `#[target_feature(enable = "...")]` functions:
//!
//! * `LANES: usize`, vector type `V`;
//! * `splat(f32) -> V`, `load(&[f32]) -> V`, `store(&mut [f32], V)` (first `LANES`
//!   elements; panic if shorter), `load_partial(&[f32], fill) -> V` (fewer than `LANES`
//!   elements, padding lanes set to `fill`), `store_partial(&mut [f32], V)` (writes
//!   `slice.len() < LANES` lanes);
//! * `add`, `sub`, `mul`, `fmadd(a, b, c) = a·b + c`, `max`, `hsum(V) -> f32`,
//!   `hmax(V) -> f32`;
//! * the element functions `exp_v`, `gelu_v`, `silu_v`, `elu_v(v, alpha)`.
//!
//! (AVX2 and NEON define `load_partial` and `store_partial` with [`buffered_partials!`])
//! and then invokes
//! [`simd_drivers!`] with its feature string, which expands to the kernel
//! entry points `exp`, `gelu_tanh`, `silu`, `elu`, `softmax_rows`, `layer_norm_rows`
//! (safe `#[target_feature]` functions: calling them requires `unsafe` plus a prior
//! feature check, done by `Isa::resolve` in `lib.rs`). Argument validation (slice lengths,
//! `cols > 0`) is done by the callers in `lib.rs`.
//!
//! Names used in these macros resolve at the expansion site, i.e. to the back-end's
//! primitives.

/// `load_partial` and `store_partial` through a stack buffer of `LANES` values, for the
/// back-ends without masked loads and stores (AVX2, NEON).
macro_rules! buffered_partials {
    ($feat:literal) => {
        #[inline]
        #[target_feature(enable = $feat)]
        fn load_partial(s: &[f32], fill: f32) -> V {
            let mut buf = [fill; LANES];
            buf[..s.len()].copy_from_slice(s);
            load(&buf)
        }

        #[inline]
        #[target_feature(enable = $feat)]
        fn store_partial(s: &mut [f32], v: V) {
            let mut buf = [0.0; LANES];
            store(&mut buf, v);
            let n = s.len();
            s.copy_from_slice(&buf[..n]);
        }
    };
}

/// Applies `$body` (an expression of the vector `$v`) to every element of `$x` in place,
/// two vectors per iteration, then one, then a padded partial vector for the tail.
macro_rules! map_inplace {
    ($x:expr, |$v:ident| $body:expr) => {{
        let x: &mut [f32] = $x;
        let mut pairs = x.chunks_exact_mut(2 * LANES);
        for c in &mut pairs {
            let (a, b) = c.split_at_mut(LANES);
            let ra = {
                let $v = load(a);
                $body
            };
            let rb = {
                let $v = load(b);
                $body
            };
            store(a, ra);
            store(b, rb);
        }
        let rest = pairs.into_remainder();
        let (full, tail) = rest.split_at_mut(rest.len() / LANES * LANES);
        if !full.is_empty() {
            let $v = load(full);
            let r = $body;
            store(full, r);
        }
        if !tail.is_empty() {
            let $v = load_partial(tail, 0.0);
            let r = $body;
            store_partial(tail, r);
        }
    }};
}

/// Expands to the kernel entry points of a back-end; see the module docs.
macro_rules! simd_drivers {
    ($feat:literal) => {
        /// Element-wise `exp` in place.
        #[target_feature(enable = $feat)]
        pub(crate) fn exp(x: &mut [f32]) {
            map_inplace!(x, |v| exp_v(v));
        }

        /// Tanh-approximation GELU in place.
        #[target_feature(enable = $feat)]
        pub(crate) fn gelu_tanh(x: &mut [f32]) {
            map_inplace!(x, |v| gelu_v(v));
        }

        /// SiLU in place.
        #[target_feature(enable = $feat)]
        pub(crate) fn silu(x: &mut [f32]) {
            map_inplace!(x, |v| silu_v(v));
        }

        /// ELU in place.
        #[target_feature(enable = $feat)]
        pub(crate) fn elu(x: &mut [f32], alpha: f32) {
            let a = splat(alpha);
            map_inplace!(x, |v| elu_v(v, a));
        }

        /// Row-wise softmax in place; `cols > 0`, `x.len() % cols == 0`.
        #[target_feature(enable = $feat)]
        pub(crate) fn softmax_rows(x: &mut [f32], cols: usize) {
            for row in x.chunks_exact_mut(cols) {
                // Pass 1: row maximum (4 independent accumulators).
                let ninf = splat(f32::NEG_INFINITY);
                let (mut m0, mut m1, mut m2, mut m3) = (ninf, ninf, ninf, ninf);
                let mut quads = row.chunks_exact(4 * LANES);
                for c in &mut quads {
                    m0 = max(m0, load(&c[..LANES]));
                    m1 = max(m1, load(&c[LANES..2 * LANES]));
                    m2 = max(m2, load(&c[2 * LANES..3 * LANES]));
                    m3 = max(m3, load(&c[3 * LANES..]));
                }
                let mut singles = quads.remainder().chunks_exact(LANES);
                for c in &mut singles {
                    m0 = max(m0, load(c));
                }
                let tail = singles.remainder();
                if !tail.is_empty() {
                    m1 = max(m1, load_partial(tail, f32::NEG_INFINITY));
                }
                let m = splat(hmax(max(max(m0, m1), max(m2, m3))));

                // Pass 2: e = exp(x - max), stored in place, and its sum. Padding lanes
                // hold -inf, whose exp is 0 (if the max is not finite, the row is NaN
                // anyway, as in PyTorch).
                let (mut s0, mut s1) = (splat(0.0), splat(0.0));
                let mut pairs = row.chunks_exact_mut(2 * LANES);
                for c in &mut pairs {
                    let (a, b) = c.split_at_mut(LANES);
                    let ea = exp_v(sub(load(a), m));
                    let eb = exp_v(sub(load(b), m));
                    store(a, ea);
                    store(b, eb);
                    s0 = add(s0, ea);
                    s1 = add(s1, eb);
                }
                let rest = pairs.into_remainder();
                let (full, tail) = rest.split_at_mut(rest.len() / LANES * LANES);
                if !full.is_empty() {
                    let e = exp_v(sub(load(full), m));
                    store(full, e);
                    s0 = add(s0, e);
                }
                if !tail.is_empty() {
                    let e = exp_v(sub(load_partial(tail, f32::NEG_INFINITY), m));
                    store_partial(tail, e);
                    s1 = add(s1, e);
                }

                // Pass 3: multiply by the reciprocal of the sum (as PyTorch does).
                let inv = splat(1.0 / hsum(add(s0, s1)));
                map_inplace!(row, |v| mul(v, inv));
            }
        }

        /// Row-wise LayerNorm; lengths validated by the caller (`cols > 0`).
        #[target_feature(enable = $feat)]
        pub(crate) fn layer_norm_rows(
            x: &[f32],
            out: &mut [f32],
            cols: usize,
            weight: Option<&[f32]>,
            bias: Option<&[f32]>,
            eps: f32,
        ) {
            let n = cols as f32;
            for (row, orow) in x.chunks_exact(cols).zip(out.chunks_exact_mut(cols)) {
                // Pass 1: provisional mean `m`.
                let zero = splat(0.0);
                let (mut a0, mut a1, mut a2, mut a3) = (zero, zero, zero, zero);
                let mut quads = row.chunks_exact(4 * LANES);
                for c in &mut quads {
                    a0 = add(a0, load(&c[..LANES]));
                    a1 = add(a1, load(&c[LANES..2 * LANES]));
                    a2 = add(a2, load(&c[2 * LANES..3 * LANES]));
                    a3 = add(a3, load(&c[3 * LANES..]));
                }
                let mut singles = quads.remainder().chunks_exact(LANES);
                for c in &mut singles {
                    a0 = add(a0, load(c));
                }
                let tail = singles.remainder();
                if !tail.is_empty() {
                    a1 = add(a1, load_partial(tail, 0.0));
                }
                let m = hsum(add(add(a0, a1), add(a2, a3))) / n;

                // Pass 2: corrected two-pass moments of d = x - m: the mean correction
                // sum(d)/n cancels the rounding error of `m` to first order.
                let vm = splat(m);
                let (mut s0, mut s1, mut q0, mut q1) = (zero, zero, zero, zero);
                let mut pairs = row.chunks_exact(2 * LANES);
                for c in &mut pairs {
                    let da = sub(load(&c[..LANES]), vm);
                    let db = sub(load(&c[LANES..]), vm);
                    s0 = add(s0, da);
                    s1 = add(s1, db);
                    q0 = fmadd(da, da, q0);
                    q1 = fmadd(db, db, q1);
                }
                let rest = pairs.remainder();
                let (full, tail) = rest.split_at(rest.len() / LANES * LANES);
                if !full.is_empty() {
                    let d = sub(load(full), vm);
                    s0 = add(s0, d);
                    q0 = fmadd(d, d, q0);
                }
                if !tail.is_empty() {
                    // Padding lanes equal `m`, so they contribute 0.
                    let d = sub(load_partial(tail, m), vm);
                    s1 = add(s1, d);
                    q1 = fmadd(d, d, q1);
                }
                let c = hsum(add(s0, s1)) / n;
                let var = (hsum(add(q0, q1)) / n - c * c).max(0.0);
                let mean = splat(m + c);
                let rstd = splat(1.0 / (var + eps).sqrt());

                // Pass 3: out = (x - mean) * rstd * weight + bias (one FMA when both given).
                let mut i = 0;
                while i + LANES <= cols {
                    let y = mul(sub(load(&row[i..i + LANES]), mean), rstd);
                    let y = match (weight, bias) {
                        (Some(w), Some(b)) => {
                            fmadd(y, load(&w[i..i + LANES]), load(&b[i..i + LANES]))
                        }
                        (Some(w), None) => mul(y, load(&w[i..i + LANES])),
                        (None, Some(b)) => add(y, load(&b[i..i + LANES])),
                        (None, None) => y,
                    };
                    store(&mut orow[i..i + LANES], y);
                    i += LANES;
                }
                if i < cols {
                    let y = mul(sub(load_partial(&row[i..], 0.0), mean), rstd);
                    let y = match (weight, bias) {
                        (Some(w), Some(b)) => {
                            fmadd(y, load_partial(&w[i..], 1.0), load_partial(&b[i..], 0.0))
                        }
                        (Some(w), None) => mul(y, load_partial(&w[i..], 1.0)),
                        (None, Some(b)) => add(y, load_partial(&b[i..], 0.0)),
                        (None, None) => y,
                    };
                    store_partial(&mut orow[i..], y);
                }
            }
        }
    };
}
