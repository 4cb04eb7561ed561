//! Audio for pocket-tts-rs outside the model: the compressed formats the server and the CLI
//! send (MP3, Ogg Opus, AAC in ADTS, FLAC), encoded piece by piece as frames of samples
//! come, and a pitch-preserving time-stretch for the `speed` setting, streamed too.
//!
//! The encoders are maintained bindings to the reference C libraries, each built from the
//! source its crate bundles: LAME (`mp3lame-encoder`), libopus (`opusic-c`) in Ogg (`ogg`),
//! the Fraunhofer FDK AAC encoder (`fdk-aac`); FLAC is `flacenc` (Rust). The time-stretch
//! is Signalsmith Stretch (`signalsmith-stretch`). This crate knows nothing of the model:
//! it takes mono `f32` samples in `[-1, 1]` at any rate the codec accepts (the model's is
//! 24 kHz).
//!
//! Cargo features (both on by default): `mp3` (LAME, LGPL) and `aac` (FDK AAC, a licence of
//! its own without patent rights). A build without one still knows the codec's name; its
//! [`Encoder::new`] returns [`Error::NotBuilt`] and [`Codec::is_built`] says so.
//!
//! ```
//! use pocket_tts_audio::{Codec, Encoder};
//!
//! let mut opus = Encoder::new(Codec::Opus, 24_000)?;
//! let mut bytes = Vec::new();
//! for _ in 0..10 {
//!     let frame = vec![0.0f32; 1920]; // 80 ms at 24 kHz, one model frame
//!     bytes.extend(opus.encode(&frame)?);
//! }
//! bytes.extend(opus.finish()?);
//! assert!(!bytes.is_empty());
//! # Ok::<(), pocket_tts_audio::Error>(())
//! ```

#[cfg(feature = "aac")]
mod aac;
mod codec;
mod error;
mod flac;
#[cfg(feature = "mp3")]
mod mp3;
mod opus;
mod pcm;
mod stretch;

pub use codec::{Codec, Encoder};
pub use error::Error;
pub use pcm::to_i16;
pub use stretch::{check_speed, TimeStretch, MAX_SPEED, MIN_SPEED};
