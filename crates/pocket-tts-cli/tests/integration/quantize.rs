//! `--quantize` on `generate`, `stream` and `export-voice`, on the tiny random-weight
//! model: it runs on both backends, the two agree, the speech stays close to the float
//! model's, and `--stats-json` records it.

use crate::common;

use common::*;

#[test]
fn generate_quantize_is_close_to_float_and_the_same_on_both_backends() {
    let sb = Sandbox::new();
    let float = sb.generate_samples(sb.generate());
    let cpu = sb.generate_samples(sb.generate().switch("--quantize"));
    let candle = sb.generate_samples(
        sb.generate()
            .switch("--quantize")
            .set("--backend", "candle"),
    );
    assert!(cpu.iter().any(|&s| s != 0), "the output is not silence");
    let snr = snr_db(&float, &cpu);
    assert!(snr >= 20.0, "--quantize vs float: SNR {snr:.1} dB < 20 dB");
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
        "--quantize: candle vs cpu differ by {max} PCM steps"
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
    for quantize in [false, true] {
        let stats = sb.path(&format!("stats_{quantize}.json"));
        let mut args = sb.generate().set("--stats-json", utf8(&stats));
        if quantize {
            args = args.switch("--quantize");
        }
        sb.run_ok(&args, b"");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        assert_eq!(v["quantize"], serde_json::Value::Bool(quantize), "{v}");
    }
}
