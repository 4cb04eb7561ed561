//! The batched engine (`Engine`, src/tts_model/engine/) on the tiny random-weight model of
//! `tests/fixtures/tiny`: each stream's frames equal its solo `generate_stream` run bit
//! for bit while streams of other lengths join and leave (temperature 0 and seeded
//! sampling, multi-chunk texts, more requests than slots); a typed busy error when full;
//! cancellation and dropped handles free their slot; a bad voice fails its stream only.
//!
//! Tolerance: none (the issue allows 1e-4 on latents and 1e-3 on audio; the batched FlowLM
//! pass gives the solo bits, and each stream has its own Mimi decoder state).

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use pocket_tts_core::config::Config;
use pocket_tts_core::tts_model::{AudioFrame, GenerationParams, TtsModel};
use pocket_tts_core::VoiceState;
use pocket_tts_core::{Engine, EngineOptions, Error};

const TEXTS: [&str; 4] = [
    "One, two, three. Count with me slowly until we reach ten. Well done.",
    "Hello world.",
    "The quick brown fox jumps over the lazy dog, and then it runs far away into the woods.",
    "Short one. And a second sentence that is a little longer than the first.",
];

fn model() -> Arc<TtsModel> {
    Arc::new(common::tiny_model())
}

fn voice(model: &TtsModel) -> Arc<VoiceState> {
    Arc::new(
        model
            .load_voice_state(&common::tiny_dir().join("voice_state.safetensors"))
            .expect("tiny voice state"),
    )
}

/// Temperature `t` with seed `seed`, chunks of 12 tokens, the fixture's EOS threshold (so
/// that chunks end on EOS, at different frames per stream).
fn params(t: f32, seed: u64) -> GenerationParams {
    let mut p = GenerationParams::for_config(&Config::english());
    p.temperature = t;
    p.seed = Some(seed);
    p.eos_threshold = -12.56;
    p.max_tokens = 12;
    p
}

/// A frame's chunk, index, sample bits, latent bits and EOS logit bits.
type FrameBits = (usize, usize, Vec<u32>, Vec<u32>, u32);

fn bits(frames: &[AudioFrame]) -> Vec<FrameBits> {
    frames
        .iter()
        .map(|f| {
            (
                f.chunk,
                f.frame,
                f.samples.iter().map(|v| v.to_bits()).collect(),
                f.latent.iter().map(|v| v.to_bits()).collect(),
                f.eos_logit.to_bits(),
            )
        })
        .collect()
}

fn solo(model: &TtsModel, voice: &VoiceState, text: &str, p: &GenerationParams) -> Vec<AudioFrame> {
    model
        .generate_stream(voice, text, p)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

/// With one thread (each pass's Mimi frames decoded after it) and two (decoded during
/// the next pass, beside its FlowLM pass).
#[test]
fn streams_equal_their_solo_runs_while_others_join_and_leave() {
    for threads in [1, 2] {
        let model = Arc::new(common::tiny_model().with_threads(threads).unwrap());
        streams_equal_their_solo_runs(model);
    }
}

/// The same with 16-bit FlowLM weights and with `--quantize`'s int8 / q4 transformer (whose
/// flow head is `f16`): the batched pass's 16-bit and integer products give the step's
/// bits (a batched 16-bit linear once summed in another order than the step's GEMV).
#[test]
fn streams_equal_their_solo_runs_with_16_bit_and_quantized_weights() {
    use pocket_tts_core::config::WeightDtype;
    use pocket_tts_core::Quantization;
    let tiny = |dtype: Option<WeightDtype>, quantize: Option<Quantization>| {
        let config = Config::from_yaml_file(&common::fixture("tiny/config.yaml")).expect("config");
        let mut b = TtsModel::builder()
            .config(config, None)
            .files(
                common::fixture("tiny/model.safetensors"),
                common::asset("tokenizer.model"),
            )
            .quantization(quantize);
        if let Some(d) = dtype {
            b = b.dtype(d);
        }
        b.load().expect("tiny model loads").with_threads(2).unwrap()
    };
    for (dtype, quantize) in [
        (Some(WeightDtype::Float16), None),
        (Some(WeightDtype::Bfloat16), None),
        (None, Some(Quantization::Int8)),
        (None, Some(Quantization::Q4)),
    ] {
        streams_equal_their_solo_runs(Arc::new(tiny(dtype, quantize)));
    }
}

fn streams_equal_their_solo_runs(model: Arc<TtsModel>) {
    let voice = voice(&model);
    let requests: Vec<(&str, GenerationParams)> = (0..7)
        .map(|i| {
            let t = if i % 2 == 0 { 0.0 } else { 0.5 };
            let mut p = params(t, 100 + i as u64);
            if i == 3 {
                // trunc_normal_'s redraws: a variable number of draws per frame.
                p.noise_clamp = Some(0.5);
            }
            (TEXTS[i % TEXTS.len()], p)
        })
        .collect();
    let expected: Vec<_> = requests
        .iter()
        .map(|(text, p)| bits(&solo(&model, &voice, text, p)))
        .collect();
    // 3 slots for 7 requests: later ones join as earlier ones leave; pieces of 5
    // positions make prefills span passes that also step other streams.
    let engine = Engine::new(
        Arc::clone(&model),
        EngineOptions {
            max_streams: 3,
            max_queued: 8,
            prefill_per_pass: 5,
        },
    )
    .unwrap();
    let handles: Vec<_> = requests
        .iter()
        .map(|(text, p)| engine.submit(&voice, text, p).unwrap())
        .collect();
    let consumers: Vec<_> = handles
        .into_iter()
        .map(|mut h| {
            std::thread::spawn(move || {
                let frames = h.by_ref().collect::<Result<Vec<_>, _>>().unwrap();
                (frames, h.stats().clone())
            })
        })
        .collect();
    for (i, (c, want)) in consumers.into_iter().zip(&expected).enumerate() {
        let (frames, stats) = c.join().unwrap();
        assert!(!frames.is_empty(), "stream {i} produced no frame");
        assert_eq!(&bits(&frames), want, "stream {i} differs from its solo run");
        assert_eq!(stats.frames, frames.len(), "stream {i} stats");
        assert!(stats.time_to_first_audio.is_some_and(|t| t <= stats.total));
        assert!(stats.chunks >= 1);
    }
    assert_eq!(engine.load(), (0, 0));
}

/// Waits (up to 30 s) until no stream runs or waits.
fn wait_idle(engine: &Engine) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while engine.load() != (0, 0) {
        assert!(
            Instant::now() < deadline,
            "slots not freed: {:?}",
            engine.load()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_full_engine_says_busy_and_a_dropped_stream_frees_its_slot() {
    let model = model();
    let voice = voice(&model);
    let engine = Engine::new(
        Arc::clone(&model),
        EngineOptions {
            max_streams: 1,
            max_queued: 1,
            prefill_per_pass: 64,
        },
    )
    .unwrap();
    // An EOS that never fires: the stream runs to its frame budget (long enough).
    let mut p = params(0.0, 1);
    p.eos_threshold = 1e9;
    let long = TEXTS[2];
    let mut first = engine.submit(&voice, long, &p).unwrap();
    assert!(first.next().unwrap().is_ok(), "the first stream runs");
    let queued = engine.submit(&voice, long, &p).unwrap();
    let err = engine.submit(&voice, long, &p).unwrap_err();
    assert!(
        matches!(err, Error::Busy(ref m) if m.contains("max_streams 1")),
        "{err}"
    );
    // Cancelling the running stream and dropping the queued one frees both places.
    first.cancel();
    assert!(first.next().is_none(), "a cancelled handle ends");
    drop(queued);
    wait_idle(&engine);
    let short = solo(&model, &voice, TEXTS[1], &params(0.0, 2));
    let again: Vec<_> = engine
        .submit(&voice, TEXTS[1], &params(0.0, 2))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(bits(&again), bits(&short));
}

#[test]
fn a_canceller_stops_a_stream_another_thread_is_reading() {
    let model = model();
    let voice = voice(&model);
    let engine = Engine::new(Arc::clone(&model), EngineOptions::default()).unwrap();
    let mut p = params(0.0, 1);
    p.eos_threshold = 1e9;
    let mut handle = engine.submit(&voice, TEXTS[2], &p).unwrap();
    let canceller = handle.canceller();
    assert!(!canceller.is_cancelled());
    assert!(handle.next().unwrap().is_ok(), "the stream runs");
    // The reader blocks on its handle; the canceller ends the stream from here.
    let reader = std::thread::spawn(move || handle.by_ref().collect::<Vec<_>>());
    canceller.cancel();
    assert!(canceller.is_cancelled());
    let rest = reader.join().expect("the reader ends");
    // The stream just ends: frames decoded before the cancel, then no error.
    assert!(
        rest.iter().all(|f| f.is_ok()),
        "a cancelled stream ended with an error"
    );
    wait_idle(&engine);
}

#[test]
fn a_bad_request_fails_alone() {
    let model = model();
    let voice = voice(&model);
    let engine = Engine::new(Arc::clone(&model), EngineOptions::default()).unwrap();
    // Refused at submission: empty text, bad parameters.
    let p = params(0.0, 3);
    assert!(matches!(
        engine.submit(&voice, "  ", &p),
        Err(Error::InvalidArgument { .. })
    ));
    let mut bad = p.clone();
    bad.temperature = -1.0;
    assert!(matches!(
        engine.submit(&voice, "Hello.", &bad),
        Err(Error::InvalidArgument {
            field: Some("temperature"),
            ..
        })
    ));
    // A voice state that does not fit the model fails its own stream, in its handle.
    let empty = Arc::new(VoiceState::new(Vec::new(), 1, 1, 0).unwrap());
    let good = engine.submit(&voice, TEXTS[1], &p).unwrap();
    let mut broken = engine.submit(&empty, TEXTS[1], &p).unwrap();
    let err = broken.next().unwrap().unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument { message: ref m, .. } if m.contains("layers")),
        "{err}"
    );
    assert!(broken.next().is_none());
    let frames: Vec<_> = good.collect::<Result<_, _>>().unwrap();
    assert_eq!(bits(&frames), bits(&solo(&model, &voice, TEXTS[1], &p)));
    assert!(matches!(
        Engine::new(
            Arc::clone(&model),
            EngineOptions {
                max_streams: 0,
                ..EngineOptions::default()
            }
        ),
        Err(Error::InvalidArgument {
            field: Some("max_streams"),
            ..
        })
    ));
}

#[test]
fn engine_types_can_move_between_threads() {
    fn send_static<T: Send + 'static>() {}
    fn send_sync<T: Send + Sync>() {}
    send_static::<pocket_tts_core::StreamHandle>();
    send_sync::<Engine>();
}

#[test]
fn the_candle_backend_runs_streams_one_by_one_with_the_same_frames() {
    let model = Arc::new(
        common::tiny_model()
            .with_backend(pocket_tts_core::Backend::Candle)
            .unwrap(),
    );
    let voice = voice(&model);
    let engine = Engine::new(Arc::clone(&model), EngineOptions::default()).unwrap();
    let requests = [(TEXTS[1], params(0.0, 5)), (TEXTS[3], params(0.5, 6))];
    let handles: Vec<_> = requests
        .iter()
        .map(|(text, p)| engine.submit(&voice, text, p).unwrap())
        .collect();
    for ((text, p), h) in requests.iter().zip(handles) {
        let frames: Vec<_> = h.collect::<Result<_, _>>().unwrap();
        assert_eq!(
            bits(&frames),
            bits(&solo(&model, &voice, text, p)),
            "{text}"
        );
    }
}
