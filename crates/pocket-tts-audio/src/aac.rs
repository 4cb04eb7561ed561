//! AAC-LC in ADTS frames through the Fraunhofer FDK AAC encoder (`fdk-aac`), mono,
//! 64 kbit/s. ADTS cannot signal the encoder's delay: a decoder's output starts with the
//! encoder's priming samples (`nDelay`) and ends on a whole frame of 1024 samples, so
//! it is longer than the input by the delay and less than a frame.

use fdk_aac::enc::{AudioObjectType, BitRate, ChannelMode, EncoderParams, Transport};

use crate::{pcm::to_i16, Error};

const CODEC: &str = "aac";

pub(crate) struct Aac {
    fdk: fdk_aac::enc::Encoder,
    /// The largest ADTS frame (bytes) and the encoder's delay (samples).
    max_frame: usize,
    delay: usize,
    frame: usize,
    received: usize,
    pcm: Vec<i16>,
}

fn fail(e: fdk_aac::enc::EncoderError) -> Error {
    Error::encoder(CODEC, e)
}

impl Aac {
    pub(crate) fn new(sample_rate: u32) -> Result<Self, Error> {
        if ![8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000].contains(&sample_rate) {
            return Err(Error::SampleRate {
                codec: CODEC,
                rate: sample_rate,
                supported: "8, 11.025, 12, 16, 22.05, 24, 32, 44.1 or 48 kHz",
            });
        }
        let fdk = fdk_aac::enc::Encoder::new(EncoderParams {
            bit_rate: BitRate::Cbr(64_000),
            sample_rate,
            transport: Transport::Adts,
            channels: ChannelMode::Mono,
            audio_object_type: AudioObjectType::Mpeg4LowComplexity,
        })
        .map_err(fail)?;
        let info = fdk.info().map_err(fail)?;
        Ok(Self {
            max_frame: info.maxOutBufBytes as usize,
            delay: info.nDelay as usize,
            frame: info.frameLength as usize,
            fdk,
            received: 0,
            pcm: Vec::new(),
        })
    }

    /// Encodes `pcm` (16-bit) and any whole frames the encoder holds, into `out`.
    fn run(&mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        let mut buf = vec![0u8; self.max_frame.max(768)];
        let mut at = 0;
        loop {
            let info = self.fdk.encode(&self.pcm[at..], &mut buf).map_err(fail)?;
            at += info.input_consumed;
            out.extend_from_slice(&buf[..info.output_size]);
            if info.output_size == 0 && info.input_consumed == 0 {
                break;
            }
        }
        self.pcm.drain(..at);
        Ok(())
    }

    pub(crate) fn encode(&mut self, samples: &[f32]) -> Result<Vec<u8>, Error> {
        self.received += samples.len();
        to_i16(samples, &mut self.pcm);
        let mut out = Vec::new();
        self.run(&mut out)?;
        Ok(out)
    }

    pub(crate) fn finish(mut self) -> Result<Vec<u8>, Error> {
        // Silence up to the frame holding the input's last sample, delay included (the
        // binding has no flush call): every input sample is then in an ADTS frame.
        let frame = self.frame.max(1);
        let end = (self.received + self.delay).div_ceil(frame) * frame;
        let pad = end - self.received;
        self.pcm.extend(std::iter::repeat_n(0i16, pad));
        let mut out = Vec::new();
        self.run(&mut out)?;
        Ok(out)
    }
}
