//! Ogg Opus (RFC 7845) through libopus (`opusic-c`) and the `ogg` crate's page writer.
//!
//! libopus encodes the model's 24 kHz directly (one of its five rates); the `OpusHead`
//! says so (its "input sample rate"), and the pre-skip and granule positions count
//! 48 kHz samples as the format requires, so players resample nothing themselves and
//! the decoded length is exact (the last page's granule position trims the padding).

use ogg::{PacketWriteEndInfo, PacketWriter};
use opusic_c::{Application, Bitrate, Channels, SampleRate};

use crate::Error;

const CODEC: &str = "opus";
/// The stream's serial number (one logical stream per file, any value will do).
const SERIAL: u32 = 0x5074_7473;
/// Packet length: 20 ms.
const PACKET_MS: u32 = 20;
/// The largest packet libopus writes (its documentation's recommended buffer).
const MAX_PACKET: usize = 4000;

pub(crate) struct OggOpus {
    opus: opusic_c::Encoder,
    ogg: PacketWriter<'static, Vec<u8>>,
    /// Samples per packet at the input rate.
    packet: usize,
    /// 48 kHz samples per input sample (2 at 24 kHz).
    to_48k: u64,
    /// Samples waiting for a whole packet.
    pending: Vec<f32>,
    /// Input samples received, and the pre-skip (48 kHz samples).
    received: u64,
    pre_skip: u64,
    /// Packets written (each `packet` input samples).
    packets: u64,
    headers_sent: bool,
}

fn fail(e: impl std::fmt::Debug) -> Error {
    Error::encoder(CODEC, format!("{e:?}"))
}

impl OggOpus {
    pub(crate) fn new(sample_rate: u32) -> Result<Self, Error> {
        let rate = match sample_rate {
            8000 => SampleRate::Hz8000,
            12000 => SampleRate::Hz12000,
            16000 => SampleRate::Hz16000,
            24000 => SampleRate::Hz24000,
            48000 => SampleRate::Hz48000,
            _ => {
                return Err(Error::SampleRate {
                    codec: CODEC,
                    rate: sample_rate,
                    supported: "8, 12, 16, 24 or 48 kHz",
                })
            }
        };
        let mut opus =
            opusic_c::Encoder::new(Channels::Mono, rate, Application::Audio).map_err(fail)?;
        opus.set_bitrate(Bitrate::Value(32_000)).map_err(fail)?;
        let to_48k = u64::from(48_000 / sample_rate);
        let pre_skip = u64::from(opus.get_look_ahead().map_err(fail)?) * to_48k;
        Ok(Self {
            opus,
            ogg: PacketWriter::new(Vec::new()),
            packet: (sample_rate * PACKET_MS / 1000) as usize,
            to_48k,
            pending: Vec::new(),
            received: 0,
            pre_skip,
            packets: 0,
            headers_sent: false,
        })
    }

    /// `OpusHead` and `OpusTags`, each on its own page (RFC 7845 §5).
    fn headers(&mut self, input_rate: u32) -> Result<(), Error> {
        let mut head = Vec::with_capacity(19);
        head.extend_from_slice(b"OpusHead");
        head.push(1); // version
        head.push(1); // channels
        head.extend_from_slice(&(self.pre_skip as u16).to_le_bytes());
        head.extend_from_slice(&input_rate.to_le_bytes());
        head.extend_from_slice(&0i16.to_le_bytes()); // output gain
        head.push(0); // channel mapping family 0: mono or stereo
        let vendor = concat!("pocket-tts-rs ", env!("CARGO_PKG_VERSION"), " (libopus)");
        let mut tags = Vec::new();
        tags.extend_from_slice(b"OpusTags");
        tags.extend_from_slice(&(vendor.len() as u32).to_le_bytes());
        tags.extend_from_slice(vendor.as_bytes());
        tags.extend_from_slice(&0u32.to_le_bytes()); // no user comments
        self.ogg
            .write_packet(head, SERIAL, PacketWriteEndInfo::EndPage, 0)
            .map_err(fail)?;
        self.ogg
            .write_packet(tags, SERIAL, PacketWriteEndInfo::EndPage, 0)
            .map_err(fail)?;
        self.headers_sent = true;
        Ok(())
    }

    /// Encodes whole packets of `pending`; the last one ends a page (`end`: the stream).
    fn packets(&mut self, end_granule: Option<u64>) -> Result<(), Error> {
        let whole = self.pending.len() / self.packet;
        let mut out = vec![0u8; MAX_PACKET];
        for i in 0..whole {
            let pcm = &self.pending[i * self.packet..(i + 1) * self.packet];
            let n = self
                .opus
                .encode_float_to_slice(pcm, &mut out)
                .map_err(fail)?;
            self.packets += 1;
            let last = i + 1 == whole;
            let granule = self.packets * self.packet as u64 * self.to_48k;
            let (info, granule) = match (last, end_granule) {
                (true, Some(g)) => (PacketWriteEndInfo::EndStream, g.min(granule)),
                (true, None) => (PacketWriteEndInfo::EndPage, granule),
                _ => (PacketWriteEndInfo::NormalPacket, granule),
            };
            self.ogg
                .write_packet(out[..n].to_vec(), SERIAL, info, granule)
                .map_err(fail)?;
        }
        self.pending.drain(..whole * self.packet);
        Ok(())
    }

    fn input_rate(&self) -> u32 {
        48_000 / self.to_48k as u32
    }

    pub(crate) fn encode(&mut self, samples: &[f32]) -> Result<Vec<u8>, Error> {
        if !self.headers_sent {
            self.headers(self.input_rate())?;
        }
        self.received += samples.len() as u64;
        self.pending
            .extend(samples.iter().map(|x| x.clamp(-1.0, 1.0)));
        self.packets(None)?;
        Ok(std::mem::take(self.ogg.inner_mut()))
    }

    pub(crate) fn finish(mut self) -> Result<Vec<u8>, Error> {
        if !self.headers_sent {
            self.headers(self.input_rate())?;
        }
        // The end: the input's last sample plus the pre-skip, at 48 kHz. Pad with silence
        // so that the packets cover the encoder's look-ahead too (the decoder's output is
        // late by the pre-skip), then let the last granule position cut the padding.
        let end = self.received * self.to_48k + self.pre_skip;
        let per_packet = self.packet as u64 * self.to_48k;
        let total_packets = end.div_ceil(per_packet).max(self.packets + 1);
        self.pending
            .resize((total_packets - self.packets) as usize * self.packet, 0.0);
        self.packets(Some(end))?;
        Ok(std::mem::take(self.ogg.inner_mut()))
    }
}
