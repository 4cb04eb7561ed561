//! MP3 through LAME (`mp3lame-encoder`): MPEG-1/2/2.5 Layer III by the rate, mono,
//! 64 kbit/s CBR, no Xing/LAME tag (a stream cannot go back to write it).

use mp3lame_encoder::{Bitrate, Builder, FlushGap, Mode, MonoPcm, Quality};

use crate::{pcm::to_i16, Error};

const CODEC: &str = "mp3";
/// Bytes LAME may need to flush (its documentation: at least 7200).
const FLUSH_BYTES: usize = 7200;

pub(crate) struct Mp3 {
    lame: mp3lame_encoder::Encoder,
    pcm: Vec<i16>,
}

impl Mp3 {
    pub(crate) fn new(sample_rate: u32) -> Result<Self, Error> {
        if ![8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000].contains(&sample_rate) {
            return Err(Error::SampleRate {
                codec: CODEC,
                rate: sample_rate,
                supported: "8, 11.025, 12, 16, 22.05, 24, 32, 44.1 or 48 kHz",
            });
        }
        let fail = |e: mp3lame_encoder::BuildError| Error::encoder(CODEC, e);
        let mut b = Builder::new().ok_or_else(|| Error::encoder(CODEC, "LAME cannot allocate"))?;
        b.set_num_channels(1).map_err(fail)?;
        b.set_sample_rate(sample_rate).map_err(fail)?;
        b.set_brate(Bitrate::Kbps64).map_err(fail)?;
        b.set_mode(Mode::Mono).map_err(fail)?;
        b.set_quality(Quality::Good).map_err(fail)?;
        b.set_to_write_vbr_tag(false).map_err(fail)?;
        Ok(Self {
            lame: b.build().map_err(fail)?,
            pcm: Vec::new(),
        })
    }

    pub(crate) fn encode(&mut self, samples: &[f32]) -> Result<Vec<u8>, Error> {
        self.pcm.clear();
        to_i16(samples, &mut self.pcm);
        let mut out = Vec::with_capacity(mp3lame_encoder::max_required_buffer_size(samples.len()));
        self.lame
            .encode_to_vec(MonoPcm(self.pcm.as_slice()), &mut out)
            .map_err(|e| Error::encoder(CODEC, e))?;
        Ok(out)
    }

    pub(crate) fn finish(mut self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(FLUSH_BYTES);
        self.lame
            .flush_to_vec::<FlushGap>(&mut out)
            .map_err(|e| Error::encoder(CODEC, e))?;
        Ok(out)
    }
}
