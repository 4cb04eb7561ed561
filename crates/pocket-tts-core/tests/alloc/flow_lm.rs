//! `FlowLmFast::step` allocates nothing after warm-up: allocations counted during steps
//! 5..20, with 1 and 2 threads.

use candle_core::Device;
use pocket_tts_core::config::Config;
use pocket_tts_core::internals::fast::flow_lm::FlowLmFast;
use pocket_tts_core::internals::models::flow_lm::FlowLm;

use crate::{common, counting};

/// Prefills `fast`, runs 20 steps (decode_steps as given), returns the allocations
/// counted during steps 5..20.
fn allocations_in_steps(fast: &FlowLmFast, decode_steps: usize) -> usize {
    let (d, ldim) = (fast.dim(), fast.ldim());
    let mut state = fast.new_state(64);
    let text: Vec<f32> = (0..10 * d)
        .map(|i| ((i * 37) % 101) as f32 / 50.0 - 1.0)
        .collect();
    fast.prefill(&text, 10, &mut state).unwrap();
    let noise: Vec<f32> = (0..ldim).map(|i| (i as f32 * 0.37).sin() * 0.5).collect();
    let mut prev = vec![0f32; ldim];
    let mut out = vec![0f32; ldim];
    let mut counted = 0;
    for i in 0..20 {
        let first = i == 0;
        if i == 5 {
            counting::start();
        }
        let eos = fast
            .step(
                if first { None } else { Some(&prev) },
                &noise,
                decode_steps,
                &mut state,
                &mut out,
            )
            .unwrap();
        assert!(eos.is_finite());
        prev.copy_from_slice(&out);
        if i == 19 {
            counted = counting::stop();
        }
    }
    counted
}

pub fn step_allocates_nothing_after_warm_up() {
    // The tiny fixture model (LSD head), 1 and 4 decode steps.
    let model = common::tiny_model();
    let fast = FlowLmFast::new(model.flow_lm()).unwrap();
    assert_eq!(allocations_in_steps(&fast, 1), 0, "tiny, 1 decode step");
    assert_eq!(allocations_in_steps(&fast, 4), 0, "tiny, 4 decode steps");

    // A model whose GEMVs and attention are large enough to use the thread team
    // (english_7m architecture, random weights), with 1 and 2 threads.
    let c7 = Config::builtin("english_7m_2026-10").unwrap();
    let vb = pocket_tts_core::internals::weights::random_var_builder(1, &Device::Cpu);
    let flow = FlowLm::new(
        &c7.flow_lm,
        c7.latent_dim(),
        c7.speaker_dim(),
        None,
        vb.pp("flow_lm"),
    )
    .unwrap();
    let mut fast = FlowLmFast::new(&flow).unwrap();
    assert_eq!(allocations_in_steps(&fast, 1), 0, "english_7m, 1 thread");
    fast.set_threads(2);
    assert_eq!(allocations_in_steps(&fast, 1), 0, "english_7m, 2 threads");

    // 16-bit weights (`flow_lm.dtype`), alone and with the int8 or 4-bit transformer.
    let mut c16 = c7.clone();
    c16.flow_lm.dtype = pocket_tts_core::config::WeightDtype::Bfloat16;
    for quantize in [
        None,
        Some(pocket_tts_core::Quantization::Int8),
        Some(pocket_tts_core::Quantization::Q4),
    ] {
        let vb = pocket_tts_core::internals::weights::random_var_builder(1, &Device::Cpu);
        let flow = FlowLm::new(
            &c16.flow_lm,
            c16.latent_dim(),
            c16.speaker_dim(),
            quantize,
            vb.pp("flow_lm"),
        )
        .unwrap();
        let mut fast = FlowLmFast::new(&flow).unwrap();
        for threads in [1, 2] {
            fast.set_threads(threads);
            assert_eq!(
                allocations_in_steps(&fast, 1),
                0,
                "english_7m bf16 (quantize {quantize:?}), {threads} threads"
            );
        }
    }
}
