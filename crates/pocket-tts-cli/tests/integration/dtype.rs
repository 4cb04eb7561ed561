//! `--dtype f32|f16|bf16` on `generate`, `stream` and `export-voice`, on the tiny
//! random-weight model: 16-bit FlowLM weights run on both backends, the two agree, the
//! speech stays close to the f32 model's, `--stats-json` records the dtype, and an unknown
//! value is refused naming the flag and the choices; the same for `--mimi-dtype`.

use crate::common;

use common::*;

#[test]
fn generate_bf16_is_close_to_f32_and_the_same_on_both_backends() {
    let sb = Sandbox::new();
    let float = sb.generate_samples(sb.generate());
    let explicit = sb.generate_samples(sb.generate().set("--dtype", "f32"));
    assert_eq!(float, explicit, "--dtype f32 is the tiny config's float32");
    for dtype in ["bf16", "f16"] {
        let cpu = sb.generate_samples(sb.generate().set("--dtype", dtype));
        let candle = sb.generate_samples(
            sb.generate()
                .set("--dtype", dtype)
                .set("--backend", "candle"),
        );
        assert!(cpu.iter().any(|&s| s != 0), "the output is not silence");
        assert_ne!(cpu, float, "--dtype {dtype} rounds the weights");
        let snr = snr_db(&float, &cpu);
        assert!(
            snr >= 30.0,
            "--dtype {dtype} vs f32: SNR {snr:.1} dB < 30 dB"
        );
        assert_eq!(cpu.len(), candle.len());
        let max = cpu
            .iter()
            .zip(&candle)
            .map(|(a, b)| (i32::from(*a) - i32::from(*b)).abs())
            .max()
            .unwrap_or(0);
        // 1e-3 of full scale in PCM16 steps, plus one step for rounding.
        assert!(
            max <= 34,
            "--dtype {dtype}: candle vs cpu differ by {max} PCM steps"
        );
    }
}

#[test]
fn stream_and_export_voice_take_dtype_with_quantize() {
    let sb = Sandbox::new();
    let file = sb.generate_samples(sb.generate().set("--dtype", "bf16").switch("--quantize"));
    let streamed = sb.stream_samples(sb.stream().set("--dtype", "bf16").switch("--quantize"));
    assert!(!streamed.is_empty() && streamed.len() <= file.len());
    assert_eq!(streamed, file[..streamed.len()]);

    let voice = sb.path("voice_bf16.safetensors");
    sb.run_ok(
        &Args::new("export-voice")
            .set("--config", utf8(&sb.config))
            .set("--dtype", "bf16")
            .arg(utf8(&tiny("voice_excerpt.wav")))
            .arg(utf8(&voice)),
        b"",
    );
    let samples = sb.generate_samples(
        sb.generate()
            .set("--dtype", "bf16")
            .set("--voice", utf8(&voice)),
    );
    assert!(samples.iter().any(|&s| s != 0));
}

#[test]
fn stats_json_records_the_dtype() {
    let sb = Sandbox::new();
    for (flag, recorded) in [(None, "f32"), (Some("f16"), "f16"), (Some("bf16"), "bf16")] {
        let stats = sb.path(&format!("stats_{recorded}.json"));
        let mut args = sb.generate().set("--stats-json", utf8(&stats));
        if let Some(d) = flag {
            args = args.set("--dtype", d);
        }
        sb.run_ok(&args, b"");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        assert_eq!(v["dtype"], serde_json::Value::from(recorded), "{v}");
        assert_eq!(v["quantize"], serde_json::Value::Bool(false), "{v}");
    }
}

#[test]
fn the_config_dtype_is_the_default_and_the_flag_overrides_it() {
    let sb = Sandbox::new();
    let text = std::fs::read_to_string(&sb.config).unwrap().replacen(
        "dtype: float32",
        "dtype: bfloat16",
        1,
    );
    assert!(text.contains("dtype: bfloat16"));
    let config = sb.file("bf16.yaml", text);
    let run = |dtype: Option<&str>| {
        let stats = sb.path("stats.json");
        let mut args = sb
            .generate()
            .set("--config", utf8(&config))
            .set("--stats-json", utf8(&stats));
        if let Some(d) = dtype {
            args = args.set("--dtype", d);
        }
        let samples = sb.generate_samples(args);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        (samples, v["dtype"].clone())
    };
    let (from_config, d) = run(None);
    assert_eq!(d, "bf16");
    let (flag, d) = run(Some("bf16"));
    assert_eq!(d, "bf16");
    assert_eq!(from_config, flag);
    let (f32_flag, d) = run(Some("f32"));
    assert_eq!(d, "f32");
    assert_eq!(f32_flag, sb.generate_samples(sb.generate()));
    assert_ne!(f32_flag, from_config);
}

#[test]
fn an_unknown_dtype_is_refused_with_the_choices() {
    let sb = Sandbox::new();
    for command in ["generate", "stream"] {
        let out = sb.run(&sb.speak(command).set("--dtype", "f8"), b"");
        assert!(!out.status.success());
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
        for needle in ["--dtype", "f8", "f32", "f16", "bf16"] {
            assert!(
                stderr.contains(needle),
                "{command}: stderr lacks {needle:?}:\n{stderr}"
            );
        }
    }
}

#[test]
fn a_16_bit_mimi_dtype_is_ignored_with_a_warning() {
    let sb = Sandbox::new();
    let text = std::fs::read_to_string(&sb.config).unwrap();
    let at = text
        .rfind("dtype: float32")
        .expect("the tiny config names mimi.dtype");
    let text = format!(
        "{}dtype: bfloat16{}",
        &text[..at],
        &text[at + "dtype: float32".len()..]
    );
    let config = sb.file("mimi_bf16.yaml", text);
    let args = sb.generate().set("--config", utf8(&config));
    let out = sb.run_ok(&args, b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("mimi.dtype bfloat16 is ignored"),
        "no warning about mimi.dtype on stderr:\n{stderr}"
    );
    assert_eq!(
        sb.generate_samples(args),
        sb.generate_samples(sb.generate()),
        "Mimi stays float32: the same audio as the float32 config"
    );
}

#[test]
fn an_unknown_mimi_dtype_is_refused_naming_the_flag_and_choices() {
    let sb = Sandbox::new();
    for command in ["generate", "stream"] {
        let out = sb.run(&sb.speak(command).set("--mimi-dtype", "f8"), b"");
        assert!(!out.status.success());
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
        for needle in ["--mimi-dtype", "f8", "f32", "f16", "bf16"] {
            assert!(
                stderr.contains(needle),
                "{command}: stderr lacks {needle:?}:\n{stderr}"
            );
        }
    }
}

/// `--mimi-dtype f16`/`bf16`: close to the f32 decoder's audio but not equal (16-bit
/// weights), recorded in `--stats-json` (`mimi_dtype`); `f32` is the default's audio.
#[test]
fn mimi_dtype_changes_only_the_decoder_and_is_recorded() {
    let sb = Sandbox::new();
    let run = |d: Option<&str>| {
        let stats = sb.path(&format!("mimi-{}.json", d.unwrap_or("none")));
        let mut args = sb.generate().set("--stats-json", utf8(&stats));
        if let Some(d) = d {
            args = args.set("--mimi-dtype", d);
        }
        let samples = sb.generate_samples(args);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        (samples, v["mimi_dtype"].clone())
    };
    let (default, d) = run(None);
    assert_eq!(d, "f32");
    let (f32_flag, d) = run(Some("f32"));
    assert_eq!(d, "f32");
    assert_eq!(default, f32_flag);
    for dtype in ["f16", "bf16"] {
        let (half, d) = run(Some(dtype));
        assert_eq!(d, dtype);
        if dtype == "bf16" {
            // bf16's 2^-9 rounding shows in 16-bit samples (f16's may not, on this model).
            assert_ne!(half, default, "{dtype}: the decoder's weights are 16-bit");
        }
        let max = default
            .iter()
            .map(|&x| i32::from(x).abs())
            .max()
            .unwrap_or(0);
        let err = half
            .iter()
            .zip(&default)
            .map(|(&a, &b)| (i32::from(a) - i32::from(b)).abs())
            .max()
            .unwrap_or(0);
        assert!(
            err <= 2 + max / 100,
            "{dtype}: max error {err} LSB (max |audio| {max})"
        );
    }
}
