//! `Config::validate`: each value the model relies on is refused, by failure class and
//! naming the field, when out of range; `Config::from_yaml_file` errors by class.

use pocket_tts_core::config::{Config, FlowType};
use pocket_tts_core::Error;

/// Validates a changed English config and returns the error message, checking its class.
fn refused(change: impl FnOnce(&mut Config), unsupported: bool, needle: &str) {
    let mut c = Config::english();
    change(&mut c);
    match (c.validate("test.yaml"), unsupported) {
        (Err(Error::InvalidData(m)), false) | (Err(Error::Unsupported(m)), true) => {
            assert!(m.contains("test.yaml") && m.contains(needle), "{m}")
        }
        (other, _) => panic!("{needle}: expected a refusal, got {other:?}"),
    }
}

#[test]
fn the_english_config_validates() {
    Config::english().validate("english").unwrap();
}

#[test]
fn flow_lm_sizes_are_checked() {
    refused(
        |c| c.flow_lm.transformer.num_heads = 0,
        false,
        "sizes must be positive",
    );
    refused(
        |c| c.flow_lm.transformer.d_model = 0,
        false,
        "sizes must be positive",
    );
    refused(
        |c| c.flow_lm.transformer.num_layers = 0,
        false,
        "sizes must be positive",
    );
    refused(
        |c| c.flow_lm.transformer.attn_dim = Some(1000),
        false,
        "attn_dim 1000",
    );
    refused(
        |c| c.flow_lm.transformer.num_kv_heads = Some(0),
        false,
        "num_kv_heads 0",
    );
    refused(
        |c| {
            let h = c.flow_lm.transformer.num_heads;
            c.flow_lm.transformer.num_kv_heads = Some(h + 1);
        },
        false,
        "num_kv_heads",
    );
    refused(
        |c| {
            // Head dimension 3 (odd): RoPE rotates pairs.
            c.flow_lm.transformer.num_heads = 1;
            c.flow_lm.transformer.attn_dim = Some(3);
        },
        false,
        "even",
    );
    refused(
        |c| c.flow_lm.lookup_table.dim += 1,
        false,
        "flow_lm.lookup_table.dim",
    );
}

/// A YAML value outside a fixed set is refused as unsupported, naming the value, the
/// key and the known values.
#[test]
fn kinds_and_dtypes_are_checked() {
    let english = include_str!("../../configs/english.yaml");
    for (from, to, needles) in [
        (
            "dtype: float32",
            "dtype: int4",
            &["\"int4\"", "dtype", "float32, bfloat16, float16"][..],
        ),
        (
            "pad_mode: constant",
            "pad_mode: reflect",
            &["\"reflect\"", "pad_mode", "constant, replicate"],
        ),
    ] {
        assert!(english.contains(from), "english.yaml has {from:?}");
        let text = english.replacen(from, to, 1);
        match Config::from_yaml_str(&text, "test.yaml") {
            Err(Error::Unsupported(m)) => {
                for n in needles.iter().chain(&["test.yaml"]) {
                    assert!(m.contains(n), "{to}: {m} lacks {n}");
                }
            }
            other => panic!("{to}: expected Unsupported, got {other:?}"),
        }
    }
    let flow = english.replacen("flow:\n", "flow:\n    type: diffusion\n", 1);
    assert_ne!(flow, english, "english.yaml has a flow: section");
    match Config::from_yaml_str(&flow, "test.yaml") {
        Err(Error::Unsupported(m)) => assert!(
            m.contains("\"diffusion\"")
                && m.contains("flow.type")
                && m.contains("lsd, flow_matching"),
            "{m}"
        ),
        other => panic!("flow type: expected Unsupported, got {other:?}"),
    }
    // Known values round-trip.
    for name in FlowType::NAMES {
        assert_eq!(FlowType::try_from(name.to_string()).unwrap().name(), *name);
    }
}

#[test]
fn mimi_rates_and_sizes_are_checked() {
    refused(|c| c.mimi.sample_rate = 0, false, "must be positive");
    refused(|c| c.mimi.frame_rate = 0.0, false, "must be positive");
    refused(|c| c.mimi.seanet.ratios.clear(), false, "must be positive");
    refused(|c| c.mimi.frame_rate = 7.0, false, "integer multiple");
    refused(
        |c| c.mimi.transformer.num_heads = 0,
        false,
        "mimi.transformer",
    );
    refused(
        |c| c.mimi.transformer.output_dimensions.clear(),
        false,
        "output_dimensions",
    );
}

#[test]
fn config_files_fail_by_class() {
    let dir = tempfile::tempdir().unwrap();
    match Config::from_yaml_file(&dir.path().join("missing.yaml")) {
        Err(Error::NotFound(m)) => assert!(m.contains("missing.yaml"), "{m}"),
        other => panic!("expected NotFound, got {other:?}"),
    }
    let binary = dir.path().join("binary.yaml");
    std::fs::write(&binary, [0xffu8, 0xfe, 0x00, 0x80]).unwrap();
    match Config::from_yaml_file(&binary) {
        Err(Error::Io { path, .. }) => assert_eq!(path, binary),
        other => panic!("expected Io, got {other:?}"),
    }
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "flow_lm: [1, 2").unwrap();
    assert!(matches!(
        Config::from_yaml_file(&bad),
        Err(Error::InvalidData(_))
    ));
}
