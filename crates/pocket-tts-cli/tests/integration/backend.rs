//! `--backend candle|cpu` on `generate`, `stream` and `export-voice`, on the tiny
//! random-weight model (`tests/fixtures/tiny`): the Candle modules and the fast CPU
//! runtime give the same audio within the audio tolerance (1e-3, plus one PCM16 step for
//! rounding) and the same voice state within the tensor tolerance (1e-4).

use crate::common;

use common::*;
use safetensors::Dtype;

/// 1e-3 of full scale in PCM16 steps, plus one step for rounding.
const PCM_TOL: i32 = 33 + 1;

fn max_pcm_diff(a: &[i16], b: &[i16], what: &str) -> i32 {
    assert_eq!(
        a.len(),
        b.len(),
        "{what}: lengths differ (EOS on another frame?)"
    );
    a.iter()
        .zip(b)
        .map(|(x, y)| (i32::from(*x) - i32::from(*y)).abs())
        .max()
        .unwrap_or(0)
}

#[test]
fn generate_with_the_candle_backend_matches_the_cpu_backend() {
    let sb = Sandbox::new();
    let cpu = sb.generate_samples(sb.generate());
    let default_is_cpu = sb.generate_samples(sb.generate().set("--backend", "cpu"));
    assert_eq!(cpu, default_is_cpu, "the default backend is cpu");
    let candle = sb.generate_samples(sb.generate().set("--backend", "candle"));
    let d = max_pcm_diff(&cpu, &candle, "generate --backend candle");
    assert!(
        d <= PCM_TOL,
        "generate: candle vs cpu differ by {d} PCM steps"
    );
    assert!(cpu.iter().any(|&s| s != 0), "the output is not silence");
}

#[test]
fn stream_with_the_candle_backend_matches_generate() {
    let sb = Sandbox::new();
    let file = sb.generate_samples(sb.generate().set("--backend", "candle"));
    let streamed = sb.stream_samples(sb.stream().set("--backend", "candle"));
    // The file ends with the reference's 200 ms of silence; the stream does not.
    assert!(streamed.len() <= file.len());
    assert_eq!(
        streamed,
        file[..streamed.len()],
        "stream --backend candle differs from generate --backend candle"
    );
}

fn f32_values(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[test]
fn export_voice_with_the_candle_backend_matches_the_cpu_backend() {
    let sb = Sandbox::new();
    let export = |backend: &str| {
        let path = sb.path(&format!("voice_{backend}.safetensors"));
        sb.run_ok(
            &Args::new("export-voice")
                .set("--config", utf8(&sb.config))
                .set("--backend", backend)
                .arg(utf8(&tiny("voice_excerpt.wav")))
                .arg(utf8(&path)),
            b"",
        );
        read_safetensors(&path)
    };
    let (cpu, candle) = (export("cpu"), export("candle"));
    let names = |v: &[(String, Owned)]| {
        v.iter()
            .map(|(n, t)| (n.clone(), t.shape.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&cpu), names(&candle), "tensor names and shapes");
    for ((name, a), (_, b)) in cpu.iter().zip(&candle) {
        if a.dtype == Dtype::F32 {
            let err = f32_values(&a.data)
                .iter()
                .zip(f32_values(&b.data))
                .map(|(x, y)| (x - y).abs())
                .fold(0f32, f32::max);
            assert!(
                err <= 1e-4,
                "{name}: candle vs cpu max abs error {err:e} > 1e-4"
            );
        } else {
            assert_eq!(a.data, b.data, "{name}");
        }
    }
}

#[test]
fn an_unknown_backend_is_refused_with_the_choices() {
    let sb = Sandbox::new();
    let out = sb.run(&sb.generate().set("--backend", "cuda"), b"");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for needle in ["--backend", "cuda", "cpu", "candle"] {
        assert!(
            stderr.contains(needle),
            "stderr lacks {needle:?}:\n{stderr}"
        );
    }
}
