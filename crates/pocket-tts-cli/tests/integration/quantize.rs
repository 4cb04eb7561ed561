//! `--quantize` on `generate`, `stream` and `export-voice`, on the tiny random-weight
//! model: it runs on both backends, the two agree, the speech stays close to the float
//! model's, and `--stats-json` records it.

use crate::common;

use common::*;

#[test]
fn generate_quantize_is_close_to_float_and_the_same_on_both_backends() {
    let sb = Sandbox::new();
    let float = sb.generate_samples(sb.generate());
    // The bare flag is int8; `--quantize int8` is the same model.
    let bare = sb.generate_samples(sb.generate().switch("--quantize"));
    let int8 = sb.generate_samples(sb.generate().set("--quantize", "int8"));
    assert_eq!(bare, int8, "--quantize is --quantize int8");
    for (mode, min_db) in [("int8", 20.0), ("q4", 15.0)] {
        quantized_close_on_both_backends(&sb, &float, mode, min_db);
    }
}

fn quantized_close_on_both_backends(sb: &Sandbox, float: &[i16], mode: &str, min_db: f64) {
    let cpu = sb.generate_samples(sb.generate().set("--quantize", mode));
    let candle = sb.generate_samples(
        sb.generate()
            .set("--quantize", mode)
            .set("--backend", "candle"),
    );
    assert!(cpu.iter().any(|&s| s != 0), "the output is not silence");
    let snr = snr_db(float, &cpu);
    assert!(
        snr >= min_db,
        "--quantize {mode} vs float: SNR {snr:.1} dB < {min_db} dB"
    );
    let max = cpu
        .iter()
        .zip(&candle)
        .map(|(a, b)| (i32::from(*a) - i32::from(*b)).abs())
        .max()
        .unwrap_or(0);
    assert_eq!(cpu.len(), candle.len());
    // 1e-3 of full scale in PCM16 steps, plus one step for rounding.
    assert!(
        max <= 34,
        "--quantize {mode}: candle vs cpu differ by {max} PCM steps"
    );
}

#[test]
fn stream_quantize_gives_the_samples_of_generate_quantize() {
    let sb = Sandbox::new();
    let file = sb.generate_samples(sb.generate().switch("--quantize"));
    let streamed = sb.stream_samples(sb.stream().switch("--quantize"));
    assert!(!streamed.is_empty() && streamed.len() <= file.len());
    assert_eq!(streamed, file[..streamed.len()]);
}

#[test]
fn export_voice_quantize_writes_a_voice_that_generate_reads() {
    let sb = Sandbox::new();
    let voice = sb.path("voice_q.safetensors");
    sb.run_ok(
        &Args::new("export-voice")
            .set("--config", utf8(&sb.config))
            .switch("--quantize")
            .arg(utf8(&tiny("voice_excerpt.wav")))
            .arg(utf8(&voice)),
        b"",
    );
    let samples = sb.generate_samples(
        sb.generate()
            .switch("--quantize")
            .set("--voice", utf8(&voice)),
    );
    assert!(samples.iter().any(|&s| s != 0));
}

#[test]
fn stats_json_records_quantize() {
    let sb = Sandbox::new();
    for mode in [None, Some("int8"), Some("q4")] {
        let stats = sb.path(&format!("stats_{mode:?}.json"));
        let mut args = sb.generate().set("--stats-json", utf8(&stats));
        if let Some(mode) = mode {
            args = args.set("--quantize", mode);
        }
        sb.run_ok(&args, b"");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        assert_eq!(
            v["quantize"],
            serde_json::Value::Bool(mode.is_some()),
            "{v}"
        );
        assert_eq!(v["quantization"], serde_json::json!(mode), "{v}");
    }
}

#[test]
fn an_unknown_quantize_mode_is_refused_naming_the_values() {
    let sb = Sandbox::new();
    // `--quantize q3` would read q3 as a stray word (a bare `--quantize` is int8, the
    // next word stays what it was): the explicit form names the values.
    let out = sb.run(&sb.generate().switch("--quantize=q3"), b"");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--quantize") && err.contains("q4"), "{err}");
}

#[test]
fn export_model_writes_a_checkpoint_that_generates_the_same_samples() {
    let sb = Sandbox::new();
    for mode in ["int8", "q4"] {
        let out = sb.path(&format!("tiny-{mode}.safetensors"));
        sb.run_ok(
            &Args::new("export-model")
                .set("--config", utf8(&sb.root().join("tiny.yaml")))
                .set("--quantize", mode)
                .switch("-q")
                .arg(utf8(&out)),
            b"",
        );
        let config = sb.config_with(&format!("tiny-{mode}.yaml"), &out, "");
        let at_load = sb.generate_samples(sb.generate().set("--quantize", mode));
        // The exported checkpoint needs no flag, and gives the same samples.
        let stored = sb.generate_samples(sb.generate().set("--config", utf8(&config)));
        assert_eq!(stored, at_load, "export-model --quantize {mode}");
    }
    // Without --quantize, export-model says what it needs, and writes nothing.
    let out = sb.path("none.safetensors");
    let run = sb.run(
        &Args::new("export-model")
            .set("--config", utf8(&sb.root().join("tiny.yaml")))
            .arg(utf8(&out)),
        b"",
    );
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("--quantize"));
    assert!(!out.exists());
}
