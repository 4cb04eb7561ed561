//! Helpers shared by the FlowLM benches: seeded data and a random FlowLM.
#![allow(dead_code)]

use candle_core::Device;
use pocket_tts_core::config::Config;
use pocket_tts_core::internals::models::flow_lm::FlowLm;

/// SplitMix64 values uniform in `[-a, a)`.
pub fn data(n: usize, a: f32, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            a * ((z >> 40) as f32 / (1u64 << 23) as f32 - 1.0)
        })
        .collect()
}

/// The full-size English config and whether to quantize, as the FlowLM benches' environment
/// asks: `FLOW_LM_QUANTIZE=1` (`--quantize`), `FLOW_LM_DTYPE=bfloat16|float16|float32` (the
/// FlowLM's weight dtype, `--dtype`, in the config's spelling).
///
/// # Panics
/// On an unknown `FLOW_LM_DTYPE`.
pub fn config_from_env() -> (Config, bool) {
    let quantize = std::env::var_os("FLOW_LM_QUANTIZE").is_some_and(|v| v == "1");
    let mut config = Config::english();
    if let Some(d) = std::env::var_os("FLOW_LM_DTYPE") {
        let d = d.to_string_lossy().into_owned();
        config.flow_lm.dtype = pocket_tts_core::config::WeightDtype::try_from(d)
            .unwrap_or_else(|e| panic!("FLOW_LM_DTYPE: {e}"));
    }
    (config, quantize)
}

/// A FlowLM of `config`'s architecture with seeded random weights (`--quantize`: int8
/// transformer linears).
pub fn random_flow_lm(config: &Config, quantize: bool) -> FlowLm {
    let vb = pocket_tts_core::internals::weights::random_var_builder(0, &Device::Cpu);
    FlowLm::new(
        &config.flow_lm,
        config.latent_dim(),
        config.speaker_dim(),
        quantize.then_some(pocket_tts_core::Quantization::Int8),
        vb.pp("flow_lm"),
    )
    .expect("random FlowLM")
}
