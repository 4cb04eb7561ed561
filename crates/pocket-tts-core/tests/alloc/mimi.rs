//! `MimiDecoderFast::decode_frame` allocates nothing after warm-up (tiny and full-size
//! Mimi, 1 and 2 threads, across a reset and KV-ring wraps).

use candle_core::Device;
use pocket_tts_core::config::Config;
use pocket_tts_core::internals::fast::mimi::MimiDecoderFast;
use pocket_tts_core::internals::models::mimi::Mimi;

use crate::{common, counting};

/// Decodes `warmup` frames (on `threads` threads), then counts the allocations of `frames` more (and of a reset).
fn allocations_per_frame(mimi: &Mimi, threads: usize, warmup: usize, frames: usize) -> usize {
    let dec = MimiDecoderFast::with_threads(mimi, threads).unwrap();
    let mut state = dec.new_state();
    let mut out = vec![0f32; dec.frame_size() * dec.channels()];
    let latent: Vec<f32> = (0..dec.latent_dim())
        .map(|i| (i as f32 * 0.37).sin())
        .collect();
    for _ in 0..warmup {
        dec.decode_frame(&latent, &mut state, &mut out).unwrap();
    }
    // Let team helpers reach their parked state once (its first use initialises lazily).
    std::thread::sleep(std::time::Duration::from_millis(5));
    counting::start();
    for i in 0..frames {
        if i == frames / 2 {
            dec.reset(&mut state);
        }
        dec.decode_frame(&latent, &mut state, &mut out).unwrap();
    }
    let n = counting::stop();
    assert!(out.iter().all(|x| x.is_finite()));
    n
}

pub fn decode_frame_allocates_nothing_after_warmup() {
    let tiny = common::tiny_model();
    // 40 frames = 640 steps: the KV rings wrap several times.
    let n = allocations_per_frame(tiny.mimi().unwrap(), 1, 2, 40);
    assert_eq!(n, 0, "tiny model: {n} allocations in 40 decode_frame calls");
    let n = allocations_per_frame(tiny.mimi().unwrap(), 2, 2, 40);
    assert_eq!(
        n, 0,
        "tiny model, 2 threads: {n} allocations in 40 decode_frame calls"
    );

    let vb = pocket_tts_core::internals::weights::random_var_builder(1, &Device::Cpu);
    let full = Mimi::new(&Config::english().mimi, vb.pp("mimi")).unwrap();
    let n = allocations_per_frame(&full, 1, 2, 20);
    assert_eq!(
        n, 0,
        "full-size model: {n} allocations in 20 decode_frame calls"
    );
    let n = allocations_per_frame(&full, 2, 2, 20);
    assert_eq!(
        n, 0,
        "full-size model, 2 threads: {n} allocations in 20 decode_frame calls"
    );
}
