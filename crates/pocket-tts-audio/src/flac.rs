//! FLAC through `flacenc`, 16-bit mono, encoded whole at the end (the STREAMINFO header
//! holds the total length and the MD5 of the samples).

use flacenc::component::BitRepr;
use flacenc::error::Verify;

use crate::{pcm::to_i16, Error};

const CODEC: &str = "flac";

pub(crate) struct Flac {
    samples: Vec<i16>,
    rate: u32,
}

impl Flac {
    pub(crate) fn new(rate: u32) -> Self {
        Self {
            samples: Vec::new(),
            rate,
        }
    }

    pub(crate) fn push(&mut self, samples: &[f32]) {
        to_i16(samples, &mut self.samples);
    }

    pub(crate) fn finish(self) -> Result<Vec<u8>, Error> {
        let samples: Vec<i32> = self.samples.iter().map(|&s| i32::from(s)).collect();
        let config = flacenc::config::Encoder::default()
            .into_verified()
            .map_err(|e| Error::encoder(CODEC, format!("configuration: {e:?}")))?;
        let source = flacenc::source::MemSource::from_samples(&samples, 1, 16, self.rate as usize);
        let mut stream = flacenc::encode_with_fixed_block_size(&config, source, config.block_size)
            .map_err(|e| Error::encoder(CODEC, e))?;
        // The minimum block size of STREAMINFO excludes the last block (the FLAC format
        // specification); flacenc counts it, and some decoders (symphonia) then refuse the
        // stream. Every block but the last has the fixed size.
        stream
            .stream_info_mut()
            .set_block_sizes(config.block_size, config.block_size)
            .map_err(|e| Error::encoder(CODEC, format!("{e:?}")))?;
        let mut sink = flacenc::bitsink::ByteSink::new();
        stream
            .write(&mut sink)
            .map_err(|e| Error::encoder(CODEC, format!("{e:?}")))?;
        Ok(sink.as_slice().to_vec())
    }
}
