//! `TtsModel`'s public entry points on the tiny model, beyond the parity and streaming
//! tests: clamped noise, parameter validation by class, voices refused by class, and a
//! model built from seeded random weights.

use crate::common;

use pocket_tts_core::config::Config;
use pocket_tts_core::tts_model::{GenerationParams, TtsModel, MAX_TEMPERATURE};
use pocket_tts_core::Error;

fn tiny_config() -> Config {
    Config::from_yaml_file(&common::fixture("tiny/config.yaml")).expect("tiny config")
}

fn tiny_model() -> TtsModel {
    TtsModel::builder()
        .config(tiny_config(), None)
        .files(
            common::fixture("tiny/model.safetensors"),
            common::asset("tokenizer.model"),
        )
        .load()
        .expect("tiny model loads")
}

fn params() -> GenerationParams {
    let mut p = GenerationParams::for_config(&Config::english());
    p.seed = Some(3);
    p.eos_threshold = -12.56;
    p
}

#[test]
fn clamped_noise_gives_finite_audio_and_differs_from_unclamped() {
    let model = tiny_model();
    let voice = model
        .load_voice_state(&common::fixture("tiny/voice_state.safetensors"))
        .unwrap();
    let mut p = params();
    p.temperature = 1.0;
    let free = model.generate(&voice, "Hello there.", &p).unwrap();
    p.noise_clamp = Some(0.05);
    let clamped = model.generate(&voice, "Hello there.", &p).unwrap();
    assert!(!clamped.is_empty() && clamped.iter().all(|x| x.is_finite()));
    assert_ne!(
        free, clamped,
        "a tight noise clamp changes the sampled speech"
    );
}

#[test]
fn bad_parameters_are_invalid_arguments() {
    type Change = fn(&mut GenerationParams);
    let cases: [(&str, Change); 6] = [
        ("temperature", |p| p.temperature = -1.0),
        ("temperature", |p| p.temperature = MAX_TEMPERATURE * 2.0),
        ("sampler_decode_steps", |p| p.sampler_decode_steps = 0),
        ("noise_clamp", |p| p.noise_clamp = Some(0.0)),
        ("eos_threshold", |p| p.eos_threshold = f32::NAN),
        ("max_tokens", |p| p.max_tokens = 0),
    ];
    for (field, change) in cases {
        let mut p = params();
        change(&mut p);
        match p.validate() {
            Err(Error::InvalidArgument { field: Some(f), .. }) => assert_eq!(f, field),
            other => panic!("{field}: expected InvalidArgument naming it, got {other:?}"),
        }
    }
    params().validate().unwrap();
}

#[test]
fn voices_are_refused_by_class() {
    let model = tiny_model();
    // A predefined voice needs a built-in language model.
    assert!(matches!(
        model.voice_state("alba", false),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        model.voice_state("no/such/voice.wav", false),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        model.voice_state_from_samples(&[]),
        Err(Error::InvalidData(_))
    ));
    assert!(matches!(
        model.generate(
            &model
                .load_voice_state(&common::fixture("tiny/voice_state.safetensors"))
                .unwrap(),
            "   ",
            &params()
        ),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn a_random_tiny_model_speaks_deterministically() {
    let a = TtsModel::builder()
        .config(tiny_config(), None)
        .random_weights(5, common::asset("tokenizer.model"))
        .load()
        .unwrap();
    let b = TtsModel::builder()
        .config(tiny_config(), None)
        .random_weights(5, common::asset("tokenizer.model"))
        .load()
        .unwrap();
    let samples = vec![0.1f32; 24_000];
    let va = a.voice_state_from_samples(&samples).unwrap();
    let vb = b.voice_state_from_samples(&samples).unwrap();
    let mut p = params();
    p.temperature = 0.0;
    p.eos_threshold = 1e9;
    let out_a = a.generate(&va, "Hi.", &p).unwrap();
    assert!(!out_a.is_empty() && out_a.iter().all(|x| x.is_finite()));
    assert_eq!(out_a, b.generate(&vb, "Hi.", &p).unwrap());
}

/// `set_keep_voice_encoder(false)` (the CLI's one-voice commands) builds the Mimi encoder
/// for each audio prompt and frees it after encoding: the voices are the kept encoder's,
/// prompt after prompt, and switching back keeps one again.
#[test]
fn a_voice_encoder_freed_after_each_prompt_gives_the_same_voices() {
    let mut model = tiny_model();
    let path = common::fixture("tiny/voice_excerpt.wav");
    let path = path.to_str().unwrap();
    let kept = model.voice_state(path, true).unwrap();
    model.set_keep_voice_encoder(false);
    for _ in 0..2 {
        assert_eq!(model.voice_state(path, true).unwrap(), kept);
    }
    model.set_keep_voice_encoder(true);
    assert_eq!(model.voice_state(path, true).unwrap(), kept);
}

#[test]
fn a_voice_from_audio_in_memory_equals_the_same_file() {
    let model = tiny_model();
    let path = common::fixture("tiny/voice_excerpt.wav");
    let bytes = std::fs::read(&path).unwrap();
    let from_file = model.voice_state(path.to_str().unwrap(), true).unwrap();
    let from_bytes = model
        .voice_state_from_audio_bytes(&bytes, "upload.wav", true)
        .unwrap();
    let text = "Hello there.";
    let a = model.generate(&from_file, text, &params()).unwrap();
    let b = model.generate(&from_bytes, text, &params()).unwrap();
    assert_eq!(from_file.len(), from_bytes.len());
    assert_eq!(a, b);

    // Unreadable and silent uploads are invalid data naming the upload.
    match model.voice_state_from_audio_bytes(b"not audio at all", "junk.wav", true) {
        Err(Error::InvalidData(m)) | Err(Error::Unsupported(m)) => {
            assert!(m.contains("junk.wav"), "{m}")
        }
        other => panic!("junk upload: {other:?}"),
    }
    let mut silent = Vec::new();
    {
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: 24_000,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut w = hound::WavWriter::new(std::io::Cursor::new(&mut silent), spec).unwrap();
        for _ in 0..24_000 {
            w.write_sample(0i16).unwrap();
        }
        w.finalize().unwrap();
    }
    match model.voice_state_from_audio_bytes(&silent, "quiet.wav", true) {
        Err(Error::InvalidData(m)) => {
            assert!(m.contains("quiet.wav") && m.contains("silent"), "{m}")
        }
        other => panic!("silent upload: {other:?}"),
    }
}
