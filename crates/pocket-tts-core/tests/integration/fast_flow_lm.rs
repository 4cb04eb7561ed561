//! `FlowLmFast` (src/fast/flow_lm.rs) against the Candle `FlowLm` and the reference
//! fixtures of the tiny model (`tests/fixtures/tiny`).
//!
//! Tolerance: 1e-4 max absolute error on latents and EOS logits (the repository's tensor
//! tolerance), after a prefill and 30–50 autoregressive steps in which each path feeds
//! back its own latents.

use crate::common;

use std::collections::HashMap;

use candle_core::{Device, Tensor};
use pocket_tts_core::config::{Config, FlowType};
use pocket_tts_core::internals::fast::flow_lm::{FlowLmFast, FlowLmFastState};
use pocket_tts_core::internals::models::flow_lm::FlowLm;
use pocket_tts_core::internals::modules::transformer::TransformerState;
use pocket_tts_core::tts_model::{TtsModel, MIN_FRAMES_BEFORE_EOS};
use pocket_tts_text::chunking::prepare_text_prompt;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};

const TOL: f32 = 1e-4;

fn stages() -> HashMap<String, Tensor> {
    candle_core::safetensors::load(common::fixture("tiny/stages.safetensors"), &Device::Cpu)
        .expect("stages.safetensors")
}

fn to_vec(t: &Tensor) -> Vec<f32> {
    t.flatten_all().unwrap().to_vec1::<f32>().unwrap()
}

fn max_err(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "length mismatch");
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max)
}

fn assert_close(what: &str, a: &[f32], b: &[f32], tol: f32) {
    let e = max_err(a, b);
    if std::env::var_os("FAST_FLOW_LM_VERBOSE").is_some() {
        let mag = b.iter().fold(0f32, |m, v| m.max(v.abs()));
        eprintln!("{what}: max abs error {e:e} (max |value| {mag:.3})");
    }
    assert!(e <= tol, "{what}: max abs error {e:e} exceeds {tol:e}");
}

/// `n` noise vectors of `ldim` values, `N(0, temperature)` (zeros for temperature 0).
fn noises(n: usize, ldim: usize, temperature: f32, seed: u64) -> Vec<Vec<f32>> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let normal = Normal::new(0.0f32, temperature.sqrt().max(f32::MIN_POSITIVE)).unwrap();
    (0..n)
        .map(|_| {
            (0..ldim)
                .map(|_| {
                    if temperature == 0.0 {
                        0.0
                    } else {
                        normal.sample(&mut rng)
                    }
                })
                .collect()
        })
        .collect()
}

/// Candle steps, feeding back its own latents: (latents, EOS logits).
fn candle_steps(
    flow: &FlowLm,
    state: &mut TransformerState,
    noise: &[Vec<f32>],
    decode_steps: usize,
) -> (Vec<Vec<f32>>, Vec<f32>) {
    let ldim = flow.ldim();
    let mut prev: Option<Tensor> = None;
    let (mut lat, mut eos) = (Vec::new(), Vec::new());
    for n in noise {
        let x0 = Tensor::from_slice(n, (1, ldim), &Device::Cpu).unwrap();
        let out = flow.step(prev.as_ref(), &x0, decode_steps, state).unwrap();
        lat.push(to_vec(&out.latent));
        eos.push(out.eos_logit);
        prev = Some(out.latent);
    }
    (lat, eos)
}

/// Fast steps, feeding back its own latents.
fn fast_steps(
    fast: &FlowLmFast,
    state: &mut FlowLmFastState,
    noise: &[Vec<f32>],
    decode_steps: usize,
) -> (Vec<Vec<f32>>, Vec<f32>) {
    let ldim = fast.ldim();
    let mut prev: Option<Vec<f32>> = None;
    let (mut lat, mut eos) = (Vec::new(), Vec::new());
    for n in noise {
        let mut out = vec![0f32; ldim];
        let e = fast
            .step(prev.as_deref(), n, decode_steps, state, &mut out)
            .unwrap();
        lat.push(out.clone());
        eos.push(e);
        prev = Some(out);
    }
    (lat, eos)
}

fn compare_runs(what: &str, a: &(Vec<Vec<f32>>, Vec<f32>), b: &(Vec<Vec<f32>>, Vec<f32>)) {
    assert_eq!(a.0.len(), b.0.len());
    assert_close(
        &format!("{what}: latents"),
        &a.0.concat(),
        &b.0.concat(),
        TOL,
    );
    assert_close(&format!("{what}: EOS logits"), &a.1, &b.1, TOL);
}

/// The text of the fixture's generation, prepared and tokenized like `start_chunk`.
fn generation_tokens(model: &TtsModel) -> Vec<u32> {
    let meta = common::json_fixture("tiny/meta.json");
    let text = meta["generation"]["text"].as_str().unwrap();
    let chunks = model.text_chunks(text, 50).unwrap();
    assert_eq!(chunks.len(), 1, "the fixture text is one chunk");
    let (prepared, _) = prepare_text_prompt(&chunks[0], model.text_options()).unwrap();
    model.tokenizer().encode(&prepared)
}

#[test]
fn temperature_zero_generation_matches_reference_latents_and_candle() {
    let model = common::tiny_model();
    let s = stages();
    let meta = common::json_fixture("tiny/meta.json");
    let voice = model
        .load_voice_state(&common::tiny_dir().join("voice_state.safetensors"))
        .unwrap();
    let tokens = generation_tokens(&model);
    let ref_latents = s.get("gen.latents").unwrap();
    let frames = ref_latents.dim(1).unwrap();
    let ldim = model.flow_lm().ldim();
    let ref_latents = to_vec(ref_latents);
    let ref_eos = to_vec(s.get("gen.eos_logits").unwrap());
    let noise = noises(frames, ldim, 0.0, 0);

    let fast = FlowLmFast::new(model.flow_lm()).unwrap();
    let mut state = fast.new_state(voice.len() + tokens.len() + frames);
    fast.load_voice(&voice, &mut state, tokens.len() + frames)
        .unwrap();
    let mut emb = Vec::new();
    fast.embed_tokens(&tokens, &mut emb).unwrap();
    fast.prefill(&emb, tokens.len(), &mut state).unwrap();
    let ours = fast_steps(&fast, &mut state, &noise, 1);

    assert_close(
        "gen.latents, all frames (fast vs reference)",
        &ours.0.concat(),
        &ref_latents,
        TOL,
    );
    assert_close("gen.eos_logits (fast vs reference)", &ours.1, &ref_eos, TOL);
    // The reference's stopping rule on our logits gives the same frame count.
    let threshold = meta["generation"]["eos_threshold"].as_f64().unwrap() as f32;
    let after = meta["generation"]["frames_after_eos"].as_u64().unwrap() as usize;
    let eos_step = ours
        .1
        .iter()
        .enumerate()
        .position(|(i, &e)| i >= MIN_FRAMES_BEFORE_EOS && e > threshold)
        .expect("EOS fires");
    assert_eq!(
        eos_step + after,
        frames,
        "EOS step differs from the reference"
    );

    let mut cstate =
        TransformerState::from_voice(&voice, voice.len() + tokens.len() + frames, &Device::Cpu)
            .unwrap();
    let emb_c = model.flow_lm().embed_text(&tokens, &Device::Cpu).unwrap();
    assert_close("embed_tokens vs embed_text", &emb, &to_vec(&emb_c), 1e-6);
    model.flow_lm().prefill(&emb_c, &mut cstate).unwrap();
    let theirs = candle_steps(model.flow_lm(), &mut cstate, &noise, 1);
    compare_runs("tiny, temperature 0, fast vs Candle", &ours, &theirs);
}

#[test]
fn random_noise_steps_match_candle_with_1_and_4_decode_steps() {
    let model = common::tiny_model();
    let voice = model
        .load_voice_state(&common::tiny_dir().join("voice_state.safetensors"))
        .unwrap();
    let tokens = generation_tokens(&model);
    let fast = FlowLmFast::new(model.flow_lm()).unwrap();
    let ldim = fast.ldim();
    for (decode_steps, seed) in [(1, 7), (4, 8)] {
        let noise = noises(40, ldim, 0.3, seed);
        let mut state = fast.new_state(8);
        fast.load_voice(&voice, &mut state, 0).unwrap();
        let mut emb = Vec::new();
        fast.embed_tokens(&tokens, &mut emb).unwrap();
        fast.prefill(&emb, tokens.len(), &mut state).unwrap();
        let ours = fast_steps(&fast, &mut state, &noise, decode_steps);
        assert_eq!(state.len(), voice.len() + tokens.len() + 40);

        let mut cstate =
            TransformerState::from_voice(&voice, voice.len() + tokens.len() + 40, &Device::Cpu)
                .unwrap();
        let emb_c = model.flow_lm().embed_text(&tokens, &Device::Cpu).unwrap();
        model.flow_lm().prefill(&emb_c, &mut cstate).unwrap();
        let theirs = candle_steps(model.flow_lm(), &mut cstate, &noise, decode_steps);
        compare_runs(
            &format!("tiny, temperature 0.3, {decode_steps} decode steps"),
            &ours,
            &theirs,
        );
    }
}

#[test]
fn voice_prefill_and_export_match_candle_voice_state() {
    let model = common::tiny_model();
    let s = stages();
    let latents = s.get("voice.latents").unwrap();
    let fast = FlowLmFast::new(model.flow_lm()).unwrap();
    let mut cond = Vec::new();
    fast.voice_conditioning(&to_vec(latents), &mut cond)
        .unwrap();
    let cond_c = model.flow_lm().voice_conditioning(latents).unwrap();
    assert_close("voice conditioning", &cond, &to_vec(&cond_c), TOL);

    let t = cond.len() / fast.dim();
    let mut state = fast.new_state(t);
    fast.prefill(&cond, t, &mut state).unwrap();
    let ours = fast.export_voice(&state).unwrap();
    let theirs = model
        .voice_state_from_latents(&common::latents_of(latents))
        .unwrap();
    assert_eq!(ours.len(), theirs.len());
    assert_eq!(ours.layers().len(), theirs.layers().len());
    for (l, (a, b)) in ours.layers().iter().zip(theirs.layers()).enumerate() {
        assert_close(
            &format!("voice state layer {l} keys"),
            &a.keys,
            &b.keys,
            TOL,
        );
        assert_close(
            &format!("voice state layer {l} values"),
            &a.values,
            &b.values,
            TOL,
        );
    }
    // Through the Candle caches and back, the state is unchanged.
    let candle = TransformerState::from_voice(&ours, ours.len() + 4, &Device::Cpu).unwrap();
    assert_eq!(candle.to_voice().unwrap(), ours);
    // Round trip through the voice state is exact, and copies are independent.
    let mut back = fast.new_state(1);
    fast.load_voice(&ours, &mut back, 4).unwrap();
    let mut copy = fast.new_state(1);
    fast.copy_state(&back, &mut copy, 4).unwrap();
    let noise = noises(3, fast.ldim(), 0.3, 3);
    let r1 = fast_steps(&fast, &mut state, &noise, 1);
    let r2 = fast_steps(&fast, &mut back, &noise, 1);
    let r3 = fast_steps(&fast, &mut copy, &noise, 1);
    assert_eq!(r1, r2);
    assert_eq!(r1, r3);
}

/// Random voice latents + random text embeddings prefill, then `steps` noisy steps, on
/// both paths. The voice prompt (40 frames) spans two token blocks of the prefill GEMMs.
fn compare_random_model(what: &str, flow: &FlowLm, threads: usize, decode_steps: usize) {
    let mut fast = FlowLmFast::new(flow).unwrap();
    fast.set_threads(threads);
    fast.set_prefill_threads(threads);
    let (d, ldim, sd) = (fast.dim(), fast.ldim(), fast.speaker_dim());
    let voice_frames = 40;
    let latents: Vec<f32> = noises(1, voice_frames * sd, 1.0, 11).remove(0);
    let text: Vec<f32> = noises(1, 15 * d, 1.0, 12).remove(0);
    let noise = noises(30, ldim, 0.3, 13);

    let mut cond = Vec::new();
    fast.voice_conditioning(&latents, &mut cond).unwrap();
    let mut state = fast.new_state(128);
    fast.prefill(&cond, cond.len() / d, &mut state).unwrap();
    fast.prefill(&text, 15, &mut state).unwrap();
    let ours = fast_steps(&fast, &mut state, &noise, decode_steps);

    let lat_t = Tensor::from_slice(&latents, (1, voice_frames, sd), &Device::Cpu).unwrap();
    let cond_c = flow.voice_conditioning(&lat_t).unwrap();
    assert_close(
        &format!("{what}: voice conditioning"),
        &cond,
        &to_vec(&cond_c),
        TOL,
    );
    let mut cstate = flow.init_state(128, &Device::Cpu).unwrap();
    flow.prefill(&cond_c, &mut cstate).unwrap();
    let text_t = Tensor::from_slice(&text, (1, 15, d), &Device::Cpu).unwrap();
    flow.prefill(&text_t, &mut cstate).unwrap();
    let theirs = candle_steps(flow, &mut cstate, &noise, decode_steps);
    compare_runs(what, &ours, &theirs);
}

#[test]
fn model_variants_match_candle() {
    // english_7m: drifting head, GQA (8 heads, 2 KV heads), attn_dim 512 ≠ d_model 224,
    // z_dim 64, low-rank lookup table.
    let c7 = Config::builtin("english_7m_2026-10").unwrap();
    let f7 = common::random_flow_lm(&c7, 1);
    compare_random_model("english_7m (drifting, GQA)", &f7, 1, 1);
    compare_random_model("english_7m, 2 threads", &f7, 2, 1);
    let fast = FlowLmFast::new(&f7).unwrap();
    let tokens = [0u32, 5, 3999, 17];
    let mut emb = Vec::new();
    fast.embed_tokens(&tokens, &mut emb).unwrap();
    let emb_c = f7.embed_text(&tokens, &Device::Cpu).unwrap();
    assert_close("low-rank embed_tokens", &emb, &to_vec(&emb_c), TOL);
    assert!(fast.embed_tokens(&[4001], &mut emb).is_err());

    // english_2m: pointwise head.
    let c2 = Config::builtin("english_2m_2026-10").unwrap();
    compare_random_model(
        "english_2m (pointwise)",
        &common::random_flow_lm(&c2, 2),
        1,
        1,
    );

    // The tiny architecture with a flow-matching head (one time condition), 3 steps.
    let mut ct = Config::from_yaml_file(&common::fixture("tiny/config.yaml")).unwrap();
    ct.flow_lm.flow.kind = FlowType::FlowMatching;
    compare_random_model(
        "tiny (flow matching)",
        &common::random_flow_lm(&ct, 3),
        1,
        3,
    );
    ct.flow_lm.flow.kind = FlowType::Lsd;
    compare_random_model(
        "tiny (LSD, 2 decode steps)",
        &common::random_flow_lm(&ct, 4),
        1,
        2,
    );
}

#[test]
fn fast_types_are_thread_safe() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<FlowLmFast>();
    send_sync::<FlowLmFastState>();
}

#[test]
fn two_threads_and_growth_give_the_same_steps() {
    let c7 = Config::builtin("english_7m_2026-10").unwrap();
    let flow = common::random_flow_lm(&c7, 5);
    let mut fast = FlowLmFast::new(&flow).unwrap();
    let d = fast.dim();
    let text: Vec<f32> = noises(1, 40 * d, 1.0, 21).remove(0);
    let noise = noises(20, fast.ldim(), 0.3, 22);
    let run = |fast: &FlowLmFast, capacity: usize| {
        let mut state = fast.new_state(capacity);
        fast.prefill(&text, 40, &mut state).unwrap();
        fast_steps(fast, &mut state, &noise, 1)
    };
    let one = run(&fast, 128);
    // Growing from capacity 1 (several reallocations) changes nothing.
    assert_eq!(run(&fast, 1), one);
    fast.set_threads(2);
    assert_eq!(fast.threads(), 2);
    let two = run(&fast, 128);
    // Steps split GEMV rows on 8-row boundaries and attention by heads: the same sums.
    // Prefill GEMMs may split differently with rayon, so allow rounding differences.
    compare_runs("2 threads vs 1", &two, &one);
}
