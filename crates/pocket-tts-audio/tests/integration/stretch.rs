//! The time-stretch: durations scale by `1 / speed`, the pitch stays.

use pocket_tts_audio::{TimeStretch, MAX_SPEED, MIN_SPEED};

use crate::signal::{extent, f0, voiced, FRAME, RATE};

/// Stretches `input` streamed in model frames, as the server and the CLI do.
fn stretch(input: &[f32], speed: f64) -> Vec<f32> {
    let mut s = TimeStretch::new(speed, RATE).unwrap();
    let mut out = Vec::new();
    for frame in input.chunks(FRAME) {
        out.extend(s.process(frame));
    }
    out.extend(s.finish());
    out
}

#[test]
fn speed_scales_the_duration_and_keeps_the_fundamental() {
    // 0.5 s of silence, 2 s of a 140 Hz voice, 0.5 s of silence.
    let input = voiced(140.0, 2.0, 0.5);
    let (start, end) = extent(&input);
    let f0_in = f0(&input[start + 12_000..start + 24_000]);
    assert!((f0_in - 140.0).abs() < 1.0, "input f0 {f0_in}");
    for speed in [0.5, 2.0] {
        let out = stretch(&input, speed);
        let expected = (input.len() as f64 / speed).round() as usize;
        assert_eq!(out.len(), expected, "speed {speed}: whole length");
        let (s, e) = extent(&out);
        let ratio = (e - s) as f64 / (end - start) as f64;
        assert!(
            (ratio * speed - 1.0).abs() < 0.03,
            "speed {speed}: the voiced part is {ratio:.3}x as long, expected {:.3}x",
            1.0 / speed
        );
        // The sound starts where the input's start maps to (within 40 ms): the stream is
        // aligned, not delayed by the stretcher's latency.
        let onset = (start as f64 / speed) as i64;
        assert!(
            (s as i64 - onset).abs() < 960,
            "speed {speed}: starts at {s}, expected about {onset}"
        );
        // The fundamental, measured on 0.5 s in the middle of the voiced part.
        let mid = (s + e) / 2;
        let f0_out = f0(&out[mid - 6000..mid + 6000]);
        assert!(
            (f0_out / f0_in - 1.0).abs() < 0.05,
            "speed {speed}: f0 {f0_out:.1} Hz, input {f0_in:.1} Hz"
        );
    }
}

#[test]
fn speed_one_passes_samples_through() {
    let input = voiced(200.0, 0.3, 0.0);
    assert_eq!(stretch(&input, 1.0), input);
}

#[test]
fn short_input_and_the_first_frame_give_output_at_once() {
    // Less than the stretcher's latency: all of it comes at the end.
    let input = voiced(150.0, 0.02, 0.0);
    let out = stretch(&input, 2.0);
    assert_eq!(out.len(), input.len().div_ceil(2));
    // Bounded latency: at speed 0.5 the first output comes with the second frame.
    let mut s = TimeStretch::new(0.5, RATE).unwrap();
    let mut out = s.process(&voiced(150.0, 0.08, 0.0));
    out.extend(s.process(&voiced(150.0, 0.08, 0.0)));
    assert!(!out.is_empty(), "output after two frames at speed 0.5");
}

#[test]
fn speeds_out_of_range_are_refused_naming_the_range() {
    for speed in [0.0, 0.24, 4.01, f64::NAN, f64::INFINITY, -1.0] {
        let e = TimeStretch::new(speed, RATE).unwrap_err().to_string();
        assert!(e.contains("0.25 to 4.0"), "{e}");
    }
    for speed in [MIN_SPEED, MAX_SPEED] {
        assert!(TimeStretch::new(speed, RATE).is_ok());
    }
}
