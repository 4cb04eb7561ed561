//! End-to-end tests of the refusals of bad input shared by the commands, on the tiny
//! random-weight model (`tests/fixtures/tiny`, run through the sandbox of `common`):
//! bad text, bad voices, bad models and configs, bad numbers and devices, `--threads 0`.
//!
//! Every refusal exits with status 1 and prints ONE line starting with `error:` that
//! names the flag or file at fault, never panics, writes nothing to stdout, and leaves
//! the output folder as it was (no new file, no temporary file, a previous file
//! untouched).

use crate::common;

use std::fs;

use common::*;

// ---------------------------------------------------------------------------------------
// Bad text
// ---------------------------------------------------------------------------------------

#[test]
fn refuses_empty_text() {
    refused_with("--text", "", &["--text", "empty"]);
}

#[test]
fn refuses_whitespace_only_text() {
    refused_with("--text", " \t\n  ", &["--text", "empty"]);
}

#[test]
fn refuses_empty_stdin_text() {
    let sb = Sandbox::new();
    let args = sb.generate().set("--text", "-");
    assert_refused(
        &sb,
        "--text - (empty stdin)",
        args.clone(),
        b"",
        &["--text", "empty"],
    );
    assert_refused(
        &sb,
        "--text - (blank stdin)",
        args,
        b"  \n\n",
        &["--text", "empty"],
    );
}

#[test]
fn refuses_non_utf8_stdin_text() {
    let sb = Sandbox::new();
    let args = sb.generate().set("--text", "-");
    assert_refused(
        &sb,
        "--text - (bytes)",
        args,
        &[0xff, 0xfe, 0x80],
        &["--text -", "stdin"],
    );
}

// ---------------------------------------------------------------------------------------
// Bad voices
// ---------------------------------------------------------------------------------------

#[test]
fn refuses_a_missing_voice_file() {
    let sb = Sandbox::new();
    let voice = sb.path("nonexistent.wav");
    refused_voice(
        &sb,
        &voice,
        &["--voice", "nonexistent.wav", "does not exist"],
    );
    let state = sb.path("nonexistent.safetensors");
    refused_voice(
        &sb,
        &state,
        &["--voice", "nonexistent.safetensors", "does not exist"],
    );
}

#[test]
fn refuses_corrupt_audio() {
    let sb = Sandbox::new();
    let voice = sb.file("corrupt.wav", noise_bytes(5000, 1));
    let line = refused_voice(
        &sb,
        &voice,
        &["--voice", "corrupt.wav", "Supported formats"],
    );
    assert!(!line.contains("probe reached EOF"), "{line}");
}

#[test]
fn refuses_a_wav_without_samples() {
    let sb = Sandbox::new();
    let voice = sb.path("empty.wav");
    write_wav(&voice, &[]);
    refused_voice(&sb, &voice, &["--voice", "empty.wav", "no samples"]);
}

#[test]
fn refuses_a_silent_wav() {
    let sb = Sandbox::new();
    let voice = sb.path("silent.wav");
    write_wav(&voice, &vec![0; SAMPLE_RATE as usize]);
    refused_voice(&sb, &voice, &["--voice", "silent.wav", "silent"]);
}

#[test]
fn refuses_a_text_file_named_mp3() {
    let sb = Sandbox::new();
    let voice = sb.file(
        "notes.mp3",
        "These are not the droids you are looking for.\n",
    );
    refused_voice(
        &sb,
        &voice,
        &["--voice", "notes.mp3", "cannot read audio file"],
    );
}

#[test]
fn refuses_a_checkpoint_as_voice_state() {
    let sb = Sandbox::new();
    let voice = tiny("model.safetensors");
    refused_voice(
        &sb,
        &voice,
        &["--voice", "model.safetensors", "not a voice state"],
    );
}

#[test]
fn refuses_a_safetensors_of_unrelated_tensors_as_voice_state() {
    let sb = Sandbox::new();
    let voice = sb.path("unrelated.safetensors");
    write_safetensors(&voice, &[("weight".to_string(), f32_tensor(&[3, 4]))]);
    refused_voice(
        &sb,
        &voice,
        &["--voice", "unrelated.safetensors", "not a voice state"],
    );
}

#[test]
fn refuses_a_voice_state_of_the_wrong_shape() {
    let sb = Sandbox::new();
    let voice = sb.path("other_model.safetensors");
    // The tiny FlowLM has 2 layers of 4 heads of width 16; this state has 3 heads of 8.
    let mut tensors = Vec::new();
    for layer in 0..2 {
        let p = format!("transformer.layers.{layer}.self_attn");
        tensors.push((format!("{p}/cache"), f32_tensor(&[2, 1, 5, 3, 8])));
        tensors.push((format!("{p}/offset"), i64_tensor(&[5])));
        tensors.push((format!("{p}/pad"), i64_tensor(&[0])));
    }
    write_safetensors(&voice, &tensors);
    refused_voice(
        &sb,
        &voice,
        &[
            "--voice",
            "transformer.layers.0.self_attn/cache",
            "[2, 1, 5, 3, 8]",
            "expected [2, 1, T, 4, 16]",
        ],
    );
}

#[test]
fn refuses_a_voice_state_that_is_not_safetensors() {
    let sb = Sandbox::new();
    let voice = sb.file("garbage.safetensors", noise_bytes(300, 2));
    refused_voice(
        &sb,
        &voice,
        &["--voice", "garbage.safetensors", "safetensors"],
    );
}

// ---------------------------------------------------------------------------------------
// Bad models
// ---------------------------------------------------------------------------------------

#[test]
fn refuses_a_config_whose_checkpoint_is_missing() {
    let sb = Sandbox::new();
    let weights = sb.path("no/such/model.safetensors");
    let config = sb.config_with("missing_weights.yaml", &weights, "");
    let line = refused_with("--config", utf8(&config), &["--config", "weights_path"]);
    assert!(line.contains(utf8(&weights)), "{line}");
}

#[test]
fn refuses_a_checkpoint_with_a_tensor_removed() {
    let sb = Sandbox::new();
    let mut tensors = tiny_checkpoint();
    let (name, removed) = tensors.remove(non_square_matrix(&tensors));
    let weights = sb.path("removed.safetensors");
    write_safetensors(&weights, &tensors);
    let config = sb.config_with("removed.yaml", &weights, "");
    let needles = [
        "removed.safetensors",
        &format!("missing tensor {name}"),
        &format!("{:?}", removed.shape),
    ];
    refused_with("--config", utf8(&config), &needles);
}

#[test]
fn refuses_a_checkpoint_with_a_tensor_reshaped() {
    let sb = Sandbox::new();
    let mut tensors = tiny_checkpoint();
    let i = non_square_matrix(&tensors);
    let expected = tensors[i].1.shape.clone();
    tensors[i].1.shape.reverse();
    let name = tensors[i].0.clone();
    let weights = sb.path("reshaped.safetensors");
    write_safetensors(&weights, &tensors);
    let config = sb.config_with("reshaped.yaml", &weights, "");
    // Both shapes, e.g. "tensor … has shape [64, 4001], expected [4001, 64]".
    let problem = format!(
        "tensor {name} has shape {:?}, expected {expected:?}",
        tensors[i].1.shape
    );
    refused_with(
        "--config",
        utf8(&config),
        &["reshaped.safetensors", &problem],
    );
}

#[test]
fn refuses_a_config_whose_tokenizer_is_missing() {
    let sb = Sandbox::new();
    let text = fs::read_to_string(&sb.config).unwrap();
    let tok = yaml_quote(&tokenizer());
    let missing = sb.path("no_tokenizer.model");
    assert!(text.contains(&tok));
    let config = sb.file("no_tok.yaml", text.replace(&tok, &yaml_quote(&missing)));
    refused_with(
        "--config",
        utf8(&config),
        &["--config", "no_tokenizer.model"],
    );
}

#[test]
fn refuses_an_unknown_language() {
    let sb = Sandbox::new();
    let args = sb.generate().unset("--config").set("--language", "klingon");
    assert_refused(
        &sb,
        "--language klingon",
        args,
        b"",
        &["--language", "klingon", "english"],
    );
}

#[test]
fn refuses_config_and_language_together() {
    refused_with("--language", "english", &["--config", "--language"]);
}

#[test]
fn refuses_a_config_with_an_unknown_field() {
    let sb = Sandbox::new();
    let config = sb.config_with("typo.yaml", &tiny("model.safetensors"), "bogus_field: 3\n");
    refused_with(
        "--config",
        utf8(&config),
        &["--config", "typo.yaml", "bogus_field"],
    );
}

#[test]
fn refuses_a_config_that_is_not_yaml() {
    let sb = Sandbox::new();
    let binary = sb.file("binary.yaml", noise_bytes(400, 3));
    let line = refused_with(
        "--config",
        utf8(&binary),
        &["--config", "binary.yaml", "YAML"],
    );
    assert_eq!(
        line.matches("UTF-8").count(),
        1,
        "the cause is told once: {line}"
    );
    let prose = sb.file("prose.yaml", "This is not a config, just a sentence.\n");
    refused_with("--config", utf8(&prose), &["--config", "prose.yaml"]);
    let broken = sb.file("broken.yaml", "flow_lm: [1, 2\n  mimi: }\n");
    refused_with("--config", utf8(&broken), &["--config", "broken.yaml"]);
}

#[test]
fn refuses_a_missing_config_or_one_not_named_yaml() {
    let sb = Sandbox::new();
    let missing = sb.path("missing.yaml");
    refused_with(
        "--config",
        utf8(&missing),
        &["--config", "missing.yaml", "does not exist"],
    );
    let json = sb.file("config.json", "{}");
    refused_with(
        "--config",
        utf8(&json),
        &["--config", "config.json", ".yaml"],
    );
}

// ---------------------------------------------------------------------------------------
// Bad numbers and devices
// ---------------------------------------------------------------------------------------

#[test]
fn refuses_a_negative_or_nan_temperature() {
    refused_with("--temperature", "-1", &["--temperature"]);
    refused_with("--temperature", "NaN", &["--temperature"]);
}

#[test]
fn refuses_zero_sampler_decode_steps() {
    refused_with("--sampler-decode-steps", "0", &["--sampler-decode-steps"]);
}

#[test]
fn refuses_zero_max_tokens() {
    refused_with("--max-tokens", "0", &["--max-tokens"]);
}

#[test]
fn refuses_a_zero_or_negative_noise_clamp() {
    refused_with("--noise-clamp", "0", &["--noise-clamp"]);
    refused_with("--noise-clamp", "-1", &["--noise-clamp"]);
}

#[test]
fn refuses_a_nan_eos_threshold() {
    refused_with("--eos-threshold", "NaN", &["--eos-threshold"]);
}

#[test]
fn refuses_cuda() {
    refused_with("--device", "cuda", &["--device cuda", "cpu"]);
}

#[test]
fn refuses_zero_threads() {
    refused_with("--threads", "0", &["--threads 0"]);
    let sb = Sandbox::new();
    check_refusal(
        "stream --threads 0",
        &sb.run(&sb.stream().set("--threads", "0"), b""),
        &["--threads 0"],
        true,
    );
    let state = sb.path("voice.safetensors");
    let export = Args::new("export-voice")
        .set("--config", utf8(&sb.config))
        .set("--threads", "0")
        .arg(utf8(&tiny("voice_excerpt.wav")))
        .arg(utf8(&state));
    check_refusal(
        "export-voice --threads 0",
        &sb.run(&export, b""),
        &["--threads 0"],
        true,
    );
    assert!(!state.exists());
}
