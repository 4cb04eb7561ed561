//! The torch-compatible generator against draws of the reference's torch
//! (`tests/fixtures/torch_noise.safetensors`, made by
//! `scripts/reference/make_noise_fixtures.py`): every case is `torch.manual_seed(seed)`
//! then consecutive `torch.nn.init.normal_` / `trunc_normal_` fills of a float32
//! `[1, ldim]` tensor, as the reference samples its noise once per frame. Bit for bit.

use pocket_tts_core::internals::torch_rng::TorchGenerator;
use safetensors::SafeTensors;

use crate::common;

struct Case {
    name: String,
    seed: u64,
    ldim: usize,
    temperature: f64,
    noise_clamp: Option<f64>,
    frames: usize,
    values: Vec<f32>,
}

fn cases() -> (Vec<Case>, serde_json::Value) {
    let bytes = std::fs::read(common::fixture("torch_noise.safetensors")).unwrap();
    let (_, header) = SafeTensors::read_metadata(&bytes).unwrap();
    let info: serde_json::Value = serde_json::from_str(
        header
            .metadata()
            .as_ref()
            .and_then(|m| m.get("info"))
            .expect("metadata 'info'"),
    )
    .unwrap();
    let tensors = SafeTensors::deserialize(&bytes).unwrap();
    let cases = info["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| {
            let name = c["name"].as_str().unwrap().to_string();
            let view = tensors.tensor(&name).unwrap();
            let values: Vec<f32> = view
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            Case {
                seed: c["seed"].as_u64().unwrap(),
                ldim: c["ldim"].as_u64().unwrap() as usize,
                temperature: c["temperature"].as_f64().unwrap(),
                noise_clamp: c["noise_clamp"].as_f64(),
                frames: c["frames"].as_u64().unwrap() as usize,
                values,
                name,
            }
        })
        .collect();
    (cases, info)
}

fn ours(case: &Case) -> Vec<f32> {
    let mut g = TorchGenerator::manual_seed(case.seed);
    let std = case.temperature.sqrt();
    let mut out = Vec::with_capacity(case.frames * case.ldim);
    let mut frame = vec![0.0f32; case.ldim];
    for _ in 0..case.frames {
        match case.noise_clamp {
            None => g.normal_(&mut frame, 0.0, std),
            Some(c) => g.trunc_normal_(&mut frame, 0.0, std, c),
        }
        out.extend_from_slice(&frame);
    }
    out
}

#[test]
fn noise_matches_torch_bit_for_bit() {
    let (cases, info) = cases();
    assert!(cases.len() >= 20, "{} cases", cases.len());
    let mut failures = Vec::new();
    let mut total = 0;
    for case in &cases {
        assert_eq!(case.values.len(), case.frames * case.ldim, "{}", case.name);
        let got = ours(case);
        total += got.len();
        let differ: Vec<usize> = (0..got.len())
            .filter(|&i| got[i].to_bits() != case.values[i].to_bits())
            .collect();
        if let Some(&i) = differ.first() {
            failures.push(format!(
                "{}: {} of {} values differ, first at frame {} index {}: ours {:e}, torch {:e}",
                case.name,
                differ.len(),
                got.len(),
                i / case.ldim,
                i % case.ldim,
                got[i],
                case.values[i]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "torch {} ({}):\n{}",
        info["torch"],
        info["cpu_capability"],
        failures.join("\n")
    );
    assert!(total > 10_000, "{total} draws");
}

#[test]
fn truncated_noise_stays_inside_its_bounds() {
    let mut g = TorchGenerator::manual_seed(3);
    let mut frame = [0.0f32; 32];
    for clamp in [0.05, 0.2, 0.5, 1.0, 3.0] {
        for _ in 0..50 {
            g.trunc_normal_(&mut frame, 0.0, 0.7f64.sqrt(), clamp);
            assert!(
                frame.iter().all(|x| x.abs() <= clamp as f32),
                "{clamp}: {frame:?}"
            );
        }
    }
}
