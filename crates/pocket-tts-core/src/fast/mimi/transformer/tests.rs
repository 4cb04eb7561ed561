//! Tests of the chunked whole-sequence forward (`chunked.rs`): against the whole-sequence
//! forward the encoder ran before it (kept here verbatim as the reference, all `T`
//! positions at once), bit for bit, for lengths around the chunk and block boundaries
//! and past the context, with and without threads.

use pocket_tts_simd::gemm::{self, BView, Init, PackedMatrix};

use super::super::par::{par_gemm, par_map, part_count, Par};
use super::chunked::QB;
use super::{LayerF, NormF, TransformerF};

/// The whole-sequence causal forward (fresh state) of the encoder before chunking,
/// `input`: `[t, din]` → `[t, dout]`.
fn forward_full(tf: &TransformerF, par: &Par, input: &[f32], t: usize) -> Vec<f32> {
    let d = tf.d_model;
    let w = tf.qkv_width();
    let hd = tf.head_dim;
    let mut x = match &tf.input_proj {
        Some(p) => {
            let mut x = vec![0.0; t * d];
            par_gemm(
                par,
                p,
                BView::dense(input, t, tf.din, tf.din),
                &mut x,
                d,
                Init::Zero,
            );
            x
        }
        None => input[..t * d].to_vec(),
    };
    let half = hd / 2;
    let mut cos = vec![0.0; t * half];
    let mut sin = vec![0.0; t * half];
    tf.rope_tables(0, t, &mut cos, &mut sin);
    let mut h = vec![0.0; t * d];
    let mut qkv = vec![0.0; t * w];
    let mut attn = vec![0.0; t * tf.attn_dim];
    let mut ff = vec![0.0; t * tf.ff];
    let mut kt = vec![0.0; tf.kv_dim * t];
    let context = tf.context.unwrap_or(usize::MAX);
    let rep = tf.num_heads / tf.num_kv_heads;
    for layer in &tf.layers {
        layer.norm1.apply(par, &x, &mut h, d);
        par_gemm(
            par,
            &layer.in_proj,
            BView::dense(&h, t, d, d),
            &mut qkv,
            w,
            Init::Zero,
        );
        tf.apply_rope(&mut qkv, t, &cos, &sin);
        // kt[c, i] = k[i, c], in 16 × 16 tiles.
        for i0 in (0..t).step_by(16) {
            let i1 = (i0 + 16).min(t);
            for c0 in (0..tf.kv_dim).step_by(16) {
                let c1 = (c0 + 16).min(tf.kv_dim);
                for c in c0..c1 {
                    let col = tf.attn_dim + c;
                    for (i, dst) in (i0..i1).zip(&mut kt[c * t + i0..c * t + i1]) {
                        *dst = qkv[i * w + col];
                    }
                }
            }
        }
        // Blocked causal attention: query block `[q0, q0 + QB)` sees keys
        // `[q0 + 1 − context, q0 + QB)`.
        let blocks = t.div_ceil(QB);
        let parts = part_count(par).min(blocks).max(1);
        let attn_dim = tf.attn_dim;
        let (qkv_r, kt_r) = (&qkv, &kt);
        // Each part: a run of whole query blocks (rows `rows` of `attn`, in `piece`).
        let job = |rows: std::ops::Range<usize>, piece: &mut [f32]| {
            let mut scores = vec![0f32; QB * (QB + context.min(t))];
            for q0 in rows.clone().step_by(QB) {
                let nq = QB.min(t - q0);
                let k0 = (q0 + 1).saturating_sub(context);
                let nk = q0 + nq - k0;
                let o0 = (q0 - rows.start) * attn_dim;
                let out = &mut piece[o0..o0 + nq * attn_dim];
                for hh in 0..tf.num_heads {
                    let kh = hh / rep;
                    let sc = &mut scores[..nq * nk];
                    gemm::gemm_strided(
                        &kt_r[kh * hd * t + k0..],
                        t,
                        hd,
                        nk,
                        BView::dense(&qkv_r[q0 * w + hh * hd..], nq, hd, w),
                        sc,
                        nk,
                        Init::Zero,
                    );
                    // Query q sees keys max(k0, q + 1 − context) ..= q: a contiguous
                    // run of the row; softmax over it, zeros elsewhere.
                    for i in 0..nq {
                        let q = q0 + i;
                        let lo = (q + 1).saturating_sub(context).max(k0) - k0;
                        let hi = q - k0 + 1;
                        let row = &mut sc[i * nk..(i + 1) * nk];
                        row[..lo].fill(0.0);
                        row[hi..].fill(0.0);
                        pocket_tts_simd::softmax_rows(&mut row[lo..hi], hi - lo);
                    }
                    let voff = k0 * w + tf.attn_dim + tf.kv_dim + kh * hd;
                    gemm::gemm_strided(
                        &qkv_r[voff..],
                        w,
                        nk,
                        hd,
                        BView::dense(sc, nq, nk, nk),
                        &mut out[hh * hd..],
                        attn_dim,
                        Init::Zero,
                    );
                }
            }
        };
        // Block boundaries are multiples of `QB` rows; one part runs inline.
        par.for_each_split(&mut attn, t, attn_dim, parts, QB, job);
        par_gemm(
            par,
            &layer.out_proj,
            BView::dense(&attn, t, attn_dim, attn_dim),
            &mut x,
            d,
            Init::Accumulate,
        );
        layer.norm2.apply(par, &x, &mut h, d);
        par_gemm(
            par,
            &layer.linear1,
            BView::dense(&h, t, d, d),
            &mut ff,
            tf.ff,
            Init::Zero,
        );
        par_map(par, &mut ff, pocket_tts_simd::gelu_tanh);
        par_gemm(
            par,
            &layer.linear2,
            BView::dense(&ff, t, tf.ff, tf.ff),
            &mut x,
            d,
            Init::Accumulate,
        );
    }
    match &tf.output_proj {
        Some(p) => {
            let mut out = vec![0.0; t * tf.dout];
            par_gemm(
                par,
                p,
                BView::dense(&x, t, d, d),
                &mut out,
                tf.dout,
                Init::Zero,
            );
            out
        }
        None => x,
    }
}

/// Deterministic pseudo-random values in `[−scale, scale)` (xorshift64*).
fn pseudo_random(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            let u = (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32;
            (2.0 * u - 1.0) * scale
        })
        .collect()
}

/// A packed linear `[m, k]` with random weights of about unit gain.
fn linear(m: usize, k: usize, seed: u64) -> PackedMatrix {
    let w = pseudo_random(m * k, seed, (3.0 / k as f32).sqrt());
    PackedMatrix::from_linear(&w, m, k, |_| 1.0)
}

fn norm(dim: usize, seed: u64) -> NormF {
    NormF {
        w: Some(
            pseudo_random(dim, seed, 0.5)
                .iter()
                .map(|v| 1.0 + v)
                .collect(),
        ),
        b: Some(pseudo_random(dim, seed + 1, 0.1)),
        eps: 1e-5,
    }
}

/// A random two-layer transformer: model width 64, 4 query heads sharing 2 key/value
/// heads of 16, feed-forward 128, input/output projections (48 → 64 → 40) when `proj`.
fn transformer(context: Option<usize>, proj: bool) -> TransformerF {
    let (d, heads, kv_heads, hd, ff) = (64, 4, 2, 16, 128);
    let (attn_dim, kv_dim) = (heads * hd, kv_heads * hd);
    let layers = (0..2u64)
        .map(|i| LayerF {
            norm1: norm(d, 10 * i),
            norm2: norm(d, 10 * i + 2),
            in_proj: linear(attn_dim + 2 * kv_dim, d, 10 * i + 3),
            out_proj: linear(d, attn_dim, 10 * i + 4),
            linear1: linear(ff, d, 10 * i + 5),
            linear2: linear(d, ff, 10 * i + 6),
        })
        .collect();
    let freqs = (0..hd / 2)
        .map(|j| (j as f32 * (-(10_000f64.ln()) * 2.0 / hd as f64) as f32).exp())
        .collect();
    TransformerF {
        din: if proj { 48 } else { d },
        dout: if proj { 40 } else { d },
        d_model: d,
        num_heads: heads,
        num_kv_heads: kv_heads,
        head_dim: hd,
        attn_dim,
        kv_dim,
        ff,
        context,
        freqs,
        input_proj: proj.then(|| linear(d, 48, 100)),
        output_proj: proj.then(|| linear(40, d, 101)),
        layers,
    }
}

/// The chunked forward of `input` (`[t, din]`), chunks of at most `rows` positions.
fn forward_chunked(tf: &TransformerF, par: &Par, input: &[f32], t: usize, rows: usize) -> Vec<f32> {
    let mut st = tf.new_chunked(rows, t);
    let step = st.rows();
    let mut out = Vec::with_capacity(t * tf.dout);
    for p0 in (0..t).step_by(step) {
        let n = step.min(t - p0);
        let y = tf
            .forward_chunk(par, &input[p0 * tf.din..(p0 + n) * tf.din], n, &mut st)
            .unwrap();
        out.extend_from_slice(y);
    }
    out
}

fn assert_same_bits(a: &[f32], b: &[f32], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    let diff = a
        .iter()
        .zip(b)
        .position(|(x, y)| x.to_bits() != y.to_bits());
    assert!(diff.is_none(), "{what}: first differing element {diff:?}");
}

#[test]
fn chunked_forward_equals_the_whole_sequence_forward_bit_for_bit() {
    let one = Par::new(1);
    let two = Par::new(2);
    for (context, proj) in [(Some(250), true), (Some(40), false), (None, true)] {
        let tf = transformer(context, proj);
        for t in [1, 63, 64, 65, 250, 251, 513, 700] {
            let input = pseudo_random(t * tf.din, t as u64, 1.0);
            let whole = forward_full(&tf, &one, &input, t);
            assert!(whole.iter().all(|v| v.is_finite()));
            for (par, threads) in [(&one, 1), (&two, 2)] {
                for rows in [QB, 100, 256, 1024] {
                    let what =
                        format!("context {context:?}, T {t}, chunks of {rows}, {threads} threads");
                    assert_same_bits(&forward_chunked(&tf, par, &input, t, rows), &whole, &what);
                }
            }
        }
    }
}

#[test]
fn chunked_forward_rejects_chunks_it_cannot_take() {
    let par = Par::new(1);
    let tf = transformer(Some(250), true);
    let input = pseudo_random(400 * tf.din, 1, 1.0);
    // Too many rows for the state.
    let mut st = tf.new_chunked(QB, 400);
    assert!(tf.forward_chunk(&par, &input, QB + 1, &mut st).is_err());
    // Input too short.
    assert!(tf.forward_chunk(&par, &input[..10], 1, &mut st).is_err());
    // A chunk after one that was not whole blocks.
    tf.forward_chunk(&par, &input, 10, &mut st).unwrap();
    let err = tf.forward_chunk(&par, &input, QB, &mut st).unwrap_err();
    assert!(err.to_string().contains("whole blocks"), "{err}");
    // Past the length given, without a context.
    let tf = transformer(None, true);
    let mut st = tf.new_chunked(QB, 100);
    tf.forward_chunk(&par, &input, QB, &mut st).unwrap();
    assert!(tf.forward_chunk(&par, &input, QB, &mut st).is_err());
}
