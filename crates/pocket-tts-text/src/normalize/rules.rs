//! What a language file provides: the [`LanguageRules`] trait and the plain data it
//! speaks in (currencies, units, abbreviations, dates, times, symbols).
//!
//! The engine (`engine.rs`, `numbers.rs`) finds the spans and decides what they are;
//! a language only says how to *write* them in words, plus the few facts about how its
//! texts are written (separators, date order, ordinal suffixes, abbreviations). Every
//! writing method appends to an [`Out`], which puts a space between two words on its own.

use super::address::{absorbs, is_url_punct};

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
/// words. Implemented by each language file (`en.rs`, `fr.rs`, …); see the module docs
/// for how to add one. Methods with a default only need overriding when the default's
/// doc does not fit the language.
pub(crate) trait LanguageRules: Sync {
    // ----- How numbers are written in text -------------------------------------------

    /// Characters that separate groups of three digits (`,` in English; spaces in
    /// French; `.` in German). A group separator is accepted only between a first group
    /// of 1–3 digits and following groups of exactly 3.
    fn group_separators(&self) -> &'static [char];

    /// The decimal separator (`.` or `,`).
    fn decimal_separator(&self) -> char;

    // ----- Number words --------------------------------------------------------------

    /// The fixed words.
    fn words(&self) -> &'static Words;

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
    /// leading zeros). Default: cardinal, the decimal point word, then digit by digit.
    fn decimal(&self, int: u64, frac: &str, out: &mut Out) {
        self.cardinal(int, out);
        out.word(self.words().decimal_point);
        out.digits(self.dyn_self(), frac);
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

    /// The longest digit group of a phone number (Brazilian mobiles: `98765-4321`).
    /// Default: 4.
    fn phone_group_max(&self) -> usize {
        4
    }

    /// One group of a phone number or of a long digit string (`555`, `06`). Default:
    /// digit by digit.
    fn phone_group(&self, digits: &str, out: &mut Out) {
        out.digits(self.dyn_self(), digits);
    }

    /// Whether phone numbers may have groups of up to eight digits, and be an area code
    /// starting with `0`, a space and the subscriber's number (German `030 123456`, DIN
    /// 5008). Default: groups of at most four digits, two groups only with a dash.
    fn phone_long_groups(&self) -> bool {
        false
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

    /// The names of a currency.
    fn currency(&self, c: Currency) -> &'static CurrencyNames;

    /// Money scale tokens written after an amount (`million`, `bn`, `M`).
    fn scale_tokens(&self) -> &'static [ScaleToken];

    /// Words allowed between a money scale and the currency after it (Spanish `2,5
    /// millones de €`). Default: none.
    fn scale_connectors(&self) -> &'static [&'static str] {
        &[]
    }

    /// The word of a scale (`million`/`millions`).
    fn scale_word(&self, s: Scale, plural: bool) -> &'static str;

    /// An amount of money. `int`/`frac` are the amount as written (`frac`: decimals),
    /// `scale` a multiplier written after it. The default reads, English-like:
    /// `[minus] N dollar(s) [and M cent(s)]`, or `N point D million dollars`.
    fn money(&self, m: &Money<'_>, out: &mut Out) {
        default_money(self.dyn_self(), m, out);
    }

    /// Units written after numbers, in any order (matched longest first).
    fn units(&self) -> &'static [UnitEntry];

    /// Writes the name of a unit right after its number (`kilometres`). Default: a
    /// separate word; Italian elides `una` before a vowel (`un'ora`).
    fn unit_name(&self, name: &str, out: &mut Out) {
        out.word(name);
    }

    // ----- Dates and times -----------------------------------------------------------

    /// Order of day and month in numeric dates.
    fn date_order(&self) -> DateOrder;

    /// If `rest` starts with a month name or abbreviation (ending at a non-letter, an
    /// abbreviation's period included), the month (1–12) and the length in bytes.
    fn month_at(&self, rest: &str) -> Option<(u8, usize)>;

    /// Whether dates are written month first, `March 4, 2026` (English).
    fn month_before_day(&self) -> bool {
        false
    }

    /// Words allowed between day and month and between month and year (`of`, `de`).
    fn date_connectors(&self) -> &'static [&'static str] {
        &[]
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

    /// Characters between hours and minutes in times (`:`; Italian and Dutch also
    /// write `15.30`). Default: `:` only.
    fn time_separators(&self) -> &'static [char] {
        &[':']
    }

    /// Whether `15.30` after the word `prev` (the last word written, if only spaces
    /// follow it) may be a time, for languages whose
    /// [`time_separators`](LanguageRules::time_separators) include `.`. Default: always;
    /// Italian says no after `versione` (`versione 2.10` is a version).
    fn dotted_time_after(&self, prev: Option<&str>) -> bool {
        let _ = prev;
        true
    }

    /// Whether `15h30`, `15 h 30` and `15 h` are times (French).
    fn hour_letter_times(&self) -> bool {
        false
    }

    /// Length of a word after a time that the reading already includes (German
    /// ` Uhr`), so it is not read twice. Default: none.
    fn time_suffix(&self, rest: &str) -> usize {
        let _ = rest;
        0
    }

    // ----- Words: abbreviations, Roman numerals, symbols --------------------------------

    /// Abbreviations (any order; the engine tries the longest first).
    fn abbreviations(&self) -> &'static [Abbrev];

    /// Lower-case words after which a Roman numeral is a number (`chapter IV`).
    fn roman_triggers(&self) -> &'static [&'static str];

    /// A Roman numeral after the trigger word `trigger` (one of
    /// [`roman_triggers`](LanguageRules::roman_triggers)). Default: the cardinal
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

    /// Regnal names of this language beyond the shared list in `engine.rs` (`Louis`,
    /// `Elizabeth`, …), after which a Roman numeral is a regnal number.
    fn regnal_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// The gender of a regnal name, passed to [`LanguageRules::regnal`] (Spanish and
    /// Portuguese ordinals agree: "Isabel segunda"). Default: masculine.
    fn regnal_gender(&self, name: &str) -> Gender {
        let _ = name;
        Gender::Masculine
    }

    /// A regnal number after a name: `the fourteenth` (English), `quatorze` (French).
    fn regnal(&self, n: u64, gender: Gender, out: &mut Out);

    /// The word for a symbol.
    fn symbol(&self, s: Sym) -> &'static str;

    // ----- Plumbing -------------------------------------------------------------------

    /// `self` as a trait object (for the default methods); implement as `self`.
    fn dyn_self(&self) -> &dyn LanguageRules;
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

/// The default money reading (see [`LanguageRules::money`]); languages that override
/// `money` can call it for the cases they do not change.
pub(crate) fn default_money(r: &dyn LanguageRules, m: &Money<'_>, out: &mut Out) {
    let names = r.currency(m.currency);
    if m.negative {
        out.word(r.words().minus);
    }
    if let Some(scale) = m.scale {
        say_amount(r, m.int, m.frac, Gender::Masculine, out);
        out.word(r.scale_word(scale, r.is_plural(m.int, m.frac)));
        out.word(names.many);
        return;
    }
    let cents = m.cents(names);
    match cents {
        Some(c) => {
            if m.int > 0 || c == 0 {
                r.cardinal_before_noun(m.int, names.gender, out);
                out.word(if r.is_plural(m.int, None) {
                    names.many
                } else {
                    names.one
                });
            }
            if c > 0 {
                if m.int > 0 {
                    out.word(r.words().and);
                }
                r.cardinal_before_noun(c, names.minor_gender, out);
                out.word(if r.is_plural(c, None) {
                    names.minor_many
                } else {
                    names.minor_one
                });
            }
        }
        None => {
            match m.frac {
                Some(f) if !f.is_empty() => r.decimal(m.int, f, out),
                _ => r.cardinal_before_noun(m.int, names.gender, out),
            }
            out.word(if r.is_plural(m.int, m.frac) {
                names.many
            } else {
                names.one
            });
        }
    }
}

/// A whole number or a decimal, counting something of `gender`.
pub(crate) fn say_amount(
    r: &dyn LanguageRules,
    int: u64,
    frac: Option<&str>,
    gender: Gender,
    out: &mut Out,
) {
    match frac {
        Some(f) if !f.is_empty() => r.decimal(int, f, out),
        _ => r.cardinal_gender(int, gender, out),
    }
}

/// A whole number or a decimal counting nothing in particular (`uno`, not `un`).
pub(crate) fn say_amount_plain(r: &dyn LanguageRules, int: u64, frac: Option<&str>, out: &mut Out) {
    match frac {
        Some(f) if !f.is_empty() => r.decimal(int, f, out),
        _ => r.cardinal(int, out),
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
