//! Audio sent over the wire: the reference's streaming WAV (`data/audio.py`
//! `StreamingWAVWriter` on an unseekable output: a header claiming 10⁹ frames, then 16-bit
//! PCM, then 200 ms of silence) or raw 16-bit little-endian PCM (OpenAI's `pcm`).

use pocket_tts_core::audio::{pcm16_le, WavWriter};

/// The formats a response can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AudioFormat {
    /// Streaming WAV, as the reference's `/tts`.
    Wav,
    /// Raw PCM, 24 kHz, 16-bit signed little-endian, mono.
    Pcm,
}

impl AudioFormat {
    /// The response's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            AudioFormat::Wav => "audio/wav",
            AudioFormat::Pcm => "audio/pcm",
        }
    }
}

/// Turns frames of samples into the bytes of one response, piece by piece.
pub enum Encoder {
    /// The WAV writer over the bytes not yet sent.
    Wav(WavWriter<Vec<u8>>),
    /// Raw PCM.
    Pcm,
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
        }
    }

    /// The bytes of `samples` (preceded, the first time, by the WAV header).
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
        }
    }

    /// The last bytes: for WAV, what is pending and the trailing 200 ms of silence.
    pub fn finish(self) -> Vec<u8> {
        match self {
            Encoder::Wav(w) => w.finalize().expect("writing to a Vec cannot fail"),
            Encoder::Pcm => Vec::new(),
        }
    }
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
        assert_eq!(wav.finish(), vec![0u8; 2 * 4800]);
        let mut pcm = Encoder::new(AudioFormat::Pcm, 24_000);
        assert_eq!(pcm.frame(&[0.5, -1.5]), vec![0xff, 0x3f, 0x01, 0x80]);
        assert!(pcm.finish().is_empty());
    }
}
