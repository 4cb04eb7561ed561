//! Writing generated speech as WAV: the reference's `StreamingWAVWriter`
//! (`pocket_tts/data/audio.py`) byte for byte, and [`WavFile`] on top of the
//! [output rules](crate::output).

use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{STREAMING_WAV_NFRAMES, WAV_TRAILING_SILENCE_SECONDS};
use crate::output::OutputFile;
use crate::{Error, Result};

/// Size, in bytes, of the canonical WAV header [`WavWriter`] writes.
const WAV_HEADER_LEN: u64 = 44;

/// Patches the RIFF and data chunk sizes of a header that starts at `start`.
type PatchFn<W> = fn(&mut W, u64, u32) -> io::Result<()>;

/// A streaming WAV writer for mono 16-bit PCM: the reference's `StreamingWAVWriter`
/// (`pocket_tts/data/audio.py`, built on Python's `wave` module), byte for byte.
///
/// Writes the canonical 44-byte header (`WAVE_FORMAT_PCM`, one channel, 16 bits), then samples
/// as they come. Each sample is stored as `(clamp(x, -1, 1) * 32767)` truncated toward zero
/// (torch `.short()`; NaN becomes 0). [`finalize`](Self::finalize) appends 200 ms of silence
/// (`int(sample_rate * 0.2)` samples) and:
///
/// - for a seekable output ([`new_seekable`](Self::new_seekable)) patches the RIFF and data
///   sizes in the header;
/// - for an unseekable one ([`new_streaming`](Self::new_streaming), e.g. stdout piped to a
///   player) leaves the header as first written, with [`STREAMING_WAV_NFRAMES`] frames, as the
///   reference does with `setnframes(1_000_000_000)`.
///
/// Errors are the output's `io::Error`s. Dropping the writer without `finalize` leaves the
/// output without its trailing silence and, if seekable, with sizes of 0 in its header.
pub struct WavWriter<W: Write> {
    out: W,
    sample_rate: u32,
    data_bytes: u64,
    /// `Some` for seekable outputs: the header position and how to patch it.
    patch: Option<(u64, PatchFn<W>)>,
    buf: Vec<u8>,
}

impl<W: Write + Seek> WavWriter<W> {
    /// Starts a WAV at the current position of a seekable output (a file); the sizes in the
    /// header are patched by [`finalize`](Self::finalize). `sample_rate` is in Hz (24000 for
    /// Pocket TTS).
    ///
    /// # Errors
    ///
    /// The output's error, if writing the header fails.
    pub fn new_seekable(mut out: W, sample_rate: u32) -> io::Result<Self> {
        let start = out.stream_position()?;
        write_header(&mut out, sample_rate, 0)?;
        Ok(Self {
            out,
            sample_rate,
            data_bytes: 0,
            patch: Some((start, patch_header::<W>)),
            buf: Vec::new(),
        })
    }
}

impl<W: Write> WavWriter<W> {
    /// Starts a WAV on an unseekable output (stdout, a pipe, a socket): the header claims
    /// [`STREAMING_WAV_NFRAMES`] frames and is never patched, exactly like the reference's
    /// writer on stdout. `sample_rate` is in Hz.
    ///
    /// # Errors
    ///
    /// The output's error, if writing the header fails.
    pub fn new_streaming(mut out: W, sample_rate: u32) -> io::Result<Self> {
        write_header(&mut out, sample_rate, STREAMING_WAV_NFRAMES * 2)?;
        Ok(Self {
            out,
            sample_rate,
            data_bytes: 0,
            patch: None,
            buf: Vec::new(),
        })
    }

    /// The sample rate in Hz given at creation.
    pub fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    /// Number of samples written so far (excluding the silence `finalize` appends).
    pub fn samples_written(&self) -> u64 {
        self.data_bytes / 2
    }

    /// Appends samples (mono, nominally in `[-1, 1]`; values outside are clipped), converted
    /// like the reference's `write_pcm_data`: `(clamp(x, -1, 1) * 32767)` truncated toward
    /// zero, NaN as 0.
    ///
    /// # Errors
    ///
    /// The output's error; for a seekable output, `InvalidInput` if the data would exceed the
    /// 4 GiB a WAV header can describe.
    pub fn write_samples(&mut self, samples: &[f32]) -> io::Result<()> {
        self.buf.clear();
        pcm16_le(samples, &mut self.buf);
        self.write_data()
    }

    /// The output, for a caller that drains what was written so far (a `Vec<u8>` sent in
    /// pieces over a network stream). Writing to it directly corrupts the WAV.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    fn write_data(&mut self) -> io::Result<()> {
        let total = self.data_bytes + self.buf.len() as u64;
        if self.patch.is_some() && total + WAV_HEADER_LEN - 8 > u64::from(u32::MAX) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "WAV data would exceed the 4 GiB a WAV header can describe",
            ));
        }
        self.out.write_all(&self.buf)?;
        self.data_bytes = total;
        Ok(())
    }

    /// Appends 200 ms of silence, patches the header sizes if the output is seekable, flushes,
    /// and returns the output.
    ///
    /// # Errors
    ///
    /// The output's error.
    pub fn finalize(mut self) -> io::Result<W> {
        let silence = (f64::from(self.sample_rate) * WAV_TRAILING_SILENCE_SECONDS) as usize;
        self.buf.clear();
        self.buf.resize(silence * 2, 0);
        self.write_data()?;
        if let Some((start, patch)) = self.patch {
            // write_data keeps the total within u32.
            let data_bytes = u32::try_from(self.data_bytes).map_err(io::Error::other)?;
            patch(&mut self.out, start, data_bytes)?;
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Appends `samples` to `out` as 16-bit little-endian PCM, converted like the reference's
/// `write_pcm_data` (`data/audio.py`): `clamp(x, -1, 1) * 32767` truncated toward zero, NaN
/// as 0. Two bytes per sample.
pub fn pcm16_le(samples: &[f32], out: &mut Vec<u8>) {
    out.reserve(samples.len() * 2);
    for &x in samples {
        // `as` truncates toward zero and maps NaN to 0, like torch's `.short()` on x86.
        let v = (x.clamp(-1.0, 1.0) * 32767.0) as i16;
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Writes the 44-byte header exactly as Python's `wave` module does for mono PCM16:
/// `struct.pack('<4sL4s4sLHHLLHH4sL', b'RIFF', 36 + datalength, b'WAVE', b'fmt ', 16,
/// WAVE_FORMAT_PCM, 1, rate, 2 * rate, 2, 16, b'data', datalength)`.
fn write_header<W: Write>(out: &mut W, sample_rate: u32, data_bytes: u32) -> io::Result<()> {
    let mut h = Vec::with_capacity(WAV_HEADER_LEN as usize);
    h.extend_from_slice(b"RIFF");
    h.extend_from_slice(&data_bytes.wrapping_add(36).to_le_bytes());
    h.extend_from_slice(b"WAVEfmt ");
    h.extend_from_slice(&16u32.to_le_bytes());
    h.extend_from_slice(&1u16.to_le_bytes()); // WAVE_FORMAT_PCM
    h.extend_from_slice(&1u16.to_le_bytes()); // channels
    h.extend_from_slice(&sample_rate.to_le_bytes());
    h.extend_from_slice(&sample_rate.wrapping_mul(2).to_le_bytes()); // bytes per second
    h.extend_from_slice(&2u16.to_le_bytes()); // block align
    h.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
    h.extend_from_slice(b"data");
    h.extend_from_slice(&data_bytes.to_le_bytes());
    out.write_all(&h)
}

fn patch_header<W: Write + Seek>(out: &mut W, start: u64, data_bytes: u32) -> io::Result<()> {
    let end = out.stream_position()?;
    out.seek(SeekFrom::Start(start + 4))?;
    out.write_all(&(data_bytes + 36).to_le_bytes())?;
    out.seek(SeekFrom::Start(start + 40))?;
    out.write_all(&data_bytes.to_le_bytes())?;
    out.seek(SeekFrom::Start(end))?;
    Ok(())
}

/// A WAV file written under the [output rules](crate::output): a regular file (or a new one)
/// is replaced atomically by [`finish`](Self::finish), never left truncated; a device, FIFO
/// or terminal is written in place with the header of an unseekable stream (as
/// [`WavWriter::new_streaming`]). If writing fails or the value is dropped before `finish`,
/// the temporary file is removed and the destination is left as it was.
///
/// The file is a [`WavWriter`] in mono PCM16 (sizes patched when seekable).
pub struct WavFile {
    path: PathBuf,
    writer: WavWriter<BufWriter<OutputFile>>,
}

impl WavFile {
    /// Starts writing a WAV to `path`; `sample_rate` is in Hz.
    ///
    /// # Errors
    ///
    /// Those of [`OutputFile::create`] (a folder, a socket, a missing folder, a read-only
    /// folder), naming `path`; [`Error::Io`] if the header cannot be written.
    pub fn create(path: &Path, sample_rate: u32) -> Result<Self> {
        Self::from_output(OutputFile::create(path)?, sample_rate)
    }

    /// Starts writing a WAV to an output already opened with [`OutputFile::create`].
    ///
    /// # Errors
    ///
    /// [`Error::Io`] naming the output's path if the header cannot be written.
    pub fn from_output(output: OutputFile, sample_rate: u32) -> Result<Self> {
        let path = output.path().to_path_buf();
        let seekable = output.is_seekable();
        let out = BufWriter::new(output);
        let writer = if seekable {
            WavWriter::new_seekable(out, sample_rate)
        } else {
            WavWriter::new_streaming(out, sample_rate)
        }
        .map_err(|e| Error::io(&path, e))?;
        Ok(Self { path, writer })
    }

    /// The destination path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends samples, as [`WavWriter::write_samples`].
    ///
    /// # Errors
    ///
    /// [`Error::Io`] naming the destination path.
    pub fn write_samples(&mut self, samples: &[f32]) -> Result<()> {
        self.writer
            .write_samples(samples)
            .map_err(|e| Error::io(&self.path, e))
    }

    /// Finalizes the WAV ([`WavWriter::finalize`]: 200 ms of silence, sizes patched when
    /// seekable) and completes the output ([`OutputFile::finish`]: synced and renamed onto
    /// the destination, or flushed in place).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] naming the destination path; a temporary file is removed.
    pub fn finish(self) -> Result<()> {
        let path = self.path;
        let io_err = |e| Error::io(&path, e);
        let output = self
            .writer
            .finalize()
            .map_err(io_err)?
            .into_inner()
            .map_err(|e| io_err(e.into_error()))?;
        output.finish()
    }
}

/// Writes a mono PCM16 WAV file at `path` from chunks of samples (as they are generated), via
/// [`WavFile`]: a regular file at `path` is only replaced once every chunk was written.
///
/// `sample_rate` is in Hz. Chunks are `Result`s so a generator can fail midway; the first error
/// is returned and the partial file removed.
///
/// # Errors
///
/// The first error among the chunks; those of [`WavFile::create`] and [`WavFile::finish`].
pub fn write_wav_file<I, C>(path: &Path, sample_rate: u32, chunks: I) -> Result<()>
where
    I: IntoIterator<Item = Result<C>>,
    C: AsRef<[f32]>,
{
    let mut file = WavFile::create(path, sample_rate)?;
    for chunk in chunks {
        file.write_samples(chunk?.as_ref())?;
    }
    file.finish()
}
