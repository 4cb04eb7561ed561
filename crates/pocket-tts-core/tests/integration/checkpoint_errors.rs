//! A checkpoint with a missing, extra or wrongly shaped tensor, and voice states that do
//! not fit the model, are refused with `Error::InvalidData` naming the tensor.

use crate::common;

use std::collections::HashMap;

use candle_core::{Device, Tensor};
use pocket_tts_core::config::Config;
use pocket_tts_core::tts_model::TtsModel;
use pocket_tts_core::Error;

fn tiny_tensors() -> HashMap<String, Tensor> {
    candle_core::safetensors::load(common::fixture("tiny/model.safetensors"), &Device::Cpu).unwrap()
}

fn load_with(tensors: &HashMap<String, Tensor>) -> Result<TtsModel, Error> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.safetensors");
    candle_core::safetensors::save(tensors, &path).unwrap();
    let config = Config::from_yaml_file(&common::fixture("tiny/config.yaml")).unwrap();
    TtsModel::builder()
        .config(config, None)
        .files(path, common::asset("tokenizer.model"))
        .load()
}

const NAME: &str = "flow_lm.transformer.layers.1.linear1.weight";

#[test]
fn missing_tensor_is_named() {
    let mut t = tiny_tensors();
    t.remove(NAME).unwrap();
    let err = load_with(&t).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidData(m) if m.contains(&format!("missing tensor {NAME}")) && m.contains("[256, 64]")),
        "{err}"
    );
}

#[test]
fn misshaped_tensor_names_both_shapes() {
    let mut t = tiny_tensors();
    t.insert(
        NAME.into(),
        Tensor::zeros((255, 64), candle_core::DType::F32, &Device::Cpu).unwrap(),
    );
    let err = load_with(&t).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidData(m) if m.contains(NAME) && m.contains("[255, 64]") && m.contains("[256, 64]")),
        "{err}"
    );
}

#[test]
fn extra_tensor_is_named() {
    let mut t = tiny_tensors();
    t.insert(
        "mimi.surprise.weight".into(),
        Tensor::zeros(3, candle_core::DType::F32, &Device::Cpu).unwrap(),
    );
    let err = load_with(&t).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidData(m) if m.contains("unexpected tensor mimi.surprise.weight")),
        "{err}"
    );
}

#[test]
fn missing_checkpoint_is_not_found() {
    let config = Config::from_yaml_file(&common::fixture("tiny/config.yaml")).unwrap();
    let err = TtsModel::builder()
        .config(config, None)
        .files(
            "/nonexistent/model.safetensors",
            common::asset("tokenizer.model"),
        )
        .load()
        .unwrap_err();
    assert!(
        matches!(&err, Error::NotFound(m) if m.contains("/nonexistent/model.safetensors")),
        "{err}"
    );
}

#[test]
fn voice_state_of_another_model_is_invalid_data() {
    let model = load_with(&tiny_tensors()).unwrap();
    // The checkpoint itself is a safetensors file but not a voice state.
    let err = model
        .load_voice_state(&common::fixture("tiny/model.safetensors"))
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidData(m) if m.contains("transformer.layers.0.self_attn/cache")),
        "{err}"
    );
    // A voice state with the wrong head width.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("voice.safetensors");
    let mut t = HashMap::new();
    for i in 0..2 {
        t.insert(
            format!("transformer.layers.{i}.self_attn/cache"),
            Tensor::zeros((2, 1, 5, 4, 8), candle_core::DType::F32, &Device::Cpu).unwrap(),
        );
        t.insert(
            format!("transformer.layers.{i}.self_attn/offset"),
            Tensor::from_slice(&[5i64], 1, &Device::Cpu).unwrap(),
        );
    }
    candle_core::safetensors::save(&t, &path).unwrap();
    let err = model.load_voice_state(&path).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidData(m) if m.contains("[2, 1, 5, 4, 8]")),
        "{err}"
    );
}

#[test]
fn legacy_current_end_voice_state_loads() {
    let model = load_with(&tiny_tensors()).unwrap();
    let reference = model
        .load_voice_state(&common::fixture("tiny/voice_state.safetensors"))
        .unwrap();
    let mut t = candle_core::safetensors::load_buffer(
        &reference.to_safetensors_bytes().unwrap(),
        &Device::Cpu,
    )
    .unwrap();
    for i in 0..2 {
        t.remove(&format!("transformer.layers.{i}.self_attn/offset"));
        // Older exports stored the offset as the first dimension of `current_end`.
        t.insert(
            format!("transformer.layers.{i}.self_attn/current_end"),
            Tensor::zeros(reference.len(), candle_core::DType::F32, &Device::Cpu).unwrap(),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("legacy.safetensors");
    candle_core::safetensors::save(&t, &path).unwrap();
    let legacy = model.load_voice_state(&path).unwrap();
    assert_eq!(legacy, reference);
}

/// Mimi's encoder is read on the first voice prompt to encode, not at load; its names and
/// shapes are still checked at load.
const ENCODER_NAME: &str = "mimi.encoder.model.0.conv.weight";

#[test]
fn a_misshaped_encoder_tensor_is_refused_at_load() {
    let mut t = tiny_tensors();
    t.insert(
        ENCODER_NAME.into(),
        Tensor::zeros((8, 1, 5), candle_core::DType::F32, &Device::Cpu).unwrap(),
    );
    let err = load_with(&t).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidData(m) if m.contains(ENCODER_NAME) && m.contains("[8, 1, 5]") && m.contains("[8, 1, 7]")),
        "{err}"
    );
}

#[test]
fn a_missing_encoder_tensor_is_refused_at_load() {
    let mut t = tiny_tensors();
    t.remove(ENCODER_NAME).unwrap();
    let err = load_with(&t).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidData(m) if m.contains(&format!("missing tensor {ENCODER_NAME}"))),
        "{err}"
    );
}

#[test]
fn a_non_finite_encoder_weight_is_refused_when_the_encoder_is_first_used() {
    let mut t = tiny_tensors();
    let bad = Tensor::full(f32::NAN, (8, 1, 7), &Device::Cpu).unwrap();
    t.insert(ENCODER_NAME.into(), bad);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.safetensors");
    candle_core::safetensors::save(&t, &path).unwrap();
    let config = Config::from_yaml_file(&common::fixture("tiny/config.yaml")).unwrap();
    let model = TtsModel::builder()
        .config(config, None)
        .files(&path, common::asset("tokenizer.model"))
        .load()
        .expect("the encoder's values are read when first needed");
    // A voice state needs no encoder.
    model
        .load_voice_state(&common::fixture("tiny/voice_state.safetensors"))
        .expect("voice state");
    let samples = vec![0.1f32; model.sample_rate()];
    let err = model.encode_audio(&samples).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidData(m) if m.contains(ENCODER_NAME) && m.contains("non-finite")),
        "{err}"
    );
    // Asked again, it fails again rather than using the weights.
    assert!(matches!(
        model.encode_audio(&samples),
        Err(Error::InvalidData(_))
    ));
}
