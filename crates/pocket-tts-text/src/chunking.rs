//! Turning a text prompt into the chunks the model generates one at a time.
//!
//! The model is trained on single sentences, so long inputs are split on sentence
//! boundaries and regrouped into chunks that fit `max_tokens`.
//!
//! reference: models/text_chunking.py. String operations follow Python's semantics
//! exactly: `str.strip()` / `str.split()` / `re`'s `\s` use Python's Unicode whitespace
//! (which, unlike Rust's `char::is_whitespace`, includes U+001C..U+001F), `str.isdigit()`
//! uses Python's table (Numeric_Type Digit or Decimal, e.g. `²` and `①` count) and
//! `str.upper()` the full case mapping (`ß` → `SS`).

use std::collections::HashMap;

use crate::tokenizer::Tokenizer;
use crate::{Error, Result};

/// Text preprocessing switches of a model config (`pocket-tts-core`'s `Config` builds
/// them).
///
/// reference: utils/config.py, `Config` fields `pad_with_spaces_for_short_inputs`,
/// `remove_semicolons`, `append_terminal_punctuation`, `capitalize_first_letter`,
/// `replace_characters`. [`Default`] gives the reference's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextOptions {
    /// Prepend 8 spaces to prompts of fewer than 5 words (default `false`).
    pub pad_with_spaces_for_short_inputs: bool,
    /// Replace every `;` with `,` (default `false`).
    pub remove_semicolons: bool,
    /// Make sure the prompt ends with `.`, `!`, `?` or `…` (default `true`).
    pub append_terminal_punctuation: bool,
    /// Upper-case the first character (default `true`).
    pub capitalize_first_letter: bool,
    /// Per-character rewrites applied first (`""` deletes), like the YAML mapping
    /// `replace_characters` (e.g. `'’' → "'"`). When the same character appears twice
    /// the later entry wins, as when building the Python dict. When non-empty, runs
    /// of whitespace are also collapsed to single spaces.
    pub replace_characters: Vec<(char, String)>,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions {
            pad_with_spaces_for_short_inputs: false,
            remove_semicolons: false,
            append_terminal_punctuation: true,
            capitalize_first_letter: true,
            replace_characters: Vec::new(),
        }
    }
}

impl TextOptions {
    /// [`TextOptions::replace_characters`] from a mapping of one-character keys to their
    /// replacements, in order: a model config's `replace_characters` (reference:
    /// utils/config.py; `pocket-tts-core` builds the options from its `Config` so).
    ///
    /// # Errors
    /// [`Error::InvalidData`] for a key that is not exactly one character.
    pub fn replace_characters_from<'a>(
        mapping: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Vec<(char, String)>> {
        let mut replace = Vec::new();
        for (k, v) in mapping {
            let mut chars = k.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => replace.push((c, v.to_string())),
                _ => {
                    return Err(Error::InvalidData(format!(
                        "config replace_characters: key {k:?} must be exactly one character"
                    )))
                }
            }
        }
        Ok(replace)
    }
}

const TERMINAL_PUNCTUATION: &[char] = &['.', '!', '?', '\u{2026}'];
const WEAK_PUNCTUATION: &[char] = &[',', ';', ':', '-', '\u{2013}', '\u{2014}'];
const CLOSERS: &[char] = &['"', '\'', '\u{201D}', '\u{2019}', ')', ']', '\u{00BB}'];

/// Python's `str.isspace()` for one character (also what `str.strip()`,
/// `str.split()` and `re`'s `\s` use).
pub(crate) fn py_isspace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{0B}'
            | '\u{0C}'
            | '\r'
            | '\u{1C}'..='\u{1F}'
            | ' '
            | '\u{85}'
            | '\u{A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
    )
}

/// Characters for which Python 3.11's `str.isdigit()` is true (Unicode 14.0), as
/// inclusive ranges.
#[rustfmt::skip]
const PY_DIGIT_RANGES: &[(u32, u32)] = &[
    (0x0030, 0x0039), (0x00B2, 0x00B3), (0x00B9, 0x00B9), (0x0660, 0x0669), (0x06F0, 0x06F9),
    (0x07C0, 0x07C9), (0x0966, 0x096F), (0x09E6, 0x09EF), (0x0A66, 0x0A6F), (0x0AE6, 0x0AEF),
    (0x0B66, 0x0B6F), (0x0BE6, 0x0BEF), (0x0C66, 0x0C6F), (0x0CE6, 0x0CEF), (0x0D66, 0x0D6F),
    (0x0DE6, 0x0DEF), (0x0E50, 0x0E59), (0x0ED0, 0x0ED9), (0x0F20, 0x0F29), (0x1040, 0x1049),
    (0x1090, 0x1099), (0x1369, 0x1371), (0x17E0, 0x17E9), (0x1810, 0x1819), (0x1946, 0x194F),
    (0x19D0, 0x19DA), (0x1A80, 0x1A89), (0x1A90, 0x1A99), (0x1B50, 0x1B59), (0x1BB0, 0x1BB9),
    (0x1C40, 0x1C49), (0x1C50, 0x1C59), (0x2070, 0x2070), (0x2074, 0x2079), (0x2080, 0x2089),
    (0x2460, 0x2468), (0x2474, 0x247C), (0x2488, 0x2490), (0x24EA, 0x24EA), (0x24F5, 0x24FD),
    (0x24FF, 0x24FF), (0x2776, 0x277E), (0x2780, 0x2788), (0x278A, 0x2792), (0xA620, 0xA629),
    (0xA8D0, 0xA8D9), (0xA900, 0xA909), (0xA9D0, 0xA9D9), (0xA9F0, 0xA9F9), (0xAA50, 0xAA59),
    (0xABF0, 0xABF9), (0xFF10, 0xFF19), (0x104A0, 0x104A9), (0x10A40, 0x10A43),
    (0x10D30, 0x10D39), (0x10E60, 0x10E68), (0x11052, 0x1105A), (0x11066, 0x1106F),
    (0x110F0, 0x110F9), (0x11136, 0x1113F), (0x111D0, 0x111D9), (0x112F0, 0x112F9),
    (0x11450, 0x11459), (0x114D0, 0x114D9), (0x11650, 0x11659), (0x116C0, 0x116C9),
    (0x11730, 0x11739), (0x118E0, 0x118E9), (0x11950, 0x11959), (0x11C50, 0x11C59),
    (0x11D50, 0x11D59), (0x11DA0, 0x11DA9), (0x16A60, 0x16A69), (0x16AC0, 0x16AC9),
    (0x16B50, 0x16B59), (0x1D7CE, 0x1D7FF), (0x1E140, 0x1E149), (0x1E2F0, 0x1E2F9),
    (0x1E950, 0x1E959), (0x1F100, 0x1F10A), (0x1FBF0, 0x1FBF9),
];

/// Python's `str.isdigit()` for one character.
pub(crate) fn py_isdigit(c: char) -> bool {
    let c = c as u32;
    PY_DIGIT_RANGES
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Python's `str.strip()` (no argument).
fn py_strip(s: &str) -> &str {
    s.trim_matches(py_isspace)
}

/// Python's `str.split()` (no argument): runs of whitespace separate, no empty parts.
fn py_split(s: &str) -> impl Iterator<Item = &str> {
    s.split(py_isspace).filter(|w| !w.is_empty())
}

/// `re.sub(r"([.!?\u2026])\s*[,;:]", r"\1", text)`: drop a comma, semicolon or colon
/// (and the whitespace before it) that follows sentence-final punctuation.
fn drop_weak_after_terminal(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        out.push(c);
        i += 1;
        if TERMINAL_PUNCTUATION.contains(&c) {
            let mut j = i;
            while j < chars.len() && py_isspace(chars[j]) {
                j += 1;
            }
            if j < chars.len() && matches!(chars[j], ',' | ';' | ':') {
                i = j + 1;
            }
        }
    }
    out
}

/// Makes sure the prompt ends with sentence-final punctuation.
///
/// Text already ending with `.`, `!`, `?` or `…` (possibly followed by closing quotes
/// or brackets) is left alone; a trailing comma, colon or dash is replaced by a period
/// (closers kept after it); anything else gets a period appended.
///
/// reference: models/text_chunking.py, `_ensure_terminal_punctuation`.
fn ensure_terminal_punctuation(text: &str) -> String {
    let core = text.trim_end_matches(|c: char| c == ' ' || CLOSERS.contains(&c));
    let closers = py_strip(&text[core.len()..]);
    match core.chars().next_back() {
        None => text.to_string(),
        Some(last) if TERMINAL_PUNCTUATION.contains(&last) => text.to_string(),
        Some(last) if WEAK_PUNCTUATION.contains(&last) => {
            let trimmed =
                core.trim_end_matches(|c: char| c == ' ' || WEAK_PUNCTUATION.contains(&c));
            format!("{trimmed}.{closers}")
        }
        Some(_) => format!("{text}."),
    }
}

/// Normalizes a prompt before tokenization and guesses how many frames to generate
/// after the end-of-speech token.
///
/// Steps, in the reference's order: strip surrounding whitespace; if
/// `replace_characters` is non-empty, apply it, collapse whitespace runs to one space
/// and drop a `,`/`;`/`:` right after `.`/`!`/`?`/`…`; turn `\n` and `\r` into spaces
/// and halve double spaces (one pass); optionally replace `;` by `,`; optionally
/// upper-case the first character; optionally ensure terminal punctuation; optionally
/// prepend 8 spaces when the prompt has fewer than 5 words.
///
/// Returns `(prepared_text, frames_after_eos_guess)`, the guess being 3 frames for
/// prompts of at most 4 words (counted before capitalization and punctuation) and 1
/// otherwise.
///
/// # Errors
/// [`Error::InvalidArgument`] if the text is empty after stripping (and character
/// replacement).
///
/// reference: models/text_chunking.py, `prepare_text_prompt`.
pub fn prepare_text_prompt(text: &str, opts: &TextOptions) -> Result<(String, usize)> {
    let mut text = py_strip(text).to_string();
    if !opts.replace_characters.is_empty() {
        let table: HashMap<char, &str> = opts
            .replace_characters
            .iter()
            .map(|(c, s)| (*c, s.as_str()))
            .collect();
        let mut translated = String::with_capacity(text.len());
        for c in text.chars() {
            match table.get(&c) {
                Some(rep) => translated.push_str(rep),
                None => translated.push(c),
            }
        }
        let joined = py_split(&translated).collect::<Vec<_>>().join(" ");
        text = drop_weak_after_terminal(&joined);
    }
    if text.is_empty() {
        return Err(Error::InvalidArgument(
            "text prompt cannot be empty".to_string(),
        ));
    }
    text = text.replace(['\n', '\r'], " ").replace("  ", " ");
    if opts.remove_semicolons {
        text = text.replace(';', ",");
    }
    let number_of_words = py_split(&text).count();
    let frames_after_eos_guess = if number_of_words <= 4 { 3 } else { 1 };

    if opts.capitalize_first_letter {
        if let Some(first) = text.chars().next() {
            if !first.is_uppercase() {
                let rest = &text[first.len_utf8()..];
                text = first.to_uppercase().chain(rest.chars()).collect();
            }
        }
    }
    if opts.append_terminal_punctuation {
        text = ensure_terminal_punctuation(&text);
    }
    if opts.pad_with_spaces_for_short_inputs && py_split(&text).count() < 5 {
        text = format!("{}{text}", " ".repeat(8));
    }
    Ok((text, frames_after_eos_guess))
}

/// True when `segment_start` begins right after a decimal period (`3.|14`).
///
/// reference: models/text_chunking.py, `_is_decimal_period_boundary`.
fn is_decimal_period_boundary(tokens: &[u32], segment_start: usize, tok: &Tokenizer) -> bool {
    let prefix = tok.decode(&tokens[..segment_start]);
    let suffix = tok.decode(&tokens[segment_start..]);
    let mut rev = prefix.chars().rev();
    let (Some(last), Some(before)) = (rev.next(), rev.next()) else {
        return false;
    };
    last == '.' && py_isdigit(before) && suffix.chars().next().is_some_and(py_isdigit)
}

/// Token indices where text should be split: the first index after each run of
/// boundary tokens, framed by `0` and `tokens.len()`.
///
/// reference: models/text_chunking.py, `_find_boundary_indices`.
fn find_boundary_indices(
    tokens: &[u32],
    boundary_tokens: &[u32],
    skip_decimal_periods: Option<&Tokenizer>,
) -> Vec<usize> {
    let mut indices = vec![0];
    let mut previous_was_boundary = false;
    for (idx, token) in tokens.iter().enumerate() {
        if boundary_tokens.contains(token) {
            previous_was_boundary = true;
        } else {
            if previous_was_boundary {
                if let Some(tok) = skip_decimal_periods {
                    if is_decimal_period_boundary(tokens, idx, tok) {
                        previous_was_boundary = false;
                        continue;
                    }
                }
                indices.push(idx);
            }
            previous_was_boundary = false;
        }
    }
    indices.push(tokens.len());
    indices
}

/// Decodes the token segments between consecutive boundaries as
/// `(token_count, text)`.
///
/// reference: models/text_chunking.py, `_segments_from_boundaries`.
fn segments_from_boundaries(
    tokens: &[u32],
    boundaries: &[usize],
    tok: &Tokenizer,
) -> Vec<(usize, String)> {
    boundaries
        .windows(2)
        .map(|w| (w[1] - w[0], tok.decode(&tokens[w[0]..w[1]])))
        .collect()
}

/// Ids of the pieces of `text` after the first one (which is the dummy-prefix `▁`
/// for SentencePiece): how the reference finds its boundary tokens.
fn tail_ids(tok: &Tokenizer, text: &str) -> Vec<u32> {
    tok.encode(text)
        .get(1..)
        .map(<[u32]>::to_vec)
        .unwrap_or_default()
}

/// Splits a prompt into chunks of whole sentences of at most `max_tokens` tokens each
/// (when possible), to be generated one after the other.
///
/// The text is prepared with [`prepare_text_prompt`] and stripped, tokenized, cut after
/// every run of sentence-final tokens (`.`, `!`, `...`, `?`, except a period between
/// two digits), sentences longer than `max_tokens` are re-cut after `,`, `;`, `:`, and
/// the pieces are greedily regrouped (joined by one space) into chunks that stay
/// within `max_tokens`. A chunk that is still longer (a sentence without any usable
/// boundary) is logged with `tracing::warn!`, as the reference does.
///
/// # Errors
/// [`Error::InvalidArgument`] if the text is empty after preparation.
///
/// reference: models/text_chunking.py, `split_into_best_sentences`.
pub fn split_into_best_sentences(
    tokenizer: &Tokenizer,
    text: &str,
    max_tokens: usize,
    opts: &TextOptions,
) -> Result<Vec<String>> {
    let (prepared, _) = prepare_text_prompt(text, opts)?;
    let prepared = py_strip(&prepared);
    let tokens = tokenizer.encode(prepared);

    let end_of_sentence_tokens = tail_ids(tokenizer, ".!...?");
    let sentence_boundaries =
        find_boundary_indices(&tokens, &end_of_sentence_tokens, Some(tokenizer));
    let sentences = segments_from_boundaries(&tokens, &sentence_boundaries, tokenizer);

    // Sub-split oversized sentences on commas, semicolons and colons.
    let fallback_tokens = tail_ids(tokenizer, ",;:");
    let mut refined: Vec<(usize, String)> = Vec::with_capacity(sentences.len());
    for (nb_tokens, sentence) in sentences {
        if nb_tokens <= max_tokens {
            refined.push((nb_tokens, sentence));
            continue;
        }
        let sub_tokens = tokenizer.encode(py_strip(&sentence));
        let sub_boundaries = find_boundary_indices(&sub_tokens, &fallback_tokens, None);
        let sub_segments = segments_from_boundaries(&sub_tokens, &sub_boundaries, tokenizer);
        if sub_segments.len() > 1 {
            refined.extend(sub_segments);
        } else {
            refined.push((nb_tokens, sentence));
        }
    }

    let mut chunks: Vec<String> = Vec::new();
    let mut current_chunk = String::new();
    let mut current_nb_tokens = 0usize;
    for (nb_tokens, sentence) in refined {
        if current_chunk.is_empty() {
            current_chunk = sentence;
            current_nb_tokens = nb_tokens;
            continue;
        }
        if current_nb_tokens + nb_tokens > max_tokens {
            chunks.push(py_strip(&current_chunk).to_string());
            current_chunk = sentence;
            current_nb_tokens = nb_tokens;
        } else {
            current_chunk.push(' ');
            current_chunk.push_str(&sentence);
            current_nb_tokens += nb_tokens;
        }
    }
    if !current_chunk.is_empty() {
        chunks.push(py_strip(&current_chunk).to_string());
    }

    for chunk in &chunks {
        let n = tokenizer.encode(py_strip(chunk)).len();
        if n > max_tokens {
            tracing::warn!(
                "Chunk has {n} tokens (max {max_tokens}), generation may skip words: '{:.50}...'",
                chunk
            );
        }
    }
    Ok(chunks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_string_semantics() {
        assert!(py_isspace('\u{1F}') && !'\u{1F}'.is_whitespace());
        assert!(py_isdigit('7') && py_isdigit('²') && py_isdigit('①') && py_isdigit('٣'));
        assert!(!py_isdigit('½') && !py_isdigit('a') && !py_isdigit('Ⅳ'));
        assert_eq!(py_strip("\u{1C} a b\u{3000}"), "a b");
        assert_eq!(
            py_split(" a\u{A0}b  c ").collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
    }

    #[test]
    fn weak_after_terminal() {
        assert_eq!(drop_weak_after_terminal("Hi?, she said"), "Hi? she said");
        assert_eq!(drop_weak_after_terminal("Hi? ,; x"), "Hi?; x");
        assert_eq!(drop_weak_after_terminal("a.. , b"), "a.. b");
        assert_eq!(drop_weak_after_terminal("a, b"), "a, b");
    }

    #[test]
    fn terminal_punctuation() {
        assert_eq!(ensure_terminal_punctuation("Hello"), "Hello.");
        assert_eq!(ensure_terminal_punctuation("Hello,"), "Hello.");
        assert_eq!(
            ensure_terminal_punctuation("He said \"hi, -\" "),
            "He said \"hi.\""
        );
        assert_eq!(ensure_terminal_punctuation("\"Hi!\""), "\"Hi!\"");
        assert_eq!(ensure_terminal_punctuation("(yes)"), "(yes).");
        assert_eq!(ensure_terminal_punctuation("\"\""), "\"\"");
    }

    #[test]
    fn prepare_basics() {
        let opts = TextOptions::default();
        assert_eq!(
            prepare_text_prompt("  ßtraße ", &opts).unwrap(),
            ("SStraße.".to_string(), 3)
        );
        assert!(matches!(
            prepare_text_prompt(" \n\t ", &opts),
            Err(Error::InvalidArgument(_))
        ));
        let opts = TextOptions {
            replace_characters: vec![('"', String::new())],
            ..TextOptions::default()
        };
        assert!(matches!(
            prepare_text_prompt("\"\"", &opts),
            Err(Error::InvalidArgument(_))
        ));
    }
}
