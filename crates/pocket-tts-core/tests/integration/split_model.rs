//! The model in two halves, as the browser's two Web Workers run it: a `TtsModel` loaded
//! `without_mimi` generates latents (`generate_latent_stream`) that a `MimiCodec`'s
//! `LatentDecoder` decodes; voice prompts are encoded by the codec and prompted into the
//! FlowLM. The samples must be exactly those of the whole model's `generate_stream`.

use crate::common;

use pocket_tts_core::config::Config;
use pocket_tts_core::{Error, GenerationParams, MimiCodec, TtsModel, VoiceState};
use safetensors::SafeTensors;

fn tiny_config() -> Config {
    Config::from_yaml_file(&common::fixture("tiny/config.yaml")).expect("tiny config")
}

fn checkpoint() -> Vec<u8> {
    std::fs::read(common::fixture("tiny/model.safetensors")).expect("tiny checkpoint")
}

/// The tensors of `bytes` whose names `keep` accepts, as a safetensors file.
fn part(bytes: &[u8], keep: impl Fn(&str) -> bool) -> Vec<u8> {
    let st = SafeTensors::deserialize(bytes).expect("tiny checkpoint parses");
    let mut views: Vec<_> = st.tensors().into_iter().filter(|(n, _)| keep(n)).collect();
    views.sort_by(|a, b| a.0.cmp(&b.0));
    safetensors::serialize(views, None).expect("serialize")
}

/// The FlowLM half from the `flow_lm.` tensors alone.
fn flow_lm_half() -> TtsModel {
    let tokenizer = std::fs::read(common::asset("tokenizer.model")).expect("tokenizer");
    TtsModel::builder()
        .config(tiny_config(), None)
        .from_bytes(
            part(&checkpoint(), |n| n.starts_with("flow_lm.")),
            "flow_lm.safetensors",
            tokenizer,
            "tokenizer.model",
        )
        .without_mimi(true)
        .threads(1)
        .load()
        .expect("the FlowLM half loads from the flow_lm. tensors")
}

/// The Mimi half from the `mimi.` tensors and the latent statistics alone.
fn mimi_half() -> MimiCodec {
    let bytes = part(&checkpoint(), |n| {
        n.starts_with("mimi.") || n == "flow_lm.emb_std" || n == "flow_lm.emb_mean"
    });
    MimiCodec::from_bytes(tiny_config(), bytes, "mimi.safetensors").expect("the Mimi half loads")
}

fn params() -> GenerationParams {
    let mut p = GenerationParams::for_config(&tiny_config());
    p.temperature = 0.7;
    p.seed = Some(5);
    p.eos_threshold = -12.56;
    p
}

/// The halves' samples of `text`: latents generated, then decoded one by one in order.
fn halves_speak(flow: &TtsModel, codec: &MimiCodec, voice: &VoiceState, text: &str) -> Vec<f32> {
    let mut decoder = codec.decoder().unwrap();
    let mut out = Vec::new();
    for frame in flow.generate_latent_stream(voice, text, &params()).unwrap() {
        let frame = frame.unwrap();
        assert!(
            frame.pause || (frame.samples.is_empty() && frame.latent.len() == flow.latent_dim())
        );
        out.extend(decoder.decode(&frame).unwrap());
    }
    out
}

#[test]
fn the_halves_speak_the_whole_models_samples() {
    let whole = common::tiny_model();
    let (flow, codec) = (flow_lm_half(), mimi_half());
    assert_eq!(codec.sample_rate(), whole.sample_rate());
    // Two chunks (the decoder is reset and fades in at the second).
    let text = "Hello there, this is the first sentence of the test. \
                And here is a second one, long enough to be a chunk of its own.";

    let path = common::fixture("tiny/voice_state.safetensors");
    let voice = flow.load_voice_state(&path).unwrap();
    let expected = whole
        .generate(&whole.load_voice_state(&path).unwrap(), text, &params())
        .unwrap();
    assert!(!expected.is_empty());
    assert_eq!(halves_speak(&flow, &codec, &voice, text), expected);

    // A voice prompt: encoded by the codec, prompted into the FlowLM half.
    let audio = std::fs::read(common::fixture("tiny/voice_excerpt.wav")).unwrap();
    let latents = codec
        .voice_latents_from_audio_bytes(&audio, "voice_excerpt.wav", true)
        .unwrap();
    let voice = flow.voice_state_from_latents(&latents).unwrap();
    let whole_voice = whole
        .voice_state_from_audio_bytes(&audio, "voice_excerpt.wav", true)
        .unwrap();
    let expected = whole.generate(&whole_voice, text, &params()).unwrap();
    assert_eq!(halves_speak(&flow, &codec, &voice, text), expected);
}

#[test]
fn the_flow_lm_half_refuses_audio_and_says_why() {
    let flow = flow_lm_half();
    let voice = flow
        .load_voice_state(&common::fixture("tiny/voice_state.safetensors"))
        .unwrap();
    match flow.generate(&voice, "Hello.", &params()) {
        Err(Error::Unsupported(m)) => assert!(m.contains("without_mimi"), "{m}"),
        other => panic!("decoding without Mimi: {other:?}"),
    }
    let audio = std::fs::read(common::fixture("tiny/voice_excerpt.wav")).unwrap();
    match flow.voice_state_from_audio_bytes(&audio, "voice_excerpt.wav", true) {
        Err(Error::Unsupported(m)) => assert!(m.contains("without_mimi"), "{m}"),
        other => panic!("encoding without Mimi: {other:?}"),
    }
}

#[test]
fn the_mimi_half_names_a_bad_checkpoint() {
    match MimiCodec::from_bytes(
        tiny_config(),
        b"not a checkpoint".to_vec(),
        "junk.safetensors",
    ) {
        Err(Error::InvalidData(m)) => assert!(m.contains("junk.safetensors"), "{m}"),
        other => panic!("junk: {other:?}"),
    }
    // The FlowLM's tensors alone: Mimi's are missing, and named.
    let flow_only = part(&checkpoint(), |n| n.starts_with("flow_lm."));
    match MimiCodec::from_bytes(tiny_config(), flow_only, "flow.safetensors") {
        Err(Error::InvalidData(m)) => {
            assert!(m.contains("flow.safetensors") && m.contains("mimi."), "{m}")
        }
        other => panic!("no Mimi tensors: {other:?}"),
    }
    // A latent of the wrong width is refused.
    let mut decoder = mimi_half().decoder().unwrap();
    match decoder.decode_latent(0, 0, &[0.0; 3]) {
        Err(Error::InvalidArgument { field, .. }) => assert_eq!(field, Some("frame")),
        other => panic!("short latent: {other:?}"),
    }
}
