//! Time-stretch that keeps the pitch (the `speed` setting), through Signalsmith Stretch
//! (`signalsmith-stretch`), streamed: each call gives the output of the input so far,
//! late by at most the stretcher's input latency (its "preset default" at 24 kHz: 60 ms of
//! input held before the first output).

use signalsmith_stretch::Stretch;

use crate::Error;

/// The slowest speed (OpenAI's range): audio 4 times as long.
pub const MIN_SPEED: f64 = 0.25;
/// The fastest speed: audio a quarter as long.
pub const MAX_SPEED: f64 = 4.0;

/// Stretches a mono stream by `1 / speed` in time at the same pitch. The output of the
/// whole stream is `round(n / speed)` samples for `n` input samples, aligned with the
/// input (sample `i` of the input is heard at `i / speed`): the stretcher's input latency
/// is its pre-roll and its output latency is dropped from the start and flushed at the
/// end. So the first output comes once `input latency + output latency × speed` input
/// samples have arrived (at 24 kHz: 60 ms + 60 ms × speed, 90 ms at speed 0.5, 180 ms at
/// speed 2), and every later call gives the output of its own input.
pub struct TimeStretch {
    /// `None` at speed 1: samples pass through unchanged.
    stretch: Option<Stretch>,
    speed: f64,
    /// Input held until the stretcher's input latency is filled (its pre-roll).
    preroll: Vec<f32>,
    input_latency: usize,
    output_latency: usize,
    started: bool,
    /// Input samples so far, the stretcher's output samples so far, and how many of
    /// those are still to drop (its output latency).
    received: u64,
    produced: u64,
    skip: usize,
}

impl std::fmt::Debug for TimeStretch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimeStretch")
            .field("speed", &self.speed)
            .finish()
    }
}

impl TimeStretch {
    /// A stretcher for mono audio at `sample_rate` Hz played at `speed` (0.25 to 4.0; 2.0
    /// is twice as fast, half as long): Signalsmith Stretch's default preset.
    ///
    /// # Errors
    /// [`Error::Speed`] for a speed out of range or not finite.
    pub fn new(speed: f64, sample_rate: u32) -> Result<Self, Error> {
        check_speed(speed)?;
        let stretch = (speed != 1.0).then(|| Stretch::preset_default(1, sample_rate));
        let input_latency = stretch.as_ref().map_or(0, Stretch::input_latency);
        let output_latency = stretch.as_ref().map_or(0, Stretch::output_latency);
        Ok(Self {
            stretch,
            speed,
            preroll: Vec::new(),
            input_latency,
            output_latency,
            started: false,
            received: 0,
            produced: 0,
            skip: output_latency,
        })
    }

    /// The speed.
    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// The stretcher's output samples due for `input` samples, less those already made.
    fn due(&self, input: u64) -> usize {
        let target = (input as f64 / self.speed).round() as u64;
        target.saturating_sub(self.produced) as usize
    }

    /// Drops what remains of the output latency from the start of `out`.
    fn aligned(&mut self, mut out: Vec<f32>) -> Vec<f32> {
        let drop = self.skip.min(out.len());
        self.skip -= drop;
        out.drain(..drop);
        out
    }

    /// Stretches the next `samples`; returns the output they complete (empty while the
    /// stretcher's latency fills, at the start).
    pub fn process(&mut self, samples: &[f32]) -> Vec<f32> {
        if self.stretch.is_none() {
            return samples.to_vec();
        }
        let held;
        let input = if self.started {
            samples
        } else {
            self.preroll.extend_from_slice(samples);
            if self.preroll.len() < self.input_latency {
                return Vec::new();
            }
            // The first samples are the stretcher's pre-roll (`seek`), so that its output
            // starts with the start of the input (as Signalsmith's `exact` does).
            held = std::mem::take(&mut self.preroll);
            let rate = 1.0 / self.speed;
            if let Some(stretch) = self.stretch.as_mut() {
                stretch.seek(&held[..self.input_latency], rate);
            }
            self.started = true;
            &held[self.input_latency..]
        };
        self.received += input.len() as u64;
        // The input beyond the pre-roll gives its own length over the speed.
        let mut out = vec![0.0; self.due(self.received)];
        if let Some(stretch) = self.stretch.as_mut() {
            stretch.process(input, &mut out);
        }
        self.produced += out.len() as u64;
        self.aligned(out)
    }

    /// The rest of the output, so that the whole is `round(input / speed)` samples.
    pub fn finish(mut self) -> Vec<f32> {
        let Some(mut stretch) = self.stretch.take() else {
            return Vec::new();
        };
        if !self.started {
            // Shorter than the pre-roll: stretch it in one go.
            let n = self.due(self.preroll.len() as u64);
            let mut out = vec![0.0; n];
            if n > 0 {
                stretch.exact(&self.preroll, &mut out);
            }
            return out;
        }
        // The pre-roll's length of input is still inside the stretcher: push it out with
        // as much silence, then flush the output latency.
        let silence = vec![0.0; self.input_latency];
        let mut out = vec![0.0; self.due(self.received + self.input_latency as u64)];
        stretch.process(&silence, &mut out);
        let mut tail = vec![0.0; self.output_latency];
        stretch.flush(&mut tail);
        out.extend(tail);
        self.aligned(out)
    }
}

/// Checks a speed: finite, from [`MIN_SPEED`] to [`MAX_SPEED`].
///
/// # Errors
/// [`Error::Speed`] otherwise.
pub fn check_speed(speed: f64) -> Result<(), Error> {
    if speed.is_finite() && (MIN_SPEED..=MAX_SPEED).contains(&speed) {
        Ok(())
    } else {
        Err(Error::Speed(speed))
    }
}
