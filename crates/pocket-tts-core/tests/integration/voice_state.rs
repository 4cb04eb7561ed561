//! Voice state files (`VoiceState`): a round trip through save/load, the older
//! `current_end` layout, and each malformed file refused with `InvalidData` (or
//! `Unsupported` for batch padding) naming the tensor.

use std::collections::HashMap;

use candle_core::{Device, Tensor};
use pocket_tts_core::models::model_state::VoiceState;
use pocket_tts_core::Error;

const LAYERS: usize = 2;
const HEADS: usize = 1;
const DIM: usize = 2;

/// Export-format tensors of `LAYERS` layers with `t` cache positions, `offsets[i]` used.
fn tensors(t: usize, offsets: [i64; LAYERS]) -> HashMap<String, Tensor> {
    let dev = Device::Cpu;
    let mut m = HashMap::new();
    for (i, off) in offsets.iter().enumerate() {
        let p = format!("transformer.layers.{i}.self_attn");
        let n = 2 * t * HEADS * DIM;
        let v: Vec<f32> = (0..n).map(|k| k as f32 * 0.25 + i as f32).collect();
        m.insert(
            format!("{p}/cache"),
            Tensor::from_vec(v, (2, 1, t, HEADS, DIM), &dev).unwrap(),
        );
        m.insert(format!("{p}/offset"), Tensor::new(&[*off], &dev).unwrap());
        m.insert(format!("{p}/pad"), Tensor::new(&[0i64], &dev).unwrap());
    }
    m
}

fn load(m: &HashMap<String, Tensor>) -> pocket_tts_core::Result<VoiceState> {
    VoiceState::from_tensors(m, LAYERS, HEADS, DIM, "v.safetensors", &Device::Cpu)
}

fn invalid(m: &HashMap<String, Tensor>, needle: &str) {
    match load(m) {
        Err(Error::InvalidData(msg)) => {
            assert!(
                msg.contains("v.safetensors") && msg.contains(needle),
                "{msg}"
            )
        }
        other => panic!("{needle}: expected InvalidData, got {other:?}"),
    }
}

#[test]
fn a_state_saves_and_loads_back() {
    let state = load(&tensors(5, [3, 3])).unwrap();
    assert_eq!(state.len(), 3);
    assert!(!state.is_empty());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.safetensors");
    state.save(&path).unwrap();
    let back = VoiceState::load(&path, LAYERS, HEADS, DIM, &Device::Cpu).unwrap();
    assert_eq!(back.len(), 3);
    assert_eq!(
        back.to_safetensors_bytes().unwrap(),
        state.to_safetensors_bytes().unwrap()
    );
    let empty = load(&tensors(4, [0, 0])).unwrap();
    assert!(empty.is_empty());
}

#[test]
fn the_older_current_end_layout_loads() {
    let mut m = tensors(4, [0, 0]);
    for i in 0..LAYERS {
        let p = format!("transformer.layers.{i}.self_attn");
        m.remove(&format!("{p}/offset"));
        m.insert(
            format!("{p}/current_end"),
            Tensor::zeros(2, candle_core::DType::F32, &Device::Cpu).unwrap(),
        );
    }
    assert_eq!(load(&m).unwrap().len(), 2);
}

#[test]
fn malformed_states_are_refused_naming_the_tensor() {
    let p0 = "transformer.layers.0.self_attn";
    let mut m = tensors(4, [2, 2]);
    m.remove(&format!("{p0}/cache"));
    invalid(&m, &format!("missing tensor {p0}/cache"));

    let mut m = tensors(4, [2, 2]);
    m.remove(&format!("{p0}/offset"));
    invalid(&m, &format!("missing tensor {p0}/offset"));

    let mut m = tensors(4, [2, 2]);
    m.insert(
        format!("{p0}/cache"),
        Tensor::zeros((2, 1, 4, 3, DIM), candle_core::DType::F32, &Device::Cpu).unwrap(),
    );
    invalid(&m, "different model");

    invalid(&tensors(4, [-1, -1]), "negative");
    invalid(&tensors(4, [5, 5]), "exceeds the cache length");
    invalid(&tensors(4, [2, 3]), "disagree on the offset");

    let mut m = tensors(4, [2, 2]);
    m.insert(
        format!("{p0}/offset"),
        Tensor::zeros(0, candle_core::DType::I64, &Device::Cpu).unwrap(),
    );
    invalid(&m, "is empty");

    let mut m = tensors(4, [2, 2]);
    m.insert(
        format!("{p0}/pad"),
        Tensor::new(&[1i64], &Device::Cpu).unwrap(),
    );
    assert!(matches!(load(&m), Err(Error::Unsupported(_))));

    // NaN inside the used positions is refused; beyond them it is ignored.
    let mut m = tensors(4, [2, 2]);
    let mut v = vec![0f32; 2 * 4 * HEADS * DIM];
    v[DIM * 3] = f32::NAN; // keys, position 3: unused
    m.insert(
        format!("{p0}/cache"),
        Tensor::from_vec(v.clone(), (2, 1, 4, HEADS, DIM), &Device::Cpu).unwrap(),
    );
    load(&m).unwrap();
    v[DIM] = f32::INFINITY; // keys, position 1: used
    m.insert(
        format!("{p0}/cache"),
        Tensor::from_vec(v, (2, 1, 4, HEADS, DIM), &Device::Cpu).unwrap(),
    );
    invalid(&m, "non-finite");
}

#[test]
fn files_that_are_not_voice_states_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.safetensors");
    assert!(matches!(
        VoiceState::load(&missing, LAYERS, HEADS, DIM, &Device::Cpu),
        Err(Error::NotFound(_))
    ));
    let junk = dir.path().join("junk.safetensors");
    std::fs::write(&junk, b"not a safetensors file").unwrap();
    assert!(matches!(
        VoiceState::load(&junk, LAYERS, HEADS, DIM, &Device::Cpu),
        Err(Error::InvalidData(_))
    ));
    assert!(matches!(
        VoiceState::from_safetensors_bytes(b"\x01", LAYERS, HEADS, DIM, "b", &Device::Cpu),
        Err(Error::InvalidData(_))
    ));
}
