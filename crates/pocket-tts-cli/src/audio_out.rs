//! What `generate` and `stream` do to the samples before they are written: the
//! time-stretch of `--speed`, and the compressed formats (`pocket-tts-audio`: MP3, Ogg
//! Opus, AAC in ADTS, FLAC), the same encoders as the server's.

use std::io::{self, Write};

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use pocket_tts_audio::{Codec, Encoder, TimeStretch};

/// `--speed`, of `generate` and `stream`.
#[derive(Args, Debug, Clone, Copy)]
pub struct SpeedArgs {
    /// Speaking speed, from 0.25 to 4.0 (2.0: twice as fast, half as long), keeping the
    /// pitch (time-stretched with Signalsmith Stretch, as the audio is generated).
    #[arg(long, default_value_t = 1.0, value_name = "FACTOR")]
    pub speed: f64,
}

impl SpeedArgs {
    /// Checks `--speed` (before the model loads).
    ///
    /// # Errors
    /// A speed out of range, naming the flag and the range.
    pub fn check(&self) -> Result<()> {
        if let Err(e) = pocket_tts_audio::check_speed(self.speed) {
            bail!("--{e}");
        }
        Ok(())
    }

    /// The time-stretch for audio at `sample_rate` Hz.
    pub fn stretcher(&self, sample_rate: u32) -> Result<TimeStretch> {
        TimeStretch::new(self.speed, sample_rate).map_err(|e| anyhow::anyhow!("--{e}"))
    }
}

/// The output formats of `generate --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FileFormat {
    /// WAV, mono 16-bit PCM (the reference's).
    Wav,
    /// MP3 (LAME, 64 kbit/s, mono).
    Mp3,
    /// Opus in an Ogg file (libopus, 32 kbit/s; `.opus` or `.ogg`).
    Opus,
    /// AAC-LC in ADTS frames (FDK AAC, 64 kbit/s; `.aac`).
    Aac,
    /// FLAC, 16-bit mono, lossless.
    Flac,
}

impl FileFormat {
    /// The format of `--format` if given, else the output path's extension (`.mp3`,
    /// `.opus`, `.ogg`, `.aac`, `.flac`; any other, or none, is WAV).
    pub fn choose(format: Option<FileFormat>, path: &str) -> FileFormat {
        if let Some(f) = format {
            return f;
        }
        let ext = std::path::Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default();
        match Codec::from_extension(ext) {
            Some(c) => FileFormat::from_codec(c),
            None => FileFormat::Wav,
        }
    }

    fn from_codec(c: Codec) -> FileFormat {
        match c {
            Codec::Mp3 => FileFormat::Mp3,
            Codec::Opus => FileFormat::Opus,
            Codec::Aac => FileFormat::Aac,
            _ => FileFormat::Flac,
        }
    }

    /// Fails when this build has not the format's encoder (MP3 and AAC are cargo
    /// features, see `pocket-tts-audio`), naming where the format came from (`--format`
    /// or the output path), before any model work.
    pub fn check_built(self, from: &str) -> Result<()> {
        check_built(self.codec(), from)
    }

    /// The codec, `None` for WAV.
    pub fn codec(self) -> Option<Codec> {
        match self {
            FileFormat::Wav => None,
            FileFormat::Mp3 => Some(Codec::Mp3),
            FileFormat::Opus => Some(Codec::Opus),
            FileFormat::Aac => Some(Codec::Aac),
            FileFormat::Flac => Some(Codec::Flac),
        }
    }
}

/// A compressed format written to `out` as the samples come.
pub struct Encoded<W: Write> {
    out: W,
    encoder: Encoder,
}

impl<W: Write> Encoded<W> {
    /// An encoder of `codec` at `sample_rate` Hz writing to `out`.
    pub fn new(codec: Codec, sample_rate: u32, out: W) -> Result<Self> {
        Ok(Self {
            out,
            encoder: Encoder::new(codec, sample_rate)?,
        })
    }

    /// Encodes and writes `samples`.
    pub fn write(&mut self, samples: &[f32]) -> io::Result<()> {
        let bytes = self.encoder.encode(samples).map_err(io::Error::other)?;
        if bytes.is_empty() {
            return Ok(());
        }
        self.out.write_all(&bytes)
    }

    /// Writes the codec's last bytes and flushes; returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        let bytes = self.encoder.finish().map_err(io::Error::other)?;
        self.out.write_all(&bytes)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Fails when `codec` is not in this build (see [`FileFormat::check_built`]).
pub fn check_built(codec: Option<Codec>, from: &str) -> Result<()> {
    match codec {
        Some(c) if !c.is_built() => Err(anyhow::Error::new(pocket_tts_audio::Error::NotBuilt {
            codec: c.name(),
            feature: c.name(),
        })
        .context(format!("{from}: {c}"))),
        _ => Ok(()),
    }
}
