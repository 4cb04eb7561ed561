//! Opt-in text normalization: numbers, dates, times, money, units, abbreviations and
//! symbols rewritten into words of the model's language, before the reference's own text
//! preparation (`prepare_text_prompt`). No counterpart in the reference (`pocket-tts`
//! 4.0.1 hands digits and symbols to the model as they are); off by default so that the
//! output stays identical to the reference's.
//!
//! SKELETON: the API below is fixed; the rules are being written (issue 12).

use std::fmt;
use std::str::FromStr;

use crate::{Error, Result};

/// A language with normalization rules: the languages of the shipped models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    /// English (`english*` configs).
    English,
    /// French (`french*`).
    French,
    /// German (`german*`).
    German,
    /// Italian (`italian*`).
    Italian,
    /// Portuguese (`portuguese*`).
    Portuguese,
    /// Spanish (`spanish*`).
    Spanish,
    /// Dutch (`dutch*`).
    Dutch,
}

impl Language {
    /// Every language, in a fixed order.
    pub const ALL: [Language; 7] = [
        Language::English,
        Language::French,
        Language::German,
        Language::Italian,
        Language::Portuguese,
        Language::Spanish,
        Language::Dutch,
    ];

    /// The lower-case English name (`"english"`, `"french"`, …).
    pub fn name(self) -> &'static str {
        match self {
            Language::English => "english",
            Language::French => "french",
            Language::German => "german",
            Language::Italian => "italian",
            Language::Portuguese => "portuguese",
            Language::Spanish => "spanish",
            Language::Dutch => "dutch",
        }
    }

    /// The ISO 639-1 code (`"en"`, `"fr"`, …).
    pub fn code(self) -> &'static str {
        match self {
            Language::English => "en",
            Language::French => "fr",
            Language::German => "de",
            Language::Italian => "it",
            Language::Portuguese => "pt",
            Language::Spanish => "es",
            Language::Dutch => "nl",
        }
    }

    /// The language of a built-in config name (`"french_24l"` → French,
    /// `"english_2026-01"` → English): the part before the first `_`. `None` when that
    /// is not a known language.
    pub fn from_config_name(config: &str) -> Option<Language> {
        let stem = config.split('_').next().unwrap_or(config);
        stem.parse().ok()
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Language {
    type Err = Error;

    /// Parses a name (`"german"`) or an ISO 639-1 code (`"de"`), case-insensitively.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the known languages.
    fn from_str(s: &str) -> Result<Language> {
        let lower = s.trim().to_ascii_lowercase();
        Language::ALL
            .into_iter()
            .find(|l| l.name() == lower || l.code() == lower)
            .ok_or_else(|| {
                let known: Vec<&str> = Language::ALL.iter().map(|l| l.name()).collect();
                Error::InvalidArgument(format!(
                    "unknown text language {s:?}; known: {} (or their ISO 639-1 codes)",
                    known.join(", ")
                ))
            })
    }
}

/// Rewrites `text` into words of `language` (numbers, dates, times, money, units,
/// abbreviations, symbols). Never fails; text it does not recognise is left as it is.
///
/// SKELETON: returns the text unchanged until the rules land.
pub fn normalize(text: &str, language: Language) -> String {
    let _ = language;
    text.to_string()
}
