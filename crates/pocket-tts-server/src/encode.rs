//! Audio sent over the wire: the reference's streaming WAV (`data/audio.py`
//! `StreamingWAVWriter` on an unseekable output: a header claiming 10⁹ frames, then 16-bit
//! PCM, then 200 ms of silence), raw 16-bit little-endian PCM (OpenAI's `pcm`), or FLAC
//! (`flacenc`; encoded once the stream is complete).

use pocket_tts_core::audio::{pcm16_le, WavWriter};

/// The formats a response can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AudioFormat {
    /// Streaming WAV, as the reference's `/tts`.
    Wav,
    /// Raw PCM, 24 kHz, 16-bit signed little-endian, mono.
    Pcm,
    /// FLAC, 16-bit mono, sent whole once generation ends (not streamed).
    Flac,
}

impl AudioFormat {
    /// The response's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            AudioFormat::Wav => "audio/wav",
            AudioFormat::Pcm => "audio/pcm",
            AudioFormat::Flac => "audio/flac",
        }
    }
}

/// Turns frames of samples into the bytes of one response, piece by piece.
pub enum Encoder {
    /// The WAV writer over the bytes not yet sent.
    Wav(WavWriter<Vec<u8>>),
    /// Raw PCM.
    Pcm,
    /// The samples so far (16-bit) and the rate, for FLAC.
    Flac(Vec<i32>, usize),
}

impl Encoder {
    /// A new encoder; for WAV the header is the start of the first piece.
    pub fn new(format: AudioFormat, sample_rate: u32) -> Self {
        match format {
            AudioFormat::Wav => Encoder::Wav(
                WavWriter::new_streaming(Vec::new(), sample_rate)
                    .expect("writing to a Vec cannot fail"),
            ),
            AudioFormat::Pcm => Encoder::Pcm,
            AudioFormat::Flac => Encoder::Flac(Vec::new(), sample_rate as usize),
        }
    }

    /// The bytes of `samples` (preceded, the first time, by the WAV header; none for FLAC,
    /// which is kept for [`Self::finish`]).
    pub fn frame(&mut self, samples: &[f32]) -> Vec<u8> {
        match self {
            Encoder::Wav(w) => {
                w.write_samples(samples)
                    .expect("writing to a Vec cannot fail");
                std::mem::take(w.get_mut())
            }
            Encoder::Pcm => {
                let mut out = Vec::with_capacity(samples.len() * 2);
                pcm16_le(samples, &mut out);
                out
            }
            Encoder::Flac(kept, _) => {
                let mut pcm = Vec::with_capacity(samples.len() * 2);
                pcm16_le(samples, &mut pcm);
                kept.extend(
                    pcm.chunks_exact(2)
                        .map(|b| i32::from(i16::from_le_bytes([b[0], b[1]]))),
                );
                Vec::new()
            }
        }
    }

    /// The last bytes: for WAV, what is pending and the trailing 200 ms of silence; for
    /// FLAC, the whole file.
    ///
    /// # Errors
    /// The FLAC encoder's, as a message (none is expected for 16-bit mono input).
    pub fn finish(self) -> Result<Vec<u8>, String> {
        match self {
            Encoder::Wav(w) => Ok(w.finalize().expect("writing to a Vec cannot fail")),
            Encoder::Pcm => Ok(Vec::new()),
            Encoder::Flac(samples, rate) => flac(&samples, rate),
        }
    }
}

/// Encodes 16-bit mono `samples` at `rate` Hz as a FLAC file.
fn flac(samples: &[i32], rate: usize) -> Result<Vec<u8>, String> {
    use flacenc::component::BitRepr;
    use flacenc::error::Verify;
    let config = flacenc::config::Encoder::default()
        .into_verified()
        .map_err(|e| format!("FLAC encoder configuration: {e:?}"))?;
    let source = flacenc::source::MemSource::from_samples(samples, 1, 16, rate);
    let mut stream = flacenc::encode_with_fixed_block_size(&config, source, config.block_size)
        .map_err(|e| format!("FLAC encoding failed: {e}"))?;
    // The minimum block size of STREAMINFO excludes the last block (the FLAC format
    // specification); flacenc counts it, and some decoders (symphonia) then refuse the
    // stream. Every block but the last has the fixed size.
    stream
        .stream_info_mut()
        .set_block_sizes(config.block_size, config.block_size)
        .map_err(|e| format!("FLAC encoding failed: {e:?}"))?;
    let mut sink = flacenc::bitsink::ByteSink::new();
    stream
        .write(&mut sink)
        .map_err(|e| format!("FLAC encoding failed: {e:?}"))?;
    Ok(sink.as_slice().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wav_pieces_make_the_reference_stream() {
        let mut wav = Encoder::new(AudioFormat::Wav, 24_000);
        let first = wav.frame(&[0.5, -1.5]);
        assert_eq!(&first[..4], b"RIFF");
        assert_eq!(first.len(), 44 + 4);
        // clamp(x) * 32767 truncated: 0.5 → 16383, -1.5 → -32767.
        assert_eq!(&first[44..], &[0xff, 0x3f, 0x01, 0x80]);
        assert_eq!(wav.frame(&[0.0]), vec![0, 0]);
        // 200 ms of silence at 24 kHz closes the stream.
        assert_eq!(wav.finish().unwrap(), vec![0u8; 2 * 4800]);
        let mut pcm = Encoder::new(AudioFormat::Pcm, 24_000);
        assert_eq!(pcm.frame(&[0.5, -1.5]), vec![0xff, 0x3f, 0x01, 0x80]);
        assert!(pcm.finish().unwrap().is_empty());
    }
}
