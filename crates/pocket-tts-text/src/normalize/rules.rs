//! What a language file provides: one [`LanguageData`] table (how its texts write
//! numbers, dates, money, units, abbreviations and symbols, and the fixed words it reads
//! them with) and the [`LanguageRules`] trait for what is code (number words, dates,
//! times, money readings), with the plain data they speak in.
//!
//! The engine (`engine.rs`, `numbers.rs`) finds the spans and decides what they are;
//! a language only says how to *write* them in words, plus the facts about how its
//! texts are written, in its table. Every writing method appends to an [`Out`], which
//! puts a space between two words on its own. Readings shared by several languages, with
//! a hook or a table for what differs, are in `readings.rs`.

use super::address::{absorbs, is_url_punct};
use super::readings::{default_decimal, default_money};
use super::scan::match_table;

/// Grammatical gender of the thing counted (French `une heure`, Spanish `doscientas`,
/// German `eine`). Languages without gender ignore it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gender {
    /// Masculine (also the default).
    Masculine,
    /// Feminine.
    Feminine,
    /// Neuter (German, Dutch).
    #[allow(dead_code)]
    Neuter,
}

/// Currencies recognised by symbol or ISO code (see `numbers.rs` for the spellings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Currency {
    /// `$`, `US$`, `USD`, `CAD`, `AUD`.
    Dollar,
    /// `€`, `EUR`.
    Euro,
    /// `£`, `GBP`.
    Pound,
    /// `¥`, `JPY`.
    Yen,
    /// `CHF`.
    Franc,
    /// `R$`, `BRL` (Brazilian real).
    Real,
}

/// How a language names a currency.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CurrencyNames {
    /// Singular name (`dollar`, `euro`, `livre sterling`).
    pub one: &'static str,
    /// Plural name (`dollars`).
    pub many: &'static str,
    /// Singular of the hundredth (`cent`, `penny`, `centime`); empty when the currency
    /// has none in speech (yen): decimals are then read as a decimal number.
    pub minor_one: &'static str,
    /// Plural of the hundredth (`cents`, `pence`).
    pub minor_many: &'static str,
    /// Gender of the main unit (French `une livre`).
    pub gender: Gender,
    /// Gender of the hundredth.
    pub minor_gender: Gender,
}

/// A multiplier written after an amount of money: `$2.5 million`, `$3bn`, `2 M€`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    /// 10³.
    Thousand,
    /// 10⁶.
    Million,
    /// 10⁹.
    Billion,
    /// 10¹².
    Trillion,
}

/// One token a language accepts as a money scale, e.g. `("bn", Scale::Billion, true)`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScaleToken {
    /// The text after the amount (case-sensitive).
    pub text: &'static str,
    /// What it means.
    pub scale: Scale,
    /// Only when written right after the digits (`$3bn`, not `$3 bn`): for short tokens.
    pub attached_only: bool,
}

/// A unit written after a number: `km`, `°C`, `%`, `km/h`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UnitEntry {
    /// The symbol as written (case-sensitive, matched longest first, must end at a
    /// non-alphanumeric character).
    pub symbol: &'static str,
    /// Singular name.
    pub one: &'static str,
    /// Plural name.
    pub many: &'static str,
    /// Gender of the name (French `une tonne`).
    pub gender: Gender,
}

/// When an abbreviation is expanded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AbbrevWhen {
    /// Always; a final period belongs to the abbreviation (`Dr.`, `e.g.`, `Mme`).
    Always,
    /// Always, and the period is kept when the abbreviation ends a sentence (followed by
    /// the end of the text, a line break, or a space and a capital): `etc.`, `Inc.`.
    MaybeFinal,
    /// Only before a number, possibly after one space: `No. 5`, `p. 12`, `n° 3`.
    BeforeNumber,
    /// Only before whitespace and a capital letter: `M. Dupont`, `St. Louis`. A digit
    /// is not a capital, so a language with such an entry and no fallback for the same
    /// text must not read numbers into capitalised words (idempotence).
    BeforeName,
    /// Only after a word that starts with a capital: `Main St.` (street); the period is
    /// kept at the end of a sentence, as with `MaybeFinal`.
    AfterName,
}

/// An abbreviation and its expansion. Expansions must be plain words that no rule of
/// the language rewrites again (idempotence).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Abbrev {
    /// The text as written, case-sensitive, including its periods (`"Dr."`, `"p. ex."`).
    pub text: &'static str,
    /// What is read instead.
    pub expansion: &'static str,
    /// The condition.
    pub when: AbbrevWhen,
}

/// An [`Abbrev`] (short, for the languages' tables).
pub(crate) const fn ab(text: &'static str, expansion: &'static str, when: AbbrevWhen) -> Abbrev {
    Abbrev {
        text,
        expansion,
        when,
    }
}

/// The [`CurrencyNames`] of a currency whose hundredth is masculine (all of them in the
/// languages so far): `one`, `many`, the hundredth's `minor_one` and `minor_many` (empty
/// without one), the gender of the main unit.
pub(crate) const fn cur(
    one: &'static str,
    many: &'static str,
    minor_one: &'static str,
    minor_many: &'static str,
    gender: Gender,
) -> CurrencyNames {
    CurrencyNames {
        one,
        many,
        minor_one,
        minor_many,
        gender,
        minor_gender: Gender::Masculine,
    }
}

/// A [`ScaleToken`] (short, for the languages' tables).
pub(crate) const fn st(text: &'static str, scale: Scale, attached_only: bool) -> ScaleToken {
    ScaleToken {
        text,
        scale,
        attached_only,
    }
}

/// A [`UnitEntry`] (short, for the languages' tables).
pub(crate) const fn unit(
    symbol: &'static str,
    one: &'static str,
    many: &'static str,
    gender: Gender,
) -> UnitEntry {
    UnitEntry {
        symbol,
        one,
        many,
        gender,
    }
}

/// Order of day and month in all-numeric dates (`03/04/2026`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DateOrder {
    /// Day, month, year (most of Europe).
    DayMonthYear,
    /// Month, day, year (US English).
    MonthDayYear,
}

/// How a date was written, for languages whose reading depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DateStyle {
    /// All digits: ISO `2026-03-04` or `03/04/2026`.
    Numeric,
    /// Day then month name: `4 March 2026`, `4 mars`.
    DayFirst,
    /// Month name then day: `March 4, 2026`.
    MonthFirst,
}

/// A recognised date.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Date<'a> {
    /// Day of the month, 1 to 31.
    pub day: u8,
    /// Month, 1 to 12.
    pub month: u8,
    /// The year when written (four digits).
    pub year: Option<u64>,
    /// How it was written.
    pub style: DateStyle,
    /// The input word right before the date, when only spaces separate them (e.g.
    /// `the` in `the 4th of March`, so English does not say "the the").
    pub prev_word: &'a str,
}

/// `am` / `pm` after a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Meridiem {
    /// Before noon.
    Am,
    /// After noon.
    Pm,
}

/// A recognised time of day.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Time {
    /// 0 to 23 (1 to 12 with a meridiem).
    pub hour: u8,
    /// Minutes when written (`15 h` and `3 pm` have none).
    pub minute: Option<u8>,
    /// Seconds when written (`15:30:05`).
    pub second: Option<u8>,
    /// `am`/`pm` when written.
    pub meridiem: Option<Meridiem>,
}

/// Symbols and separators with a name: the stand-alone symbols (`&`, `+`, `=`, `@`, `#`,
/// `×`, …) and the punctuation read inside URLs and e-mail addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sym {
    /// `&`.
    Ampersand,
    /// `+` (also a plus sign before a number).
    Plus,
    /// `=`.
    Equals,
    /// `@` on its own and in e-mail addresses.
    At,
    /// `#` before a number (`#1`).
    NumberSign,
    /// `#` after a letter (`C#`).
    Sharp,
    /// `#` before a word (`#tag`).
    Hashtag,
    /// `×`.
    Times,
    /// `÷`.
    Divide,
    /// `±`.
    PlusMinus,
    /// `~` or `≈` before a number.
    About,
    /// `§`.
    Section,
    /// `.` in URLs and e-mails.
    Dot,
    /// `/` in URLs.
    Slash,
    /// `-` in URLs.
    Dash,
    /// `_` in URLs.
    Underscore,
    /// `:` in URLs (ports).
    Colon,
    /// `?` in URLs.
    Question,
    /// `#` in URLs.
    Hash,
    /// `%` in URLs.
    Percent,
    /// `~` in URLs.
    Tilde,
}

/// Fixed words of a language.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Words {
    /// Before a negative number: `minus`, `moins`.
    pub minus: &'static str,
    /// Before an explicitly positive number: `plus`.
    pub plus: &'static str,
    /// Between the whole part and the decimals: `point`, `virgule`.
    pub decimal_point: &'static str,
    /// Before a version written `v1.2`: `version`.
    pub version: &'static str,
    /// Between the parts of a version or an IP address (`3.11.2`): `point`.
    pub version_dot: &'static str,
    /// Between the ends of a range (`10–20`): `to`, `à`.
    pub range_to: &'static str,
    /// Between the units and the hundredths of money, and in `2 ½`: `and`, `et`.
    pub and: &'static str,
}

/// How a language names every [`Currency`] ([`LanguageData::currency`] reads it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Currencies {
    /// [`Currency::Dollar`].
    pub dollar: CurrencyNames,
    /// [`Currency::Euro`].
    pub euro: CurrencyNames,
    /// [`Currency::Pound`].
    pub pound: CurrencyNames,
    /// [`Currency::Yen`].
    pub yen: CurrencyNames,
    /// [`Currency::Franc`].
    pub franc: CurrencyNames,
    /// [`Currency::Real`].
    pub real: CurrencyNames,
}

/// The words of the money scales, `(singular, plural)`: `("million", "millions")`
/// ([`LanguageData::scale_word`] reads them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScaleWords {
    /// [`Scale::Thousand`].
    pub thousand: (&'static str, &'static str),
    /// [`Scale::Million`].
    pub million: (&'static str, &'static str),
    /// [`Scale::Billion`].
    pub billion: (&'static str, &'static str),
    /// [`Scale::Trillion`].
    pub trillion: (&'static str, &'static str),
}

/// The word of every [`Sym`] in a language ([`LanguageData::symbol`] reads them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Symbols {
    /// [`Sym::Ampersand`].
    pub ampersand: &'static str,
    /// [`Sym::Plus`].
    pub plus: &'static str,
    /// [`Sym::Equals`].
    pub equals: &'static str,
    /// [`Sym::At`].
    pub at: &'static str,
    /// [`Sym::NumberSign`].
    pub number_sign: &'static str,
    /// [`Sym::Sharp`].
    pub sharp: &'static str,
    /// [`Sym::Hashtag`].
    pub hashtag: &'static str,
    /// [`Sym::Times`].
    pub times: &'static str,
    /// [`Sym::Divide`].
    pub divide: &'static str,
    /// [`Sym::PlusMinus`].
    pub plus_minus: &'static str,
    /// [`Sym::About`].
    pub about: &'static str,
    /// [`Sym::Section`].
    pub section: &'static str,
    /// [`Sym::Dot`].
    pub dot: &'static str,
    /// [`Sym::Slash`].
    pub slash: &'static str,
    /// [`Sym::Dash`].
    pub dash: &'static str,
    /// [`Sym::Underscore`].
    pub underscore: &'static str,
    /// [`Sym::Colon`].
    pub colon: &'static str,
    /// [`Sym::Question`].
    pub question: &'static str,
    /// [`Sym::Hash`].
    pub hash: &'static str,
    /// [`Sym::Percent`].
    pub percent: &'static str,
    /// [`Sym::Tilde`].
    pub tilde: &'static str,
}

/// What a language is as plain data: how its texts write numbers, dates, times, money,
/// units and abbreviations, and the fixed words it reads them with. Each language file
/// has one (`static DATA`), returned by [`LanguageRules::data`]; the engine and the
/// shared readings read it.
#[derive(Debug)]
pub(crate) struct LanguageData {
    // ----- How numbers are written in text -------------------------------------------
    /// Characters that separate groups of three digits (`,` in English; spaces in
    /// French; `.` in German). A group separator is accepted only between a first group
    /// of 1–3 digits and following groups of exactly 3.
    pub group_separators: &'static [char],
    /// The decimal separator (`.` or `,`).
    pub decimal_separator: char,
    /// Decimals of up to this many digits are read as a number after the decimal point
    /// word, their leading zeros as digits (`3,05` « trois virgule zéro cinq »); longer
    /// ones, and all of them when 0, digit by digit ("three point one four").
    pub decimals_as_number: usize,
    /// The fixed words.
    pub words: Words,
    // ----- Phone numbers ----------------------------------------------------------------
    /// The longest digit group of a phone number (4; Brazilian mobiles: `98765-4321`, 5).
    pub phone_group_max: usize,
    /// Whether phone numbers may have groups of up to eight digits, and be an area code
    /// starting with `0`, a space and the subscriber's number (German `030 123456`, DIN
    /// 5008). `false`: groups of at most `phone_group_max` digits, two groups only with a
    /// dash.
    pub phone_long_groups: bool,
    // ----- Money and units -----------------------------------------------------------
    /// The names of every currency.
    pub currencies: Currencies,
    /// Money scale tokens written after an amount (`million`, `bn`, `M`).
    pub scale_tokens: &'static [ScaleToken],
    /// Words allowed between a money scale and the currency after it (Spanish `2,5
    /// millones de €`); usually none.
    pub scale_connectors: &'static [&'static str],
    /// The words of the scales (`million`/`millions`).
    pub scale_words: ScaleWords,
    /// Units written after numbers, in any order (matched longest first).
    pub units: &'static [UnitEntry],
    // ----- Dates and times -----------------------------------------------------------
    /// Order of day and month in numeric dates.
    pub date_order: DateOrder,
    /// Month names and abbreviations as written (an abbreviation's period included), with
    /// their number, 1–12: what [`LanguageRules::month_at`] matches.
    pub month_words: &'static [(&'static str, u8)],
    /// Whether dates are written month first, `March 4, 2026` (English).
    pub month_before_day: bool,
    /// Words allowed between day and month and between month and year (`of`, `de`).
    pub date_connectors: &'static [&'static str],
    /// Characters between hours and minutes in times (`:`; German, Dutch and Italian
    /// also write `15.30`).
    pub time_separators: &'static [char],
    /// Whether `15h30`, `15 h 30` and `15 h` are times (French, Spanish, Portuguese).
    pub hour_letter_times: bool,
    // ----- Words: abbreviations, Roman numerals, symbols --------------------------------
    /// Abbreviations (any order; the engine tries the longest first).
    pub abbreviations: &'static [Abbrev],
    /// Lower-case words after which a Roman numeral is a number (`chapter IV`).
    pub roman_triggers: &'static [&'static str],
    /// Regnal names of this language beyond the shared list in `engine.rs` (`Louis`,
    /// `Elizabeth`, …), after which a Roman numeral is a regnal number.
    pub regnal_names: &'static [&'static str],
    /// The words of the symbols.
    pub symbols: Symbols,
}

impl LanguageData {
    /// The names of a currency.
    pub fn currency(&self, c: Currency) -> &CurrencyNames {
        let t = &self.currencies;
        match c {
            Currency::Dollar => &t.dollar,
            Currency::Euro => &t.euro,
            Currency::Pound => &t.pound,
            Currency::Yen => &t.yen,
            Currency::Franc => &t.franc,
            Currency::Real => &t.real,
        }
    }

    /// The word of a scale, singular or plural.
    pub fn scale_word(&self, s: Scale, plural: bool) -> &'static str {
        let t = &self.scale_words;
        let (one, many) = match s {
            Scale::Thousand => t.thousand,
            Scale::Million => t.million,
            Scale::Billion => t.billion,
            Scale::Trillion => t.trillion,
        };
        if plural {
            many
        } else {
            one
        }
    }

    /// The word of a symbol.
    pub fn symbol(&self, s: Sym) -> &'static str {
        let t = &self.symbols;
        match s {
            Sym::Ampersand => t.ampersand,
            Sym::Plus => t.plus,
            Sym::Equals => t.equals,
            Sym::At => t.at,
            Sym::NumberSign => t.number_sign,
            Sym::Sharp => t.sharp,
            Sym::Hashtag => t.hashtag,
            Sym::Times => t.times,
            Sym::Divide => t.divide,
            Sym::PlusMinus => t.plus_minus,
            Sym::About => t.about,
            Sym::Section => t.section,
            Sym::Dot => t.dot,
            Sym::Slash => t.slash,
            Sym::Dash => t.dash,
            Sym::Underscore => t.underscore,
            Sym::Colon => t.colon,
            Sym::Question => t.question,
            Sym::Hash => t.hash,
            Sym::Percent => t.percent,
            Sym::Tilde => t.tilde,
        }
    }
}

/// Appends words with single spaces between them: [`Out::word`] puts a space first when
/// the text so far ends with a letter or digit; [`Out::raw`] appends as is.
#[derive(Debug, Default)]
pub(crate) struct Out {
    pub(crate) s: String,
    /// A rule has just written a word ending with a letter or digit: the next copied
    /// letter or digit needs a space.
    pub(crate) pending_space: bool,
}

impl Out {
    /// Appends one word (or several, already spaced), separated from a preceding letter
    /// or digit by a space.
    pub fn word(&mut self, w: &str) {
        if w.is_empty() {
            return;
        }
        match self.s.chars().next_back() {
            Some(c) if c.is_alphanumeric() => self.s.push(' '),
            Some(c) if is_url_punct(c) && absorbs(&self.s, w) => self.s.push(' '),
            _ => {}
        }
        self.s.push_str(w);
        self.pending_space = w.ends_with(char::is_alphanumeric);
    }

    /// Appends `s` with no space logic (punctuation, elisions such as `d'`).
    pub fn raw(&mut self, s: &str) {
        self.s.push_str(s);
        self.pending_space = s.ends_with(char::is_alphanumeric);
    }

    /// Reads each digit of `digits` (ASCII digits; other characters are skipped).
    pub fn digits(&mut self, rules: &dyn LanguageRules, digits: &str) {
        for b in digits.bytes().filter(u8::is_ascii_digit) {
            self.word(rules.digit(b - b'0'));
        }
    }
}

/// How one language writes numbers, dates, times, money, units and abbreviations in
/// words: what is code; the rest is its [`LanguageData`]. Implemented by each language
/// file (`en.rs`, `fr.rs`, …); see the module docs for how to add one. Methods with a
/// default only need overriding when the default's doc does not fit the language.
pub(crate) trait LanguageRules: Sync + DynSelf {
    /// The language's table.
    fn data(&self) -> &'static LanguageData;

    // ----- Number words --------------------------------------------------------------

    /// A digit alone, 0–9 (`zero`, `zéro`): digit-by-digit readings.
    fn digit(&self, d: u8) -> &'static str;

    /// A cardinal number. Must handle every `u64` (the engine only sends numbers below
    /// 10¹⁵; longer digit runs are read digit by digit).
    fn cardinal(&self, n: u64, out: &mut Out);

    /// A cardinal counting something of `gender` (French `une`, `vingt et une`).
    fn cardinal_gender(&self, n: u64, gender: Gender, out: &mut Out) {
        let _ = gender;
        self.cardinal(n, out);
    }

    /// A cardinal right before the noun it counts: a unit or a currency name (`21 km`,
    /// `21 €`). Spanish shortens `uno` there (`veintiún kilómetros`, but `el número
    /// veintiuno`). Default: [`LanguageRules::cardinal_gender`].
    fn cardinal_before_noun(&self, n: u64, gender: Gender, out: &mut Out) {
        self.cardinal_gender(n, gender, out);
    }

    /// An ordinal number (`first`, `premier`/`première`).
    fn ordinal(&self, n: u64, gender: Gender, out: &mut Out);

    /// If `rest` (the text right after the digits of `n`) starts with an ordinal suffix
    /// (`st`, `er`, `e`, `º`, German `.`), its length in bytes and the gender it marks.
    /// It must end at a non-letter. Also used after Roman numerals (`XIXe`).
    fn ordinal_suffix(&self, n: u64, rest: &str) -> Option<(usize, Gender)>;

    /// Any other suffix the language reads specially after digits (English decades
    /// `1980s`): writes the reading and returns the suffix length. Default: none.
    fn special_suffix(&self, n: u64, rest: &str, out: &mut Out) -> Option<usize> {
        let _ = (n, rest, out);
        None
    }

    /// A bare four-digit number 1000–2099 (no separators, unit or currency), which is
    /// most often a year. Default: the cardinal.
    fn year(&self, n: u64, out: &mut Out) {
        self.cardinal(n, out);
    }

    /// A decimal number: whole part `int`, decimals `frac` (ASCII digits, possibly with
    /// leading zeros). Default: the cardinal, the decimal point word, then the decimals
    /// as [`LanguageData::decimals_as_number`] says.
    fn decimal(&self, int: u64, frac: &str, out: &mut Out) {
        default_decimal(self.dyn_self(), int, frac, out);
    }

    /// A fraction `num/den` with `num < den` (`three quarters`); `mixed` when it follows
    /// a whole number (`two and a half`: the `and` is written by the engine).
    fn fraction(&self, num: u64, den: u64, mixed: bool, out: &mut Out);

    /// Whether a quantity takes the plural (units, currencies): English "1 km" is
    /// singular, "1.5 km" plural; French is singular below 2. `frac` is the decimals.
    fn is_plural(&self, int: u64, frac: Option<&str>) -> bool;

    /// Whether digit groups separated by single spaces only, which read as a number
    /// grouped by thousands (`912 345 678`), are a phone number instead. `groups`: the
    /// digits of each group; `prev_word`: the word before them in the output, if any.
    /// Default: never (English and French group thousands so).
    fn spaced_phone(&self, groups: &[&str], prev_word: Option<&str>) -> bool {
        let _ = (groups, prev_word);
        false
    }

    /// One group of a phone number or of a long digit string (`555`, `06`). Default:
    /// digit by digit.
    fn phone_group(&self, digits: &str, out: &mut Out) {
        out.digits(self.dyn_self(), digits);
    }

    /// Whether a plain number (no unit, currency or suffix) counts a noun written right
    /// after it, and that noun's gender: the number is then read with
    /// [`cardinal_before_noun`](Self::cardinal_before_noun). `rest`: the text after the
    /// digits. German: a capitalised word (`101 Dalmatiner`, `1 Uhr`). Default: never.
    fn noun_after(&self, rest: &str) -> Option<Gender> {
        let _ = rest;
        None
    }

    // ----- Money and units -----------------------------------------------------------

    /// An amount of money. `int`/`frac` are the amount as written (`frac`: decimals),
    /// `scale` a multiplier written after it. The default reads, English-like:
    /// `[minus] N dollar(s) [and M cent(s)]`, or `N point D million dollars`.
    fn money(&self, m: &Money<'_>, out: &mut Out) {
        default_money(self.dyn_self(), m, out);
    }

    /// Writes the name of a unit right after its number (`kilometres`). Default: a
    /// separate word; Italian elides `una` before a vowel (`un'ora`).
    fn unit_name(&self, name: &str, out: &mut Out) {
        out.word(name);
    }

    // ----- Dates and times -----------------------------------------------------------

    /// If `rest` starts with a month name or abbreviation (ending at a non-letter, an
    /// abbreviation's period included), the month (1–12) and the length in bytes.
    /// Default: [`LanguageData::month_words`].
    fn month_at(&self, rest: &str) -> Option<(u8, usize)> {
        match_table(rest, 0, self.data().month_words)
    }

    /// A date in words.
    fn date(&self, d: &Date<'_>, out: &mut Out);

    /// A time of day in words.
    fn time(&self, t: &Time, out: &mut Out);

    /// If `rest` starts with `am`/`pm` (`a.m.`, `PM`, …) ending at a non-letter, which
    /// and its length. Default: those English forms, in any language (a language where
    /// `am` is a common word after numbers, such as German, returns `None`).
    fn meridiem_at(&self, rest: &str) -> Option<(Meridiem, usize)> {
        default_meridiem_at(rest)
    }

    /// Whether `15.30` after the word `prev` (the last word written, if only spaces
    /// follow it) may be a time, for languages whose
    /// [`time_separators`](LanguageData::time_separators) include `.`. Default: always;
    /// Italian says no after `versione` (`versione 2.10` is a version).
    fn dotted_time_after(&self, prev: Option<&str>) -> bool {
        let _ = prev;
        true
    }

    /// Length of a word after a time that the reading already includes (German
    /// ` Uhr`), so it is not read twice. Default: none.
    fn time_suffix(&self, rest: &str) -> usize {
        let _ = rest;
        0
    }

    // ----- Words: Roman numerals --------------------------------------------------------

    /// A Roman numeral after the trigger word `trigger` (one of
    /// [`roman_triggers`](LanguageData::roman_triggers)). Default: the cardinal
    /// (`chapter four`); Italian reads the ordinal (`capitolo quarto`).
    fn roman_after_trigger(&self, n: u64, trigger: &str, out: &mut Out) {
        let _ = trigger;
        self.cardinal(n, out);
    }

    /// If `rest` (the text right after a Roman numeral) starts with a word that makes
    /// the numeral an ordinal (Italian `XIX secolo`, `II guerra mondiale`), the gender
    /// of that ordinal. Default: none.
    fn roman_before_word(&self, rest: &str) -> Option<Gender> {
        let _ = rest;
        None
    }

    /// The gender of a regnal name, passed to [`LanguageRules::regnal`] (Spanish and
    /// Portuguese ordinals agree: "Isabel segunda"). Default: masculine.
    fn regnal_gender(&self, name: &str) -> Gender {
        let _ = name;
        Gender::Masculine
    }

    /// A regnal number after a name: `the fourteenth` (English), `quatorze` (French).
    fn regnal(&self, n: u64, gender: Gender, out: &mut Out);
}

/// `self` as a trait object, for the default methods of [`LanguageRules`]; implemented
/// for every language.
pub(crate) trait DynSelf {
    /// `self` as a `&dyn LanguageRules`.
    fn dyn_self(&self) -> &dyn LanguageRules;
}

impl<T: LanguageRules> DynSelf for T {
    fn dyn_self(&self) -> &dyn LanguageRules {
        self
    }
}

/// An amount of money as the engine found it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Money<'a> {
    /// A minus sign was written.
    pub negative: bool,
    /// Whole part.
    pub int: u64,
    /// Decimals as written.
    pub frac: Option<&'a str>,
    /// A multiplier written after the amount.
    pub scale: Option<Scale>,
    /// The currency.
    pub currency: Currency,
}

impl Money<'_> {
    /// The hundredths to read with the currency's minor unit (`19,99` → 99): two
    /// decimals of a currency that has one, or decimals that are all zeros (`5.00`,
    /// `5.0` → 0); `None` without decimals or for any other decimals (read as a
    /// decimal number).
    pub fn cents(&self, names: &CurrencyNames) -> Option<u64> {
        match self.frac {
            Some(f) if f.len() == 2 && !names.minor_one.is_empty() => f.parse::<u64>().ok(),
            Some(f) if !f.is_empty() && f.bytes().all(|b| b == b'0') => Some(0),
            _ => None,
        }
    }
}

/// The default [`LanguageRules::meridiem_at`].
pub(crate) fn default_meridiem_at(rest: &str) -> Option<(Meridiem, usize)> {
    const FORMS: [(&str, Meridiem); 8] = [
        ("a.m.", Meridiem::Am),
        ("p.m.", Meridiem::Pm),
        ("A.M.", Meridiem::Am),
        ("P.M.", Meridiem::Pm),
        ("am", Meridiem::Am),
        ("pm", Meridiem::Pm),
        ("AM", Meridiem::Am),
        ("PM", Meridiem::Pm),
    ];
    FORMS.into_iter().find_map(|(f, m)| {
        let after = rest.strip_prefix(f)?;
        let next = after.chars().next();
        (!next.is_some_and(|c| c.is_alphanumeric())).then_some((m, f.len()))
    })
}
