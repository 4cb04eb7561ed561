//! The threaded generation (FlowLM on the iterating thread, Mimi decoder on its own
//! thread) against the sequential one, on the tiny random-weight model of
//! `tests/fixtures/tiny`: same frames bit for bit, early drop, errors from either side,
//! per-step timings.

mod common;

use std::sync::mpsc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pocket_tts_core::config::Config;
use pocket_tts_core::tts_model::{AudioFrame, GenerationParams, TtsModel, DECODER_THREAD_NAME};
use pocket_tts_core::VoiceState;

/// Tests that count decoder threads must not overlap with other generations.
static SERIAL: Mutex<()> = Mutex::new(());

/// A text of three chunks at `--max-tokens 12` (the reference's multi-chunk fixture).
const TEXT: &str = "One, two, three. Count with me slowly until we reach ten. Well done.";

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn voice(model: &TtsModel) -> VoiceState {
    model
        .load_voice_state(&common::tiny_dir().join("voice_state.safetensors"))
        .expect("tiny voice state")
}

/// Sampled (temperature 0.3, seeded) and chunked, with the fixture's EOS threshold so that
/// chunks end on EOS.
fn params(temperature: f32) -> GenerationParams {
    let mut p = GenerationParams::for_config(&Config::english());
    p.temperature = temperature;
    p.seed = Some(7);
    p.eos_threshold = -12.56;
    p.max_tokens = 12;
    p
}

fn generate(
    model: &mut TtsModel,
    voice: &VoiceState,
    threads: usize,
    p: &GenerationParams,
) -> Vec<AudioFrame> {
    model.set_threads(threads).unwrap();
    let stream = model.generate_stream(voice, TEXT, p).unwrap();
    assert_eq!(stream.threads(), threads.min(2));
    stream.collect::<Result<Vec<_>, _>>().unwrap()
}

fn bits(t: &[f32]) -> Vec<u32> {
    t.iter().copied().map(f32::to_bits).collect()
}

/// Threads of this process named [`DECODER_THREAD_NAME`] (Linux), `None` elsewhere.
fn decoder_threads() -> Option<usize> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    Some(
        tasks
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .filter(|name| name.trim_end() == DECODER_THREAD_NAME)
            .count(),
    )
}

/// Checks that `expected` decoder threads exist, allowing a second for a new thread to
/// name itself and for a joined one to leave /proc (Linux only).
fn assert_decoder_threads(expected: usize, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        let Some(n) = decoder_threads() else { return };
        if n == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: {n} decoder threads, expected {expected}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs `f` on a thread and fails if it has not returned within `secs` seconds.
fn within<T: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the thread returned without a result"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what} did not finish within {secs} s (hang?)")
        }
    }
}

#[test]
fn threaded_stream_yields_exactly_the_frames_of_the_sequential_one() {
    let _guard = serial();
    let mut model = common::tiny_model();
    let voice = voice(&model);
    for temperature in [0.0, 0.3] {
        let p = params(temperature);
        let sequential = generate(&mut model, &voice, 1, &p);
        let overlapped = generate(&mut model, &voice, 2, &p);
        let chunks: std::collections::BTreeSet<usize> =
            sequential.iter().map(|f| f.chunk).collect();
        assert_eq!(chunks.len(), 3, "the text should give three chunks");
        assert_eq!(
            sequential.len(),
            overlapped.len(),
            "temperature {temperature}: frame count differs"
        );
        for (i, (a, b)) in sequential.iter().zip(&overlapped).enumerate() {
            let what = format!("temperature {temperature}, frame {i}");
            assert_eq!((a.chunk, a.frame), (b.chunk, b.frame), "{what}: order");
            assert_eq!(
                a.eos_logit.to_bits(),
                b.eos_logit.to_bits(),
                "{what}: EOS logit"
            );
            assert_eq!(bits(&a.latent), bits(&b.latent), "{what}: latent");
            assert_eq!(a.samples.len(), 1920, "{what}: samples per frame");
            assert!(
                a.samples
                    .iter()
                    .zip(&b.samples)
                    .all(|(x, y)| x.to_bits() == y.to_bits()),
                "{what}: samples differ"
            );
        }
        // Each chunk starts at frame 0 and fades in from silence.
        for f in overlapped.iter().filter(|f| f.frame == 0) {
            assert_eq!(f.samples[0], 0.0, "chunk {} does not fade in", f.chunk);
        }
    }
    // More threads than stages is the same as two.
    let p = params(0.3);
    let many = generate(&mut model, &voice, 8, &p);
    let two = generate(&mut model, &voice, 2, &p);
    assert!(many
        .iter()
        .zip(&two)
        .all(|(a, b)| a.samples == b.samples && a.frame == b.frame));
}

#[test]
fn dropping_a_stream_early_stops_its_decoder_thread() {
    let _guard = serial();
    within(120, "take(3) and drop", || {
        let model = common::tiny_model().with_threads(2).unwrap();
        let voice = voice(&model);
        let p = params(0.3);
        for taken in [0, 1, 3] {
            let mut stream = model.generate_stream(&voice, TEXT, &p).unwrap();
            assert_eq!(stream.threads(), 2);
            let max = stream.max_frames();
            let frames: Vec<_> = stream.by_ref().take(taken).collect();
            assert_eq!(frames.len(), taken);
            assert!(frames.iter().all(|f| f.is_ok()));
            assert_decoder_threads(1, "while streaming");
            assert!(stream.stats().frames == taken && taken <= max);
            drop(stream);
            // `drop` joined the thread; the kernel may list it in /proc for a moment
            // after the join returns (seen once under load), hence the helper's grace.
            assert_decoder_threads(
                0,
                &format!("the decoder thread outlived its stream (taken {taken})"),
            );
        }
        // The model is still usable afterwards, and a finished stream has joined its thread.
        let mut stream = model.generate_stream(&voice, "Well done.", &p).unwrap();
        let n = stream.by_ref().inspect(|f| assert!(f.is_ok())).count();
        assert!(n > 0);
        assert!(stream.next().is_none(), "a finished stream stays finished");
        assert_decoder_threads(0, "after the end of the stream");
    });
}

#[test]
fn stats_record_every_step_in_preallocated_lists() {
    let _guard = serial();
    let mut model = common::tiny_model();
    let voice = voice(&model);
    for threads in [1, 2] {
        model.set_threads(threads).unwrap();
        let mut stream = model.generate_stream(&voice, TEXT, &params(0.3)).unwrap();
        let max = stream.max_frames();
        assert_eq!(stream.chunk_count(), 3);
        assert_eq!(stream.pending_chunks().count(), 3);
        assert!(stream.stats().lm_step_times.capacity() >= max);
        assert!(stream.stats().decode_times.capacity() >= max);
        let caps = (
            stream.stats().lm_step_times.as_ptr(),
            stream.stats().decode_times.as_ptr(),
        );
        let frames = stream.by_ref().inspect(|f| assert!(f.is_ok())).count();
        let s = stream.stats();
        assert_eq!(s.frames, frames);
        assert_eq!(s.decode_times.len(), frames);
        assert_eq!(s.chunks, 3);
        assert_eq!(s.prefill_times.len(), 3);
        // A chunk ending on EOS ends on one FlowLM step that is not decoded.
        assert_eq!(s.lm_step_times.len(), frames + 3 - s.chunks_without_eos);
        assert_eq!(s.lm, s.lm_step_times.iter().sum::<Duration>());
        assert_eq!(s.decode, s.decode_times.iter().sum::<Duration>());
        assert_eq!(s.prefill, s.prefill_times.iter().sum::<Duration>());
        assert_eq!(
            (s.lm_step_times.as_ptr(), s.decode_times.as_ptr()),
            caps,
            "threads {threads}: a per-step list was reallocated"
        );
    }
}

#[test]
fn a_stream_can_move_to_another_thread() {
    fn assert_send<T: Send>() {}
    assert_send::<pocket_tts_core::tts_model::AudioStream<'static>>();
}

#[test]
fn zero_threads_is_refused() {
    let mut model = common::tiny_model();
    assert!(model.set_threads(0).is_err());
    assert!(model.threads() >= 1);
    model.set_threads(1).unwrap();
    assert_eq!(model.threads(), 1);
}

// An error in the Mimi decoder: `src/tts_model/tests.rs` (it needs the model's insides).

/// An error in the FlowLM (a voice state whose heads do not fit the model) comes out of
/// the iterator, on either thread layout, and ends it.
#[test]
fn a_flow_lm_error_is_yielded_and_ends_the_stream() {
    let _guard = serial();
    let mut model = common::tiny_model();
    let good = voice(&model);
    // Heads one channel wider than the model's, no positions.
    let layers = good
        .layers()
        .iter()
        .map(|_| pocket_tts_core::LayerKv {
            keys: Vec::new(),
            values: Vec::new(),
        })
        .collect();
    let bad = VoiceState::new(layers, good.kv_heads(), good.head_dim() + 1, 0).unwrap();
    for threads in [1, 2] {
        model.set_threads(threads).unwrap();
        let items: Vec<_> = model
            .generate_stream(&bad, TEXT, &params(0.3))
            .unwrap()
            .take(10)
            .collect();
        assert_eq!(items.len(), 1, "threads {threads}: one Err, then the end");
        assert!(items[0].is_err(), "threads {threads}: expected an error");
    }
}

#[test]
fn a_stream_that_owns_its_voice_state_yields_the_frames_of_one_that_borrows_it() {
    let _guard = serial();
    let mut model = common::tiny_model();
    let voice = voice(&model);
    for (threads, copy_state) in [(1, true), (2, true), (2, false)] {
        let mut p = params(0.3);
        p.copy_state = copy_state;
        model.set_threads(threads).unwrap();
        let borrowed = model.generate_stream(&voice, TEXT, &p).unwrap();
        let borrowed_state_before = borrowed.model_state().unwrap();
        let borrowed: Vec<AudioFrame> = borrowed.collect::<Result<_, _>>().unwrap();
        let mut owned = model
            .generate_stream_owned(voice.clone(), TEXT, &p)
            .unwrap();
        // Before the first chunk, the state is the voice state itself.
        assert_eq!(owned.model_state().unwrap(), borrowed_state_before);
        assert_eq!(owned.model_state().unwrap(), voice);
        let mut frames = Vec::new();
        for frame in owned.by_ref() {
            frames.push(frame.unwrap());
        }
        let what = format!("{threads} threads, copy_state {copy_state}");
        assert_eq!(frames.len(), borrowed.len(), "{what}: frame count");
        assert_eq!(
            frames.iter().map(|f| f.chunk).max(),
            Some(2),
            "{what}: three chunks"
        );
        for (i, (a, b)) in frames.iter().zip(&borrowed).enumerate() {
            assert_eq!((a.chunk, a.frame), (b.chunk, b.frame), "{what}, frame {i}");
            assert_eq!(bits(&a.samples), bits(&b.samples), "{what}, frame {i}");
        }
        // The voice state is gone, but the state after the generation is still there: the
        // voice followed by every chunk (copy_state false) or the last chunk's.
        let after = owned.model_state().unwrap();
        assert!(
            after.len() > voice.len(),
            "{what}: state after the generation"
        );
    }
}
