//! Voice state files (`VoiceState`): a round trip through save/load, the older
//! `current_end` layout, and each malformed file refused with `InvalidData` (or
//! `Unsupported` for batch padding) naming the tensor.

use std::collections::HashMap;

use candle_core::{Device, Tensor};
use pocket_tts_core::Error;
use pocket_tts_core::VoiceState;

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

/// The tensors as a safetensors file (what the reference's `export_model_state` writes).
fn file_bytes(m: &HashMap<String, Tensor>) -> Vec<u8> {
    let mut named: Vec<(&String, &Tensor)> = m.iter().collect();
    named.sort_by(|a, b| a.0.cmp(b.0));
    safetensors::serialize(named, None).unwrap()
}

fn load(m: &HashMap<String, Tensor>) -> pocket_tts_core::Result<VoiceState> {
    VoiceState::from_safetensors_bytes(&file_bytes(m), LAYERS, HEADS, DIM, "v.safetensors")
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
    let back = VoiceState::load(&path, LAYERS, HEADS, DIM).unwrap();
    assert_eq!(back.len(), 3);
    assert_eq!(
        back.to_safetensors_bytes().unwrap(),
        state.to_safetensors_bytes().unwrap()
    );
    let empty = load(&tensors(4, [0, 0])).unwrap();
    assert!(empty.is_empty());
}

/// The file's `[2, 1, T, H, D]` cache becomes keys and values `[H, T, D]` per layer, only
/// the `offset` positions used; written back, the file holds the same used positions.
#[test]
fn the_cache_layout_is_heads_positions_channels() {
    let (t, heads, dim, offset) = (4, 3, 2, 3);
    let dev = Device::Cpu;
    let mut m = HashMap::new();
    let value =
        |kv: usize, pos: usize, h: usize, c: usize| (kv * 1000 + pos * 100 + h * 10 + c) as f32;
    let mut cache = Vec::new();
    for kv in 0..2 {
        for pos in 0..t {
            for h in 0..heads {
                for c in 0..dim {
                    cache.push(value(kv, pos, h, c));
                }
            }
        }
    }
    let p = "transformer.layers.0.self_attn";
    m.insert(
        format!("{p}/cache"),
        Tensor::from_vec(cache, (2, 1, t, heads, dim), &dev).unwrap(),
    );
    m.insert(
        format!("{p}/offset"),
        Tensor::new(&[offset as i64], &dev).unwrap(),
    );
    m.insert(format!("{p}/pad"), Tensor::new(&[0i64], &dev).unwrap());
    let state = VoiceState::from_safetensors_bytes(&file_bytes(&m), 1, heads, dim, "v").unwrap();
    assert_eq!(
        (state.len(), state.kv_heads(), state.head_dim()),
        (offset, heads, dim)
    );
    let layer = &state.layers()[0];
    for h in 0..heads {
        for pos in 0..offset {
            for c in 0..dim {
                let i = (h * offset + pos) * dim + c;
                assert_eq!(layer.keys[i], value(0, pos, h, c));
                assert_eq!(layer.values[i], value(1, pos, h, c));
            }
        }
    }
    let back = VoiceState::from_safetensors_bytes(
        &state.to_safetensors_bytes().unwrap(),
        1,
        heads,
        dim,
        "b",
    )
    .unwrap();
    assert_eq!(back, state);
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
        VoiceState::load(&missing, LAYERS, HEADS, DIM),
        Err(Error::NotFound(_))
    ));
    let junk = dir.path().join("junk.safetensors");
    std::fs::write(&junk, b"not a safetensors file").unwrap();
    assert!(matches!(
        VoiceState::load(&junk, LAYERS, HEADS, DIM),
        Err(Error::InvalidData(_))
    ));
    assert!(matches!(
        VoiceState::from_safetensors_bytes(b"\x01", LAYERS, HEADS, DIM, "b"),
        Err(Error::InvalidData(_))
    ));
}
