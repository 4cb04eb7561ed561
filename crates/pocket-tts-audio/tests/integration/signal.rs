//! Test signals and measurements.

/// The model's rate (Hz) and frame (samples, 80 ms).
pub const RATE: u32 = 24_000;
pub const FRAME: usize = 1920;

/// A voiced, speech-like sound: a harmonic series on `f0` Hz (10 harmonics falling as
/// 1/k), its loudness moving at 4 Hz as syllables do, `seconds` long, between
/// `silence` seconds of silence on each side.
pub fn voiced(f0: f64, seconds: f64, silence: f64) -> Vec<f32> {
    let rate = f64::from(RATE);
    let quiet = (silence * rate) as usize;
    let n = (seconds * rate) as usize;
    let mut out = vec![0.0f32; quiet];
    for i in 0..n {
        let t = i as f64 / rate;
        let envelope = 0.6 + 0.4 * (2.0 * std::f64::consts::PI * 4.0 * t).sin();
        let x: f64 = (1..=10)
            .map(|k| (2.0 * std::f64::consts::PI * f0 * k as f64 * t).sin() / k as f64)
            .sum();
        out.push((0.25 * envelope * x) as f32);
    }
    out.extend(std::iter::repeat_n(0.0, quiet));
    out
}

/// First and last sample (exclusive) of the 10 ms windows louder than 10% of the
/// loudest window: where the sound is.
pub fn extent(samples: &[f32], rate: u32) -> (usize, usize) {
    let w = rate as usize / 100;
    let rms: Vec<f32> = samples
        .chunks(w)
        .map(|c| (c.iter().map(|x| x * x).sum::<f32>() / c.len() as f32).sqrt())
        .collect();
    let max = rms.iter().cloned().fold(0.0, f32::max);
    let loud: Vec<usize> = (0..rms.len()).filter(|&i| rms[i] > 0.1 * max).collect();
    (loud[0] * w, (loud[loud.len() - 1] + 1) * w)
}

/// The fundamental frequency (Hz) of `samples` by autocorrelation, searched from 60 to
/// 400 Hz (the shortest lag whose peak is within 15% of the highest), refined by a parabola through the peak.
pub fn f0(samples: &[f32], rate: u32) -> f64 {
    let rate = f64::from(rate);
    let (lo, hi) = ((rate / 400.0) as usize, (rate / 60.0) as usize);
    let n = samples.len() - hi - 1;
    let ac = |lag: usize| -> f64 {
        (0..n)
            .map(|i| f64::from(samples[i]) * f64::from(samples[i + lag]))
            .sum()
    };
    let values: Vec<f64> = (lo - 1..=hi + 1).map(ac).collect();
    // The first peak nearly as high as the highest (multiples of the period peak too).
    let max = values.iter().cloned().fold(f64::MIN, f64::max);
    let best = (1..values.len() - 1)
        .find(|&i| {
            values[i] >= values[i - 1] && values[i] >= values[i + 1] && values[i] > 0.85 * max
        })
        .expect("a peak");
    let (a, b, c) = (values[best - 1], values[best], values[best + 1]);
    let shift = 0.5 * (a - c) / (a - 2.0 * b + c);
    rate / ((lo - 1 + best) as f64 + shift)
}
