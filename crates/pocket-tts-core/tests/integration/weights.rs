//! `pocket_tts_core::internals::weights`: the checked checkpoint reader (names, non-finite values,
//! problem lists capped at 12 entries, files that are not safetensors) and
//! `first_non_finite`.

use std::collections::HashMap;

use candle_core::{DType, Device, Tensor};
use pocket_tts_core::internals::weights::{first_non_finite, Checkpoint};
use pocket_tts_core::Error;

#[test]
fn first_non_finite_finds_the_first_nan_or_infinity() {
    let dev = Device::Cpu;
    let mut v = vec![0.5f32; 5000];
    assert_eq!(
        first_non_finite(&Tensor::new(v.as_slice(), &dev).unwrap()).unwrap(),
        None
    );
    v[4100] = f32::NEG_INFINITY;
    v[3000] = f32::NAN;
    let t = Tensor::new(v.as_slice(), &dev).unwrap();
    assert_eq!(first_non_finite(&t).unwrap(), Some(3000));
    // Other float types are converted; a transposed view is read in row-major order.
    let half = t.to_dtype(DType::BF16).unwrap();
    assert_eq!(first_non_finite(&half).unwrap(), Some(3000));
    let m = t.reshape((50, 100)).unwrap().t().unwrap();
    assert_eq!(first_non_finite(&m).unwrap(), Some(30)); // row 0, column 30
                                                         // Integers are never non-finite.
    let ints = Tensor::new(&[1i64, 2, 3], &dev).unwrap();
    assert_eq!(first_non_finite(&ints).unwrap(), None);
}

#[test]
fn a_checkpoint_lists_at_most_12_problems_and_names_nan_tensors() {
    let dev = Device::Cpu;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.safetensors");
    let mut tensors = HashMap::new();
    for i in 0..20 {
        tensors.insert(
            format!("flow_lm.extra{i:02}"),
            Tensor::zeros(2, DType::F32, &dev).unwrap(),
        );
    }
    tensors.insert(
        "flow_lm.bad".to_string(),
        Tensor::new(&[1.0f32, f32::NAN], &dev).unwrap(),
    );
    candle_core::safetensors::save(&tensors, &path).unwrap();
    let ckpt = Checkpoint::open(&path).unwrap();
    assert_eq!(ckpt.path(), path);
    assert_eq!(ckpt.names().len(), 21);
    let vb = ckpt.var_builder(DType::F32, &dev);
    vb.get(2, "flow_lm.bad").unwrap();
    match ckpt.finish(&["flow_lm."]) {
        Err(Error::InvalidData(m)) => {
            assert!(m.contains("21 problems"), "{m}");
            assert!(m.contains("and 9 more"), "{m}");
            assert!(m.contains("flow_lm.bad holds a non-finite value"), "{m}");
        }
        other => panic!("expected InvalidData, got {:?}", other.is_ok()),
    }
}

#[test]
fn files_that_are_not_checkpoints_are_refused_by_class() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        Checkpoint::open(&dir.path().join("none.safetensors")),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        Checkpoint::open(dir.path()),
        Err(Error::InvalidArgument { .. })
    ));
    let junk = dir.path().join("junk.safetensors");
    std::fs::write(&junk, b"\x08\0\0\0\0\0\0\0{bad json").unwrap();
    match Checkpoint::open(&junk) {
        Err(Error::InvalidData(m)) => assert!(m.contains("junk.safetensors"), "{m}"),
        other => panic!("expected InvalidData, got {:?}", other.is_ok()),
    }
}
