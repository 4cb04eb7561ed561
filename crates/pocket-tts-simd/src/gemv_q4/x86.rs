//! x86_64 kernels of the 4-bit GEMV: eight blocks (256 weights) per step, reduced to one
//! vector of the eight block sums, converted to `f32` and fused-multiply-added with the
//! eight block scales into the eight accumulators (block `b` in lane `b mod 8`, the fixed
//! order of `mod.rs`). AVX2: one 8-lane `i32` vector of partial sums per block from
//! `maddubs`/`madd`. AVX-512 VNNI: four blocks per `zmm` (one per 128-bit lane), two
//! `vpdpbusd`s per four blocks.

use std::arch::x86_64::*;

use super::{BLOCK_BYTES, LANES, Q4_BLOCK};

/// How one block's 32 unsigned nibbles `u` (in `u8` lanes, in order) and 32 activations
/// are multiplied into eight `i32` lanes whose sum is `Σ u·x` (exact: `u ≤ 15`,
/// `|x| ≤ 127`).
trait BlockDot {
    /// # Safety
    /// The implementation's features are enabled in the caller.
    unsafe fn dot(u: __m256i, x: __m256i) -> __m256i;
}

/// AVX2: `maddubs` (`u8 × i8` pairs summed into `i16`: at most `2 · 15 · 127`, no
/// saturation) then `madd` with ones into `i32`.
struct Maddubs;

impl BlockDot for Maddubs {
    #[inline(always)]
    unsafe fn dot(u: __m256i, x: __m256i) -> __m256i {
        // SAFETY: AVX2 is enabled (caller).
        unsafe { _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1)) }
    }
}

/// The blocks `0..8·⌊n/8⌋` of one row (`nib`: `n · 16` bytes, `sc`: `n` bf16 scales,
/// `xq`: `32 n` activations, `xs`: their `n` block sums) into `acc`; returns the blocks
/// done.
///
/// # Safety
/// `D`'s features, AVX2 and FMA are enabled in the caller; the lengths are as stated.
#[inline(always)]
unsafe fn row<D: BlockDot>(
    nib: &[u8],
    sc: &[u8],
    xq: &[i8],
    xs: &[i32],
    acc: &mut [f32; LANES],
) -> usize {
    let n = xs.len();
    let groups = n / LANES;
    debug_assert!(nib.len() == n * BLOCK_BYTES && sc.len() == 2 * n && xq.len() == n * Q4_BLOCK);
    // SAFETY: AVX2/FMA enabled (caller); every pointer below stays inside its slice:
    // group `g` reads bytes `g·128..(g + 1)·128` of `nib`, `g·16..(g + 1)·16` of `sc`,
    // values `g·256..(g + 1)·256` of `xq` and sums `g·8..(g + 1)·8` of `xs`, `g < n / 8`.
    unsafe {
        let mask = _mm_set1_epi8(0x0F);
        let mut a = _mm256_loadu_ps(acc.as_ptr());
        for g in 0..groups {
            let np = nib.as_ptr().add(g * LANES * BLOCK_BYTES);
            let xp = xq.as_ptr().add(g * LANES * Q4_BLOCK);
            let mut v = [_mm256_setzero_si256(); LANES];
            for (k, vk) in v.iter_mut().enumerate() {
                let b = _mm_loadu_si128(np.add(k * BLOCK_BYTES) as *const __m128i);
                let lo = _mm_and_si128(b, mask);
                let hi = _mm_and_si128(_mm_srli_epi16::<4>(b), mask);
                let u = _mm256_set_m128i(hi, lo);
                let x = _mm256_loadu_si256(xp.add(k * Q4_BLOCK) as *const __m256i);
                *vk = D::dot(u, x);
            }
            // Horizontal sums of the eight vectors, as one vector [s0, …, s7].
            let t0 = _mm256_hadd_epi32(v[0], v[1]);
            let t1 = _mm256_hadd_epi32(v[2], v[3]);
            let t2 = _mm256_hadd_epi32(v[4], v[5]);
            let t3 = _mm256_hadd_epi32(v[6], v[7]);
            let u0 = _mm256_hadd_epi32(t0, t1);
            let u1 = _mm256_hadd_epi32(t2, t3);
            let s = _mm256_add_epi32(
                _mm256_permute2x128_si256::<0x20>(u0, u1),
                _mm256_permute2x128_si256::<0x31>(u0, u1),
            );
            let off = _mm256_slli_epi32::<3>(_mm256_loadu_si256(
                xs.as_ptr().add(g * LANES) as *const __m256i
            ));
            let s = _mm256_cvtepi32_ps(_mm256_sub_epi32(s, off));
            let d = _mm_loadu_si128(sc.as_ptr().add(g * LANES * 2) as *const __m128i);
            let d = _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(d)));
            a = _mm256_fmadd_ps(s, d, a);
        }
        _mm256_storeu_ps(acc.as_mut_ptr(), a);
    }
    groups * LANES
}

/// [`row`] with [`Maddubs`].
///
/// # Safety
/// AVX2 and FMA are available; the lengths are as [`row`] states.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn row_maddubs(
    nib: &[u8],
    sc: &[u8],
    xq: &[i8],
    xs: &[i32],
    acc: &mut [f32; LANES],
) -> usize {
    // SAFETY: the features are enabled here; lengths as stated (caller).
    unsafe { row::<Maddubs>(nib, sc, xq, xs, acc) }
}

/// The blocks `0..8·⌊n/8⌋` of one row with AVX-512 VNNI on `zmm` (the lengths and the
/// result as [`row`]'s). Per eight blocks: two 64-byte loads of nibbles (four blocks
/// each), masked and shifted into the four blocks' low and high halves (one block per
/// 128-bit lane), the activations' matching halves gathered with `vshufi64x2`, four
/// `vpdpbusd`s, and one reduction of both vectors to the eight block sums `[s0, …, s7]`;
/// then the same offset, conversion and `fma` into the eight accumulators as [`row`], so
/// the same bits.
///
/// # Safety
/// AVX2, FMA, AVX-512F/BW/VL and AVX-512 VNNI are available; the lengths are as [`row`]
/// states.
#[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")]
pub(super) unsafe fn row_vnni(
    nib: &[u8],
    sc: &[u8],
    xq: &[i8],
    xs: &[i32],
    acc: &mut [f32; LANES],
) -> usize {
    let n = xs.len();
    let groups = n / LANES;
    debug_assert!(nib.len() == n * BLOCK_BYTES && sc.len() == 2 * n && xq.len() == n * Q4_BLOCK);
    // SAFETY: the features are enabled here; every pointer below stays inside its slice:
    // group `g` reads bytes `g·128..(g + 1)·128` of `nib`, `g·16..(g + 1)·16` of `sc`,
    // values `g·256..(g + 1)·256` of `xq` and sums `g·8..(g + 1)·8` of `xs`, `g < n / 8`.
    unsafe {
        let mask = _mm512_set1_epi8(0x0F);
        // Element `4k` of the reduced vector holds block `k`'s sum, element `4k + 1`
        // block `k + 4`'s (see below): gathered to `[s0, …, s7]`.
        let order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0);
        let mut a = _mm256_loadu_ps(acc.as_ptr());
        for g in 0..groups {
            let np = nib.as_ptr().add(g * LANES * BLOCK_BYTES);
            let xp = xq.as_ptr().add(g * LANES * Q4_BLOCK);
            let (p, q) = (
                half_vnni(np, xp, mask),
                half_vnni(np.add(64), xp.add(128), mask),
            );
            let s = block_sums8(p, q, order, xs.as_ptr().add(g * LANES));
            let d = _mm_loadu_si128(sc.as_ptr().add(g * LANES * 2) as *const __m128i);
            let d = _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(d)));
            a = _mm256_fmadd_ps(s, d, a);
        }
        _mm256_storeu_ps(acc.as_mut_ptr(), a);
    }
    groups * LANES
}

/// Four blocks of one row against their activations (`np`: 64 bytes of nibbles, `xp`: 128
/// activations): lane k of the result holds partial sums of block k's `Σ u·x`. The low
/// and high nibbles give each block's weights 0..16 and 16..32 (one block per 128-bit
/// lane); the activations' halves are lanes 0, 2 and 1, 3 of each pair of lanes in their
/// natural order, gathered with `vshufi64x2`. (A function, not a closure: a closure
/// would not inherit the caller's target features.)
///
/// # Safety
/// AVX-512F/BW and AVX-512 VNNI are enabled; 64 bytes at `np` and 128 at `xp` are
/// readable.
#[inline(always)]
unsafe fn half_vnni(np: *const u8, xp: *const i8, mask: __m512i) -> __m512i {
    // SAFETY: as the caller vouches for.
    unsafe {
        let b = _mm512_loadu_si512(np.cast());
        let lo = _mm512_and_si512(b, mask);
        let hi = _mm512_and_si512(_mm512_srli_epi16::<4>(b), mask);
        dot4_vnni(lo, hi, xp)
    }
}

/// [`row_vnni`] for one row and `T` tokens at once (the text prefill and the engine's
/// batched pass): each group's nibbles are loaded and unpacked once for all the tokens,
/// then each token's products, reduction, offset and `fma` are [`row_vnni`]'s, into its
/// own accumulators `acc[t]` (the same bits as [`row_vnni`] per token). Returns the
/// blocks done.
///
/// # Safety
/// The features of [`row_vnni`] are available; `nib`/`sc` as [`row_vnni`] states, and
/// every token's `xq[t]` holds `32 n` values and `xs[t]` `n` sums.
#[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")]
pub(super) unsafe fn row_vnni_tokens<const T: usize>(
    nib: &[u8],
    sc: &[u8],
    xq: [&[i8]; T],
    xs: [&[i32]; T],
    acc: &mut [[f32; LANES]; T],
) -> usize {
    let n = sc.len() / 2;
    let groups = n / LANES;
    debug_assert!(nib.len() == n * BLOCK_BYTES);
    debug_assert!(xq.iter().all(|x| x.len() == n * Q4_BLOCK) && xs.iter().all(|s| s.len() == n));
    // SAFETY: the features are enabled here; the reads stay inside the slices as in
    // `row_vnni` (group `g < n / 8`), for every token.
    unsafe {
        let mask = _mm512_set1_epi8(0x0F);
        let order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0);
        let mut a = [_mm256_setzero_ps(); T];
        for (a, acc) in a.iter_mut().zip(acc.iter()) {
            *a = _mm256_loadu_ps(acc.as_ptr());
        }
        for g in 0..groups {
            let np = nib.as_ptr().add(g * LANES * BLOCK_BYTES);
            let b0 = _mm512_loadu_si512(np.cast());
            let b1 = _mm512_loadu_si512(np.add(64).cast());
            let lo0 = _mm512_and_si512(b0, mask);
            let hi0 = _mm512_and_si512(_mm512_srli_epi16::<4>(b0), mask);
            let lo1 = _mm512_and_si512(b1, mask);
            let hi1 = _mm512_and_si512(_mm512_srli_epi16::<4>(b1), mask);
            let d = _mm_loadu_si128(sc.as_ptr().add(g * LANES * 2) as *const __m128i);
            let d = _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(d)));
            for t in 0..T {
                let xp = xq[t].as_ptr().add(g * LANES * Q4_BLOCK);
                let p = dot4_vnni(lo0, hi0, xp);
                let q = dot4_vnni(lo1, hi1, xp.add(128));
                let s = block_sums8(p, q, order, xs[t].as_ptr().add(g * LANES));
                a[t] = _mm256_fmadd_ps(s, d, a[t]);
            }
        }
        for (a, acc) in a.iter().zip(acc.iter_mut()) {
            _mm256_storeu_ps(acc.as_mut_ptr(), *a);
        }
    }
    groups * LANES
}

/// [`half_vnni`] on nibbles already unpacked (`lo`, `hi`: four blocks' low and high
/// halves, one block per 128-bit lane) against the 128 activations at `xp`.
///
/// # Safety
/// AVX-512F and AVX-512 VNNI are enabled; 128 bytes at `xp` are readable.
#[inline(always)]
unsafe fn dot4_vnni(lo: __m512i, hi: __m512i, xp: *const i8) -> __m512i {
    // SAFETY: as the caller vouches for.
    unsafe {
        let x0 = _mm512_loadu_si512(xp.cast());
        let x1 = _mm512_loadu_si512(xp.add(64).cast());
        let xlo = _mm512_shuffle_i64x2::<0x88>(x0, x1);
        let xhi = _mm512_shuffle_i64x2::<0xDD>(x0, x1);
        _mm512_dpbusd_epi32(
            _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, xlo),
            hi,
            xhi,
        )
    }
}

/// The eight block sums `Σ (u − 8)·x` of one group as `f32` (exact): `p` and `q` hold
/// blocks 0..4 and 4..8 (one per 128-bit lane, partial sums), `order` gathers them,
/// `xs` points at the group's eight activation block sums (the offset `8 · Σx`).
///
/// # Safety
/// AVX2 and AVX-512F are enabled; 8 `i32` are readable at `xs`.
#[inline(always)]
unsafe fn block_sums8(p: __m512i, q: __m512i, order: __m512i, xs: *const i32) -> __m256 {
    // SAFETY: as the caller vouches for.
    unsafe {
        // Lane k: [p0+p2, q0+q2, p1+p3, q1+q3], then the 64-bit halves added: element 0 is
        // block k's sum, element 1 block k + 4's.
        let t = _mm512_add_epi32(_mm512_unpacklo_epi32(p, q), _mm512_unpackhi_epi32(p, q));
        let t = _mm512_add_epi32(t, _mm512_shuffle_epi32::<0b01_00_11_10>(t));
        let s = _mm512_castsi512_si256(_mm512_permutexvar_epi32(order, t));
        let off = _mm256_slli_epi32::<3>(_mm256_loadu_si256(xs as *const __m256i));
        _mm256_cvtepi32_ps(_mm256_sub_epi32(s, off))
    }
}
