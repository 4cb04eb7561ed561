//! Each codec's output decodes, by a decoder that is not ours, to the input's length
//! (within the codec's own framing, stated per codec) and to a similar waveform.

use pocket_tts_audio::{Codec, Encoder, Error};

use crate::signal::{voiced, FRAME, RATE};

/// Encodes `input` streamed in model frames; returns the bytes and how many came before
/// `finish` from the first frame.
fn encode(codec: Codec, input: &[f32]) -> (Vec<u8>, usize) {
    let mut e = Encoder::new(codec, RATE).unwrap();
    let mut out = Vec::new();
    let mut first = 0;
    for (i, frame) in input.chunks(FRAME).enumerate() {
        let bytes = e.encode(frame).unwrap();
        if i == 0 {
            first = bytes.len();
        }
        out.extend(bytes);
    }
    out.extend(e.finish().unwrap());
    (out, first)
}

/// Decodes with symphonia: the samples and the rate.
fn symphonia_decode(bytes: Vec<u8>, ext: &str) -> (Vec<f32>, u32) {
    use symphonia::core::codecs::audio::AudioDecoderOptions;
    use symphonia::core::formats::probe::Hint;
    use symphonia::core::formats::{FormatOptions, TrackType};
    use symphonia::core::io::MediaSourceStream;
    use symphonia::core::meta::MetadataOptions;

    let mss = MediaSourceStream::new(Box::new(std::io::Cursor::new(bytes)), Default::default());
    let mut hint = Hint::new();
    hint.with_extension(ext);
    let mut format = symphonia::default::get_probe()
        .probe(
            &hint,
            mss,
            FormatOptions::default(),
            MetadataOptions::default(),
        )
        .expect("symphonia recognises the stream");
    let track = format
        .default_track(TrackType::Audio)
        .expect("an audio track");
    let id = track.id;
    let params = track
        .codec_params
        .as_ref()
        .and_then(|p| p.audio())
        .unwrap()
        .clone();
    let mut decoder = symphonia::default::get_codecs()
        .make_audio_decoder(&params, &AudioDecoderOptions::default())
        .expect("symphonia decodes the codec");
    let (mut samples, mut rate) = (Vec::new(), 0);
    while let Ok(Some(packet)) = format.next_packet() {
        if packet.track_id != id {
            continue;
        }
        let buf = decoder.decode(&packet).expect("every packet decodes");
        assert_eq!(buf.spec().channels().count(), 1, "mono");
        rate = buf.spec().rate();
        let start = samples.len();
        samples.resize(start + buf.samples_interleaved(), 0.0);
        buf.copy_to_slice_interleaved(&mut samples[start..]);
    }
    (samples, rate)
}

/// Decodes Ogg Opus with libopus's decoder at 48 kHz, as RFC 7845 says: the pre-skip
/// dropped, the end cut at the last page's granule position. Returns the samples and the
/// `OpusHead`'s input rate.
fn opus_decode(bytes: Vec<u8>) -> (Vec<f32>, u32) {
    let mut reader = ogg::PacketReader::new(std::io::Cursor::new(bytes));
    let head = reader.read_packet_expected().unwrap();
    assert_eq!(&head.data[..8], b"OpusHead");
    assert_eq!(head.data[9], 1, "one channel");
    let pre_skip = u16::from_le_bytes([head.data[10], head.data[11]]) as usize;
    let input_rate = u32::from_le_bytes(head.data[12..16].try_into().unwrap());
    let tags = reader.read_packet_expected().unwrap();
    assert_eq!(&tags.data[..8], b"OpusTags");
    let mut decoder =
        opusic_c::Decoder::new(opusic_c::Channels::Mono, opusic_c::SampleRate::Hz48000).unwrap();
    let mut out = Vec::new();
    let mut last_granule = 0;
    while let Some(p) = reader.read_packet().unwrap() {
        let mut pcm = vec![0.0f32; 5760];
        let n = decoder
            .decode_float_to_slice(&p.data, &mut pcm, false)
            .unwrap();
        out.extend_from_slice(&pcm[..n]);
        if p.last_in_stream() {
            last_granule = p.absgp_page() as usize;
        }
    }
    assert!(
        last_granule > pre_skip,
        "the stream ends with a granule position"
    );
    out.truncate(last_granule);
    out.drain(..pre_skip);
    (out, input_rate)
}

/// The input: 3 s of a voice with 0.2 s of silence at each end (not a whole number of
/// any codec's frames).
fn input() -> Vec<f32> {
    let mut x = voiced(120.0, 2.63, 0.2);
    x.truncate(x.len() - 37);
    x
}

#[cfg(feature = "mp3")]
#[test]
fn mp3_decodes_to_the_input_length_and_streams_from_the_first_frame() {
    let input = input();
    let (bytes, first) = encode(Codec::Mp3, &input);
    assert!(first > 0, "the first 80 ms frame gives MP3 bytes at once");
    let (decoded, rate) = symphonia_decode(bytes, "mp3");
    assert_eq!(rate, RATE);
    // No LAME tag in a stream: the decoder's output starts with the encoder's delay
    // (576 + 529 samples) and ends on a whole frame (576 samples at 24 kHz).
    let extra = decoded.len() as i64 - input.len() as i64;
    assert!(
        (0..=576 + 529 + 576).contains(&extra),
        "mp3: {extra} samples more than the input"
    );
}

#[test]
fn ogg_opus_decodes_to_exactly_the_input_length() {
    let input = input();
    let (bytes, first) = encode(Codec::Opus, &input);
    assert!(first > 0, "the first 80 ms frame gives Ogg pages at once");
    let (decoded, input_rate) = opus_decode(bytes);
    assert_eq!(input_rate, RATE, "the OpusHead signals 24 kHz input");
    assert_eq!(
        decoded.len(),
        input.len() * 2,
        "48 kHz output, pre-skip and end trimmed"
    );
    // The waveform survives: 48 kHz output decimated by 2 against the input, after the
    // first 100 ms (the codec's warm-up); Opus at 32 kbit/s keeps a harmonic voice.
    let err: f32 = (2400..input.len())
        .map(|i| (decoded[2 * i] - input[i]).powi(2))
        .sum::<f32>();
    let energy: f32 = input[2400..].iter().map(|x| x * x).sum();
    assert!(
        err < 0.25 * energy,
        "opus: error energy {:.3} of the signal's",
        err / energy
    );
}

#[cfg(feature = "aac")]
#[test]
fn aac_adts_decodes_to_the_input_length() {
    let input = input();
    let (bytes, first) = encode(Codec::Aac, &input);
    assert!(
        first > 0,
        "the first 80 ms frame gives an ADTS frame at once"
    );
    assert_eq!(
        &bytes[..2],
        &[0xff, 0xf1],
        "an ADTS sync word (MPEG-4, no CRC)"
    );
    let (decoded, rate) = symphonia_decode(bytes, "aac");
    assert_eq!(rate, RATE);
    // ADTS cannot signal the encoder's delay: the output starts with it and ends on a
    // whole frame of 1024 samples.
    let extra = decoded.len() as i64 - input.len() as i64;
    assert!(
        (0..=2048 + 1024).contains(&extra),
        "aac: {extra} samples more than the input"
    );
}

#[test]
fn flac_decodes_to_the_input_samples_exactly() {
    let input = input();
    let (bytes, first) = encode(Codec::Flac, &input);
    assert_eq!(first, 0, "FLAC is written whole at the end");
    let (decoded, rate) = symphonia_decode(bytes, "flac");
    assert_eq!(rate, RATE);
    assert_eq!(decoded.len(), input.len());
    let mut pcm = Vec::new();
    pocket_tts_audio::to_i16(&input, &mut pcm);
    for (d, p) in decoded.iter().zip(&pcm) {
        assert!((d * 32768.0 - f32::from(*p)).abs() < 0.5, "lossless");
    }
}

#[test]
fn codec_names_and_extensions() {
    for (c, name) in Codec::ALL.iter().zip(Codec::NAMES) {
        assert_eq!(name.parse::<Codec>().unwrap(), *c);
        assert_eq!(Codec::from_extension(c.extension()), Some(*c));
    }
    assert_eq!(Codec::from_extension("OGG"), Some(Codec::Opus));
    assert_eq!(Codec::from_extension("wav"), None);
    assert!("vorbis"
        .parse::<Codec>()
        .unwrap_err()
        .contains("mp3, opus, aac or flac"));
    let e = Encoder::new(Codec::Opus, 44_100).unwrap_err().to_string();
    assert!(e.contains("44100 Hz") && e.contains("24"), "{e}");
}

/// Built with `--no-default-features` too (CI's lint stage tests that build): a codec left
/// out is refused at `Encoder::new`, naming the feature that builds it.
#[test]
fn every_codec_is_built_or_names_the_feature_that_builds_it() {
    for c in Codec::ALL {
        match Encoder::new(c, RATE) {
            Ok(e) => {
                assert!(c.is_built(), "{c}");
                assert_eq!(e.codec(), c);
            }
            Err(Error::NotBuilt { codec, feature }) => {
                assert!(!c.is_built(), "{c}");
                assert_eq!(codec, c.name());
                let message = Error::NotBuilt { codec, feature }.to_string();
                assert!(
                    message.contains(&format!("--features {feature}")),
                    "{message}"
                );
            }
            Err(e) => panic!("{c}: {e}"),
        }
    }
    assert!(Codec::Opus.is_built() && Codec::Flac.is_built());
    assert_eq!(Codec::Mp3.is_built(), cfg!(feature = "mp3"));
    assert_eq!(Codec::Aac.is_built(), cfg!(feature = "aac"));
}
