//! 16-bit FlowLM weights (`LoadOptions::flow_lm_dtype`, the config's `flow_lm.dtype`;
//! reference: `models/flow_lm.py`, the FlowLM built with `dtype=getattr(torch,
//! config.dtype)`) on the tiny model: which linears become `f16`/`bf16`, both runtimes
//! computing the same 16-bit model, the speech staying close to the `f32` speech, and the
//! combination with `--quantize` (int8 transformer, 16-bit flow head).

use crate::common;

use common::{same_length_params, snr_db};

use pocket_tts_core::config::{Config, WeightDtype};
use pocket_tts_core::internals::modules::weights_view::{FlowLmView, LinearView, WeightView};
use pocket_tts_core::tts_model::TtsModel;
use pocket_tts_core::Backend;
use pocket_tts_simd::HalfKind;

fn config() -> Config {
    Config::from_yaml_file(&common::fixture("tiny/config.yaml")).expect("config")
}

fn tiny(dtype: Option<WeightDtype>, quantize: bool) -> TtsModel {
    load_tiny(config(), dtype, quantize).expect("tiny model loads")
}

fn load_tiny(
    config: Config,
    dtype: Option<WeightDtype>,
    quantize: bool,
) -> pocket_tts_core::Result<TtsModel> {
    let mut builder = TtsModel::builder()
        .config(config, None)
        .files(
            common::fixture("tiny/model.safetensors"),
            common::asset("tokenizer.model"),
        )
        .quantize(quantize);
    if let Some(dtype) = dtype {
        builder = builder.dtype(dtype);
    }
    builder.load()
}

const TEXT: &str = "Hello there, in sixteen bits.";

/// Audio and latents of one temperature-0 generation.
fn run(m: &TtsModel) -> (Vec<f32>, Vec<f32>) {
    let voice = m
        .load_voice_state(&common::fixture("tiny/voice_state.safetensors"))
        .unwrap();
    let (mut audio, mut latents) = (Vec::new(), Vec::new());
    for frame in m
        .generate_stream(&voice, TEXT, &same_length_params())
        .unwrap()
    {
        let frame = frame.unwrap();
        audio.extend(frame.samples);
        latents.extend(frame.latent);
    }
    (audio, latents)
}

/// Every linear a FlowLM step reads, with its name.
fn step_linears<'a>(v: &'a FlowLmView<'a>) -> Vec<(String, LinearView<'a>)> {
    let mut out = vec![
        ("input_linear".to_string(), v.input_linear),
        ("out_eos".to_string(), v.out_eos),
    ];
    if let Some(p) = v.z_proj {
        out.push(("z_proj".into(), p));
    }
    for (i, l) in v.transformer.layers.iter().enumerate() {
        out.push((format!("layers.{i}.in_proj"), l.self_attn.in_proj));
        out.push((format!("layers.{i}.out_proj"), l.self_attn.out_proj));
        out.push((format!("layers.{i}.linear1"), l.linear1));
        out.push((format!("layers.{i}.linear2"), l.linear2));
    }
    out.extend(flow_head_linears(v));
    out
}

/// The flow head's linears, with their names.
fn flow_head_linears<'a>(v: &'a FlowLmView<'a>) -> Vec<(String, LinearView<'a>)> {
    let f = &v.flow_net;
    let mut out = vec![
        ("cond_embed".to_string(), f.cond_embed),
        ("input_proj".to_string(), f.input_proj),
        ("final.linear".to_string(), f.final_layer.linear),
        ("final.ada_ln".to_string(), f.final_layer.ada_ln),
    ];
    for (i, t) in f.time_embed.iter().enumerate() {
        out.push((format!("time_embed.{i}.linear1"), t.linear1));
        out.push((format!("time_embed.{i}.linear2"), t.linear2));
    }
    for (i, b) in f.res_blocks.iter().enumerate() {
        out.push((format!("res_blocks.{i}.mlp1"), b.mlp1));
        out.push((format!("res_blocks.{i}.mlp2"), b.mlp2));
        out.push((format!("res_blocks.{i}.ada_ln"), b.ada_ln));
    }
    out
}

fn half_kind(l: &LinearView<'_>) -> Option<HalfKind> {
    match l.weight {
        WeightView::Half(h) => Some(h.kind()),
        _ => None,
    }
}

#[test]
fn a_16_bit_dtype_stores_every_flow_lm_step_linear_in_16_bits() {
    for (dtype, kind) in [
        (WeightDtype::Bfloat16, HalfKind::Bf16),
        (WeightDtype::Float16, HalfKind::F16),
    ] {
        let m = tiny(Some(dtype), false);
        assert_eq!(
            m.config().flow_lm.dtype,
            dtype,
            "the option overrides the config"
        );
        let v = m.flow_lm().view();
        let lins = step_linears(&v);
        assert!(lins.len() > 10);
        for (name, l) in &lins {
            assert_eq!(half_kind(l), Some(kind), "{dtype}: {name}");
            // Biases stay f32.
            if let Some(b) = l.bias {
                assert_eq!(b.dtype(), candle_core::DType::F32, "{name}.bias");
            }
        }
        // The 16-bit values are the f32 checkpoint's, rounded.
        let f = tiny(None, false);
        let fv = f.flow_lm().view();
        let (WeightView::Half(h), WeightView::Float(t)) = (
            v.transformer.layers[0].linear1.weight,
            fv.transformer.layers[0].linear1.weight,
        ) else {
            panic!("linear1: expected 16-bit and f32 weights");
        };
        let exact = t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let rel = if kind == HalfKind::F16 {
            1.0 / 2048.0
        } else {
            1.0 / 256.0
        };
        for (a, b) in exact.iter().zip(h.dequantize()) {
            assert!((a - b).abs() <= rel * a.abs() + 1e-7, "{a} vs {b}");
        }
        assert_ne!(exact, h.dequantize(), "the weights were rounded");
        // Mimi stays f32.
        let mimi = m.mimi().unwrap();
        for l in &mimi.view().decoder_transformer.transformer.layers {
            assert!(matches!(l.linear1.weight, WeightView::Float(_)));
        }
    }
    // Without the option, the config's float32 keeps every weight f32.
    let f = tiny(None, false);
    assert_eq!(f.config().flow_lm.dtype, WeightDtype::Float32);
    for (name, l) in &step_linears(&f.flow_lm().view()) {
        assert!(matches!(l.weight, WeightView::Float(_)), "{name}");
    }
}

#[test]
fn the_config_dtype_is_honoured_and_the_option_overrides_it() {
    let mut c = config();
    c.flow_lm.dtype = WeightDtype::Bfloat16;
    let load = |dtype: Option<WeightDtype>| load_tiny(c.clone(), dtype, false).unwrap();
    let from_config = load(None);
    assert_eq!(
        half_kind(&from_config.flow_lm().view().flow_net.cond_embed),
        Some(HalfKind::Bf16)
    );
    let overridden = load(Some(WeightDtype::Float32));
    assert_eq!(overridden.config().flow_lm.dtype, WeightDtype::Float32);
    assert!(matches!(
        overridden.flow_lm().view().flow_net.cond_embed.weight,
        WeightView::Float(_)
    ));
}

#[test]
fn with_quantize_the_transformer_is_int8_and_the_rest_16_bits() {
    let m = tiny(Some(WeightDtype::Bfloat16), true);
    let v = m.flow_lm().view();
    for l in &v.transformer.layers {
        for lin in [
            &l.self_attn.in_proj,
            &l.self_attn.out_proj,
            &l.linear1,
            &l.linear2,
        ] {
            assert!(matches!(lin.weight, WeightView::Int8(_)));
        }
    }
    for (name, l) in &flow_head_linears(&v) {
        assert_eq!(half_kind(l), Some(HalfKind::Bf16), "{name}");
    }
    assert_eq!(half_kind(&v.input_linear), Some(HalfKind::Bf16));
}

#[test]
fn both_backends_compute_the_same_16_bit_model() {
    for (dtype, quantize) in [
        (WeightDtype::Bfloat16, false),
        (WeightDtype::Float16, false),
        (WeightDtype::Bfloat16, true),
    ] {
        let mut outs = Vec::new();
        for &b in Backend::ALL {
            let m = tiny(Some(dtype), quantize).with_backend(b).unwrap();
            outs.push((b, run(&m).0));
        }
        let (_, first) = &outs[0];
        assert!(!first.is_empty() && first.iter().all(|x| x.is_finite()));
        assert!(first.iter().any(|&x| x != 0.0));
        for (b, o) in &outs[1..] {
            assert_eq!(o.len(), first.len(), "{b}");
            let max = first
                .iter()
                .zip(o)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(
                max <= 1e-3,
                "{dtype} (quantize {quantize}): backend {b} differs from cpu by {max}"
            );
        }
    }
}

#[test]
fn sixteen_bit_speech_stays_close_to_f32_speech_on_both_backends() {
    for &backend in Backend::ALL {
        let (a, la) = run(&tiny(None, false).with_backend(backend).unwrap());
        // Measured (both backends): bf16 audio 103.6 dB, latents 48.8 dB; f16 audio
        // 121.6 dB, latents 67.4 dB. The bounds leave ~9–12 dB of margin.
        for (dtype, min_db) in [(WeightDtype::Bfloat16, 40.0), (WeightDtype::Float16, 55.0)] {
            let m = tiny(Some(dtype), false).with_backend(backend).unwrap();
            let (b, lb) = run(&m);
            assert_eq!(a.len(), b.len());
            assert_ne!(
                la, lb,
                "{dtype}: rounded weights change the latents a little"
            );
            let (snr, latent_snr) = (snr_db(&a, &b), snr_db(&la, &lb));
            println!(
                "tiny model, {backend}, 40 frames at temperature 0, {dtype} vs float32: \
                 audio SNR {snr:.1} dB, latent SNR {latent_snr:.1} dB"
            );
            assert!(
                snr >= min_db,
                "{backend} {dtype}: audio SNR {snr:.1} dB < {min_db} dB"
            );
            assert!(
                latent_snr >= min_db,
                "{backend} {dtype}: latent SNR {latent_snr:.1} dB < {min_db} dB"
            );
        }
    }
}

#[test]
fn a_weight_outside_the_f16_range_is_refused_naming_the_tensor() {
    // The tiny checkpoint with one flow-head weight set to 70000 (> 65504), written here.
    let dir = std::env::temp_dir().join(format!("pocket-tts-dtype-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut ckpt = candle_core::safetensors::load(
        common::fixture("tiny/model.safetensors"),
        &candle_core::Device::Cpu,
    )
    .unwrap();
    let name = "flow_lm.flow_net.res_blocks.0.mlp.0.weight";
    let w = ckpt[name].clone();
    let big = (w.affine(0.0, 70000.0)).unwrap();
    ckpt.insert(name.to_string(), big);
    let path = dir.join("model.safetensors");
    candle_core::safetensors::save(&ckpt, &path).unwrap();
    let load = |dtype| {
        TtsModel::builder()
            .config(config(), None)
            .files(&path, common::asset("tokenizer.model"))
            .dtype(dtype)
            .load()
    };
    match load(WeightDtype::Float16) {
        Err(pocket_tts_core::Error::WeightOutOfRange {
            tensor,
            value,
            dtype,
        }) => {
            assert_eq!(tensor, "flow_lm.flow_net.res_blocks.0.mlp.0.weight");
            assert!(value.abs() >= 65520.0, "{value}");
            assert_eq!(dtype, WeightDtype::Float16.name());
        }
        other => panic!("expected WeightOutOfRange, got {other:?}"),
    }
    // bfloat16 has the range of f32.
    let bf16 = load(WeightDtype::Bfloat16);
    std::fs::remove_dir_all(&dir).unwrap();
    bf16.expect("bf16 holds 70000");
}
