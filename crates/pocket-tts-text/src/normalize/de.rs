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

use super::readings::{
    capitalised, hour_word_suffix, hour_word_time, money_bare_cents, HourWordClock,
};
use super::rules::{
    ab, cur, st, unit, Abbrev, AbbrevWhen::*, Currencies, Date, DateOrder, Gender, LanguageData,
    LanguageRules, Meridiem, Money, Out, Scale, ScaleToken, ScaleWords, Symbols, Time, UnitEntry,
    Words,
};

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

const SCALE_TOKENS: &[ScaleToken] = &[
    st("Billionen", Scale::Trillion, false),
    st("Billion", Scale::Trillion, false),
    st("Milliarden", Scale::Billion, false),
    st("Milliarde", Scale::Billion, false),
    st("Mrd.", Scale::Billion, false),
    st("Millionen", Scale::Million, false),
    st("Million", Scale::Million, false),
    st("Mio.", Scale::Million, false),
    st("Tausend", Scale::Thousand, false),
    st("Tsd.", Scale::Thousand, false),
];

use Gender::{Feminine as F, Masculine as M, Neuter as N};
const UNITS: &[UnitEntry] = &[
    unit("km", "Kilometer", "Kilometer", M),
    unit("m", "Meter", "Meter", M),
    unit("cm", "Zentimeter", "Zentimeter", M),
    unit("mm", "Millimeter", "Millimeter", M),
    unit("km²", "Quadratkilometer", "Quadratkilometer", M),
    unit("m²", "Quadratmeter", "Quadratmeter", M),
    unit("m³", "Kubikmeter", "Kubikmeter", M),
    unit("kg", "Kilogramm", "Kilogramm", N),
    unit("g", "Gramm", "Gramm", N),
    unit("mg", "Milligramm", "Milligramm", N),
    unit("t", "Tonne", "Tonnen", F),
    unit("l", "Liter", "Liter", M),
    unit("L", "Liter", "Liter", M),
    unit("ml", "Milliliter", "Milliliter", M),
    unit("km/h", "Kilometer pro Stunde", "Kilometer pro Stunde", M),
    unit("m/s", "Meter pro Sekunde", "Meter pro Sekunde", M),
    unit("°C", "Grad Celsius", "Grad Celsius", N),
    unit("°F", "Grad Fahrenheit", "Grad Fahrenheit", N),
    unit("°", "Grad", "Grad", N),
    unit("%", "Prozent", "Prozent", N),
    unit("‰", "Promille", "Promille", N),
    unit("h", "Stunde", "Stunden", F),
    unit("min", "Minute", "Minuten", F),
    unit("Min.", "Minute", "Minuten", F),
    unit("s", "Sekunde", "Sekunden", F),
    unit("Std.", "Stunde", "Stunden", F),
    unit("kWh", "Kilowattstunde", "Kilowattstunden", F),
    unit("kW", "Kilowatt", "Kilowatt", N),
    unit("W", "Watt", "Watt", N),
    unit("V", "Volt", "Volt", N),
    unit("Hz", "Hertz", "Hertz", N),
    unit("MB", "Megabyte", "Megabyte", N),
    unit("GB", "Gigabyte", "Gigabyte", N),
];

const ABBREVIATIONS: &[Abbrev] = &[
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

/// The German clock: "fünfzehn Uhr dreißig und fünf Sekunden".
const CLOCK: HourWordClock = HourWordClock {
    hour_word: "Uhr",
    second: ("Sekunde", "Sekunden"),
};

/// The German table.
static DATA: LanguageData = LanguageData {
    group_separators: &['.', '\u{a0}', '\u{202f}', '\u{2009}'],
    decimal_separator: ',',
    decimals_as_number: 0,
    words: Words {
        minus: "minus",
        plus: "plus",
        decimal_point: "Komma",
        version: "Version",
        version_dot: "Punkt",
        range_to: "bis",
        and: "und",
    },
    phone_group_max: 4,
    phone_long_groups: true,
    currencies: Currencies {
        dollar: cur("Dollar", "Dollar", "Cent", "Cent", M),
        euro: cur("Euro", "Euro", "Cent", "Cent", M),
        pound: cur("Pfund", "Pfund", "Penny", "Pence", N),
        yen: cur("Yen", "Yen", "", "", M),
        franc: cur("Franken", "Franken", "Rappen", "Rappen", M),
        // Duden: der Real, Plural Reais; hundredths Centavo, Centavos.
        real: cur("Real", "Reais", "Centavo", "Centavos", M),
    },
    scale_tokens: SCALE_TOKENS,
    scale_connectors: &[],
    scale_words: ScaleWords {
        thousand: ("tausend", "tausend"),
        million: ("Million", "Millionen"),
        billion: ("Milliarde", "Milliarden"),
        trillion: ("Billion", "Billionen"),
    },
    units: UNITS,
    date_order: DateOrder::DayMonthYear,
    month_words: MONTH_WORDS,
    month_before_day: false,
    date_connectors: &[],
    time_separators: &[':', '.'],
    hour_letter_times: false,
    abbreviations: ABBREVIATIONS,
    roman_triggers: &[
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
    ],
    regnal_names: &[
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
    ],
    symbols: Symbols {
        ampersand: "und",
        plus: "plus",
        equals: "gleich",
        at: "at",
        number_sign: "Nummer",
        sharp: "Sharp",
        hashtag: "Hashtag",
        times: "mal",
        divide: "geteilt durch",
        plus_minus: "plus minus",
        about: "etwa",
        section: "Paragraf",
        dot: "Punkt",
        slash: "Schrägstrich",
        dash: "Bindestrich",
        underscore: "Unterstrich",
        colon: "Doppelpunkt",
        question: "Fragezeichen",
        hash: "Raute",
        percent: "Prozent",
        tilde: "Tilde",
    },
};

impl German {
    fn ordinal_word(&self, n: u64, ending: &str, out: &mut Out) {
        let mut s = ordinal_stem(n);
        s.push_str(ending);
        out.word(&s);
    }
}

impl LanguageRules for German {
    fn data(&self) -> &'static LanguageData {
        &DATA
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
        let name = capitalised(&name);
        self.cardinal_before_noun(num, Gender::Neuter, out);
        out.word(&name);
    }

    fn is_plural(&self, int: u64, frac: Option<&str>) -> bool {
        int != 1 || frac.is_some()
    }

    fn money(&self, m: &Money<'_>, out: &mut Out) {
        let names = DATA.currency(m.currency);
        if m.negative {
            out.word(DATA.words.minus);
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
            out.word(DATA.scale_word(scale, self.is_plural(m.int, m.frac)));
            out.word(names.many);
            return;
        }
        match m.cents(names) {
            // "neunzehn Euro neunundneunzig": the hundredths without their name.
            Some(c) => money_bare_cents(self, m.int, c, names, out),
            None => {
                match m.frac {
                    Some(f) if !f.is_empty() => self.decimal(m.int, f, out),
                    _ => self.cardinal_before_noun(m.int, names.gender, out),
                }
                out.word(names.many);
            }
        }
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

    /// "fünfzehn Uhr dreißig"; "ein Uhr" (Duden), although "die Uhr".
    fn time(&self, t: &Time, out: &mut Out) {
        hour_word_time(self, &CLOCK, t, out);
    }

    fn meridiem_at(&self, _rest: &str) -> Option<(Meridiem, usize)> {
        None
    }

    fn time_suffix(&self, rest: &str) -> usize {
        hour_word_suffix(&CLOCK, rest)
    }

    fn regnal(&self, n: u64, _gender: Gender, out: &mut Out) {
        out.word("der");
        let mut s = ordinal_stem(n);
        s.push('e');
        out.word(&capitalised(&s));
    }
}
