//! Where each word of a piece falls on the audio's timeline, and the audio cut into the
//! protocol's blocks of 1920 samples.
//!
//! The model gives no alignment of words to frames. A piece's frames are sorted into
//! speech and the rest: a chunk's frames up to the one whose EOS logit first crossed the
//! threshold (counted from [`MIN_FRAMES_BEFORE_EOS`] on, as the EOS rule of the core's
//! `sampling.rs` does) are speech; the frames generated after it (`frames_after_eos`) and
//! pauses from markup are not. The piece's words share its speech frames in proportion
//! to their lengths in characters, in order: a word of 8 characters gets twice the time of
//! one of 4. A chunk that never reached EOS (cut at its length budget) is speech to its
//! end.

use pocket_tts_core::tts_model::MIN_FRAMES_BEFORE_EOS;

use crate::state::FrameInfo;

/// Samples of one `Audio` message (80 ms at 24 kHz, one model frame).
pub const BLOCK: usize = 1920;

/// The frames of the piece being spoken: where each lies on the timeline and whether it
/// is speech.
#[derive(Debug, Default)]
pub struct PieceFrames {
    /// `(first sample on the timeline, samples)` of each speech frame.
    speech: Vec<(u64, usize)>,
    /// Every frame, speech or not (when no frame is speech).
    all: Vec<(u64, usize)>,
    /// The chunk of the last frame, and whether its EOS was seen.
    chunk: Option<(usize, bool)>,
}

impl PieceFrames {
    /// Records a frame of `samples` samples starting at `start` on the timeline.
    pub fn record(&mut self, info: FrameInfo, start: u64, samples: usize, eos_threshold: f32) {
        self.all.push((start, samples));
        if info.pause {
            return;
        }
        let eos_seen = match self.chunk {
            Some((chunk, seen)) if chunk == info.chunk => seen,
            _ => false,
        };
        if eos_seen {
            return;
        }
        self.speech.push((start, samples));
        let eos = info.frame >= MIN_FRAMES_BEFORE_EOS && info.eos_logit > eos_threshold;
        self.chunk = Some((info.chunk, eos));
    }

    /// The `(start, stop)` of each word, in samples on the timeline, strictly increasing.
    /// Weights are the words' lengths in characters (at least 1).
    pub fn word_spans(&self, words: &[String]) -> Vec<(f64, f64)> {
        let frames = if self.speech.is_empty() {
            &self.all
        } else {
            &self.speech
        };
        if frames.is_empty() || words.is_empty() {
            return Vec::new();
        }
        let weights: Vec<f64> = words
            .iter()
            .map(|w| w.chars().count().max(1) as f64)
            .collect();
        let total: f64 = weights.iter().sum();
        let n = frames.len() as f64;
        // Position `u` in [0, n] frames of speech → a sample on the timeline, in frame `i`
        // (a start: the frame `u` falls in; a stop: the frame it closes, so that a word
        // ending with a frame before a pause or a tail stops there).
        let at = |u: f64, i: usize| {
            let i = i.min(frames.len() - 1);
            let (start, len) = frames[i];
            start as f64 + (u - i as f64).clamp(0.0, 1.0) * len as f64
        };
        let mut spans = Vec::with_capacity(words.len());
        let mut done = 0.0;
        for w in weights {
            let (a, b) = (done / total * n, (done + w) / total * n);
            let stop_frame = (b.ceil() as usize).saturating_sub(1);
            spans.push((at(a, a.floor() as usize), at(b, stop_frame)));
            done += w;
        }
        spans
    }
}

/// Samples cut into blocks of [`BLOCK`]: frames pass through whole, pauses of other
/// lengths are regrouped, and the last block is padded with silence.
#[derive(Debug, Default)]
pub struct Blocks {
    pending: Vec<f32>,
}

impl Blocks {
    /// Adds samples; returns the blocks now complete.
    pub fn push(&mut self, samples: Vec<f32>) -> Vec<Vec<f32>> {
        if self.pending.is_empty() && samples.len() == BLOCK {
            return vec![samples];
        }
        self.pending.extend_from_slice(&samples);
        let mut out = Vec::new();
        while self.pending.len() >= BLOCK {
            let rest = self.pending.split_off(BLOCK);
            out.push(std::mem::replace(&mut self.pending, rest));
        }
        out
    }

    /// The last block, padded with silence, if samples wait.
    pub fn finish(&mut self) -> Option<Vec<f32>> {
        if self.pending.is_empty() {
            return None;
        }
        let mut last = std::mem::take(&mut self.pending);
        last.resize(BLOCK, 0.0);
        Some(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(chunk: usize, frame: usize, eos_logit: f32) -> FrameInfo {
        FrameInfo {
            chunk,
            frame,
            eos_logit,
            pause: false,
        }
    }

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn words_share_the_speech_frames_by_length() {
        let mut p = PieceFrames::default();
        // 10 frames from sample 19200 on; EOS at frame 7 (index ≥ 6): frames 8, 9 are the
        // tail after EOS.
        for f in 0..10 {
            let logit = if f == 7 || f == 2 { 1.0 } else { -10.0 };
            p.record(info(0, f, logit), 19200 + (f * BLOCK) as u64, BLOCK, -4.0);
        }
        // Frame 2's logit is before MIN_FRAMES_BEFORE_EOS: it does not end the speech.
        let spans = p.word_spans(&words(&["abc", "defghi", "jkl"]));
        let speech = 8.0 * BLOCK as f64;
        let s0 = 19200.0;
        assert_eq!(spans[0], (s0, s0 + speech * 0.25));
        assert_eq!(spans[1], (s0 + speech * 0.25, s0 + speech * 0.75));
        assert_eq!(spans[2], (s0 + speech * 0.75, s0 + speech));
    }

    #[test]
    fn pauses_and_tails_are_skipped_and_times_increase() {
        let mut p = PieceFrames::default();
        let mut t = 0u64;
        let mut push = |p: &mut PieceFrames, i: FrameInfo, n: usize| {
            p.record(i, t, n, -4.0);
            t += n as u64;
        };
        for f in 0..8 {
            push(&mut p, info(0, f, if f == 6 { 0.0 } else { -9.0 }), BLOCK);
        }
        push(&mut p, info(0, 8, -9.0), BLOCK); // tail
        let pause = FrameInfo {
            pause: true,
            ..info(1, 0, f32::NEG_INFINITY)
        };
        push(&mut p, pause, 1000);
        for f in 0..3 {
            push(&mut p, info(1, f, -9.0), BLOCK);
        }
        // 7 speech frames in chunk 0 (EOS at frame 6; frames 7 and 8 are its tail), the
        // pause, then 3 in chunk 1: the second word (3 of 10 characters) is chunk 1.
        let spans = p.word_spans(&words(&["aaaaaaa", "bbb"]));
        let chunk1 = (9 * BLOCK + 1000) as f64;
        let end0 = 7.0 * BLOCK as f64;
        assert_eq!(
            spans,
            vec![(0.0, end0), (chunk1, chunk1 + 3.0 * BLOCK as f64)]
        );
        let spans = p.word_spans(&words(&["a", "b", "c", "d", "e"]));
        for pair in spans.windows(2) {
            assert!(pair[0].0 < pair[1].0 && pair[0].1 <= pair[1].0, "{spans:?}");
        }
    }

    #[test]
    fn blocks_are_1920_samples_and_the_last_is_padded() {
        let mut b = Blocks::default();
        assert_eq!(b.push(vec![0.5; BLOCK]).len(), 1);
        assert!(b.push(vec![0.0; 1000]).is_empty());
        let out = b.push(vec![0.25; BLOCK]);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].len(), BLOCK);
        assert_eq!((out[0][999], out[0][1000]), (0.0, 0.25));
        let last = b.finish().unwrap();
        assert_eq!(last.len(), BLOCK);
        assert_eq!((last[999], last[1000]), (0.25, 0.0));
        assert!(b.finish().is_none());
    }
}
