//! The time-stretch: durations scale by `1 / speed`, the pitch stays.

use pocket_tts_audio::{TimeStretch, MAX_SPEED, MIN_SPEED};

use crate::signal::{extent, f0, voiced, FRAME, RATE};

/// Stretches `input` streamed in model frames, as the server and the CLI do.
fn stretch(input: &[f32], speed: f64) -> Vec<f32> {
    stretch_at(input, speed, RATE)
}

fn stretch_at(input: &[f32], speed: f64, rate: u32) -> Vec<f32> {
    let mut s = TimeStretch::new(speed, rate).unwrap();
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
    let (start, end) = extent(&input, RATE);
    let f0_in = f0(&input[start + 12_000..start + 24_000], RATE);
    assert!((f0_in - 140.0).abs() < 1.0, "input f0 {f0_in}");
    for speed in [0.5, 2.0] {
        let out = stretch(&input, speed);
        let expected = (input.len() as f64 / speed).round() as usize;
        assert_eq!(out.len(), expected, "speed {speed}: whole length");
        let (s, e) = extent(&out, RATE);
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
        let f0_out = f0(&out[mid - 6000..mid + 6000], RATE);
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

/// A real recording: JFK's 11 s (16 kHz, the repository's test asset). The speech's
/// extent scales by `1 / speed` (within 3%) and the fundamental on voiced 200 ms windows
/// stays (median of their ratios within 5%).
#[test]
fn a_real_recording_keeps_its_pitch_at_half_and_double_speed() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../pocket-tts-core/tests/fixtures/assets/speech/jfk_16k.wav"
    );
    let mut reader = hound::WavReader::open(path).expect("the JFK recording (a committed asset)");
    let rate = reader.spec().sample_rate;
    let input: Vec<f32> = reader
        .samples::<i16>()
        .map(|s| f32::from(s.unwrap()) / 32768.0)
        .collect();
    let (start, end) = extent(&input, rate);
    let win = rate as usize / 5;
    // Voiced windows: loud ones whose autocorrelation finds a pitch in the voice's range.
    let loud = |x: &[f32]| x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32;
    let level = loud(&input[start..end]);
    for speed in [0.5, 2.0] {
        let out = stretch_at(&input, speed, rate);
        let (s, e) = extent(&out, rate);
        let ratio = (e - s) as f64 / (end - start) as f64;
        assert!(
            (ratio * speed - 1.0).abs() < 0.03,
            "speed {speed}: the speech is {ratio:.3}x as long, expected {:.3}x",
            1.0 / speed
        );
        let mut ratios = Vec::new();
        let mut at = start;
        while at + win + rate as usize / 20 < end {
            let x = &input[at..at + win];
            let o = (at as f64 / speed) as usize;
            if loud(x) > level && o + win + rate as usize / 20 < out.len() {
                let (fi, fo) = (f0(x, rate), f0(&out[o..o + win], rate));
                if (70.0..300.0).contains(&fi) {
                    ratios.push(fo / fi);
                }
            }
            at += win;
        }
        ratios.sort_by(f64::total_cmp);
        assert!(
            ratios.len() >= 5,
            "speed {speed}: {} voiced windows",
            ratios.len()
        );
        let median = ratios[ratios.len() / 2];
        assert!(
            (median - 1.0).abs() < 0.05,
            "speed {speed}: output f0 / input f0 = {median:.3} (median of {} voiced windows)",
            ratios.len()
        );
    }
}
