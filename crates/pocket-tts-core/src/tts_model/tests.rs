//! Unit tests that reach inside the pipeline (its model definition) to inject faults.

use std::path::PathBuf;

use candle_core::{DType, Device, Tensor};

use super::{GenerationParams, TtsModel};
use crate::config::Config;
use crate::Error;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tiny_model() -> TtsModel {
    let tiny = repo().join("tests/fixtures/tiny");
    let config = Config::from_yaml_file(&tiny.join("config.yaml")).expect("tiny config");
    TtsModel::builder()
        .config(config, None)
        .files(
            tiny.join("model.safetensors"),
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/assets/tokenizer.model"),
        )
        .load()
        .expect("tiny model loads (tests/fixtures/tiny)")
}

/// An error in the Mimi decoder (here latent statistics of the wrong size, so that
/// denormalising a latent fails) comes out of the iterator as an internal error, on
/// either thread layout, and ends it.
#[test]
fn a_decoder_error_is_yielded_and_ends_the_stream() {
    let mut model = tiny_model();
    let voice = model
        .load_voice_state(&repo().join("tests/fixtures/tiny/voice_state.safetensors"))
        .expect("tiny voice state");
    let three = Tensor::ones(3, DType::F32, &Device::Cpu).unwrap();
    model.flow_lm.emb_std = three.clone();
    model.flow_lm.emb_mean = three;
    let mut params = GenerationParams::for_config(&Config::english());
    params.seed = Some(7);
    for threads in [1, 2] {
        model.set_threads(threads).unwrap();
        let items: Vec<_> = model
            .generate_stream(&voice, "Hello there.", &params)
            .unwrap()
            .take(10)
            .collect();
        assert_eq!(items.len(), 1, "threads {threads}: one Err, then the end");
        assert!(
            matches!(items[0], Err(Error::Internal(_))),
            "threads {threads}: expected an internal error, got {:?}",
            items[0].as_ref().map(|f| f.samples.len())
        );
    }
}
