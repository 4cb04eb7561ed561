//! Opt-in pause markup: `[pause 500ms]` and SSML's `<break time="500ms"/>` in a text
//! insert that much silence at that point. No counterpart in the reference (`pocket-tts`
//! 4.0.1 reads brackets as text); off by default.
//!
//! Syntax (case-insensitive, whitespace allowed inside a tag):
//!
//! - `[pause D]`, e.g. `[pause 500ms]`, `[pause 1s]`, `[PAUSE 1.5 s]`;
//! - `<break time="D"/>` or `<break time='D'/>` (also `<break time="D">`, optionally
//!   followed by `</break>`), SSML's element; only its `time` attribute is read.
//!
//! `D` is a number and a unit: `ms` (whole milliseconds) or `s` (seconds, at most three
//! decimals), from 0 to [`MAX_PAUSE_MS`]. A tag that starts like one of these (`[pause`
//! followed by a space or `]`, `<break` followed by a space, `/` or `>`) but does not parse
//! is an error naming the tag and its position, never read aloud; other brackets
//! (`[laughs]`, `<b>`) are plain text.

use crate::{Error, Result};

/// The longest pause a tag may ask for, in milliseconds (10 s).
pub const MAX_PAUSE_MS: u32 = 10_000;

/// A piece of a text with markup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// Text between tags, as written (whitespace kept).
    Text(String),
    /// Silence, in milliseconds.
    Pause(u32),
}

/// Splits `text` into its text and pause segments, in order. Adjacent tags give adjacent
/// pauses; text before the first tag, between tags and after the last one is kept as
/// written, including empty or whitespace-only pieces (the caller decides what they
/// mean). A text without tags is one [`Segment::Text`].
///
/// # Errors
/// [`Error::InvalidArgument`] for a malformed tag (unknown unit, missing `]` or `/>`, no
/// `time`, another attribute, a duration above [`MAX_PAUSE_MS`] or finer than a
/// millisecond), naming the tag and its position (in characters, from 1).
pub fn parse_markup(text: &str) -> Result<Vec<Segment>> {
    let mut segments = Vec::new();
    let mut text_start = 0;
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let tag = if rest.starts_with('[') && opens_pause(rest) {
            Some(parse_pause_tag(rest))
        } else if rest.starts_with('<') && opens_break(rest) {
            Some(parse_break_tag(rest))
        } else {
            None
        };
        match tag {
            Some(Ok((ms, len))) => {
                if text_start < i {
                    segments.push(Segment::Text(text[text_start..i].to_string()));
                }
                segments.push(Segment::Pause(ms));
                i += len;
                text_start = i;
            }
            Some(Err(problem)) => return Err(tag_error(text, i, &problem)),
            None => i += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    if text_start < text.len() || segments.is_empty() {
        segments.push(Segment::Text(text[text_start..].to_string()));
    }
    Ok(segments)
}

/// The error for a malformed tag starting at byte `at`.
fn tag_error(text: &str, at: usize, problem: &str) -> Error {
    let position = text[..at].chars().count() + 1;
    let rest = &text[at..];
    // The tag as written: up to its closing bracket, or its first 30 characters.
    let close = if rest.starts_with('[') { ']' } else { '>' };
    let shown: String = match rest.find(close) {
        Some(end) if rest[..end].chars().count() < 60 => rest[..=end].to_string(),
        _ => rest.chars().take(30).collect::<String>() + "…",
    };
    Error::InvalidArgument(format!(
        "pause markup `{shown}` at character {position}: {problem}; write e.g. [pause 500ms], \
         [pause 1.5s] or <break time=\"500ms\"/> (0 to {} s)",
        MAX_PAUSE_MS / 1000
    ))
}

/// Strips a case-insensitive ASCII `word` from the start of `s`.
fn strip_word<'a>(s: &'a str, word: &str) -> Option<&'a str> {
    let head = s.get(..word.len())?;
    head.eq_ignore_ascii_case(word).then(|| &s[word.len()..])
}

/// `s` (starting with `[`) begins a pause tag: `[`, optional spaces, `pause`, then a
/// space or `]`.
fn opens_pause(s: &str) -> bool {
    strip_word(s[1..].trim_start(), "pause")
        .is_some_and(|r| r.starts_with(|c: char| c.is_whitespace() || c == ']'))
}

/// `s` (starting with `<`) begins a break tag: `<break` then a space, `/` or `>`.
fn opens_break(s: &str) -> bool {
    strip_word(&s[1..], "break")
        .is_some_and(|r| r.starts_with(|c: char| c.is_whitespace() || c == '/' || c == '>'))
}

/// Parses `[pause D]` at the start of `s`: the pause and the tag's length in bytes.
fn parse_pause_tag(s: &str) -> std::result::Result<(u32, usize), String> {
    let Some(end) = s.find(']') else {
        return Err("the tag is not closed: add `]`".into());
    };
    let inner = s[1..end].trim_start();
    let duration = strip_word(inner, "pause").unwrap_or(inner).trim();
    if duration.is_empty() {
        return Err("no duration".into());
    }
    Ok((parse_duration(duration)?, end + 1))
}

/// Parses `<break time="D"/>` at the start of `s`: the pause and the tag's length in
/// bytes (with a `</break>` that closes it right after).
fn parse_break_tag(s: &str) -> std::result::Result<(u32, usize), String> {
    let Some(end) = s.find('>') else {
        return Err("the tag is not closed: add `/>`".into());
    };
    let mut attrs = strip_word(&s[1..end], "break").unwrap_or_default();
    let self_closing = attrs.trim_end().ends_with('/');
    if self_closing {
        attrs = attrs.trim_end().trim_end_matches('/');
    }
    let mut time = None;
    let mut rest = attrs.trim_start();
    while !rest.is_empty() {
        let name_len = rest
            .find(|c: char| c == '=' || c.is_whitespace())
            .unwrap_or(rest.len());
        let name = &rest[..name_len];
        let after = rest[name_len..].trim_start();
        let Some(after) = after.strip_prefix('=') else {
            return Err(format!("attribute {name:?} has no value"));
        };
        let after = after.trim_start();
        let quote = after.chars().next().filter(|c| *c == '"' || *c == '\'');
        let Some(quote) = quote else {
            return Err(format!("the value of {name} must be quoted"));
        };
        let Some(close) = after[1..].find(quote) else {
            return Err(format!("the value of {name} is not closed: add {quote}"));
        };
        let value = &after[1..=close];
        if !name.eq_ignore_ascii_case("time") {
            return Err(format!(
                "attribute {name:?} is not supported (only time, a duration)"
            ));
        }
        if time.is_some() {
            return Err("time is given twice".into());
        }
        time = Some(parse_duration(value.trim())?);
        rest = after[close + 2..].trim_start();
    }
    let Some(ms) = time else {
        return Err("no time attribute (e.g. time=\"500ms\")".into());
    };
    let mut len = end + 1;
    if !self_closing {
        let after = &s[len..];
        let trimmed = after.trim_start();
        if let Some(r) = strip_word(trimmed, "</break>") {
            len += after.len() - r.len();
        }
    }
    Ok((ms, len))
}

/// Parses `500ms`, `1s`, `1.5 s` into milliseconds, within [`MAX_PAUSE_MS`].
fn parse_duration(d: &str) -> std::result::Result<u32, String> {
    let num_len = d
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(d.len());
    let (number, unit) = (&d[..num_len], d[num_len..].trim());
    let (whole, frac) = match number.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (number, None),
    };
    if whole.is_empty() || frac.is_some_and(|f| f.is_empty() || f.contains('.')) {
        return Err(format!("{d:?} is not a duration (a number and ms or s)"));
    }
    let too_long = || format!("{d} is longer than {} s", MAX_PAUSE_MS / 1000);
    // Digits beyond what fits are surely above the limit.
    let whole: u64 = whole.parse().map_err(|_| too_long())?;
    let ms = if unit.eq_ignore_ascii_case("ms") {
        if frac.is_some() {
            return Err(format!("{d}: milliseconds must be whole"));
        }
        whole
    } else if unit.eq_ignore_ascii_case("s") {
        let frac = frac.unwrap_or("");
        if frac.len() > 3 {
            return Err(format!("{d}: at most three decimals (milliseconds)"));
        }
        let frac_ms: u64 = format!("{frac:0<3}").parse().unwrap_or(0);
        whole.saturating_mul(1000).saturating_add(frac_ms)
    } else if unit.is_empty() {
        return Err(format!("{d} has no unit: add ms or s"));
    } else {
        return Err(format!("unknown unit {unit:?}: use ms or s"));
    };
    if ms > u64::from(MAX_PAUSE_MS) {
        return Err(too_long());
    }
    u32::try_from(ms).map_err(|_| too_long())
}

/// Samples of silence a pause of `ms` milliseconds takes at `sample_rate` Hz (24 per
/// millisecond at 24 kHz), rounded down.
pub fn pause_samples(ms: u32, sample_rate: usize) -> usize {
    (u64::from(ms) * sample_rate as u64 / 1000) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Segment {
        Segment::Text(s.to_string())
    }

    fn err(s: &str) -> String {
        match parse_markup(s) {
            Err(Error::InvalidArgument(m)) => m,
            other => panic!("{s:?}: expected an error, got {other:?}"),
        }
    }

    #[test]
    fn both_syntaxes_and_units() {
        assert_eq!(
            parse_markup("Hello [pause 500ms] world.").unwrap(),
            [text("Hello "), Segment::Pause(500), text(" world.")]
        );
        for (tag, ms) in [
            ("[pause 1s]", 1000),
            ("[pause 1.5s]", 1500),
            ("[PAUSE 2 S]", 2000),
            ("[ pause  250 ms ]", 250),
            ("[pause 0.25s]", 250),
            ("[pause 0ms]", 0),
            ("[pause 10s]", 10_000),
            ("<break time=\"500ms\"/>", 500),
            ("<break time='2s'/>", 2000),
            ("<BREAK TIME = \"1.5s\" />", 1500),
            ("<break time=\"300ms\">", 300),
            ("<break time=\"300ms\"></break>", 300),
        ] {
            assert_eq!(
                parse_markup(&format!("a{tag}b")).unwrap(),
                [text("a"), Segment::Pause(ms), text("b")],
                "{tag}"
            );
        }
    }

    #[test]
    fn tags_at_the_ends_adjacent_and_alone() {
        assert_eq!(
            parse_markup("[pause 1s]Hi.[pause 2s]").unwrap(),
            [Segment::Pause(1000), text("Hi."), Segment::Pause(2000)]
        );
        assert_eq!(
            parse_markup("A.[pause 1s][pause 1s] <break time=\"1s\"/>B.").unwrap(),
            [
                text("A."),
                Segment::Pause(1000),
                Segment::Pause(1000),
                text(" "),
                Segment::Pause(1000),
                text("B.")
            ]
        );
        assert_eq!(parse_markup("[pause 1s]").unwrap(), [Segment::Pause(1000)]);
        assert_eq!(parse_markup("").unwrap(), [text("")]);
    }

    #[test]
    fn other_brackets_are_text() {
        for s in [
            "[laughs] ok",
            "[paused] <b>bold</b>",
            "<breakfast> a < b [ c ]",
            "x]y>z",
        ] {
            assert_eq!(parse_markup(s).unwrap(), [text(s)], "{s}");
        }
        // Non-ASCII text around tags keeps its characters.
        assert_eq!(
            parse_markup("Déjà [pause 1s]vu…").unwrap(),
            [text("Déjà "), Segment::Pause(1000), text("vu…")]
        );
    }

    #[test]
    fn malformed_tags_are_errors_naming_tag_and_position() {
        let m = err("Hi [pause 5x] there");
        assert!(
            m.contains("`[pause 5x]`") && m.contains("character 4") && m.contains("unit"),
            "{m}"
        );
        let m = err("é<break time=\"1s\" strength=\"x\"/>");
        assert!(m.contains("character 2") && m.contains("strength"), "{m}");
        for (s, needle) in [
            ("[pause 500ms", "not closed"),
            ("[pause]", "no duration"),
            ("[pause 500]", "no unit"),
            ("[pause 10.5s]", "longer than 10 s"),
            ("[pause 99999999999999999999999s]", "longer than 10 s"),
            ("[pause 10001ms]", "longer than 10 s"),
            ("[pause 1.5ms]", "whole"),
            ("[pause 1.2345s]", "three decimals"),
            ("[pause .5s]", "not a duration"),
            ("[pause 1.s]", "not a duration"),
            ("[pause -1s]", "not a duration"),
            ("<break/>", "no time"),
            ("<break time=500ms/>", "quoted"),
            ("<break time=\"1s\" time=\"2s\"/>", "twice"),
            ("<break time=\"1s\"", "not closed"),
            ("<break time>", "no value"),
        ] {
            let m = err(s);
            assert!(m.contains(needle), "{s}: {m}");
        }
    }

    #[test]
    fn samples_at_24_khz() {
        assert_eq!(pause_samples(500, 24_000), 12_000);
        assert_eq!(pause_samples(1, 24_000), 24);
        assert_eq!(pause_samples(MAX_PAUSE_MS, 24_000), 240_000);
        assert_eq!(pause_samples(1, 22_050), 22);
    }
}
