//! `MimiDecoderFast` / `MimiEncoderFast` against the Python reference (tiny fixture model,
//! `tests/fixtures/tiny`) and against the Candle `Mimi` (tiny model, and the full-size
//! architecture with seeded random weights).
//!
//! Tolerances: 1e-4 max absolute error on the tiny model (as the parity tests); 1e-3 on
//! the full-size random model (audio).

use crate::common;

use std::collections::HashMap;

use candle_core::{Device, Tensor};
use pocket_tts_core::config::Config;
use pocket_tts_core::internals::fast::mimi::{
    MimiDecoderFast, MimiDecoderFastState, MimiEncoderFast, MimiFrame,
};
use pocket_tts_core::internals::models::mimi::{Mimi, MimiSource};

const TENSOR_TOL: f32 = 1e-4;
const FULL_TOL: f32 = 1e-3;

fn stages() -> HashMap<String, Tensor> {
    candle_core::safetensors::load(common::fixture("tiny/stages.safetensors"), &Device::Cpu)
        .expect("stages.safetensors")
}

fn flat(t: &Tensor) -> Vec<f32> {
    t.flatten_all().unwrap().to_vec1::<f32>().unwrap()
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "length mismatch");
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Decodes `latents` (`[frames, ldim]`) frame by frame with the Candle decoder.
fn candle_decode(mimi: &Mimi, latents: &[f32], ldim: usize) -> Vec<f32> {
    let frames = latents.len() / ldim;
    let mut state = mimi.init_decoder_state(1, &Device::Cpu).unwrap();
    let mut out = Vec::new();
    for f in 0..frames {
        let x = Tensor::from_slice(
            &latents[f * ldim..(f + 1) * ldim],
            (1, 1, ldim),
            &Device::Cpu,
        )
        .unwrap();
        out.extend(flat(&mimi.decode_from_latent(&x, &mut state).unwrap()));
    }
    out
}

/// Decodes `latents` frame by frame with the fast decoder.
fn fast_decode(
    dec: &MimiDecoderFast,
    state: &mut pocket_tts_core::internals::fast::mimi::MimiDecoderFastState,
    latents: &[f32],
) -> Vec<f32> {
    let ldim = dec.latent_dim();
    let mut frame = vec![0f32; dec.frame_size() * dec.channels()];
    let mut out = Vec::new();
    for l in latents.chunks_exact(ldim) {
        dec.decode_frame(l, state, &mut frame).unwrap();
        out.extend_from_slice(&frame);
    }
    out
}

#[test]
fn tiny_decoder_matches_reference_and_candle_within_1e_4() {
    let model = common::tiny_model();
    let s = stages();
    let latents = flat(&s["mimi.latents_in"]);
    let reference = flat(&s["mimi.audio"]);
    let dec = MimiDecoderFast::new(model.mimi().unwrap()).unwrap();
    let ldim = dec.latent_dim();
    let frames = latents.len() / ldim;
    assert!(
        frames * 16 > 250,
        "the fixture must go past the decoder context"
    );
    let mut state = dec.new_state();
    let ours = fast_decode(&dec, &mut state, &latents);
    assert_eq!(state.frames(), frames);
    let err = max_abs_diff(&ours, &reference);
    assert!(
        err <= TENSOR_TOL,
        "fast decoder vs reference mimi.audio: max abs error {err:e} > {TENSOR_TOL:e}"
    );
    let candle = candle_decode(model.mimi().unwrap(), &latents, ldim);
    let err = max_abs_diff(&ours, &candle);
    assert!(
        err <= TENSOR_TOL,
        "fast decoder vs Candle decoder: max abs error {err:e} > {TENSOR_TOL:e}"
    );
    // A reset state decodes the same stream again, bit for bit.
    dec.reset(&mut state);
    assert_eq!(state.frames(), 0);
    let again = fast_decode(&dec, &mut state, &latents);
    assert_eq!(
        ours, again,
        "decoding after reset differs from a fresh state"
    );
    // Two threads: same result within rounding of the split.
    let dec2 = MimiDecoderFast::with_threads(model.mimi().unwrap(), 2).unwrap();
    let mut st2 = dec2.new_state();
    let two = fast_decode(&dec2, &mut st2, &latents);
    let err = max_abs_diff(&two, &ours);
    assert!(err <= 1e-6, "2 threads vs 1 thread: {err:e}");
    // The first frame on 2 wide threads, the rest on 1 (as a stream does it).
    let mut dec_w = MimiDecoderFast::new(model.mimi().unwrap()).unwrap();
    dec_w.set_wide_threads(2).unwrap();
    let mut st_w = dec_w.new_state();
    let mut frame = vec![0f32; dec_w.frame_size() * dec_w.channels()];
    let mut mixed = Vec::new();
    for (i, l) in latents.chunks_exact(ldim).enumerate() {
        if i == 0 {
            dec_w.decode_frame_wide(l, &mut st_w, &mut frame).unwrap();
        } else {
            dec_w.decode_frame(l, &mut st_w, &mut frame).unwrap();
        }
        mixed.extend_from_slice(&frame);
    }
    let err = max_abs_diff(&mixed, &ours);
    assert!(err <= 1e-6, "first frame wide vs all on 1 thread: {err:e}");
}

#[test]
fn tiny_decoder_rejects_bad_lengths() {
    let model = common::tiny_model();
    let dec = MimiDecoderFast::new(model.mimi().unwrap()).unwrap();
    let mut state = dec.new_state();
    let mut out = vec![0f32; dec.frame_size()];
    let short = vec![0f32; dec.latent_dim() - 1];
    assert!(dec.decode_frame(&short, &mut state, &mut out).is_err());
    let latent = vec![0f32; dec.latent_dim()];
    let mut small = vec![0f32; dec.frame_size() - 1];
    assert!(dec.decode_frame(&latent, &mut state, &mut small).is_err());
}

#[test]
fn tiny_encoder_matches_reference_and_candle_within_1e_4() {
    let model = common::tiny_model();
    let s = stages();
    let audio = flat(&s["voice.audio_prepared"]);
    let reference = flat(&s["voice.latents"]);
    for threads in [1, 2] {
        let enc = MimiEncoderFast::new(model.mimi().unwrap(), threads).unwrap();
        let ours = enc.encode(&audio).unwrap();
        let err = max_abs_diff(&ours, &reference);
        assert!(
            err <= TENSOR_TOL,
            "fast encoder ({threads} threads) vs reference voice.latents: max abs error \
             {err:e} > {TENSOR_TOL:e}"
        );
    }
    let enc = MimiEncoderFast::new(model.mimi().unwrap(), 1).unwrap();
    let ours = enc.encode(&audio).unwrap();
    let candle = model.encode_audio(&audio).unwrap().values;
    let err = max_abs_diff(&ours, &candle);
    assert!(
        err <= TENSOR_TOL,
        "fast encoder vs Candle encoder: max abs error {err:e} > {TENSOR_TOL:e}"
    );
    // Lengths that are not a whole frame, and very short input, are padded like Candle.
    for len in [1usize, 1000, 1920 * 3 + 7, 1920 * 40 + 1] {
        let a: Vec<f32> = (0..len)
            .map(|i| ((i * 37) % 101) as f32 / 101.0 - 0.5)
            .collect();
        let ours = enc.encode(&a).unwrap();
        let candle = model.encode_audio(&a).unwrap().values;
        let err = max_abs_diff(&ours, &candle);
        assert!(
            err <= TENSOR_TOL,
            "{len} samples: fast vs Candle encoder {err:e}"
        );
    }
    assert!(enc.encode(&[]).is_err());
}

fn full_size_mimi() -> Mimi {
    let config = Config::english();
    let vb = pocket_tts_core::internals::weights::random_var_builder(7, &Device::Cpu);
    Mimi::new(&config.mimi, vb.pp("mimi")).expect("full-size Mimi")
}

fn pseudo_random(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (((s >> 40) as f32 / (1u64 << 24) as f32) - 0.5) * scale
        })
        .collect()
}

#[test]
fn full_size_random_weights_fast_matches_candle_within_1e_3() {
    let mimi = full_size_mimi();
    let dec = MimiDecoderFast::new(&mimi).unwrap();
    assert_eq!((dec.latent_dim(), dec.frame_size()), (32, 1920));
    // 20 frames = 320 steps: past the 250-step context.
    let latents = pseudo_random(20 * 32, 3, 2.0);
    let mut state = dec.new_state();
    let ours = fast_decode(&dec, &mut state, &latents);
    let candle = candle_decode(&mimi, &latents, 32);
    let scale = candle.iter().fold(0f32, |m, x| m.max(x.abs()));
    let err = max_abs_diff(&ours, &candle);
    eprintln!("full-size decoder: max abs error {err:e} (max |audio| {scale})");
    assert!(err <= FULL_TOL, "full-size decoder: {err:e} > {FULL_TOL:e}");

    let enc = MimiEncoderFast::new(&mimi, 2).unwrap();
    let audio = pseudo_random(24000 * 2 + 123, 5, 0.5);
    let ours = enc.encode(&audio).unwrap();
    let x = Tensor::from_slice(&audio, (1, 1, audio.len()), &Device::Cpu).unwrap();
    let candle = flat(&mimi.encode_to_latent(&x).unwrap());
    let err = max_abs_diff(&ours, &candle);
    eprintln!("full-size encoder: max abs error {err:e}");
    assert!(err <= FULL_TOL, "full-size encoder: {err:e} > {FULL_TOL:e}");
}

/// Runs the tiny Mimi decoder and encoder tests and the 16-bit decoder's SNR test of this
/// binary again in a child process with
/// `POCKET_TTS_SIMD=scalar`, so the portable (non-SIMD) kernels are held to the same
/// tolerances as the ones this CPU picks.
#[test]
fn scalar_kernels_pass_the_same_tests() {
    if std::env::var("POCKET_TTS_SIMD").as_deref() == Ok("scalar") {
        return; // this is the child run
    }
    // libtest names a test by its module path without the crate: `fast_mimi::name`.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    for name in [
        "tiny_decoder_matches_reference_and_candle_within_1e_4",
        "tiny_encoder_matches_reference_and_candle_within_1e_4",
        // The 16-bit GEMM gives the f32 GEMM's bits over the widened weights on every
        // ISA (pocket-tts-simd's `half_matrices_give_the_bits_of_their_widened_values_on_
        // every_isa`); the decoder's element-wise kernels (ELU, GELU, softmax) are not
        // bit-identical across ISAs in f32 either, so the whole decoder is held to the
        // same SNR floor here.
        "sixteen_bit_decoder_keeps_60_db_snr_against_f32",
    ] {
        let test = format!("{module}::{name}");
        let test = test.as_str();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", test, "--test-threads", "1"])
            .env("POCKET_TTS_SIMD", "scalar")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{test} with POCKET_TTS_SIMD=scalar:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn encoder_built_part_by_part_from_the_source_equals_the_whole_encoder() {
    let config = Config::english();
    let vb = pocket_tts_core::internals::weights::random_var_builder(7, &Device::Cpu);
    let source = MimiSource::new(config.mimi.clone(), vb.pp("mimi"));
    let whole = MimiEncoderFast::new(&full_size_mimi(), 1).unwrap();
    let parts = MimiEncoderFast::from_source(&source, 1).unwrap();
    let audio = pseudo_random(1920 * 9 + 5, 3, 0.5);
    assert_eq!(
        whole.encode(&audio).unwrap(),
        parts.encode(&audio).unwrap(),
        "the same weights give the same latents, bit for bit"
    );
    let only_encoder = MimiEncoderFast::from_encoder(&source.load_encoder().unwrap(), 1).unwrap();
    assert_eq!(
        only_encoder.encode(&audio).unwrap(),
        parts.encode(&audio).unwrap()
    );
}

/// The encoder streams the prompt through its SEANet in chunks of frames and its
/// transformer in chunks of positions; the latents are those of the whole prompt in one
/// transformer pass, bit for bit, whatever the chunk sizes (the default, small and odd
/// ones, on one and two threads), for prompts whose lengths fall on and off the chunk
/// boundaries, before and past the 250-position context.
#[test]
fn chunked_encoder_gives_the_whole_prompt_latents_bit_for_bit() {
    let config = Config::english();
    let vb = pocket_tts_core::internals::weights::random_var_builder(7, &Device::Cpu);
    let source = MimiSource::new(config.mimi.clone(), vb.pp("mimi"));
    let one = MimiEncoderFast::from_source(&source, 1).unwrap();
    let mut two = MimiEncoderFast::from_source(&source, 1).unwrap();
    two.set_threads(2).unwrap();
    // 16 transformer positions per 1920-sample frame: 256, 272 (past the 250-position
    // context) and 400 positions.
    for (len, seed) in [(1920 * 16, 1), (1920 * 17 + 5, 2), (1920 * 24 + 1000, 3)] {
        let audio = pseudo_random(len, seed, 0.5);
        let whole = one.encode_with_chunks(&audio, 4, usize::MAX).unwrap();
        assert_eq!(whole.len(), len.div_ceil(1920) * 32);
        assert_eq!(
            one.encode(&audio).unwrap(),
            whole,
            "{len} samples, default chunks"
        );
        for (frames, chunk) in [(1, 64), (3, 100)] {
            let ours = two.encode_with_chunks(&audio, frames, chunk).unwrap();
            let same = ours.len() == whole.len()
                && ours
                    .iter()
                    .zip(&whole)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(
                same,
                "{len} samples, SEANet chunks of {frames} frames, transformer chunks of \
                 {chunk}, 2 threads"
            );
        }
    }
}

#[test]
fn decoder_built_part_by_part_from_the_source_equals_the_whole_decoder() {
    let config = Config::english();
    let vb = pocket_tts_core::internals::weights::random_var_builder(7, &Device::Cpu);
    let source = MimiSource::new(config.mimi.clone(), vb.pp("mimi"));
    let whole = MimiDecoderFast::new(&full_size_mimi()).unwrap();
    let parts = MimiDecoderFast::from_source(&source, 1).unwrap();
    assert_eq!(whole.frame_size(), parts.frame_size());
    assert_eq!(whole.latent_dim(), parts.latent_dim());
    let (mut sw, mut sp) = (whole.new_state(), parts.new_state());
    let mut out_w = vec![0f32; whole.frame_size() * whole.channels()];
    let mut out_p = out_w.clone();
    for frame in 0..3 {
        let latent = pseudo_random(whole.latent_dim(), 11 + frame, 1.0);
        whole.decode_frame(&latent, &mut sw, &mut out_w).unwrap();
        parts.decode_frame(&latent, &mut sp, &mut out_p).unwrap();
        assert_eq!(
            out_w, out_p,
            "frame {frame}: the same weights give the same audio"
        );
    }
}

/// The batched decoder (every linear and conv one GEMM over all the streams' rows) gives
/// each stream the bits of that stream decoded alone, while streams join at different
/// positions (past the transformer's 250-step context for some), leave, and start over
/// (a reset, as a new text chunk does).
#[test]
fn batched_frames_equal_each_stream_decoded_alone_bit_for_bit() {
    let mimi = full_size_mimi();
    let dec = MimiDecoderFast::new(&mimi).unwrap();
    let len = dec.frame_size() * dec.channels();
    // (first pass, last pass, pass of a reset) per stream.
    let plan = [
        (0, 19, None),
        (2, 9, None),
        (3, 19, Some(12)),
        (6, 17, None),
    ];
    let mut batched: Vec<_> = plan.iter().map(|_| dec.new_state()).collect();
    let mut alone: Vec<_> = plan.iter().map(|_| dec.new_state()).collect();
    let mut scratch = dec.new_scratch(1).unwrap();
    let mut seen_batch = 0;
    for pass in 0..20 {
        let live: Vec<usize> = (0..plan.len())
            .filter(|&s| (plan[s].0..=plan[s].1).contains(&pass))
            .collect();
        for &s in &live {
            if plan[s].2 == Some(pass) {
                dec.reset(&mut batched[s]);
                dec.reset(&mut alone[s]);
            }
        }
        let latents: Vec<Vec<f32>> = live
            .iter()
            .map(|&s| pseudo_random(dec.latent_dim(), 100 * s as u64 + pass as u64, 2.0))
            .collect();
        let mut outs = vec![vec![0f32; len]; live.len()];
        {
            let mut states: Vec<Option<&mut MimiDecoderFastState>> =
                batched.iter_mut().map(Some).collect();
            let mut frames: Vec<MimiFrame<'_>> = live
                .iter()
                .zip(&latents)
                .zip(outs.iter_mut())
                .map(|((&s, latent), out)| MimiFrame {
                    latent,
                    state: states[s].take().unwrap(),
                    out,
                })
                .collect();
            dec.decode_frames(&mut frames, &mut scratch).unwrap();
        }
        seen_batch = seen_batch.max(live.len());
        for ((&s, latent), out) in live.iter().zip(&latents).zip(&outs) {
            let mut want = vec![0f32; len];
            dec.decode_frame(latent, &mut alone[s], &mut want).unwrap();
            let same = out
                .iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(
                same,
                "pass {pass}, stream {s}: batched frame differs from alone"
            );
            assert_eq!(batched[s].frames(), alone[s].frames());
        }
    }
    assert_eq!(seen_batch, 4, "the plan batches four streams at once");
    // A bad frame anywhere in a batch is refused before any is decoded.
    let mut st = [dec.new_state(), dec.new_state()];
    let (ok, bad) = (vec![0f32; dec.latent_dim()], vec![0f32; 3]);
    let mut outs = vec![vec![0f32; len]; 2];
    let [a, b] = &mut st;
    let [oa, ob] = &mut outs[..] else {
        unreachable!()
    };
    let mut frames = vec![
        MimiFrame {
            latent: &ok,
            state: a,
            out: oa,
        },
        MimiFrame {
            latent: &bad,
            state: b,
            out: ob,
        },
    ];
    assert!(dec.decode_frames(&mut frames, &mut scratch).is_err());
    assert_eq!((st[0].frames(), st[1].frames()), (0, 0));
}

/// The full-size random decoder with its weights stored as `dtype`, 12 frames of seeded
/// latents (192 transformer steps), the samples of every frame.
fn decode_with_dtype(dtype: pocket_tts_core::config::WeightDtype) -> Vec<f32> {
    let config = Config::english();
    let vb = pocket_tts_core::internals::weights::random_var_builder(7, &Device::Cpu);
    let source = MimiSource::new(config.mimi.clone(), vb.pp("mimi")).with_decoder_dtype(dtype);
    let dec = MimiDecoderFast::from_source(&source, 1).unwrap();
    let mut state = dec.new_state();
    fast_decode(&dec, &mut state, &pseudo_random(12 * 32, 21, 2.0))
}

fn snr_db(reference: &[f32], other: &[f32]) -> f64 {
    let signal: f64 = reference.iter().map(|&x| f64::from(x).powi(2)).sum();
    let noise: f64 = reference
        .iter()
        .zip(other)
        .map(|(&a, &b)| (f64::from(a) - f64::from(b)).powi(2))
        .sum();
    10.0 * (signal / noise).log10()
}

/// `--mimi-dtype f16`: the decoder's weights rounded to `f16` (products in `f32`) keep the
/// audio at 60 dB SNR or better against the `f32` decoder (the floor; measured
/// here 65.7 dB), `bf16` at 45 dB or better (its 8-bit mantissa: 47.8 dB here, 56 dB
/// in generated speech, below the floor: why `f16` is the 16-bit default). Both differ
/// from `f32` (the weights really are 16-bit).
#[test]
fn sixteen_bit_decoder_keeps_60_db_snr_against_f32() {
    use pocket_tts_core::config::WeightDtype;
    let f32_audio = decode_with_dtype(WeightDtype::Float32);
    let rms = (f32_audio.iter().map(|x| x * x).sum::<f32>() / f32_audio.len() as f32).sqrt();
    assert!(rms > 1e-4, "the random decoder makes audio (rms {rms})");
    for (dtype, floor) in [(WeightDtype::Float16, 60.0), (WeightDtype::Bfloat16, 45.0)] {
        let audio = decode_with_dtype(dtype);
        assert_ne!(
            audio, f32_audio,
            "{dtype}: the weights are stored in 16 bits"
        );
        let snr = snr_db(&f32_audio, &audio);
        eprintln!("{dtype} decoder: SNR {snr:.1} dB against f32");
        assert!(
            snr >= floor,
            "{dtype} decoder: SNR {snr:.1} dB < {floor} dB"
        );
    }
}
