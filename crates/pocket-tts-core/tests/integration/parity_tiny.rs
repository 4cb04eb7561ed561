//! Stage-by-stage parity with the Python reference (pocket-tts 4.0.1) on the tiny
//! random-weight model of `tests/fixtures/tiny` (made by `scripts/reference/make_fixtures.py`).
//!
//! Tolerances: intermediate tensors within 1e-4 max absolute error, end-to-end
//! temperature-0 audio within 1e-3.

use crate::common;

use std::collections::HashMap;

use candle_core::{DType, Device, Tensor};
use pocket_tts_core::audio;
use pocket_tts_core::tts_model::{GenerationParams, TtsModel};
use pocket_tts_core::Backend;
use pocket_tts_core::VoiceState;

const TENSOR_TOL: f32 = 1e-4;
const AUDIO_TOL: f32 = 1e-3;

fn stages() -> HashMap<String, Tensor> {
    candle_core::safetensors::load(common::fixture("tiny/stages.safetensors"), &Device::Cpu)
        .expect("stages.safetensors")
}

fn meta() -> serde_json::Value {
    common::json_fixture("tiny/meta.json")
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.dims(), b.dims(), "shape mismatch");
    let a = a.to_dtype(DType::F32).unwrap().flatten_all().unwrap();
    let b = b.to_dtype(DType::F32).unwrap().flatten_all().unwrap();
    (a - b)
        .unwrap()
        .abs()
        .unwrap()
        .max(0)
        .unwrap()
        .to_scalar::<f32>()
        .unwrap()
}

fn assert_close(name: &str, ours: &Tensor, theirs: &Tensor, tol: f32) {
    let err = max_abs_diff(ours, theirs);
    assert!(
        err <= tol,
        "{name}: max abs error {err:e} exceeds tolerance {tol:e}"
    );
}

fn get<'a>(s: &'a HashMap<String, Tensor>, k: &str) -> &'a Tensor {
    s.get(k)
        .unwrap_or_else(|| panic!("fixture tensor {k} missing"))
}

fn ids(t: &Tensor) -> Vec<u32> {
    t.flatten_all()
        .unwrap()
        .to_vec1::<i64>()
        .unwrap()
        .into_iter()
        .map(|x| x as u32)
        .collect()
}

#[test]
fn conditioner_matches_reference_within_1e_4() {
    let model = common::tiny_model();
    let s = stages();
    let m = meta();
    let text = m["cond"]["prepared_text"].as_str().unwrap();
    let tokens = model.tokenizer().encode(text);
    assert_eq!(tokens, ids(get(&s, "cond.tokens")), "token ids differ");
    let emb = model.flow_lm().embed_text(&tokens, &Device::Cpu).unwrap();
    assert_close("cond.out", &emb, get(&s, "cond.out"), TENSOR_TOL);
}

#[test]
fn backbone_prefill_matches_reference_within_1e_4() {
    let model = common::tiny_model();
    let s = stages();
    let mut state = model.flow_lm().init_state(64, &Device::Cpu).unwrap();
    let out = model
        .flow_lm()
        .backbone(get(&s, "backbone.input"), &mut state)
        .unwrap();
    assert_close("backbone.out", &out, get(&s, "backbone.out"), TENSOR_TOL);
    assert_eq!(state.offset(), 9);
}

#[test]
fn flow_head_and_lsd_match_reference_within_1e_4() {
    let model = common::tiny_model();
    let s = stages();
    let (c, x) = (get(&s, "flow.c"), get(&s, "flow.x"));
    let out = model
        .flow_lm()
        .flow_net
        .forward(c, &[get(&s, "flow.s"), get(&s, "flow.t")], x)
        .unwrap();
    assert_close("flow.out", &out, get(&s, "flow.out"), TENSOR_TOL);
    let lsd1 = model.flow_lm().decode_flow(c, x, 1).unwrap();
    assert_close("flow.lsd1", &lsd1, get(&s, "flow.lsd1"), TENSOR_TOL);
    let lsd4 = model.flow_lm().decode_flow(c, x, 4).unwrap();
    assert_close("flow.lsd4", &lsd4, get(&s, "flow.lsd4"), TENSOR_TOL);
    let eos = model.flow_lm().eos_logits(c).unwrap();
    assert_close("eos.logits", &eos, get(&s, "eos.logits"), TENSOR_TOL);
}

#[test]
fn voice_prompt_encoding_matches_reference_within_1e_4() {
    let model = common::tiny_model();
    let s = stages();
    let (samples, rate) = audio::read_audio(&common::tiny_dir().join("voice_excerpt.wav")).unwrap();
    assert_eq!(rate, 24000);
    let input = Tensor::from_slice(&samples, (1, samples.len()), &Device::Cpu).unwrap();
    assert_close("voice.audio_in", &input, get(&s, "voice.audio_in"), 1e-6);
    let prepared = audio::end_on_pause(&samples, rate);
    let prepared_t = Tensor::from_slice(&prepared, (1, prepared.len()), &Device::Cpu).unwrap();
    assert_close(
        "voice.audio_prepared",
        &prepared_t,
        get(&s, "voice.audio_prepared"),
        1e-6,
    );
    let encoded = model.encode_audio(&prepared).unwrap();
    let latents = Tensor::from_vec(
        encoded.values.clone(),
        (1, encoded.frames(), encoded.dim),
        &Device::Cpu,
    )
    .unwrap();
    assert_close(
        "voice.latents",
        &latents,
        get(&s, "voice.latents"),
        TENSOR_TOL,
    );
    let cond = model.flow_lm().voice_conditioning(&latents).unwrap();
    let frames = latents.dim(1).unwrap();
    assert_close(
        "voice.conditioning (after the BOS position)",
        &cond.narrow(1, 1, frames).unwrap(),
        get(&s, "voice.conditioning"),
        TENSOR_TOL,
    );
    // The whole voice state, against the reference's export-voice file.
    let ours = model.voice_state_from_latents(&encoded).unwrap();
    let theirs = model
        .load_voice_state(&common::tiny_dir().join("voice_state.safetensors"))
        .unwrap();
    assert_eq!(ours.len(), theirs.len(), "voice state offsets differ");
    assert_eq!(ours.layers().len(), theirs.layers().len());
    let shape = (ours.kv_heads(), ours.len(), ours.head_dim());
    let t = |v: &[f32]| Tensor::from_slice(v, shape, &Device::Cpu).unwrap();
    for (l, (a, b)) in ours.layers().iter().zip(theirs.layers()).enumerate() {
        assert_close(
            &format!("voice state layer {l} keys"),
            &t(&a.keys),
            &t(&b.keys),
            TENSOR_TOL,
        );
        assert_close(
            &format!("voice state layer {l} values"),
            &t(&a.values),
            &t(&b.values),
            TENSOR_TOL,
        );
    }
}

#[test]
fn mimi_decoder_frame_by_frame_matches_reference_within_1e_4() {
    let model = common::tiny_model();
    let s = stages();
    let latents = get(&s, "mimi.latents_in");
    let frames = latents.dim(1).unwrap();
    let mut state = model
        .mimi()
        .unwrap()
        .init_decoder_state(1, &Device::Cpu)
        .unwrap();
    let mut out = Vec::new();
    for f in 0..frames {
        let x = latents.narrow(1, f, 1).unwrap();
        out.push(
            model
                .mimi()
                .unwrap()
                .decode_from_latent(&x, &mut state)
                .unwrap(),
        );
    }
    let audio = Tensor::cat(&out, 2).unwrap();
    assert!(
        frames > 20,
        "the fixture must go past the 250-step decoder context"
    );
    assert_close("mimi.audio", &audio, get(&s, "mimi.audio"), TENSOR_TOL);
}

fn params_from(m: &serde_json::Value, key: &str) -> GenerationParams {
    let g = &m[key];
    let gen = &m["generation"];
    GenerationParams {
        temperature: 0.0,
        sampler_decode_steps: 1,
        noise_clamp: None,
        eos_threshold: gen["eos_threshold"].as_f64().unwrap() as f32,
        frames_after_eos: None,
        max_tokens: g["max_tokens"].as_u64().unwrap() as usize,
        seed: Some(0),
        ..GenerationParams::for_config(&pocket_tts_core::config::Config::english())
    }
}

#[test]
fn temperature_zero_generation_matches_reference_latents_eos_and_audio() {
    for &backend in Backend::ALL {
        let model = common::tiny_model().with_backend(backend).unwrap();
        generation_matches_reference(&model, &format!("[{backend}] "));
    }
}

fn generation_matches_reference(model: &TtsModel, tag: &str) {
    let s = stages();
    let m = meta();
    let voice = model
        .load_voice_state(&common::tiny_dir().join("voice_state.safetensors"))
        .unwrap();
    let text = m["generation"]["text"].as_str().unwrap();
    let params = params_from(&m, "generation");
    let frames: Vec<_> = model
        .generate_stream(&voice, text, &params)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let ref_latents = get(&s, "gen.latents");
    assert_eq!(
        frames.len(),
        ref_latents.dim(1).unwrap(),
        "{tag}frame count (EOS rule) differs"
    );
    let ldim = frames[0].latent.len();
    let flat: Vec<f32> = frames
        .iter()
        .flat_map(|f| f.latent.iter().copied())
        .collect();
    let latents = Tensor::from_vec(flat, (1, frames.len(), ldim), &Device::Cpu).unwrap();
    assert_close(
        &format!("{tag}gen.latents"),
        &latents,
        ref_latents,
        TENSOR_TOL,
    );
    let eos: Vec<f32> = frames.iter().map(|f| f.eos_logit).collect();
    let eos = Tensor::from_vec(eos, frames.len(), &Device::Cpu).unwrap();
    assert_close(
        &format!("{tag}gen.eos_logits"),
        &eos,
        get(&s, "gen.eos_logits"),
        TENSOR_TOL,
    );
    let audio: Vec<f32> = frames
        .iter()
        .flat_map(|f| f.samples.iter().copied())
        .collect();
    let audio = Tensor::from_vec(audio.clone(), audio.len(), &Device::Cpu).unwrap();
    assert_close(
        &format!("{tag}gen.audio (end-to-end)"),
        &audio,
        get(&s, "gen.audio"),
        AUDIO_TOL,
    );
}

#[test]
fn multi_chunk_generation_from_audio_prompt_matches_reference_wav_within_1e_3() {
    for &backend in Backend::ALL {
        let model = common::tiny_model().with_backend(backend).unwrap();
        multi_chunk_matches_reference(&model, &format!("[{backend}] "));
    }
}

fn multi_chunk_matches_reference(model: &TtsModel, tag: &str) {
    let s = stages();
    let m = meta();
    let mc = &m["multi_chunk"];
    let text = mc["text"].as_str().unwrap();
    let params = params_from(&m, "multi_chunk");
    let expected_chunks: Vec<&str> = mc["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(
        model.text_chunks(text, params.max_tokens).unwrap(),
        expected_chunks
    );
    let voice: VoiceState = model
        .voice_state(
            common::tiny_dir()
                .join("voice_excerpt.wav")
                .to_str()
                .unwrap(),
            true,
        )
        .unwrap();
    let audio = model.generate(&voice, text, &params).unwrap();
    let ours = Tensor::from_vec(audio.clone(), audio.len(), &Device::Cpu).unwrap();
    assert_close(
        &format!("{tag}multi.audio"),
        &ours,
        get(&s, "multi.audio"),
        AUDIO_TOL,
    );

    // The reference CLI's WAV: PCM16 of the same audio plus 200 ms of silence.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.wav");
    audio::write_wav_file(
        &out,
        24000,
        std::iter::once(Ok::<_, pocket_tts_core::Error>(audio.as_slice())),
    )
    .unwrap();
    let (ours_wav, _) = audio::read_audio(&out).unwrap();
    let (ref_wav, rate) = audio::read_audio(&common::fixture("tiny/multi_chunk.wav")).unwrap();
    assert_eq!(rate, 24000);
    assert_eq!(ours_wav.len(), ref_wav.len(), "{tag}WAV lengths differ");
    let err = ours_wav
        .iter()
        .zip(&ref_wav)
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    // 1e-3 plus one PCM16 step for rounding.
    assert!(
        err <= AUDIO_TOL + 1.0 / 32768.0,
        "{tag}multi_chunk.wav: max abs error {err:e} exceeds 1e-3 + 1 LSB"
    );
}
