//! Opt-in text normalization: numbers, dates, times, money, units, abbreviations and
//! symbols rewritten into words of the model's language, before the reference's own text
//! preparation (`prepare_text_prompt`). No counterpart in the reference (`pocket-tts`
//! 4.0.1 hands digits and symbols to the model as they are); off by default so that the
//! output stays identical to the reference's.
//!
//! ```
//! use pocket_tts_text::normalize::{normalize, Language};
//! assert_eq!(
//!     normalize("Dr. Smith paid $19.99 on 03/04/2026.", Language::English),
//!     "Doctor Smith paid nineteen dollars and ninety-nine cents on March fourth, twenty twenty-six."
//! );
//! assert_eq!(
//!     normalize("Rendez-vous à 15h30, 3 km plus loin.", Language::French),
//!     "Rendez-vous à quinze heures trente, trois kilomètres plus loin."
//! );
//! ```
//!
//! # What is rewritten
//! Cardinals with the language's group and decimal separators, negative numbers,
//! ordinals (`1st`, `1er`), years, money before or after the amount (`$`, `€`, `£`, `¥`,
//! ISO codes, cents, `$2.5 million`), percentages and units after a number (`km`, `kg`,
//! `°C`, `km/h`, `%`, …), times (`3:30 pm`, `15:30`, `15h30`), dates (ISO, numeric in the
//! language's order, with month names), phone numbers and long digit strings (digit by
//! digit or in pairs, as the language reads them), fractions (`3/4`, `½`, `2 1/2`),
//! ranges (`10–20`), Roman numerals only where unambiguous (after a regnal name, `Louis
//! XIV`; after a word such as `chapter`; with an ordinal suffix, `XIXe`), abbreviations
//! of the language (`Dr.`, `Mme`, `etc.`), symbols (`&`, `+`, `=`, `@`, `#`, `×`), URLs
//! and e-mail addresses (read part by part: `example dot com`) and versions (`v1.2.3` →
//! "version one point two point three"). Anything else is left as it is: text in other
//! scripts, digits of other scripts, words, punctuation, whitespace.
//!
//! # Guarantees (tested, see `tests/`)
//! - Never fails, never panics, on any input.
//! - Idempotent: `normalize(normalize(x)) == normalize(x)`. Every ASCII digit is
//!   rewritten, so no digit rule fires twice; expansions are plain words.
//! - Bounded: the output is at most [`MAX_EXPANSION`] × the input's length in bytes plus
//!   [`MAX_EXPANSION`] bytes. Digit runs longer than 9 digits (15 with group separators)
//!   are read digit by digit, never as huge numbers.
//! - Fast: one pass, no regular expressions, tables sorted once per language
//!   ([`Normalizer`]); about 10 KB of mixed text in well under a millisecond.
//!
//! # Design
//! - `mod.rs`: the API ([`Language`], [`normalize`], [`Normalizer`]).
//! - `scan.rs`: character-level scanning (digit runs, numbers with separators, Roman
//!   numerals, word boundaries), always on char boundaries.
//! - `engine.rs`, `numbers.rs`: the single pass: at each position the first rule that
//!   recognises a span writes its reading; the order is fixed there (at a digit: ISO
//!   and numeric dates, times, phone numbers, dotted versions, then the number with
//!   what follows it: currency, ordinal suffix or month name, unit, fraction, range; at
//!   the start of a word: URLs and e-mails, `v1.2`, currency codes, month-first dates,
//!   abbreviations, Roman numerals; then stand-alone symbols).
//! - `address.rs`: where URLs and e-mail addresses start and end.
//! - `rules.rs`: what a language provides: its table, `LanguageData` (how its texts
//!   write numbers, dates, money and units: separators, date order, month names, units,
//!   abbreviations, currencies, symbols, and the fixed words it reads them with), and
//!   the `LanguageRules` trait for what is code (number words, ordinal suffixes, dates,
//!   times, money), and `Out`, the writer that spaces words.
//! - `readings.rs`: readings shared by several languages, with a table or a hook for what
//!   differs: the default money and decimals, Spanish and Portuguese money and clock
//!   times, French and Italian round millions, German and Dutch money and times.
//! - `de.rs`, `en.rs`, `es.rs` (+ `es_numbers.rs`), `fr.rs`, `it.rs` (+ `it_numbers.rs`,
//!   `it_tables.rs`), `nl.rs`, `pt.rs` (+ `pt_numbers.rs`): one file per language, with
//!   its number words.
//! - `tests/`: one table per language, `props.rs` for the properties of all of them.
//!
//! # Number words: our own, not a crate
//! Evaluated (November 2026): `num2words` 1.2.0 (English, French, Ukrainian; last
//! release March 2024) writes wrong French ordinals ("quatre-vingtsième", "deux
//! centsième"), reads French decimals English-style ("trois point un quatre") and takes
//! ~33 µs per number (big-float arithmetic), which alone would spend the 5 ms budget on a
//! number-heavy 10 KB text. `num2words2-core` 0.1.3 (a port of the Python `num2words`,
//! 120+ languages, first release July 2026) is fast enough (~5 µs) but inserts commas
//! ("one thousand, two hundred") and British "and", gets Spanish, Italian and Dutch
//! compounds wrong ("dosmilésimo", "due miliardesimo", "honderdéén") and compiles 160
//! language modules (about two minutes on two cores). Cardinals and ordinals are small
//! and regular enough to write and test per language (100–150 lines each, up to 10¹⁸),
//! so each language file carries its own, tested against its style guide.
//!
//! # How to add a language
//! 1. Write `xx.rs` with its table, a `static DATA: rules::LanguageData` (separators,
//!    how many decimals read as a number, the fixed words, currency names, money scales,
//!    units, date order and month names, time separators, phone groups, abbreviations,
//!    Roman numeral triggers, regnal names, symbols: every field is documented there),
//!    and a unit struct implementing `rules::LanguageRules`; copy the shape of `fr.rs`
//!    (gender, long scale, day-first dates, `15 h 30` times) or `en.rs`. Required:
//!    `data`, `digit`, `cardinal`, `ordinal`, `ordinal_suffix`, `fraction`, `is_plural`,
//!    `date`, `time`, `regnal`. Override when the default does not fit:
//!    `cardinal_gender` (numbers agree: `une`, `doscientas`, `eine`),
//!    `cardinal_before_noun` (Spanish `veintiún km` but `veintiuno` alone, German
//!    `ein Kilometer`), `year` (German `neunzehnhundert…`), `decimal` (when
//!    `decimals_as_number` does not say it), `special_suffix` (any other suffix after
//!    digits), `phone_group` (pairs), `spaced_phone` (`912 345 678` is a phone number,
//!    not thousands), `noun_after` (a plain number before a noun it counts: German
//!    `1 Uhr`, `101 Dalmatiner`), `money` (`d'euros`), `unit_name` (`un'ora`),
//!    `month_at` (a faster test first), `meridiem_at` (return `None` where `am` is a
//!    common word, German), `dotted_time_after` (no time after Italian `versione`),
//!    `time_suffix` (` Uhr`, ` uur`, ` h`), `roman_after_trigger` (ordinals after a
//!    trigger, Italian `capitolo IV`), `roman_before_word` (`XIX secolo`),
//!    `regnal_gender` (`Isabel segunda`). Before writing a reading, look in
//!    `readings.rs`: money with `de` (Spanish, Portuguese), round millions with `de`/`di`
//!    (French, Italian), money with bare hundredths and "N Uhr M" times (German, Dutch),
//!    "N y M" times with the part of the day (Spanish, Portuguese) take a table or a hook
//!    for what differs.
//!    `ordinal_suffix` receives the whole rest of the text, so a language can look
//!    ahead: German `3.` is an ordinal only before a lower-case word or a month name,
//!    not at the end of a sentence; Italian `5°` only when no unit letter follows.
//! 2. Declare the module above and map the [`Language`] to it in `rules_for`.
//! 3. Add `tests/xx.rs`: a table of at least 40 `(input, expected)` cases written to the
//!    language's conventions, citing the style guide at the top; add it to `tests/mod.rs`,
//!    to `tables()` in `tests/props.rs` (idempotence over the table, property tests) and
//!    a ~1 KB paragraph to the crate's `benches/text_normalize.rs`. Debug with the ignored `show`
//!    test (`tests/mod.rs`), which prints the reading of each line of a file.
//! 4. Idempotence: an abbreviation's expansion must not be, nor contain, an
//!    abbreviation, and a `BeforeName` entry without an unconditional fallback must not
//!    be followed by numbers read as capitalised words. `cargo test -p pocket-tts-text
//!    --lib normalize` (add `PROPTEST_CASES=50000` for a longer search) finds the
//!    rest.
//! 5. Something the engine cannot express yet (a new currency, a new kind of span): add
//!    it to the engine with a trait method whose default keeps the other languages as
//!    they are, and a case in their tables if it could touch them.
//!
//! # Known limits
//! Words after a plain number do not change its gender (French `21 minutes` reads
//! « vingt et un minutes », Spanish `21 personas` "veintiuno personas"); a duration
//! written like a time (`1 h 40`) is read as a time of day; numbers written with another language's separators are
//! read with this one's (`3.5` in French is a version, « trois point cinq »); `3/12`,
//! `24/7`, `50/50` stay as written (dates or ratios as often as fractions); ZIP codes and
//! other identifiers of up to nine digits are read as numbers; `I` is a Roman numeral
//! only after a regnal name or a trigger word and before punctuation or the end.

use std::fmt;
use std::str::FromStr;
use std::sync::LazyLock;

use crate::{Error, Result};

mod address;
mod de;
mod en;
mod engine;
mod es;
mod es_numbers;
mod fr;
mod it;
mod it_numbers;
mod it_tables;
mod nl;
mod numbers;
mod pt;
mod pt_numbers;
mod readings;
mod rules;
mod scan;
#[cfg(test)]
mod tests;

use rules::LanguageRules;

/// The output of [`normalize`] is at most `MAX_EXPANSION * (input bytes + 1)` bytes.
pub const MAX_EXPANSION: usize = 64;

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

/// The rules of a language, `None` while it has none (its text is left as it is).
fn rules_for(language: Language) -> Option<&'static dyn LanguageRules> {
    match language {
        Language::English => Some(&en::English),
        Language::French => Some(&fr::French),
        Language::Spanish => Some(&es::Spanish),
        Language::Portuguese => Some(&pt::Portuguese),
        Language::German => Some(&de::German),
        Language::Dutch => Some(&nl::Dutch),
        Language::Italian => Some(&it::Italian),
    }
}

/// A normalizer for one language, with its tables prepared once. [`normalize`] keeps one
/// per language; build your own only to avoid that shared static.
pub struct Normalizer {
    language: Language,
    tables: Option<engine::Tables>,
}

impl fmt::Debug for Normalizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Normalizer")
            .field("language", &self.language)
            .field("has_rules", &self.tables.is_some())
            .finish()
    }
}

impl Normalizer {
    /// Prepares the rules of `language`.
    pub fn new(language: Language) -> Normalizer {
        Normalizer {
            language,
            tables: rules_for(language).map(engine::Tables::new),
        }
    }

    /// The language.
    pub fn language(&self) -> Language {
        self.language
    }

    /// Whether the language has rules. Every [`Language`] has them; a language added to
    /// the enum before its rules would return its text unchanged.
    pub fn has_rules(&self) -> bool {
        self.tables.is_some()
    }

    /// See [`normalize`].
    pub fn normalize(&self, text: &str) -> String {
        match &self.tables {
            Some(t) => engine::run(t, text),
            None => text.to_string(),
        }
    }
}

/// Rewrites `text` into words of `language` (numbers, dates, times, money, units,
/// abbreviations, symbols). Never fails; text it does not recognise is left as it is.
/// Idempotent, and the output is at most [`MAX_EXPANSION`] × (input bytes + 1) bytes.
/// A language without rules would return the text unchanged ([`Normalizer::has_rules`]).
pub fn normalize(text: &str, language: Language) -> String {
    static NORMALIZERS: LazyLock<Vec<Normalizer>> =
        LazyLock::new(|| Language::ALL.into_iter().map(Normalizer::new).collect());
    let index = Language::ALL
        .iter()
        .position(|&l| l == language)
        .unwrap_or(0);
    NORMALIZERS[index].normalize(text)
}
