//! `generate` and `stream` in the compressed formats (by extension or `--format`) and
//! with `--speed`: the files decode to the WAV's length (MP3 and FLAC by the core's
//! symphonia reader; Ogg Opus by its granule positions; AAC by its ADTS frames).

use crate::common;

use common::*;

/// Decodes an MP3 or FLAC file with the core's reader: its samples' count.
fn decoded_len(bytes: &[u8], name: &str) -> usize {
    let (samples, rate, _) =
        pocket_tts_core::audio::read_audio_bytes(bytes, name, None).expect("decodes");
    assert_eq!(rate, SAMPLE_RATE, "{name}");
    samples.len()
}

/// The samples an Ogg Opus file decodes to at 24 kHz (its last granule position at
/// 48 kHz, less the pre-skip, halved).
fn opus_len(bytes: &[u8]) -> usize {
    assert_eq!(&bytes[..4], b"OggS");
    assert_eq!(&bytes[28..36], b"OpusHead");
    assert_eq!(u32_at(bytes, 40), SAMPLE_RATE, "24 kHz input signalled");
    let pre_skip = u16::from_le_bytes([bytes[38], bytes[39]]) as usize;
    let last = (0..bytes.len() - 27)
        .rev()
        .find(|&i| &bytes[i..i + 4] == b"OggS")
        .unwrap();
    let granule = u64::from_le_bytes(bytes[last + 6..last + 14].try_into().unwrap()) as usize;
    (granule - pre_skip) / 2
}

/// ADTS frames × 1024 samples.
fn adts_len(bytes: &[u8]) -> usize {
    let (mut at, mut frames) = (0, 0);
    while at + 7 <= bytes.len() {
        assert_eq!(
            (bytes[at], bytes[at + 1] & 0xf6),
            (0xff, 0xf0),
            "ADTS sync at {at}"
        );
        let len = (usize::from(bytes[at + 3] & 3) << 11)
            | (usize::from(bytes[at + 4]) << 3)
            | usize::from(bytes[at + 5] >> 5);
        at += len;
        frames += 1;
    }
    assert_eq!(at, bytes.len(), "whole ADTS frames");
    frames * 1024
}

#[test]
fn generate_picks_the_format_by_extension_or_flag() {
    let sb = Sandbox::new();
    let wav = sb.generate_samples(sb.generate());
    let n = wav.len() - TRAILING_SILENCE;
    let out = |name: &str, extra: &[(&str, &str)]| {
        let path = sb.path(name);
        let mut args = sb.generate().set("--output-path", utf8(&path));
        for (flag, value) in extra {
            args = args.set(flag, *value);
        }
        sb.run_ok(&args, b"");
        std::fs::read(&path).unwrap()
    };
    // MP3: LAME's delay and padding on top (no LAME tag), under 3 frames of 576.
    let mp3 = out("speech.mp3", &[]);
    let len = decoded_len(&mp3, "speech.mp3");
    assert!((n..=n + 3 * 576).contains(&len), "mp3: {len} for {n}");
    // Ogg Opus, .opus or .ogg: exactly.
    assert_eq!(opus_len(&out("speech.opus", &[])), n);
    assert_eq!(opus_len(&out("speech.ogg", &[])), n);
    // AAC (ADTS): the encoder's delay and padding on top.
    let len = adts_len(&out("speech.aac", &[]));
    assert!((n..=n + 3 * 1024).contains(&len), "aac: {len} for {n}");
    // FLAC by extension, and by --format whatever the extension.
    assert_eq!(decoded_len(&out("speech.flac", &[]), "x.flac"), n);
    let forced = out("speech.wav", &[("--format", "flac")]);
    assert_eq!(&forced[..4], b"fLaC");
    assert_eq!(decoded_len(&forced, "x.flac"), n);
    // --speed: twice as fast is half as long, the WAV's silence after it.
    let fast = out("fast.wav", &[("--speed", "2")]);
    assert_eq!(decoded_len(&fast, "fast.wav"), n / 2 + TRAILING_SILENCE);
}

#[test]
fn stream_writes_the_compressed_formats_and_speed() {
    let sb = Sandbox::new();
    let n = sb.stream_samples(sb.stream()).len();
    let run = |format: &str, speed: &str| {
        let args = sb.stream().set("--format", format).set("--speed", speed);
        sb.run_ok(&args, b"").stdout
    };
    assert_eq!(opus_len(&run("opus", "1")), n);
    assert_eq!(opus_len(&run("opus", "0.5")), 2 * n);
    let len = decoded_len(&run("mp3", "1"), "x.mp3");
    assert!((n..=n + 3 * 576).contains(&len), "mp3: {len} for {n}");
    let len = adts_len(&run("aac", "1"));
    assert!((n..=n + 3 * 1024).contains(&len), "aac: {len} for {n}");
    assert_eq!(decoded_len(&run("flac", "2"), "x.flac"), n / 2);
    assert_eq!(i16s(&run("pcm-s16le", "0.5")).len(), 2 * n);
}

#[test]
fn speeds_out_of_range_are_refused_before_any_work() {
    let sb = Sandbox::new();
    for speed in ["0.2", "4.5", "nan"] {
        let path = sb.path("never.mp3");
        let out = sb.run(
            &sb.generate()
                .set("--output-path", utf8(&path))
                .set("--speed", speed),
            b"",
        );
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--speed") && stderr.contains("0.25 to 4.0"),
            "{speed}: {stderr}"
        );
        assert!(!path.exists(), "no file for a refused run");
    }
}
