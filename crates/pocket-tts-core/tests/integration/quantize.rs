//! `--quantize int8|q4` (`LoadOptions::quantize`) on the tiny model: which layers become
//! int8 or 4-bit (reference: `pocket_tts/quantization.py`, attention and FFN linears of the
//! FlowLM transformer), both runtimes computing the same quantized model, and the
//! quantized speech staying close to the float speech.

use crate::common;

use common::{same_length_params, snr_db};

use pocket_tts_core::config::{Config, WeightDtype};
use pocket_tts_core::internals::modules::weights_view::WeightView;
use pocket_tts_core::tts_model::TtsModel;
use pocket_tts_core::{Backend, Quantization};
use pocket_tts_simd::HalfKind;

fn tiny(quantize: Option<Quantization>) -> TtsModel {
    tiny_with_dtype(quantize, None)
}

/// The tiny model, with the FlowLM dtype asked for explicitly when `dtype` is given.
fn tiny_with_dtype(quantize: Option<Quantization>, dtype: Option<WeightDtype>) -> TtsModel {
    let config = Config::from_yaml_file(&common::fixture("tiny/config.yaml")).expect("config");
    let mut builder = TtsModel::builder()
        .config(config, None)
        .files(
            common::fixture("tiny/model.safetensors"),
            common::asset("tokenizer.model"),
        )
        .quantization(quantize);
    if let Some(dtype) = dtype {
        builder = builder.dtype(dtype);
    }
    builder.load().expect("tiny model loads")
}

#[test]
fn quantize_turns_exactly_the_transformer_attention_and_ffn_linears_into_int8_or_4_bits_and_the_flow_head_into_f16_or_4_bits(
) {
    for mode in Quantization::ALL {
        only_the_transformer_linears_are_quantized(mode);
    }
}

fn only_the_transformer_linears_are_quantized(mode: Quantization) {
    let q = tiny(Some(mode));
    assert_eq!(q.load_options().quantize, Some(mode));
    let v = q.flow_lm().view();
    assert!(!v.transformer.layers.is_empty());
    for l in &v.transformer.layers {
        for lin in [
            &l.self_attn.in_proj,
            &l.self_attn.out_proj,
            &l.linear1,
            &l.linear2,
        ] {
            match mode {
                Quantization::Int8 => assert!(matches!(lin.weight, WeightView::Int8(_))),
                Quantization::Q4 => assert!(matches!(lin.weight, WeightView::Q4(_))),
                _ => unreachable!(),
            }
        }
    }
    // The input projection stays in float, the flow head is stored in f16 with int8 and
    // in 4 bits with q4, and the Candle Mimi stays in float (the CPU decoder's
    // `--mimi-dtype` default is f16 with quantize: `LoadOptions::effective_mimi_dtype`).
    assert!(matches!(v.input_linear.weight, WeightView::Float(_)));
    let head_kind = |w: &WeightView| match mode {
        Quantization::Int8 => matches!(w, WeightView::Half(h) if h.kind() == HalfKind::F16),
        Quantization::Q4 => matches!(w, WeightView::Q4(_)),
        _ => unreachable!(),
    };
    let head = &v.flow_net;
    assert!(head_kind(&head.cond_embed.weight));
    for b in &head.res_blocks {
        assert!(head_kind(&b.mlp1.weight) && head_kind(&b.mlp2.weight));
        assert!(head_kind(&b.ada_ln.weight));
    }
    assert!(head_kind(&head.final_layer.linear.weight));
    if mode == Quantization::Q4 {
        // The latent input is 16 wide here: 4-bit blocks need 32, so it falls back to int8.
        assert!(matches!(head.input_proj.weight, WeightView::Int8(_)));
    }
    assert_eq!(
        q.load_options().effective_mimi_dtype(),
        WeightDtype::Float16
    );
    let m = q.mimi().unwrap().view();
    for l in &m.decoder_transformer.transformer.layers {
        assert!(matches!(l.linear1.weight, WeightView::Float(_)));
        assert!(matches!(l.self_attn.in_proj.weight, WeightView::Float(_)));
    }
    let f = tiny(None);
    assert!(f.load_options().quantize.is_none());
    assert_eq!(
        f.load_options().effective_mimi_dtype(),
        WeightDtype::Float32
    );
    assert!(matches!(
        f.flow_lm().view().flow_net.cond_embed.weight,
        WeightView::Float(_)
    ));
    for l in &f.flow_lm().view().transformer.layers {
        assert!(matches!(l.linear1.weight, WeightView::Float(_)));
    }
}

#[test]
fn an_explicit_float32_dtype_keeps_the_flow_head_in_float_with_int8() {
    let m = tiny_with_dtype(Some(Quantization::Int8), Some(WeightDtype::Float32));
    let v = m.flow_lm().view();
    assert!(matches!(v.flow_net.cond_embed.weight, WeightView::Float(_)));
    for b in &v.flow_net.res_blocks {
        assert!(matches!(b.mlp1.weight, WeightView::Float(_)));
    }
    for l in &v.transformer.layers {
        assert!(matches!(l.linear1.weight, WeightView::Int8(_)));
    }
    // q4 keeps its 4-bit head whatever the dtype.
    let q = tiny_with_dtype(Some(Quantization::Q4), Some(WeightDtype::Float32));
    assert!(matches!(
        q.flow_lm().view().flow_net.cond_embed.weight,
        WeightView::Q4(_)
    ));
}

#[test]
fn both_backends_compute_the_same_quantized_model() {
    for mode in Quantization::ALL {
        both_backends_agree(mode);
    }
}

fn both_backends_agree(mode: Quantization) {
    let model = tiny(Some(mode));
    let voice = model
        .load_voice_state(&common::fixture("tiny/voice_state.safetensors"))
        .unwrap();
    let p = same_length_params();
    let mut outs = Vec::new();
    for &b in Backend::ALL {
        let m = tiny(Some(mode)).with_backend(b).unwrap();
        outs.push((
            b,
            m.generate(&voice, "Hello there, quantized.", &p).unwrap(),
        ));
    }
    let (_, first) = &outs[0];
    assert!(!first.is_empty() && first.iter().all(|x| x.is_finite()));
    for (b, o) in &outs[1..] {
        assert_eq!(o.len(), first.len(), "{b}");
        let max = first
            .iter()
            .zip(o)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(max <= 1e-3, "{mode}: backend {b} differs from cpu by {max}");
    }
}

#[test]
fn quantized_speech_stays_close_to_float_speech() {
    // int8 ≥ 20 dB; 4-bit blocks have 16 levels instead of 255 (about 24 dB less weight
    // SNR), in the flow head too: ≥ 12 dB (measured 67 dB audio, 14.3 dB latents on this
    // tiny random model; 43.9 dB audio at full size, OPTIMIZATION_LOG.md §38).
    for (mode, min_db) in [(Quantization::Int8, 20.0), (Quantization::Q4, 12.0)] {
        speech_close(mode, min_db);
    }
}

fn speech_close(mode: Quantization, min_db: f64) {
    let (q, f) = (tiny(Some(mode)), tiny(None));
    let voice = f
        .load_voice_state(&common::fixture("tiny/voice_state.safetensors"))
        .unwrap();
    let p = same_length_params();
    let run = |m: &TtsModel| {
        let (mut audio, mut latents) = (Vec::new(), Vec::new());
        for frame in m
            .generate_stream(&voice, "Hello there, quantized.", &p)
            .unwrap()
        {
            let frame = frame.unwrap();
            audio.extend(frame.samples);
            latents.extend(frame.latent);
        }
        (audio, latents)
    };
    let (a, la) = run(&f);
    let (b, lb) = run(&q);
    assert_eq!(a.len(), b.len());
    assert_ne!(la, lb, "{mode} weights change the latents a little");
    let (snr, latent_snr) = (snr_db(&a, &b), snr_db(&la, &lb));
    println!(
        "tiny model, 40 frames at temperature 0, {mode} vs float: audio SNR {snr:.1} dB, \
         latent SNR {latent_snr:.1} dB"
    );
    assert!(
        snr >= min_db,
        "{mode} vs float audio SNR {snr:.1} dB < {min_db} dB"
    );
    assert!(
        latent_snr >= min_db,
        "{mode} vs float latent SNR {latent_snr:.1} dB < {min_db} dB"
    );
}

#[test]
fn a_voice_made_by_a_quantized_model_is_close_to_the_float_one() {
    let (q, f) = (tiny(Some(Quantization::Int8)), tiny(None));
    let dim = f.config().speaker_dim();
    // 12 frames of smooth pseudo-latents.
    let latents: Vec<f32> = (0..12 * dim)
        .map(|i| ((i as f32) * 0.37).sin() * 0.8)
        .collect();
    let latents = pocket_tts_core::Latents {
        values: latents,
        dim,
    };
    let vf = f.voice_state_from_latents(&latents).unwrap();
    let vq = q.voice_state_from_latents(&latents).unwrap();
    assert_eq!(vf.len(), vq.len());
    assert_eq!(vf.layers().len(), vq.layers().len());
    for (l, (lf, lq)) in vf.layers().iter().zip(vq.layers()).enumerate() {
        // The layer's whole cache (keys then values), as the file stores it.
        let a: Vec<f32> = lf.keys.iter().chain(&lf.values).copied().collect();
        let b: Vec<f32> = lq.keys.iter().chain(&lq.values).copied().collect();
        let name = format!("layer {l} cache");
        if a.iter().all(|&x| x == 0.0) {
            assert_eq!(a, b, "{name}");
            continue;
        }
        let snr = snr_db(&a, &b);
        assert!(
            snr >= 25.0,
            "{name}: quantized vs float SNR {snr:.1} dB < 25 dB"
        );
    }
}

/// The tiny model loaded from `weights` (the tiny config's tokenizer), quantized as asked.
fn tiny_from(
    weights: &std::path::Path,
    quantize: Option<Quantization>,
) -> pocket_tts_core::Result<TtsModel> {
    let config = Config::from_yaml_file(&common::fixture("tiny/config.yaml")).expect("config");
    TtsModel::builder()
        .config(config, None)
        .files(weights, common::asset("tokenizer.model"))
        .quantization(quantize)
        .load()
}

fn speak(m: &TtsModel) -> Vec<f32> {
    let voice = m
        .load_voice_state(&common::fixture("tiny/voice_state.safetensors"))
        .unwrap();
    m.generate(&voice, "Hello there, pre-quantized.", &same_length_params())
        .unwrap()
}

#[test]
fn an_exported_checkpoint_gives_the_bits_of_quantizing_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let src = common::fixture("tiny/model.safetensors");
    for mode in Quantization::ALL {
        let out = dir.path().join(format!("tiny-{mode}.safetensors"));
        let summary = TtsModel::export_quantized(&src, mode, &out).unwrap();
        // 2 layers × (in_proj, out_proj, linear1, linear2).
        assert_eq!(summary.quantized, 8, "{mode}");
        assert_eq!(summary.bytes as u64, std::fs::metadata(&out).unwrap().len());
        let at_load = speak(&tiny(Some(mode)));
        // Without --quantize, the checkpoint's own quantization is taken.
        let stored = tiny_from(&out, None).unwrap();
        assert_eq!(stored.load_options().quantize, Some(mode));
        assert_eq!(
            speak(&stored),
            at_load,
            "{mode}: exported vs quantized at load"
        );
        // The same mode asked for explicitly, and on the Candle backend.
        let same = tiny_from(&out, Some(mode)).unwrap();
        assert_eq!(speak(&same), at_load, "{mode}");
        let candle = same.with_backend(Backend::Candle).unwrap();
        assert_eq!(speak(&candle).len(), at_load.len());
        // Another mode is refused, naming the flag.
        let other = Quantization::ALL.into_iter().find(|&q| q != mode).unwrap();
        match tiny_from(&out, Some(other)) {
            Err(pocket_tts_core::Error::InvalidArgument { field, message }) => {
                assert_eq!(field, Some("quantize"));
                assert!(message.contains(mode.name()), "{message}");
            }
            Err(e) => panic!("{mode} checkpoint loaded as {other}: {e}"),
            Ok(_) => panic!("{mode} checkpoint loaded as {other}"),
        }
        // Exporting an export is refused, and leaves nothing behind.
        let again = dir.path().join("again.safetensors");
        assert!(matches!(
            TtsModel::export_quantized(&out, mode, &again),
            Err(pocket_tts_core::Error::InvalidArgument { .. })
        ));
        assert!(!again.exists());
    }
}

#[test]
fn a_checkpoint_of_an_unknown_format_is_refused_with_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read(common::fixture("tiny/model.safetensors")).unwrap();
    let st = safetensors::SafeTensors::deserialize(&src).unwrap();
    for (format, version, quantization) in [
        ("pocket-tts-rs-quantized", "2", "q4"),
        ("pocket-tts-rs-quantized", "1", "q3"),
        ("someone-else", "1", "int8"),
    ] {
        let metadata = std::collections::HashMap::from([
            ("format".to_string(), format.to_string()),
            ("format_version".to_string(), version.to_string()),
            ("quantization".to_string(), quantization.to_string()),
        ]);
        let bytes = safetensors::serialize(st.tensors(), Some(metadata)).unwrap();
        let path = dir.path().join("future.safetensors");
        std::fs::write(&path, bytes).unwrap();
        match tiny_from(&path, None) {
            Err(pocket_tts_core::Error::CheckpointFormat { path: p, format: f }) => {
                assert_eq!(p, path);
                assert!(f.contains(format) && f.contains(version), "{f}");
            }
            Err(e) => panic!("{format} {version}: wrong error {e}"),
            Ok(_) => panic!("{format} {version} {quantization} loaded"),
        }
    }
    // The reference's checkpoint (no format) loads as ever.
    assert!(tiny_from(&common::fixture("tiny/model.safetensors"), None).is_ok());
}

#[test]
fn a_failed_export_leaves_no_file_behind() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.safetensors");
    // A voice state is a safetensors file without the FlowLM's linears.
    let err = TtsModel::export_quantized(
        &common::fixture("tiny/voice_state.safetensors"),
        Quantization::Q4,
        &out,
    )
    .unwrap_err();
    assert!(
        matches!(err, pocket_tts_core::Error::InvalidData(_)),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // An existing output keeps its content when the export fails.
    std::fs::write(&out, b"previous").unwrap();
    let missing = dir.path().join("missing.safetensors");
    assert!(TtsModel::export_quantized(&missing, Quantization::Int8, &out).is_err());
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
