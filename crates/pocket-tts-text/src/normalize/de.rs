//! German rules (Duden, "Schreibung von Zahlen", "Ordinalzahlen" and the Duden grammar
//! on "ein"/"eins"; DIN 5008 for dates, times and telephone numbers).
//!
//! - Numbers: `1.234.567,89`; everything below a million is one word
//!   ("zweihundertvierunddreißigtausend"), `Million`, `Milliarde`, … are separate
//!   nouns ("eine Million", "zwei Milliarden"); decimals are read digit by digit after
//!   "Komma" ("drei Komma eins vier").
//! - "eins": a number named on its own ends in "eins" ("einhunderteins", "Nummer
//!   eins"); before the noun it counts (a unit, a currency, a capitalised word) it is
//!   "ein"/"eine" ("ein Kilometer", "eine Stunde", "ein Uhr"), and without ending after
//!   hundreds, the noun being plural (Duden: "hundertein Gründe", so "einhundertein
//!   Euro").
//! - Ordinals are written `3.`; the period counts as an ordinal mark only before a space
//!   and a word that does not usually start a sentence. The ending follows the word
//!   before: "am dritten", "der dritte", "dritter Mai" on its own.
//! - Years 1100–1999 are read in hundreds ("neunzehnhundertneunundneunzig"), others as
//!   cardinals ("zweitausendsechsundzwanzig").
//! - Dates: day first (`03.04.2026`, `3. April 2026`, ISO `2026-04-03`), read with the
//!   month name ("am dritten April zweitausendsechsundzwanzig").
//! - Times: `15:30 Uhr`, `15.30 Uhr` and `15.30` → "fünfzehn Uhr dreißig"; no am/pm.
//! - Money: amount, currency, then the hundredths without their name ("neunzehn Euro
//!   neunundneunzig"); hundredths alone keep it ("fünfzig Cent").
//! - Phone numbers: `030 123456`, `+49 30 12345678`, digit by digit, groups separated
//!   by a pause.
//!
//! Not handled: the case of "ein" before a noun (always nominative: "Er hat 1 Hund" →
//! "ein Hund", not "einen"), the gender of "1" before a noun only guessed from its ending
//! ("eine Katze", "ein Hund") and "eins" kept before an adjective ("1 großer Hund"); a
//! number with two decimals separated by a period is a time (`2.15` → "zwei Uhr
//! fünfzehn", also in `Abschnitt 2.15`); street abbreviations glued to the name
//! (`Hauptstr.`) stay as written; ordinal endings only after an article or preposition
//! written right before (no agreement with the noun after).

use super::rules::ab;
use super::rules::{
    Abbrev, AbbrevWhen::*, Currency, CurrencyNames, Date, DateOrder, Gender, LanguageRules, Money,
    Out, Scale, ScaleToken, Sym, Time, UnitEntry, Words,
};
use super::scan::match_table;

/// The German rules.
pub(crate) struct German;

const ONES: [&str; 20] = [
    "null",
    "eins",
    "zwei",
    "drei",
    "vier",
    "fünf",
    "sechs",
    "sieben",
    "acht",
    "neun",
    "zehn",
    "elf",
    "zwölf",
    "dreizehn",
    "vierzehn",
    "fünfzehn",
    "sechzehn",
    "siebzehn",
    "achtzehn",
    "neunzehn",
];
const TENS: [&str; 10] = [
    "", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig",
];
/// Long scale: (value, singular, plural).
const SCALES: [(u64, &str, &str); 5] = [
    (1_000_000_000_000_000_000, "Trillion", "Trillionen"),
    (1_000_000_000_000_000, "Billiarde", "Billiarden"),
    (1_000_000_000_000, "Billion", "Billionen"),
    (1_000_000_000, "Milliarde", "Milliarden"),
    (1_000_000, "Million", "Millionen"),
];

/// 0–99 glued to `s`; `final_one`: 1 alone is "eins" (else "ein", as in "einhundert").
fn below_100(n: u64, final_one: bool, s: &mut String) {
    let n = (n % 100) as usize;
    match n {
        1 if !final_one => s.push_str("ein"),
        0..=19 => s.push_str(ONES[n]),
        _ => {
            if !n.is_multiple_of(10) {
                s.push_str(if n % 10 == 1 { "ein" } else { ONES[n % 10] });
                s.push_str("und");
            }
            s.push_str(TENS[n / 10]);
        }
    }
}

fn below_1000(n: u64, final_one: bool, s: &mut String) {
    if n >= 100 {
        below_100(n / 100, false, s);
        s.push_str("hundert");
    }
    if !n.is_multiple_of(100) {
        below_100(n % 100, final_one, s);
    }
}

/// Below a million, one word: "zweihundertvierunddreißigtausendfünfhundertsieben".
fn below_million(n: u64, s: &mut String) {
    if n >= 1000 {
        below_1000(n / 1000, false, s);
        s.push_str("tausend");
    }
    if !n.is_multiple_of(1000) {
        below_1000(n % 1000, true, s);
    }
}

/// "eine Million zweihunderttausend", "null".
pub(crate) fn cardinal_string(n: u64) -> String {
    if n == 0 {
        return ONES[0].to_string();
    }
    let mut s = String::new();
    let mut rest = n;
    for (scale, one, many) in SCALES {
        if rest >= scale {
            let count = rest / scale;
            if !s.is_empty() {
                s.push(' ');
            }
            if count == 1 {
                s.push_str("eine ");
                s.push_str(one);
            } else {
                below_million(count, &mut s);
                s.push(' ');
                s.push_str(many);
            }
            rest %= scale;
        }
    }
    if rest > 0 {
        if !s.is_empty() {
            s.push(' ');
        }
        below_million(rest, &mut s);
    }
    s
}

/// The ordinal stem without its ending: "dritt", "zwanzigst", "einhunderterst".
fn ordinal_stem(n: u64) -> String {
    let m = n % 100;
    let mut s = if n >= 100 {
        cardinal_string(n - m).replace(' ', "").to_lowercase()
    } else {
        String::new()
    };
    match m {
        0 => s.push_str("st"),
        1 => s.push_str("erst"),
        3 => s.push_str("dritt"),
        7 => s.push_str("siebt"),
        8 => s.push_str("acht"),
        2..=19 => {
            s.push_str(ONES[m as usize]);
            s.push('t');
        }
        _ => {
            below_100(m, true, &mut s);
            s.push_str("st");
        }
    }
    s
}

/// "neunzehnhundertneunundneunzig", "zweitausendsechsundzwanzig".
fn year_string(n: u64) -> String {
    if (1100..=1999).contains(&n) {
        let mut s = String::new();
        below_100(n / 100, false, &mut s);
        s.push_str("hundert");
        if !n.is_multiple_of(100) {
            below_100(n % 100, true, &mut s);
        }
        return s;
    }
    cardinal_string(n)
}

/// Words after which an ordinal takes the ending `-en` (dative, accusative).
const OBLIQUE: &[&str] = &[
    "am", "im", "zum", "vom", "beim", "dem", "den", "des", "zur", "ab", "bis", "seit", "einem",
    "einen", "ihrem", "seinem", "diesem",
];
/// Words after which it takes `-e` (nominative with an article).
const NOMINATIVE: &[&str] = &["der", "die", "das", "jeder", "jede", "dieser", "diese"];

/// The last word written so far, lower-cased.
fn last_word(out: &Out) -> String {
    let t = out.s.trim_end();
    let start = t
        .rfind(|c: char| !c.is_alphabetic())
        .map_or(0, |k| k + t[k..].chars().next().map_or(1, char::len_utf8));
    t[start..].to_lowercase()
}

/// Endings of nouns that are nearly always feminine (Duden-Grammatik, "Genus"):
/// "eine Katze", "eine Zeitung"; any other noun is read as masculine or neuter ("ein").
const FEMININE_ENDINGS: &[&str] = &[
    "e", "ung", "heit", "keit", "schaft", "ion", "tät", "ik", "enz", "anz",
];

/// The likely gender of a noun after "1", from its ending.
fn noun_gender(word: &str) -> Gender {
    const NOT_FEMININE: &[&str] = &["Käse", "Name", "Junge", "Auge", "Ende", "Gebäude"];
    let feminine =
        FEMININE_ENDINGS.iter().any(|e| word.ends_with(e)) && !NOT_FEMININE.contains(&word);
    if feminine {
        Gender::Feminine
    } else {
        Gender::Masculine
    }
}

/// Capitalised words after `3.` that usually start a sentence (then `3.` ends one).
const SENTENCE_STARTS: &[&str] = &[
    "Der", "Die", "Das", "Ich", "Du", "Er", "Sie", "Es", "Wir", "Ihr", "Dann", "Aber", "Und",
    "Ein", "Eine", "Danach", "Damit", "Dies", "Diese", "Dieser", "Man", "Wenn", "Als", "In", "Im",
    "Am", "Auch", "So",
];

const MONTHS: [&str; 12] = [
    "Januar",
    "Februar",
    "März",
    "April",
    "Mai",
    "Juni",
    "Juli",
    "August",
    "September",
    "Oktober",
    "November",
    "Dezember",
];
const MONTH_WORDS: &[(&str, u8)] = &[
    ("Januar", 1),
    ("Jänner", 1),
    ("Februar", 2),
    ("März", 3),
    ("April", 4),
    ("Mai", 5),
    ("Juni", 6),
    ("Juli", 7),
    ("August", 8),
    ("September", 9),
    ("Oktober", 10),
    ("November", 11),
    ("Dezember", 12),
    ("Jan.", 1),
    ("Feb.", 2),
    ("Mrz.", 3),
    ("Apr.", 4),
    ("Jun.", 6),
    ("Jul.", 7),
    ("Aug.", 8),
    ("Sept.", 9),
    ("Sep.", 9),
    ("Okt.", 10),
    ("Nov.", 11),
    ("Dez.", 12),
];

static WORDS: Words = Words {
    minus: "minus",
    plus: "plus",
    decimal_point: "Komma",
    version: "Version",
    version_dot: "Punkt",
    range_to: "bis",
    and: "und",
};

const fn cur(
    one: &'static str,
    minor_one: &'static str,
    minor_many: &'static str,
    gender: Gender,
) -> CurrencyNames {
    CurrencyNames {
        one,
        many: one,
        minor_one,
        minor_many,
        gender,
        minor_gender: Gender::Masculine,
    }
}
static EURO: CurrencyNames = cur("Euro", "Cent", "Cent", Gender::Masculine);
static DOLLAR: CurrencyNames = cur("Dollar", "Cent", "Cent", Gender::Masculine);
static POUND: CurrencyNames = cur("Pfund", "Penny", "Pence", Gender::Neuter);
static YEN: CurrencyNames = cur("Yen", "", "", Gender::Masculine);
static FRANC: CurrencyNames = cur("Franken", "Rappen", "Rappen", Gender::Masculine);
/// Duden: der Real, Plural Reais; hundredths Centavo, Centavos.
static REAL: CurrencyNames = CurrencyNames {
    many: "Reais",
    ..cur("Real", "Centavo", "Centavos", Gender::Masculine)
};

const fn st(text: &'static str, scale: Scale) -> ScaleToken {
    ScaleToken {
        text,
        scale,
        attached_only: false,
    }
}
static SCALE_TOKENS: [ScaleToken; 10] = [
    st("Billionen", Scale::Trillion),
    st("Billion", Scale::Trillion),
    st("Milliarden", Scale::Billion),
    st("Milliarde", Scale::Billion),
    st("Mrd.", Scale::Billion),
    st("Millionen", Scale::Million),
    st("Million", Scale::Million),
    st("Mio.", Scale::Million),
    st("Tausend", Scale::Thousand),
    st("Tsd.", Scale::Thousand),
];

const fn u(symbol: &'static str, one: &'static str, many: &'static str, g: Gender) -> UnitEntry {
    UnitEntry {
        symbol,
        one,
        many,
        gender: g,
    }
}
use Gender::{Feminine as F, Masculine as M, Neuter as N};
static UNITS: &[UnitEntry] = &[
    u("km", "Kilometer", "Kilometer", M),
    u("m", "Meter", "Meter", M),
    u("cm", "Zentimeter", "Zentimeter", M),
    u("mm", "Millimeter", "Millimeter", M),
    u("km²", "Quadratkilometer", "Quadratkilometer", M),
    u("m²", "Quadratmeter", "Quadratmeter", M),
    u("m³", "Kubikmeter", "Kubikmeter", M),
    u("kg", "Kilogramm", "Kilogramm", N),
    u("g", "Gramm", "Gramm", N),
    u("mg", "Milligramm", "Milligramm", N),
    u("t", "Tonne", "Tonnen", F),
    u("l", "Liter", "Liter", M),
    u("L", "Liter", "Liter", M),
    u("ml", "Milliliter", "Milliliter", M),
    u("km/h", "Kilometer pro Stunde", "Kilometer pro Stunde", M),
    u("m/s", "Meter pro Sekunde", "Meter pro Sekunde", M),
    u("°C", "Grad Celsius", "Grad Celsius", N),
    u("°F", "Grad Fahrenheit", "Grad Fahrenheit", N),
    u("°", "Grad", "Grad", N),
    u("%", "Prozent", "Prozent", N),
    u("‰", "Promille", "Promille", N),
    u("h", "Stunde", "Stunden", F),
    u("min", "Minute", "Minuten", F),
    u("Min.", "Minute", "Minuten", F),
    u("s", "Sekunde", "Sekunden", F),
    u("Std.", "Stunde", "Stunden", F),
    u("kWh", "Kilowattstunde", "Kilowattstunden", F),
    u("kW", "Kilowatt", "Kilowatt", N),
    u("W", "Watt", "Watt", N),
    u("V", "Volt", "Volt", N),
    u("Hz", "Hertz", "Hertz", N),
    u("MB", "Megabyte", "Megabyte", N),
    u("GB", "Gigabyte", "Gigabyte", N),
];

static ABBREVIATIONS: &[Abbrev] = &[
    ab("z. B.", "zum Beispiel", Always),
    ab("z.B.", "zum Beispiel", Always),
    ab("d. h.", "das heißt", Always),
    ab("d.h.", "das heißt", Always),
    ab("u. a.", "unter anderem", Always),
    ab("u.a.", "unter anderem", Always),
    ab("usw.", "und so weiter", MaybeFinal),
    ab("etc.", "et cetera", MaybeFinal),
    ab("bzw.", "beziehungsweise", Always),
    ab("bzgl.", "bezüglich", Always),
    ab("ca.", "circa", Always),
    ab("vgl.", "vergleiche", Always),
    ab("ggf.", "gegebenenfalls", Always),
    ab("evtl.", "eventuell", Always),
    ab("inkl.", "inklusive", Always),
    ab("zzgl.", "zuzüglich", Always),
    ab("Dr.", "Doktor", Always),
    ab("Prof.", "Professor", Always),
    ab("Hr.", "Herr", Always),
    ab("Nr.", "Nummer", Always),
    ab("Tel.", "Telefon", Always),
    ab("Str.", "Straße", MaybeFinal),
    ab("Jh.", "Jahrhundert", MaybeFinal),
    ab("Mio.", "Millionen", Always),
    ab("Mrd.", "Milliarden", Always),
    ab("S.", "Seite", BeforeNumber),
    ab("Abs.", "Absatz", BeforeNumber),
    ab("Bd.", "Band", BeforeNumber),
];

impl German {
    fn ordinal_word(&self, n: u64, ending: &str, out: &mut Out) {
        let mut s = ordinal_stem(n);
        s.push_str(ending);
        out.word(&s);
    }
}

impl LanguageRules for German {
    fn group_separators(&self) -> &'static [char] {
        &['.', '\u{a0}', '\u{202f}', '\u{2009}']
    }

    fn decimal_separator(&self) -> char {
        ','
    }

    fn words(&self) -> &'static Words {
        &WORDS
    }

    fn digit(&self, d: u8) -> &'static str {
        ONES[usize::from(d % 10)]
    }

    fn cardinal(&self, n: u64, out: &mut Out) {
        out.word(&cardinal_string(n));
    }

    /// Before a noun a final `eins` is `ein`: "ein Euro", "eine Stunde"; after
    /// hundreds and thousands the noun is plural and `ein` takes no ending (Duden:
    /// "hundertein Gründe", "einhundertein Euro").
    fn cardinal_before_noun(&self, n: u64, gender: Gender, out: &mut Out) {
        let mut s = cardinal_string(n);
        if s.ends_with("eins") && n % 100 == 1 {
            s.truncate(s.len() - 1);
            if gender == Gender::Feminine && n == 1 {
                s.push('e');
            }
        }
        out.word(&s);
    }

    /// A number counts something when a capitalised word (a noun) follows it: "101
    /// Dalmatiner" → "einhundertein Dalmatiner", "1 Katze" → "eine Katze"; otherwise
    /// it is named: "Nummer eins".
    fn noun_after(&self, rest: &str) -> Option<Gender> {
        let after = rest.strip_prefix(' ')?;
        let word = after
            .split(|c: char| !c.is_alphabetic())
            .next()
            .unwrap_or("");
        let noun = word.starts_with(char::is_uppercase) && !SENTENCE_STARTS.contains(&word);
        noun.then(|| noun_gender(word))
    }

    fn phone_long_groups(&self) -> bool {
        true
    }

    fn ordinal(&self, n: u64, _gender: Gender, out: &mut Out) {
        let ending = if OBLIQUE.contains(&last_word(out).as_str()) {
            "en"
        } else {
            "e"
        };
        self.ordinal_word(n, ending, out);
    }

    fn ordinal_suffix(&self, _n: u64, rest: &str) -> Option<(usize, Gender)> {
        let after = rest.strip_prefix(". ")?;
        let word: &str = after
            .split(|c: char| !c.is_alphabetic())
            .next()
            .unwrap_or("");
        let ok = !word.is_empty() && !SENTENCE_STARTS.contains(&word);
        ok.then_some((1, Gender::Masculine))
    }

    fn year(&self, n: u64, out: &mut Out) {
        out.word(&year_string(n));
    }

    fn fraction(&self, num: u64, den: u64, mixed: bool, out: &mut Out) {
        if den == 2 {
            // num < den: always "einhalb"; after a whole number one word with it
            // (Duden: "zweieinhalb", "eineinhalb"), without the engine's "und".
            if let Some(whole) = out.s.strip_suffix(" und").filter(|_| mixed) {
                let keep = whole.len() - usize::from(whole.ends_with("eins"));
                out.s.truncate(keep);
                out.raw("einhalb");
            } else {
                out.word("einhalb");
            }
            return;
        }
        if mixed && out.s.ends_with("eins und") {
            // "ein und ein Drittel", not "eins und".
            let keep = out.s.len() - " und".len() - 1;
            out.s.truncate(keep);
            out.raw(" und");
        }
        let mut name = ordinal_stem(den);
        name.push_str("el");
        let mut cs = name.chars();
        let name: String = cs
            .next()
            .map(|c| c.to_uppercase().chain(cs).collect())
            .unwrap_or_default();
        self.cardinal_before_noun(num, Gender::Neuter, out);
        out.word(&name);
    }

    fn is_plural(&self, int: u64, frac: Option<&str>) -> bool {
        int != 1 || frac.is_some()
    }

    fn currency(&self, c: Currency) -> &'static CurrencyNames {
        match c {
            Currency::Dollar => &DOLLAR,
            Currency::Euro => &EURO,
            Currency::Pound => &POUND,
            Currency::Yen => &YEN,
            Currency::Franc => &FRANC,
            Currency::Real => &REAL,
        }
    }

    fn scale_tokens(&self) -> &'static [ScaleToken] {
        &SCALE_TOKENS
    }

    fn scale_word(&self, s: Scale, plural: bool) -> &'static str {
        match (s, plural) {
            (Scale::Thousand, _) => "tausend",
            (Scale::Million, false) => "Million",
            (Scale::Million, true) => "Millionen",
            (Scale::Billion, false) => "Milliarde",
            (Scale::Billion, true) => "Milliarden",
            (Scale::Trillion, false) => "Billion",
            (Scale::Trillion, true) => "Billionen",
        }
    }

    fn money(&self, m: &Money<'_>, out: &mut Out) {
        let names = self.currency(m.currency);
        if m.negative {
            out.word(WORDS.minus);
        }
        if let Some(scale) = m.scale {
            match m.frac {
                Some(f) if !f.is_empty() => self.decimal(m.int, f, out),
                _ if scale == Scale::Thousand => {
                    // One word below a million: "eintausend", "zwanzigtausend".
                    let mut s = cardinal_string(m.int);
                    if s.ends_with("eins") {
                        s.pop();
                    }
                    s.push_str("tausend");
                    out.word(&s);
                    out.word(names.many);
                    return;
                }
                _ => self.cardinal_before_noun(m.int, Gender::Feminine, out),
            }
            out.word(self.scale_word(scale, self.is_plural(m.int, m.frac)));
            out.word(names.many);
            return;
        }
        let cents = m.cents(names);
        match cents {
            Some(c) => {
                if m.int > 0 || c == 0 {
                    self.cardinal_before_noun(m.int, names.gender, out);
                    out.word(names.one);
                }
                if c > 0 {
                    if m.int == 0 {
                        self.cardinal_before_noun(c, names.minor_gender, out);
                        out.word(if c == 1 {
                            names.minor_one
                        } else {
                            names.minor_many
                        });
                    } else {
                        // "neunzehn Euro eins": the hundredths without their name.
                        self.cardinal(c, out);
                    }
                }
            }
            None => {
                match m.frac {
                    Some(f) if !f.is_empty() => self.decimal(m.int, f, out),
                    _ => self.cardinal_before_noun(m.int, names.gender, out),
                }
                out.word(names.many);
            }
        }
    }

    fn units(&self) -> &'static [UnitEntry] {
        UNITS
    }

    fn date_order(&self) -> DateOrder {
        DateOrder::DayMonthYear
    }

    fn month_at(&self, rest: &str) -> Option<(u8, usize)> {
        match_table(rest, 0, MONTH_WORDS)
    }

    fn date(&self, d: &Date<'_>, out: &mut Out) {
        let prev = d.prev_word.to_lowercase();
        let ending = if OBLIQUE.contains(&prev.as_str()) {
            "en"
        } else if NOMINATIVE.contains(&prev.as_str()) {
            "e"
        } else {
            "er"
        };
        self.ordinal_word(u64::from(d.day), ending, out);
        out.word(MONTHS[usize::from(d.month - 1)]);
        if let Some(y) = d.year {
            out.word(&year_string(y));
        }
    }

    fn time(&self, t: &Time, out: &mut Out) {
        // "ein Uhr" (Duden), although "die Uhr".
        self.cardinal_before_noun(u64::from(t.hour), Gender::Neuter, out);
        out.word("Uhr");
        if let Some(m @ 1..) = t.minute {
            self.cardinal(u64::from(m), out);
        }
        if let Some(s) = t.second {
            out.word("und");
            self.cardinal_before_noun(u64::from(s), Gender::Feminine, out);
            out.word(if s == 1 { "Sekunde" } else { "Sekunden" });
        }
    }

    fn meridiem_at(&self, _rest: &str) -> Option<(super::rules::Meridiem, usize)> {
        None
    }

    fn time_separators(&self) -> &'static [char] {
        &[':', '.']
    }

    fn time_suffix(&self, rest: &str) -> usize {
        match rest.strip_prefix(" Uhr") {
            Some(after) if !after.starts_with(char::is_alphanumeric) => 4,
            _ => 0,
        }
    }

    fn abbreviations(&self) -> &'static [Abbrev] {
        ABBREVIATIONS
    }

    fn roman_triggers(&self) -> &'static [&'static str] {
        &[
            "kapitel",
            "teil",
            "band",
            "akt",
            "szene",
            "artikel",
            "buch",
            "abschnitt",
            "anhang",
            "klasse",
            "stufe",
            "staffel",
            "folge",
            "weltkrieg",
        ]
    }

    fn regnal_names(&self) -> &'static [&'static str] {
        &[
            "Friedrich",
            "Wilhelm",
            "Karl",
            "Heinrich",
            "Otto",
            "Maximilian",
            "Leopold",
            "Franz",
            "Joseph",
            "Benedikt",
            "Johannes",
            "Pius",
            "Konrad",
            "Rudolf",
            "Elisabeth",
            "Georg",
            "Gregor",
            "Klemens",
            "Ludwig",
        ]
    }

    fn regnal(&self, n: u64, _gender: Gender, out: &mut Out) {
        out.word("der");
        let mut s = ordinal_stem(n);
        s.push('e');
        let mut cs = s.chars();
        let s: String = cs
            .next()
            .map(|c| c.to_uppercase().chain(cs).collect())
            .unwrap_or_default();
        out.word(&s);
    }

    fn symbol(&self, s: Sym) -> &'static str {
        match s {
            Sym::Ampersand => "und",
            Sym::Plus => "plus",
            Sym::Equals => "gleich",
            Sym::At => "at",
            Sym::NumberSign => "Nummer",
            Sym::Sharp => "Sharp",
            Sym::Hashtag => "Hashtag",
            Sym::Times => "mal",
            Sym::Divide => "geteilt durch",
            Sym::PlusMinus => "plus minus",
            Sym::About => "etwa",
            Sym::Section => "Paragraf",
            Sym::Dot => "Punkt",
            Sym::Slash => "Schrägstrich",
            Sym::Dash => "Bindestrich",
            Sym::Underscore => "Unterstrich",
            Sym::Colon => "Doppelpunkt",
            Sym::Question => "Fragezeichen",
            Sym::Hash => "Raute",
            Sym::Percent => "Prozent",
            Sym::Tilde => "Tilde",
        }
    }

    fn dyn_self(&self) -> &dyn LanguageRules {
        self
    }
}
