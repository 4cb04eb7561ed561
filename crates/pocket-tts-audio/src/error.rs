//! The crate's error.

/// What can fail while encoding or stretching audio.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A codec refused its settings or its input (the library's message).
    #[error("{codec} encoder: {message}")]
    Encoder {
        /// The codec's name (`mp3`, `opus`, `aac`, `flac`).
        codec: &'static str,
        /// What the library said.
        message: String,
    },
    /// A codec cannot encode at this sample rate.
    #[error("{codec} cannot encode audio at {rate} Hz (it takes {supported})")]
    SampleRate {
        /// The codec's name.
        codec: &'static str,
        /// The rate asked for, in Hz.
        rate: u32,
        /// The rates it takes, in words.
        supported: &'static str,
    },
    /// The codec's encoder was left out of this build (its cargo feature is off).
    #[error(
        "this build has no {codec} encoder (built without the cargo feature `{feature}`): \
         choose another format (wav, opus, flac), or rebuild with `--features {feature}`"
    )]
    NotBuilt {
        /// The codec's name (`mp3`, `aac`).
        codec: &'static str,
        /// The cargo feature that builds it.
        feature: &'static str,
    },
    /// A speed outside [`crate::MIN_SPEED`]..=[`crate::MAX_SPEED`] (or not finite).
    #[error("speed {0} is out of range: give a speed from 0.25 to 4.0 (1.0 is normal)")]
    Speed(f64),
}

impl Error {
    pub(crate) fn encoder(codec: &'static str, message: impl std::fmt::Display) -> Self {
        Error::Encoder {
            codec,
            message: message.to_string(),
        }
    }
}
