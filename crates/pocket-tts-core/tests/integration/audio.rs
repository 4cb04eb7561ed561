//! Tests of `pocket_tts_core::audio` against the Python reference.
//!
//! Fixtures in `tests/fixtures/audio/` and `tests/fixtures/end_on_pause_case.safetensors` are
//! made by `scripts/reference/make_audio_fixtures.py` with pocket-tts 4.0.1, soundfile
//! (libsndfile 1.2.2), scipy 1.17.1 and torch 2.15.

use crate::common;

use std::collections::HashMap;
use std::fs;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use anyhow::{ensure, Context};
use pocket_tts_core::audio::{
    end_on_pause, load_voice_prompt_audio, read_audio, read_audio_bytes, read_audio_prefix,
    resample, resampled_len, write_wav_file, WavFile, WavWriter,
};
use pocket_tts_core::Error;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// The f32 tensors and the metadata of a safetensors fixture.
struct Tensors {
    tensors: HashMap<String, Vec<f32>>,
    metadata: HashMap<String, String>,
}

impl Tensors {
    fn load(rel: &str) -> anyhow::Result<Self> {
        let bytes = fs::read(fixture(rel)).with_context(|| format!("fixture {rel}"))?;
        let st = safetensors::SafeTensors::deserialize(&bytes)?;
        let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes)?;
        let mut tensors = HashMap::new();
        for (name, view) in st.tensors() {
            ensure!(view.dtype() == safetensors::Dtype::F32, "{name} is not f32");
            let data = view
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            tensors.insert(name, data);
        }
        Ok(Self {
            tensors,
            metadata: meta.metadata().clone().unwrap_or_default(),
        })
    }

    fn get(&self, name: &str) -> &[f32] {
        self.tensors
            .get(name)
            .unwrap_or_else(|| panic!("tensor {name} missing from fixture"))
    }

    fn meta_u32(&self, key: &str) -> u32 {
        self.metadata
            .get(key)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("metadata {key} missing from fixture"))
    }
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Signal-to-noise ratio of `got` against `expected`, in dB, over `range`.
fn snr_db(got: &[f32], expected: &[f32], range: std::ops::Range<usize>) -> f64 {
    let (mut signal, mut noise) = (0.0f64, 0.0f64);
    for i in range {
        let (g, e) = (f64::from(got[i]), f64::from(expected[i]));
        signal += e * e;
        noise += (g - e) * (g - e);
    }
    10.0 * (signal / noise.max(1e-30)).log10()
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

/// Reads `audio/<name>` and compares it with what the reference's `audio_read` returns.
fn check_read(name: &str, tolerance: f32) -> anyhow::Result<f32> {
    let expected = Tensors::load("audio/read_expected.safetensors")?;
    let (samples, rate) = read_audio(&fixture(&format!("audio/{name}")))?;
    assert_eq!(rate, expected.meta_u32(&format!("{name}.rate")), "{name}");
    let want = expected.get(name);
    assert_eq!(samples.len(), want.len(), "{name}: length");
    let diff = max_abs_diff(&samples, want);
    eprintln!("{name}: max |ours - reference| = {diff:e}");
    assert!(
        diff <= tolerance,
        "{name}: max |ours - reference| = {diff:e} > {tolerance:e}"
    );
    Ok(diff)
}

#[test]
fn reads_pcm16_wav_exactly_like_reference() -> anyhow::Result<()> {
    // The reference's own path: wave module, int16 / 32768.0.
    check_read("pcm16.wav", 0.0)?;
    Ok(())
}

#[test]
fn reads_pcm8_wav() -> anyhow::Result<()> {
    check_read("pcm8.wav", 0.0)?;
    Ok(())
}

#[test]
fn reads_pcm24_wav() -> anyhow::Result<()> {
    check_read("pcm24.wav", 0.0)?;
    Ok(())
}

#[test]
fn reads_pcm32_wav() -> anyhow::Result<()> {
    check_read("pcm32.wav", 0.0)?;
    Ok(())
}

#[test]
fn reads_float32_wav() -> anyhow::Result<()> {
    check_read("float32.wav", 0.0)?;
    Ok(())
}

#[test]
fn reads_float64_wav_via_symphonia() -> anyhow::Result<()> {
    // hound has no 64-bit float: the symphonia fallback reads it.
    check_read("float64.wav", 0.0)?;
    Ok(())
}

#[test]
fn downmixes_stereo_pcm16_like_reference() -> anyhow::Result<()> {
    check_read("stereo_pcm16.wav", 0.0)?;
    Ok(())
}

#[test]
fn downmixes_stereo_float32() -> anyhow::Result<()> {
    check_read("stereo_float32.wav", 0.0)?;
    Ok(())
}

#[test]
fn downmixes_three_channel_extensible_pcm24() -> anyhow::Result<()> {
    check_read("ext3_pcm24.wav", 0.0)?;
    Ok(())
}

#[test]
fn reads_flac_at_16k() -> anyhow::Result<()> {
    check_read("speech_16k.flac", 0.0)?;
    Ok(())
}

#[test]
fn reads_mp3_close_to_libsndfile() -> anyhow::Result<()> {
    // symphonia vs libsndfile's mpg123: same length (both trim the encoder delay and padding);
    // the decoders' float arithmetic differs slightly. Measured: max |diff| = 2.7e-7.
    check_read("speech_24k.mp3", 1e-5)?;
    Ok(())
}

#[test]
fn reads_ogg_vorbis_close_to_libsndfile() -> anyhow::Result<()> {
    // Measured: max |diff| = 1.2e-7 (float rounding in the inverse MDCT).
    check_read("speech_24k.ogg", 1e-5)?;
    Ok(())
}

#[test]
fn format_is_detected_from_content_not_name() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let renamed = dir.path().join("actually_flac.wav");
    fs::copy(fixture("audio/speech_16k.flac"), &renamed)?;
    let (flac, rate) = read_audio(&fixture("audio/speech_16k.flac"))?;
    assert_eq!(read_audio(&renamed)?, (flac, rate));
    Ok(())
}

#[test]
fn reads_streamed_wav_with_placeholder_sizes() -> anyhow::Result<()> {
    // The reference's stdout output claims 1e9 frames; it must read to the end of the data.
    let (samples, rate) = read_audio(&fixture("audio/streamed_reference.wav"))?;
    let (seekable, _) = read_audio(&fixture("audio/seekable_reference.wav"))?;
    assert_eq!(rate, 24000);
    assert_eq!(samples, seekable);
    Ok(())
}

#[test]
fn missing_file_is_not_found() {
    let path = Path::new("/nonexistent/dir/voice.wav");
    match read_audio(path) {
        Err(Error::NotFound(msg)) => assert!(msg.contains("/nonexistent/dir/voice.wav"), "{msg}"),
        other => panic!("expected NotFound, got {other:?}"),
    }
}

fn expect_invalid_data(path: &Path, needle: &str) {
    match read_audio(path) {
        Err(Error::InvalidData(msg)) => {
            assert!(msg.contains(&path.display().to_string()), "{msg}");
            assert!(msg.contains(needle), "{msg:?} should contain {needle:?}");
        }
        other => panic!("{}: expected InvalidData, got {other:?}", path.display()),
    }
}

#[test]
fn corrupt_files_are_invalid_data() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let text = dir.path().join("notes.wav");
    fs::write(
        &text,
        "this is not audio at all, just some text\n".repeat(50),
    )?;
    expect_invalid_data(&text, "Supported formats: WAV");

    let noise = dir.path().join("noise.mp3");
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let bytes: Vec<u8> = (0..20_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 56) as u8
        })
        .collect();
    fs::write(&noise, &bytes)?;
    match read_audio(&noise) {
        Err(Error::InvalidData(msg)) => assert!(msg.contains("noise.mp3"), "{msg}"),
        other => panic!("expected InvalidData for random bytes, got {other:?}"),
    }

    // A WAV cut inside its header.
    let cut = dir.path().join("cut.wav");
    let full = fs::read(fixture("audio/pcm16.wav"))?;
    fs::write(&cut, &full[..30])?;
    expect_invalid_data(&cut, "Supported formats");
    Ok(())
}

#[test]
fn empty_files_are_invalid_data() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let zero_bytes = dir.path().join("zero.wav");
    fs::write(&zero_bytes, b"")?;
    expect_invalid_data(&zero_bytes, "Supported formats");

    // A valid WAV header with no frames.
    let no_frames = dir.path().join("no_frames.wav");
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 24000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    hound::WavWriter::create(&no_frames, spec)?.finalize()?;
    expect_invalid_data(&no_frames, "contains no samples");
    Ok(())
}

#[test]
fn non_finite_samples_are_invalid_data() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("nan.wav");
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 24000,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut w = hound::WavWriter::create(&path, spec)?;
    for x in [0.1f32, 0.2, f32::NAN, 0.3] {
        w.write_sample(x)?;
    }
    w.finalize()?;
    expect_invalid_data(&path, "non-finite");
    Ok(())
}

#[test]
fn directory_is_io_error() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    match read_audio(dir.path()) {
        Err(Error::Io { path, .. }) => assert_eq!(path, dir.path()),
        other => panic!("expected Io, got {other:?}"),
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Resampling
// ---------------------------------------------------------------------------------------------

/// Compares [`resample`] with the reference's `convert_audio` (scipy `resample_poly`) on a
/// fixture case; returns (max |diff|, SNR over the whole output, SNR away from the edges).
fn compare_with_scipy(case: &str) -> anyhow::Result<(f32, f64, f64)> {
    let t = Tensors::load("audio/resample_case.safetensors")?;
    let input = t.get(&format!("{case}.input"));
    let want = t.get(&format!("{case}.expected"));
    let (from, to) = (
        t.meta_u32(&format!("{case}.from_hz")),
        t.meta_u32(&format!("{case}.to_hz")),
    );
    let got = resample(input, from, to)?;
    assert_eq!(got.len(), want.len(), "{case}: length");
    assert_eq!(got.len(), resampled_len(input.len(), from, to));
    // Skip 10 ms at each end, where both filters run into the zero padding.
    let edge = to as usize / 100;
    let diff = max_abs_diff(&got, want);
    let snr_all = snr_db(&got, want, 0..got.len());
    let snr_mid = snr_db(&got, want, edge..got.len() - edge);
    eprintln!(
        "{case}: max |diff| = {diff:.2e}, SNR = {snr_all:.1} dB, away from edges {snr_mid:.1} dB"
    );
    Ok((diff, snr_all, snr_mid))
}

// Measured with rubato 5.0.1 (FFT resampler, f64) against scipy 1.17.1 resample_poly.
// Most of the difference is scipy's: on the chirps, against the exact band-limited signal,
// rubato is at 150 dB SNR in the middle and resample_poly (Kaiser beta=5, 10 taps per phase
// side) at about 60 dB (see `resample_is_exact_on_in_band_chirp`).

#[test]
fn resample_matches_scipy_on_chirp_16k_to_24k() -> anyhow::Result<()> {
    // 50 Hz -> 7 kHz chirp, amplitude 0.5. Measured: max |diff| = 6.6e-2 (at the abrupt end
    // of the chirp), SNR 44.3 dB, 54.8 dB away from the first and last 10 ms.
    let (diff, snr_all, snr_mid) = compare_with_scipy("chirp16k")?;
    assert!(diff < 0.1, "{diff}");
    assert!(snr_all > 40.0, "{snr_all}");
    assert!(snr_mid > 50.0, "{snr_mid}");
    Ok(())
}

#[test]
fn resample_matches_scipy_on_speech_16k_to_24k() -> anyhow::Result<()> {
    // 0.5 s of jfk_16k.wav. Measured: max |diff| = 2.9e-3, SNR 58.7 dB.
    let (diff, snr_all, _) = compare_with_scipy("speech16k")?;
    assert!(diff < 1e-2, "{diff}");
    assert!(snr_all > 50.0, "{snr_all}");
    Ok(())
}

#[test]
fn resample_matches_scipy_on_chirp_44k_to_24k() -> anyhow::Result<()> {
    // Downsampling, 50 Hz -> 10 kHz chirp (the output's Nyquist is 12 kHz). Measured:
    // max |diff| = 1.5e-2, SNR 54.0 dB, 60.6 dB away from the edges. (With an odd FFT length,
    // rubato's output was 0.27 samples late here: SNR 8 dB. `resample` avoids that.)
    let (diff, snr_all, snr_mid) = compare_with_scipy("chirp44k")?;
    assert!(diff < 5e-2, "{diff}");
    assert!(snr_all > 45.0, "{snr_all}");
    assert!(snr_mid > 55.0, "{snr_mid}");
    Ok(())
}

/// `amp * sin(2 pi (f0 t + (f1 - f0) t^2 / (2 T)))` sampled at `rate`, in f64.
fn chirp(rate: u32, seconds: f64, f0: f64, f1: f64, amp: f64) -> Vec<f64> {
    let n = (f64::from(rate) * seconds) as usize;
    (0..n)
        .map(|i| {
            let t = i as f64 / f64::from(rate);
            amp * (2.0 * std::f64::consts::PI * (f0 * t + (f1 - f0) * t * t / (2.0 * seconds)))
                .sin()
        })
        .collect()
}

#[test]
fn resample_is_exact_on_in_band_chirp() -> anyhow::Result<()> {
    // Resampling a chirp that stays below both Nyquist frequencies must give the same chirp
    // sampled at the new rate, up to f32 rounding, away from the abrupt ends.
    // Measured: 16k->24k 151 dB, 44.1k->24k 152 dB, 24k->16k 152 dB, 8k->24k 95 dB (the
    // chirp ends at 75% of the 4 kHz Nyquist, in the anti-aliasing filter's transition).
    for (from, to, f1) in [
        (16000, 24000, 6000.0),
        (44100, 24000, 9000.0),
        (24000, 16000, 6000.0),
        (8000, 24000, 3000.0),
    ] {
        let input: Vec<f32> = chirp(from, 0.5, 50.0, f1, 0.5)
            .into_iter()
            .map(|x| x as f32)
            .collect();
        let got = resample(&input, from, to)?;
        let truth = chirp(to, 0.5, 50.0, f1, 0.5);
        assert_eq!(got.len(), truth.len());
        let edge = to as usize / 20; // 50 ms
        let (mut signal, mut noise) = (0.0f64, 0.0f64);
        for i in edge..truth.len() - edge {
            signal += truth[i] * truth[i];
            noise += (f64::from(got[i]) - truth[i]).powi(2);
        }
        let snr = 10.0 * (signal / noise).log10();
        eprintln!("{from} -> {to}: SNR against the exact chirp {snr:.1} dB");
        assert!(snr > 90.0, "{from} -> {to}: {snr:.1} dB");
    }
    Ok(())
}

#[test]
fn loads_16k_speech_asset_as_24k_prompt() -> anyhow::Result<()> {
    let path = common::asset("speech/jfk_16k.wav");
    let (raw, rate) = read_audio(&path)?;
    assert_eq!(rate, 16000);
    assert_eq!(raw.len(), 176_000);
    let resampled = resample(&raw, 16000, 24000)?;
    assert_eq!(resampled.len(), 264_000);
    // Same energy (the speech is far below 8 kHz).
    let rms = |x: &[f32]| (x.iter().map(|v| f64::from(v * v)).sum::<f64>() / x.len() as f64).sqrt();
    let ratio = rms(&resampled) / rms(&raw);
    assert!((ratio - 1.0).abs() < 0.01, "rms ratio {ratio}");

    let prompt = load_voice_prompt_audio(&path, 24000, false)?;
    assert_eq!(prompt, end_on_pause(&resampled, 24000));
    assert!(prompt.len() <= 264_000 + 1920);
    // Ends on exactly 80 ms of zeros.
    assert!(prompt[prompt.len() - 1920..].iter().all(|&x| x == 0.0));
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// end_on_pause and voice prompts
// ---------------------------------------------------------------------------------------------

#[test]
fn end_on_pause_matches_reference_on_real_speech() -> anyhow::Result<()> {
    let t = Tensors::load("end_on_pause_case.safetensors")?;
    for case in ["phrase24k", "jfk16k"] {
        let input = t.get(&format!("{case}.input"));
        let want = t.get(&format!("{case}.expected"));
        let rate = t.meta_u32(&format!("{case}.sample_rate"));
        let got = end_on_pause(input, rate);
        assert_eq!(got.len(), want.len(), "{case}: length");
        let diff = max_abs_diff(&got, want);
        assert!(diff <= 1e-6, "{case}: max |diff| = {diff:e}");
    }
    // The phrase excerpt ends inside a pause: it must have been trimmed.
    assert!(t.get("phrase24k.expected").len() < t.get("phrase24k.input").len());
    Ok(())
}

fn write_pcm16(
    path: &Path,
    rate: u32,
    samples: impl IntoIterator<Item = f32>,
) -> anyhow::Result<()> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec)?;
    for x in samples {
        w.write_sample((x * 32767.0) as i16)?;
    }
    w.finalize()?;
    Ok(())
}

#[test]
fn silent_voice_prompt_is_invalid_data() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("silence.wav");
    write_pcm16(&path, 24000, std::iter::repeat_n(0.0, 24000))?;
    // Reading works: it is a valid file.
    assert_eq!(read_audio(&path)?.0.len(), 24000);
    match load_voice_prompt_audio(&path, 24000, false) {
        Err(Error::InvalidData(msg)) => {
            assert!(msg.contains("silent"), "{msg}");
            assert!(msg.contains("silence.wav"), "{msg}");
        }
        other => panic!("expected InvalidData, got {other:?}"),
    }
    Ok(())
}

#[test]
fn voice_prompt_truncates_to_30_seconds_when_asked() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("long.wav");
    let rate = 8000u32;
    let tone = (0..31 * rate).map(|i| 0.3 * (i as f32 * 0.05).sin());
    write_pcm16(&path, rate, tone)?;
    // A steady tone: end_on_pause keeps every whole 20 ms frame and adds 80 ms.
    let full = load_voice_prompt_audio(&path, 24000, false)?;
    assert_eq!(full.len(), 31 * 24000 + 1920);
    let cut = load_voice_prompt_audio(&path, 24000, true)?;
    assert_eq!(cut.len(), 30 * 24000 + 1920);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

fn writer_chunks() -> anyhow::Result<(Vec<f32>, Vec<f32>)> {
    let t = Tensors::load("audio/wav_writer_input.safetensors")?;
    Ok((t.get("chunk0").to_vec(), t.get("chunk1").to_vec()))
}

#[test]
fn streaming_wav_is_byte_identical_to_reference() -> anyhow::Result<()> {
    let (chunk0, chunk1) = writer_chunks()?;
    let mut w = WavWriter::new_streaming(Vec::new(), 24000)?;
    w.write_samples(&chunk0)?;
    w.write_samples(&chunk1)?;
    let ours = w.finalize()?;
    let reference = fs::read(fixture("audio/streamed_reference.wav"))?;
    assert_eq!(ours.len(), reference.len());
    assert_eq!(&ours[..44], &reference[..44], "header");
    assert!(ours == reference, "data differs from the reference");
    Ok(())
}

#[test]
fn seekable_wav_is_byte_identical_to_reference() -> anyhow::Result<()> {
    let (chunk0, chunk1) = writer_chunks()?;
    let mut w = WavWriter::new_seekable(Cursor::new(Vec::new()), 24000)?;
    w.write_samples(&chunk0)?;
    w.write_samples(&chunk1)?;
    assert_eq!(w.samples_written(), (chunk0.len() + chunk1.len()) as u64);
    let ours = w.finalize()?.into_inner();
    let reference = fs::read(fixture("audio/seekable_reference.wav"))?;
    assert_eq!(&ours[..44], &reference[..44], "header");
    assert!(ours == reference, "data differs from the reference");
    Ok(())
}

#[test]
fn wav_file_round_trip() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("out.wav");
    let (chunk0, chunk1) = writer_chunks()?;
    write_wav_file(&path, 24000, [Ok(chunk0.clone()), Ok(chunk1.clone())])?;
    let (samples, rate) = read_audio(&path)?;
    assert_eq!(rate, 24000);
    let written: Vec<f32> = chunk0.iter().chain(&chunk1).copied().collect();
    assert_eq!(samples.len(), written.len() + 4800);
    for (i, (&got, &x)) in samples.iter().zip(&written).enumerate() {
        let want = f32::from((x.clamp(-1.0, 1.0) * 32767.0) as i16) / 32768.0;
        assert_eq!(got, want, "sample {i}");
    }
    assert!(samples[written.len()..].iter().all(|&x| x == 0.0));
    // hound agrees on the header.
    let reader = hound::WavReader::open(&path)?;
    assert_eq!(reader.spec().channels, 1);
    assert_eq!(reader.spec().bits_per_sample, 16);
    assert_eq!(reader.duration() as usize, written.len() + 4800);
    // Only the output is left in the directory.
    let names: Vec<_> = fs::read_dir(dir.path())?.collect::<Result<Vec<_>, _>>()?;
    assert_eq!(names.len(), 1);
    Ok(())
}

#[test]
fn failed_write_leaves_no_file_behind() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("out.wav");
    let chunks: Vec<pocket_tts_core::Result<Vec<f32>>> = vec![
        Ok(vec![0.1; 24000]),
        Err(Error::InvalidData("generation failed".into())),
        Ok(vec![0.2; 24000]),
    ];
    let err = write_wav_file(&path, 24000, chunks).expect_err("must fail");
    assert!(err.to_string().contains("generation failed"), "{err}");
    assert_eq!(fs::read_dir(dir.path())?.count(), 0, "leftover files");

    // An existing file is left as it was.
    fs::write(&path, b"previous")?;
    let chunks = vec![
        Ok(vec![0.1f32; 100]),
        Err(Error::InvalidData("boom".into())),
    ];
    assert!(write_wav_file(&path, 24000, chunks).is_err());
    assert_eq!(fs::read(&path)?, b"previous");
    assert_eq!(fs::read_dir(dir.path())?.count(), 1, "leftover files");

    // Dropping an unfinished file removes its temporary file.
    let mut file = WavFile::create(&path, 24000)?;
    file.write_samples(&[0.5; 1000])?;
    assert_eq!(fs::read_dir(dir.path())?.count(), 2);
    drop(file);
    assert_eq!(fs::read_dir(dir.path())?.count(), 1, "leftover files");
    assert_eq!(fs::read(&path)?, b"previous");
    Ok(())
}

#[test]
fn unwritable_output_paths_are_refused_by_class() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let missing_dir = dir.path().join("no/such/dir/out.wav");
    match write_wav_file(&missing_dir, 24000, [Ok(vec![0.1f32; 10])]) {
        Err(Error::NotFound(m)) => assert!(m.contains("no/such/dir"), "{m}"),
        other => panic!("expected NotFound, got {other:?}"),
    }
    match WavFile::create(dir.path(), 24000) {
        Err(Error::InvalidArgument { message: m, .. }) => assert!(m.contains("folder"), "{m}"),
        other => panic!(
            "expected InvalidArgument for a directory, got {:?}",
            other.map(|f| f.path().to_owned())
        ),
    }
    match WavFile::create(Path::new(""), 24000) {
        Err(Error::InvalidArgument { message: m, .. }) => assert!(m.contains("empty"), "{m}"),
        other => panic!("expected InvalidArgument for \"\", got {:?}", other.is_ok()),
    }
    Ok(())
}

/// A mono 16-bit WAV of `seconds` of a 440 Hz tone at `rate` Hz, optionally with the header
/// of an unseekable stream (sizes claiming 1e9 frames).
fn tone_wav(seconds: usize, rate: u32, streamed: bool) -> Vec<u8> {
    let samples: Vec<f32> = (0..seconds * rate as usize)
        .map(|i| 0.5 * (i as f32 * 440.0 * std::f32::consts::TAU / rate as f32).sin())
        .collect();
    let mut bytes = Vec::new();
    if streamed {
        let mut w = WavWriter::new_streaming(&mut bytes, rate).unwrap();
        w.write_samples(&samples).unwrap();
        w.finalize().unwrap();
    } else {
        let mut w = WavWriter::new_seekable(Cursor::new(&mut bytes), rate).unwrap();
        w.write_samples(&samples).unwrap();
        w.finalize().unwrap();
    }
    bytes
}

/// A mono 64-bit float WAV (format 3) of `seconds` of a ramp at `rate` Hz.
fn float64_wav(seconds: u32, rate: u32) -> Vec<u8> {
    let n = seconds * rate;
    let data_len = n * 8;
    let mut b = Vec::new();
    b.extend_from_slice(b"RIFF");
    b.extend_from_slice(&(36 + data_len).to_le_bytes());
    b.extend_from_slice(b"WAVEfmt ");
    b.extend_from_slice(&16u32.to_le_bytes());
    b.extend_from_slice(&3u16.to_le_bytes()); // WAVE_FORMAT_IEEE_FLOAT
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&rate.to_le_bytes());
    b.extend_from_slice(&(rate * 8).to_le_bytes());
    b.extend_from_slice(&8u16.to_le_bytes());
    b.extend_from_slice(&64u16.to_le_bytes());
    b.extend_from_slice(b"data");
    b.extend_from_slice(&data_len.to_le_bytes());
    for i in 0..n {
        b.extend_from_slice(&(f64::from(i % 100) / 200.0).to_le_bytes());
    }
    b
}

#[test]
fn read_audio_prefix_stops_at_the_limit_and_says_whether_it_cut() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    for streamed in [false, true] {
        let path = dir.path().join(format!("long-{streamed}.wav"));
        fs::write(&path, tone_wav(40, 16000, streamed))?;
        let (cut, rate, truncated) = read_audio_prefix(&path, Some(30))?;
        assert_eq!((cut.len(), rate, truncated), (30 * 16000, 16000, true));
        let (all, _) = read_audio(&path)?;
        assert!(all.len() > 40 * 16000, "streamed {streamed}: {}", all.len());
        assert_eq!(&all[..cut.len()], &cut[..]);
        let (short, _, truncated) = read_audio_prefix(&path, Some(60))?;
        assert_eq!((short.len(), truncated), (all.len(), false));
        // The same bytes from memory.
        let (mem, _, truncated) = read_audio_bytes(&fs::read(&path)?, "x.wav", Some(30))?;
        assert_eq!((mem, truncated), (cut, true));
    }
    // symphonia's path (a 64-bit float WAV, which hound does not read): cut there too.
    let path = dir.path().join("f64.wav");
    fs::write(&path, float64_wav(3, 8000))?;
    let (all, rate) = read_audio(&path)?;
    assert_eq!((all.len(), rate), (3 * 8000, 8000));
    let (cut, _, truncated) = read_audio_prefix(&path, Some(1))?;
    assert_eq!((cut.len(), truncated), (8000, true));
    assert_eq!(&all[..cut.len()], &cut[..]);
    Ok(())
}
