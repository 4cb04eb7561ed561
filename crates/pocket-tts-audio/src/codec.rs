//! The compressed formats and one encoder type over them.

use std::fmt;
use std::str::FromStr;

#[cfg(feature = "aac")]
use crate::aac;
#[cfg(feature = "mp3")]
use crate::mp3;
use crate::{flac, opus, Error};

/// A compressed audio format this crate encodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Codec {
    /// MPEG Layer III (LAME), 64 kbit/s constant bit rate, mono; streamed (a frame of
    /// 576 samples at 24 kHz leaves as soon as LAME has encoded it).
    Mp3,
    /// Opus in an Ogg stream (RFC 7845), 24 kHz input signalled in the `OpusHead` (granule
    /// positions at 48 kHz as the format requires), 20 ms packets, one Ogg page per call
    /// of [`Encoder::encode`] that completes a packet; streamed.
    Opus,
    /// AAC-LC in ADTS frames (FDK AAC), 64 kbit/s, mono; streamed (1024 samples a frame).
    Aac,
    /// FLAC, 16-bit mono; written whole by [`Encoder::finish`] (its header holds the
    /// total length), nothing before.
    Flac,
}

impl Codec {
    /// Every codec, in the order of [`Codec::NAMES`].
    pub const ALL: [Codec; 4] = [Codec::Mp3, Codec::Opus, Codec::Aac, Codec::Flac];
    /// Their names (OpenAI's `response_format` values).
    pub const NAMES: [&'static str; 4] = ["mp3", "opus", "aac", "flac"];

    /// The name (`mp3`, `opus`, `aac`, `flac`).
    pub fn name(self) -> &'static str {
        match self {
            Codec::Mp3 => "mp3",
            Codec::Opus => "opus",
            Codec::Aac => "aac",
            Codec::Flac => "flac",
        }
    }

    /// The MIME type of a file or response.
    pub fn content_type(self) -> &'static str {
        match self {
            Codec::Mp3 => "audio/mpeg",
            Codec::Opus => "audio/ogg; codecs=opus",
            Codec::Aac => "audio/aac",
            Codec::Flac => "audio/flac",
        }
    }

    /// The usual file extension (without the dot).
    pub fn extension(self) -> &'static str {
        match self {
            Codec::Mp3 => "mp3",
            Codec::Opus => "opus",
            Codec::Aac => "aac",
            Codec::Flac => "flac",
        }
    }

    /// The codec a file extension names (case-insensitive, without the dot): `mp3`,
    /// `opus` or `ogg` (Ogg Opus), `aac` or `adts`, `flac`; `None` for any other.
    pub fn from_extension(ext: &str) -> Option<Codec> {
        match ext.to_ascii_lowercase().as_str() {
            "mp3" => Some(Codec::Mp3),
            "opus" | "ogg" => Some(Codec::Opus),
            "aac" | "adts" => Some(Codec::Aac),
            "flac" => Some(Codec::Flac),
            _ => None,
        }
    }

    /// Whether this build has its encoder (MP3 and AAC are cargo features, on by
    /// default; Ogg Opus and FLAC are always built).
    pub fn is_built(self) -> bool {
        match self {
            Codec::Mp3 => cfg!(feature = "mp3"),
            Codec::Aac => cfg!(feature = "aac"),
            Codec::Opus | Codec::Flac => true,
        }
    }

    /// Whether its bytes leave frame by frame ([`Encoder::encode`] returns bytes as the
    /// audio comes); FLAC's leave at [`Encoder::finish`].
    pub fn is_streamed(self) -> bool {
        !matches!(self, Codec::Flac)
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Codec {
    type Err = String;

    /// A name of [`Codec::NAMES`] (case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase();
        Codec::ALL
            .into_iter()
            .find(|c| c.name() == lower)
            .ok_or_else(|| format!("unknown codec {s:?}: use mp3, opus, aac or flac"))
    }
}

/// One stream's encoder: mono `f32` samples in, the bytes of one file or response out,
/// piece by piece. Feed any number of samples per call (the model's frames are 1920).
pub struct Encoder {
    inner: Inner,
}

enum Inner {
    #[cfg(feature = "mp3")]
    Mp3(mp3::Mp3),
    Opus(Box<opus::OggOpus>),
    #[cfg(feature = "aac")]
    Aac(aac::Aac),
    Flac(flac::Flac),
}

impl fmt::Debug for Encoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Encoder")
            .field("codec", &self.codec())
            .finish()
    }
}

impl Encoder {
    /// An encoder of `codec` for mono audio at `sample_rate` Hz.
    ///
    /// # Errors
    /// [`Error::SampleRate`] for a rate the codec does not take (Opus: 8, 12, 16, 24 or
    /// 48 kHz; MP3 and AAC: the MPEG rates, 8 to 48 kHz); [`Error::Encoder`] when the
    /// library refuses its settings; [`Error::NotBuilt`] for MP3 or AAC in a build
    /// without its feature.
    pub fn new(codec: Codec, sample_rate: u32) -> Result<Self, Error> {
        let inner = match codec {
            #[cfg(feature = "mp3")]
            Codec::Mp3 => Inner::Mp3(mp3::Mp3::new(sample_rate)?),
            #[cfg(not(feature = "mp3"))]
            Codec::Mp3 => return Err(not_built(codec, "mp3")),
            Codec::Opus => Inner::Opus(Box::new(opus::OggOpus::new(sample_rate)?)),
            #[cfg(feature = "aac")]
            Codec::Aac => Inner::Aac(aac::Aac::new(sample_rate)?),
            #[cfg(not(feature = "aac"))]
            Codec::Aac => return Err(not_built(codec, "aac")),
            Codec::Flac => Inner::Flac(flac::Flac::new(sample_rate)),
        };
        Ok(Self { inner })
    }

    /// The codec.
    pub fn codec(&self) -> Codec {
        match self.inner {
            #[cfg(feature = "mp3")]
            Inner::Mp3(_) => Codec::Mp3,
            Inner::Opus(_) => Codec::Opus,
            #[cfg(feature = "aac")]
            Inner::Aac(_) => Codec::Aac,
            Inner::Flac(_) => Codec::Flac,
        }
    }

    /// Encodes `samples` (mono, `[-1, 1]`, clamped) and returns the bytes ready to send
    /// (possibly none: the codecs work on frames of their own, and FLAC keeps everything
    /// for [`Self::finish`]). The first call's bytes start with the stream's header, if any.
    ///
    /// # Errors
    /// [`Error::Encoder`] when the library fails (not expected for mono input).
    pub fn encode(&mut self, samples: &[f32]) -> Result<Vec<u8>, Error> {
        match &mut self.inner {
            #[cfg(feature = "mp3")]
            Inner::Mp3(e) => e.encode(samples),
            Inner::Opus(e) => e.encode(samples),
            #[cfg(feature = "aac")]
            Inner::Aac(e) => e.encode(samples),
            Inner::Flac(e) => {
                e.push(samples);
                Ok(Vec::new())
            }
        }
    }

    /// The last bytes: what the codec still holds, padded to its frame with silence
    /// (for Opus the end is trimmed exactly by the last granule position), or FLAC's
    /// whole file.
    ///
    /// # Errors
    /// [`Error::Encoder`] when the library fails.
    pub fn finish(self) -> Result<Vec<u8>, Error> {
        match self.inner {
            #[cfg(feature = "mp3")]
            Inner::Mp3(e) => e.finish(),
            Inner::Opus(e) => e.finish(),
            #[cfg(feature = "aac")]
            Inner::Aac(e) => e.finish(),
            Inner::Flac(e) => e.finish(),
        }
    }
}

/// [`Error::NotBuilt`] for `codec`, left out with `feature`.
#[cfg(not(all(feature = "mp3", feature = "aac")))]
fn not_built(codec: Codec, feature: &'static str) -> Error {
    Error::NotBuilt {
        codec: codec.name(),
        feature,
    }
}
