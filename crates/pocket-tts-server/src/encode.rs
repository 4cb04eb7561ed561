//! Audio sent over the wire: the reference's streaming WAV (`data/audio.py`
//! `StreamingWAVWriter` on an unseekable output: a header claiming 10⁹ frames, then 16-bit
//! PCM, then 200 ms of silence), raw 16-bit little-endian PCM (OpenAI's `pcm`), and the
//! compressed formats of `pocket-tts-audio`: MP3, Ogg Opus and AAC (ADTS) streamed as
//! frames come, FLAC encoded once the stream is complete. A `speed` other than 1
//! time-stretches the samples first ([`pocket_tts_audio::TimeStretch`]).

use pocket_tts_audio::{Codec, TimeStretch};
use pocket_tts_core::audio::{pcm16_le, WavWriter};

/// The formats a response can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AudioFormat {
    /// Streaming WAV, as the reference's `/tts`.
    Wav,
    /// Raw PCM, 24 kHz, 16-bit signed little-endian, mono.
    Pcm,
    /// A compressed format ([`Codec`]).
    Compressed(Codec),
}

impl AudioFormat {
    /// OpenAI's `response_format` names, in the order its documentation lists them.
    pub const NAMES: [&'static str; 6] = ["mp3", "opus", "aac", "flac", "wav", "pcm"];

    /// The format OpenAI's `response_format` value names.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "wav" => Some(AudioFormat::Wav),
            "pcm" => Some(AudioFormat::Pcm),
            other => other.parse().ok().map(AudioFormat::Compressed),
        }
    }

    /// The response's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            AudioFormat::Wav => "audio/wav",
            AudioFormat::Pcm => "audio/pcm",
            AudioFormat::Compressed(c) => c.content_type(),
        }
    }
}

/// Turns frames of samples into the bytes of one response, piece by piece.
pub enum Encoder {
    /// The WAV writer over the bytes not yet sent.
    Wav(WavWriter<Vec<u8>>),
    /// Raw PCM.
    Pcm,
    /// MP3, Opus, AAC or FLAC.
    Compressed(Box<pocket_tts_audio::Encoder>),
}

/// A response's audio path: the time-stretch (for a `speed` other than 1), then the
/// encoder.
pub struct AudioOut {
    stretch: Option<TimeStretch>,
    encoder: Encoder,
}

impl AudioOut {
    /// The path for `format` at `sample_rate` Hz and `speed` (checked by the caller).
    ///
    /// # Errors
    /// The encoder's or the speed's, as a message.
    pub fn new(format: AudioFormat, sample_rate: u32, speed: f64) -> Result<Self, String> {
        let stretch = if speed == 1.0 {
            None
        } else {
            Some(TimeStretch::new(speed, sample_rate).map_err(|e| e.to_string())?)
        };
        Ok(Self {
            stretch,
            encoder: Encoder::new(format, sample_rate)?,
        })
    }

    /// The bytes of the next frame's samples (see [`Encoder::frame`]).
    ///
    /// # Errors
    /// The encoder's, as a message.
    pub fn frame(&mut self, samples: &[f32]) -> Result<Vec<u8>, String> {
        match &mut self.stretch {
            Some(s) => {
                let stretched = s.process(samples);
                self.encoder.frame(&stretched)
            }
            None => self.encoder.frame(samples),
        }
    }

    /// The last bytes (see [`Encoder::finish`]).
    ///
    /// # Errors
    /// The encoder's, as a message.
    pub fn finish(mut self) -> Result<Vec<u8>, String> {
        let mut out = match self.stretch.take() {
            Some(s) => self.encoder.frame(&s.finish())?,
            None => Vec::new(),
        };
        out.extend(self.encoder.finish()?);
        Ok(out)
    }
}

impl Encoder {
    /// A new encoder; for WAV the header is the start of the first piece.
    ///
    /// # Errors
    /// A compressed format's refusal of the rate, as a message.
    pub fn new(format: AudioFormat, sample_rate: u32) -> Result<Self, String> {
        Ok(match format {
            AudioFormat::Wav => Encoder::Wav(
                WavWriter::new_streaming(Vec::new(), sample_rate)
                    .expect("writing to a Vec cannot fail"),
            ),
            AudioFormat::Pcm => Encoder::Pcm,
            AudioFormat::Compressed(codec) => Encoder::Compressed(Box::new(
                pocket_tts_audio::Encoder::new(codec, sample_rate).map_err(|e| e.to_string())?,
            )),
        })
    }

    /// The bytes of `samples` (preceded, the first time, by the WAV header; none for FLAC,
    /// which keeps everything for [`Self::finish`]).
    ///
    /// # Errors
    /// A compressed format's encoder failure, as a message.
    pub fn frame(&mut self, samples: &[f32]) -> Result<Vec<u8>, String> {
        match self {
            Encoder::Wav(w) => {
                w.write_samples(samples)
                    .expect("writing to a Vec cannot fail");
                Ok(std::mem::take(w.get_mut()))
            }
            Encoder::Pcm => {
                let mut out = Vec::with_capacity(samples.len() * 2);
                pcm16_le(samples, &mut out);
                Ok(out)
            }
            Encoder::Compressed(e) => e.encode(samples).map_err(|e| e.to_string()),
        }
    }

    /// The last bytes: for WAV, what is pending and the trailing 200 ms of silence; for
    /// the compressed formats, what the codec holds (FLAC: the whole file).
    ///
    /// # Errors
    /// The encoder's failure, as a message.
    pub fn finish(self) -> Result<Vec<u8>, String> {
        match self {
            Encoder::Wav(w) => Ok(w.finalize().expect("writing to a Vec cannot fail")),
            Encoder::Pcm => Ok(Vec::new()),
            Encoder::Compressed(e) => e.finish().map_err(|e| e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wav_pieces_make_the_reference_stream() {
        let mut wav = Encoder::new(AudioFormat::Wav, 24_000).unwrap();
        let first = wav.frame(&[0.5, -1.5]).unwrap();
        assert_eq!(&first[..4], b"RIFF");
        assert_eq!(first.len(), 44 + 4);
        // clamp(x) * 32767 truncated: 0.5 → 16383, -1.5 → -32767.
        assert_eq!(&first[44..], &[0xff, 0x3f, 0x01, 0x80]);
        assert_eq!(wav.frame(&[0.0]).unwrap(), vec![0, 0]);
        // 200 ms of silence at 24 kHz closes the stream.
        assert_eq!(wav.finish().unwrap(), vec![0u8; 2 * 4800]);
        let mut pcm = Encoder::new(AudioFormat::Pcm, 24_000).unwrap();
        assert_eq!(
            pcm.frame(&[0.5, -1.5]).unwrap(),
            vec![0xff, 0x3f, 0x01, 0x80]
        );
        assert!(pcm.finish().unwrap().is_empty());
    }

    #[test]
    fn format_names_are_openais() {
        for name in AudioFormat::NAMES {
            assert!(AudioFormat::from_name(name).is_some(), "{name}");
        }
        assert_eq!(
            AudioFormat::from_name("mp3"),
            Some(AudioFormat::Compressed(Codec::Mp3))
        );
        assert_eq!(AudioFormat::from_name("ogg"), None);
    }
}
