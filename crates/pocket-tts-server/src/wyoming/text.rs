//! Streamed text cut into pieces to speak: whole sentences as soon as they are complete
//! (Home Assistant streams a language model's answer word by word).

/// Words a streamed sentence needs before it is spoken on its own ("Dr." is no sentence).
const MIN_SENTENCE_WORDS: usize = 3;

/// Where the text ready to be spoken ends (a byte index), in text still streaming in:
/// after the last sentence end (`.`, `!`, `?`, … then whitespace, closing quotes allowed
/// in between) that ends at least [`MIN_SENTENCE_WORDS`] words and lies within `limit`
/// characters; or, for a text longer than `limit` without one, at its last whitespace
/// within the limit (else at the limit). `None`: wait for more text.
pub(super) fn ready_prefix(text: &str, limit: usize) -> Option<usize> {
    const ENDS: &[char] = &['.', '!', '?', '…', '。', '！', '？'];
    const CLOSERS: &[char] = &['"', '\'', '”', '’', ')', ']', '»'];
    let mut best = None;
    let mut last_space = None;
    let (mut words, mut in_word) = (0usize, false);
    for (n, (i, c)) in text.char_indices().enumerate() {
        if n >= limit {
            return best.or(last_space).or(Some(i));
        }
        if c.is_whitespace() {
            in_word = false;
            if i > 0 {
                last_space = Some(i);
            }
            continue;
        }
        if !in_word {
            in_word = true;
            words += 1;
        }
        if ENDS.contains(&c) && words >= MIN_SENTENCE_WORDS {
            let after = &text[i + c.len_utf8()..];
            let closers: usize = after
                .chars()
                .take_while(|c| CLOSERS.contains(c))
                .map(char::len_utf8)
                .sum();
            let end = i + c.len_utf8() + closers;
            if text[end..].starts_with(char::is_whitespace) {
                best = Some(end);
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_ready_once_followed_by_whitespace() {
        let t = "Hello there. How are you";
        assert_eq!(
            ready_prefix(t, 100),
            None,
            "too few words before the period"
        );
        let t = "Hello there my friend. How are you";
        assert_eq!(
            &t[..ready_prefix(t, 100).unwrap()],
            "Hello there my friend."
        );
        let t = "It costs 3.5 euros. Then";
        assert_eq!(&t[..ready_prefix(t, 100).unwrap()], "It costs 3.5 euros.");
        let t = "He said \"go away now!\" and left. More";
        assert_eq!(
            &t[..ready_prefix(t, 100).unwrap()],
            "He said \"go away now!\" and left."
        );
        assert_eq!(ready_prefix("One two three.", 100), None, "maybe more");
    }

    #[test]
    fn long_text_is_cut_within_the_limit() {
        let t = "aaaa bbbb cccc dddd";
        assert_eq!(&t[..ready_prefix(t, 12).unwrap()], "aaaa bbbb");
        let t = "abcdefghijklmnop";
        assert_eq!(&t[..ready_prefix(t, 5).unwrap()], "abcde");
        let t = "one two three. four five six seven";
        assert_eq!(&t[..ready_prefix(t, 20).unwrap()], "one two three.");
        assert_eq!(ready_prefix("short", 5), None);
    }
}
