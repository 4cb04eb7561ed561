//! Words streamed in, cut into pieces to speak: a sentence as soon as it is complete, a
//! long run of words without a sentence end at a clause or at a word-count limit.
//!
//! Every `Text` message holds whole words, so the end of a message is a word boundary: a
//! word ending with `.`, `!`, `?` or `…` (closing quotes or brackets allowed after it)
//! ends a sentence as soon as it arrives, without waiting for the next word.

/// Words a piece needs before a sentence end closes it ("Dr." alone is no sentence).
pub const MIN_SENTENCE_WORDS: usize = 3;
/// Most words in one piece: a run of words without a sentence end is spoken once it is
/// this long (about 1.5 s of text from a language model at 20 words per second, 10 s of
/// speech; the reference's chunks are 50 tokens, about 35 words).
pub const MAX_PIECE_WORDS: usize = 30;

const SENTENCE_ENDS: &[char] = &['.', '!', '?', '…', '。', '！', '？'];
const CLAUSE_ENDS: &[char] = &[',', ';', ':', '，', '；', '：'];
const CLOSERS: &[char] = &['"', '\'', '”', '’', ')', ']', '»'];

/// The words received and not spoken yet.
#[derive(Debug, Default)]
pub struct Words {
    words: Vec<String>,
}

impl Words {
    /// Adds the words of `text` (split on whitespace); returns how many.
    pub fn push(&mut self, text: &str) -> usize {
        let before = self.words.len();
        self.words
            .extend(text.split_whitespace().map(str::to_string));
        self.words.len() - before
    }

    /// Whether no word waits.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Takes the next piece to speak, if one is ready: up to the first sentence end
    /// (`first`: no audio has gone out yet, the shortest piece comes out soonest) or the
    /// last one within [`MAX_PIECE_WORDS`]; else, with [`MAX_PIECE_WORDS`] words waiting,
    /// up to the last clause end within them, or all of them. `flush` (end of input, or
    /// the client paused): whatever waits is ready, in pieces of at most
    /// [`MAX_PIECE_WORDS`].
    pub fn take(&mut self, first: bool, flush: bool) -> Option<Vec<String>> {
        let n = self.ready(first, flush)?;
        let rest = self.words.split_off(n);
        Some(std::mem::replace(&mut self.words, rest))
    }

    fn ready(&self, first: bool, flush: bool) -> Option<usize> {
        let window = &self.words[..self.words.len().min(MAX_PIECE_WORDS)];
        let mut ends = window
            .iter()
            .enumerate()
            .filter(|(i, w)| i + 1 >= MIN_SENTENCE_WORDS && ends_with(w, SENTENCE_ENDS))
            .map(|(i, _)| i + 1);
        let sentence = if first { ends.next() } else { ends.next_back() };
        if sentence.is_some() {
            return sentence;
        }
        if self.words.len() >= MAX_PIECE_WORDS {
            let clause = window
                .iter()
                .enumerate()
                .rev()
                .find(|(i, w)| i + 1 >= MIN_SENTENCE_WORDS && ends_with(w, CLAUSE_ENDS))
                .map(|(i, _)| i + 1);
            return Some(clause.unwrap_or(MAX_PIECE_WORDS));
        }
        (flush && !self.words.is_empty()).then_some(window.len())
    }
}

/// Whether `word` ends with one of `marks`, closing quotes and brackets allowed after it.
fn ends_with(word: &str, marks: &[char]) -> bool {
    word.trim_end_matches(CLOSERS)
        .chars()
        .next_back()
        .is_some_and(|c| marks.contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Words {
        let mut w = Words::default();
        w.push(text);
        w
    }

    fn joined(piece: Option<Vec<String>>) -> Option<String> {
        piece.map(|p| p.join(" "))
    }

    #[test]
    fn a_sentence_is_ready_with_its_last_word() {
        let mut w = Words::default();
        for word in [" Hello", " there", " my"] {
            w.push(word);
            assert_eq!(w.take(true, false), None);
        }
        w.push(" friend.");
        assert_eq!(
            joined(w.take(true, false)).as_deref(),
            Some("Hello there my friend.")
        );
        assert!(w.is_empty());
    }

    #[test]
    fn short_sentences_wait_and_closers_count() {
        let mut w = words("Sure! I can do");
        assert_eq!(w.take(true, false), None, "\"Sure!\" alone is too short");
        w.push("that.\" Then");
        assert_eq!(
            joined(w.take(true, false)).as_deref(),
            Some("Sure! I can do that.\"")
        );
        assert_eq!(joined(w.take(true, true)).as_deref(), Some("Then"));
        assert_eq!(w.take(true, true), None);
    }

    #[test]
    fn first_takes_one_sentence_later_takes_all_complete_ones() {
        let text = "One two three. Four five six. Seven";
        assert_eq!(
            joined(words(text).take(true, false)).as_deref(),
            Some("One two three.")
        );
        assert_eq!(
            joined(words(text).take(false, false)).as_deref(),
            Some("One two three. Four five six.")
        );
    }

    #[test]
    fn long_runs_are_cut_at_a_clause_or_the_limit() {
        let long: Vec<String> = (0..MAX_PIECE_WORDS + 5).map(|i| format!("w{i}")).collect();
        let mut w = words(&long.join(" "));
        assert_eq!(w.take(true, false).unwrap().len(), MAX_PIECE_WORDS);
        assert_eq!(w.take(true, false), None);
        assert_eq!(w.take(true, true).unwrap().len(), 5);
        let mut text = long.clone();
        text[9].push(',');
        let mut w = words(&text.join(" "));
        assert_eq!(w.take(true, false).unwrap().len(), 10);
    }
}
