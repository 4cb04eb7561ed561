//! Dutch rules (Taalunie, taaladvies.net: "Getallen in letters", "Datum", "Tijd",
//! "Bedragen"; Onze Taal, "Getallen uitschrijven", "Jaartallen in letters"; Woordenlijst
//! Nederlandse Taal for the spellings and abbreviations).
//!
//! - Numbers: `1.234.567,89`; written as one word up to and including "duizend", a
//!   space after "duizend" and around "miljoen", "miljard" ("tweehonderdvierendertigduizend
//!   vijfhonderdzevenenzestig", "twee miljoen"); a trema after "twee" and "drie"
//!   ("tweeënveertig"); "honderdeen" without accents. One alone is "één" (the accents
//!   mark the numeral, not the article "een"). Decimals after "komma": one or two digits
//!   as a number ("drie komma veertien"), longer or with a leading zero digit by digit.
//! - Ordinals: `1e`, `2e`, `1ste`, `2de`, `8ste` → "eerste", "tweede", "achtste".
//! - Years 1100–1999 in hundreds, as Onze Taal writes them out
//!   ("negentienhonderdnegenennegentig"; the spoken "negentien negenennegentig" is not
//!   used), others as cardinals ("tweeduizend zesentwintig").
//! - Dates: day first (`3 maart 2026`, `03-04-2026`, ISO `2026-04-03`), day as a cardinal
//!   ("drie maart tweeduizend zesentwintig").
//! - Times: `15.30 uur`, `15:30` → "vijftien uur dertig" (digital times literally, not
//!   "half vier"); `om 3 uur` → "om drie uur".
//! - Money: `€ 3,50` → "drie euro vijftig"; hundredths alone: "vijftig cent".
//! - Phone numbers: `06-12345678`, `020 123 4567`, `+31 20 123 4567`, digit by digit.
//!
//! Not handled: "half vier" and other clock readings of digital times; "elfhonderd" for
//! 1100–1999 outside years (read "duizend honderd"); the spoken year style "negentien
//! negenennegentig"; a number with two decimals after a period is a time (`2.15`).

use super::readings::{
    capitalised, default_money, hour_word_suffix, hour_word_time, money_bare_cents, HourWordClock,
};
use super::rules::{
    ab, cur, st, unit, Abbrev, AbbrevWhen::*, Currencies, Date, DateOrder, Gender, LanguageData,
    LanguageRules, Meridiem, Money, Out, Scale, ScaleToken, ScaleWords, Symbols, Time, UnitEntry,
    Words,
};

/// The Dutch rules.
pub(crate) struct Dutch;

const ONES: [&str; 20] = [
    "nul",
    "een",
    "twee",
    "drie",
    "vier",
    "vijf",
    "zes",
    "zeven",
    "acht",
    "negen",
    "tien",
    "elf",
    "twaalf",
    "dertien",
    "veertien",
    "vijftien",
    "zestien",
    "zeventien",
    "achttien",
    "negentien",
];
const TENS: [&str; 10] = [
    "", "", "twintig", "dertig", "veertig", "vijftig", "zestig", "zeventig", "tachtig", "negentig",
];
/// (value, word); no plural after a number ("twee miljoen").
const SCALES: [(u64, &str); 5] = [
    (1_000_000_000_000_000_000, "triljoen"),
    (1_000_000_000_000_000, "biljard"),
    (1_000_000_000_000, "biljoen"),
    (1_000_000_000, "miljard"),
    (1_000_000, "miljoen"),
];

/// 1–99 glued to `s`: "eenentwintig", "tweeënveertig".
fn below_100(n: u64, s: &mut String) {
    let n = (n % 100) as usize;
    if n < 20 {
        s.push_str(ONES[n]);
        return;
    }
    let unit = ONES[n % 10];
    if !n.is_multiple_of(10) {
        s.push_str(unit);
        s.push_str(if unit.ends_with('e') { "ën" } else { "en" });
    }
    s.push_str(TENS[n / 10]);
}

/// 1–999 glued to `s`: "honderdeen", "tweehonderdvijftig".
fn below_1000(n: u64, s: &mut String) {
    let h = n / 100;
    if h > 1 {
        below_100(h, s);
    }
    if h > 0 {
        s.push_str("honderd");
    }
    if !n.is_multiple_of(100) {
        below_100(n % 100, s);
    }
}

/// 1–999 999: one word up to "duizend", then a space ("tweeduizend zesentwintig").
fn below_million(n: u64, s: &mut String) {
    let t = n / 1000;
    if t > 1 {
        below_1000(t, s);
    }
    if t > 0 {
        s.push_str("duizend");
        if !n.is_multiple_of(1000) {
            s.push(' ');
        }
    }
    match n % 1000 {
        0 => {}
        // A final one standing alone is the numeral: "duizend één".
        1 if t > 0 => s.push_str("één"),
        r => below_1000(r, s),
    }
}

/// "één", "tweehonderdvierendertigduizend vijfhonderdzevenenzestig", "twee miljoen".
pub(crate) fn cardinal_string(n: u64) -> String {
    match n {
        0 => return ONES[0].to_string(),
        1 => return "één".to_string(),
        _ => {}
    }
    let mut s = String::new();
    let mut rest = n;
    for (scale, word) in SCALES {
        if rest >= scale {
            let count = rest / scale;
            if !s.is_empty() {
                s.push(' ');
            }
            if count == 1 {
                s.push_str("één");
            } else {
                below_million(count, &mut s);
            }
            s.push(' ');
            s.push_str(word);
            rest %= scale;
        }
    }
    if rest > 0 {
        if !s.is_empty() {
            s.push(' ');
        }
        if rest == 1 {
            s.push_str("één");
        } else {
            below_million(rest, &mut s);
        }
    }
    s
}

/// "eerste", "derde", "achtste", "twintigste", "honderdeerste", "duizendste".
fn ordinal_string(n: u64) -> String {
    let m = n % 100;
    let mut s = String::new();
    if n >= 100 {
        let head = cardinal_string(n - m);
        s.push_str(head.strip_prefix("één ").unwrap_or(&head));
        if m > 0 && (n - m).is_multiple_of(1000) {
            s.push(' ');
        }
    }
    match m {
        0 => s.push_str("ste"),
        1 => s.push_str("eerste"),
        3 => s.push_str("derde"),
        8 => s.push_str("achtste"),
        2..=19 => {
            s.push_str(ONES[m as usize]);
            s.push_str("de");
        }
        _ => {
            below_100(m, &mut s);
            s.push_str("ste");
        }
    }
    s
}

/// "negentienhonderdnegenennegentig", "tweeduizend zesentwintig".
fn year_string(n: u64) -> String {
    if (1100..=1999).contains(&n) {
        let mut s = String::new();
        below_100(n / 100, &mut s);
        s.push_str("honderd");
        if !n.is_multiple_of(100) {
            below_100(n % 100, &mut s);
        }
        return s;
    }
    cardinal_string(n)
}

const MONTHS: [&str; 12] = [
    "januari",
    "februari",
    "maart",
    "april",
    "mei",
    "juni",
    "juli",
    "augustus",
    "september",
    "oktober",
    "november",
    "december",
];
const MONTH_WORDS: &[(&str, u8)] = &[
    ("januari", 1),
    ("februari", 2),
    ("maart", 3),
    ("april", 4),
    ("mei", 5),
    ("juni", 6),
    ("juli", 7),
    ("augustus", 8),
    ("september", 9),
    ("oktober", 10),
    ("november", 11),
    ("december", 12),
    ("jan.", 1),
    ("feb.", 2),
    ("mrt.", 3),
    ("apr.", 4),
    ("jun.", 6),
    ("jul.", 7),
    ("aug.", 8),
    ("sep.", 9),
    ("sept.", 9),
    ("okt.", 10),
    ("nov.", 11),
    ("dec.", 12),
];

const SCALE_TOKENS: &[ScaleToken] = &[
    st("biljoen", Scale::Trillion, false),
    st("miljard", Scale::Billion, false),
    st("mld.", Scale::Billion, false),
    st("miljoen", Scale::Million, false),
    st("mln.", Scale::Million, false),
    st("duizend", Scale::Thousand, false),
];

const M: Gender = Gender::Masculine;
/// Units of measure keep the singular after a number ("vijf kilometer"), except
/// "minuten", "seconden", "graden".
const UNITS: &[UnitEntry] = &[
    unit("km", "kilometer", "kilometer", M),
    unit("m", "meter", "meter", M),
    unit("cm", "centimeter", "centimeter", M),
    unit("mm", "millimeter", "millimeter", M),
    unit("km²", "vierkante kilometer", "vierkante kilometer", M),
    unit("m²", "vierkante meter", "vierkante meter", M),
    unit("m³", "kubieke meter", "kubieke meter", M),
    unit("kg", "kilogram", "kilogram", M),
    unit("g", "gram", "gram", M),
    unit("mg", "milligram", "milligram", M),
    unit("l", "liter", "liter", M),
    unit("L", "liter", "liter", M),
    unit("cl", "centiliter", "centiliter", M),
    unit("ml", "milliliter", "milliliter", M),
    unit("km/h", "kilometer per uur", "kilometer per uur", M),
    unit("km/u", "kilometer per uur", "kilometer per uur", M),
    unit("m/s", "meter per seconde", "meter per seconde", M),
    unit("°C", "graad Celsius", "graden Celsius", M),
    unit("°F", "graad Fahrenheit", "graden Fahrenheit", M),
    unit("°", "graad", "graden", M),
    unit("%", "procent", "procent", M),
    unit("‰", "promille", "promille", M),
    unit("h", "uur", "uur", M),
    unit("min", "minuut", "minuten", M),
    unit("s", "seconde", "seconden", M),
    unit("sec", "seconde", "seconden", M),
    unit("kWh", "kilowattuur", "kilowattuur", M),
    unit("kW", "kilowatt", "kilowatt", M),
    unit("W", "watt", "watt", M),
    unit("V", "volt", "volt", M),
    unit("Hz", "hertz", "hertz", M),
    unit("MB", "megabyte", "megabyte", M),
    unit("GB", "gigabyte", "gigabyte", M),
];

/// Woordenlijst Nederlandse Taal, "Lijst van afkortingen".
const ABBREVIATIONS: &[Abbrev] = &[
    ab("bijv.", "bijvoorbeeld", Always),
    ab("Bijv.", "Bijvoorbeeld", Always),
    ab("o.a.", "onder andere", Always),
    ab("d.w.z.", "dat wil zeggen", Always),
    ab("dhr.", "de heer", Always),
    ab("Dhr.", "De heer", Always),
    ab("mevr.", "mevrouw", Always),
    ab("Mevr.", "Mevrouw", Always),
    ab("nr.", "nummer", Always),
    ab("Nr.", "Nummer", Always),
    ab("blz.", "bladzijde", Always),
    ab("ca.", "circa", Always),
    ab("enz.", "enzovoort", MaybeFinal),
    ab("etc.", "et cetera", MaybeFinal),
    ab("e.d.", "en dergelijke", MaybeFinal),
    ab("m.b.t.", "met betrekking tot", Always),
    ab("t.o.v.", "ten opzichte van", Always),
    ab("i.p.v.", "in plaats van", Always),
    ab("m.a.w.", "met andere woorden", Always),
    ab("n.a.v.", "naar aanleiding van", Always),
    ab("a.u.b.", "alstublieft", MaybeFinal),
    ab("z.s.m.", "zo snel mogelijk", MaybeFinal),
    ab("t/m", "tot en met", Always),
    ab("incl.", "inclusief", Always),
    ab("excl.", "exclusief", Always),
    ab("evt.", "eventueel", Always),
    ab("resp.", "respectievelijk", Always),
    ab("zgn.", "zogenaamd", Always),
    ab("vnl.", "voornamelijk", Always),
    ab("tel.", "telefoon", Always),
    ab("Tel.", "Telefoon", Always),
    ab("dr.", "doctor", Always),
    ab("Dr.", "Doctor", Always),
    ab("prof.", "professor", Always),
    ab("Prof.", "Professor", Always),
    ab("ir.", "ingenieur", Always),
    ab("mr.", "meester", Always),
    ab("St.", "Sint", BeforeName),
    ab("p.", "pagina", BeforeNumber),
    ab("hfdst.", "hoofdstuk", BeforeNumber),
];

/// The Dutch clock: "vijftien uur dertig en vijf seconden".
const CLOCK: HourWordClock = HourWordClock {
    hour_word: "uur",
    second: ("seconde", "seconden"),
};

/// The Dutch table.
static DATA: LanguageData = LanguageData {
    group_separators: &['.', '\u{a0}', '\u{202f}', '\u{2009}'],
    decimal_separator: ',',
    // "drie komma veertien"; `3,05` "drie komma nul vijf".
    decimals_as_number: 2,
    words: Words {
        minus: "min",
        plus: "plus",
        decimal_point: "komma",
        version: "versie",
        version_dot: "punt",
        range_to: "tot",
        and: "en",
    },
    phone_group_max: 4,
    phone_long_groups: true,
    currencies: Currencies {
        dollar: cur("dollar", "dollar", "cent", "cent", M),
        euro: cur("euro", "euro", "cent", "cent", M),
        pound: cur("pond", "pond", "penny", "pence", M),
        yen: cur("yen", "yen", "", "", M),
        franc: cur("frank", "frank", "rappen", "rappen", M),
        real: cur("real", "reais", "centavo", "centavos", M),
    },
    scale_tokens: SCALE_TOKENS,
    scale_connectors: &[],
    scale_words: ScaleWords {
        thousand: ("duizend", "duizend"),
        million: ("miljoen", "miljoen"),
        billion: ("miljard", "miljard"),
        trillion: ("biljoen", "biljoen"),
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
        "hoofdstuk",
        "deel",
        "boek",
        "artikel",
        "bijlage",
        "akte",
        "bedrijf",
        "seizoen",
        "klasse",
    ],
    regnal_names: &[
        "Willem",
        "Lodewijk",
        "Karel",
        "Filips",
        "Hendrik",
        "Frederik",
        "Leopold",
        "Albert",
        "Boudewijn",
        "Johannes",
        "Paulus",
        "Benedictus",
        "Pius",
        "Gregorius",
        "Napoleon",
        "Elizabeth",
        "George",
    ],
    symbols: Symbols {
        ampersand: "en",
        plus: "plus",
        equals: "is",
        at: "apenstaartje",
        number_sign: "nummer",
        sharp: "sharp",
        hashtag: "hashtag",
        times: "keer",
        divide: "gedeeld door",
        plus_minus: "plus min",
        about: "ongeveer",
        section: "paragraaf",
        dot: "punt",
        slash: "slash",
        dash: "streepje",
        underscore: "underscore",
        colon: "dubbele punt",
        question: "vraagteken",
        hash: "hekje",
        percent: "procent",
        tilde: "tilde",
    },
};

impl LanguageRules for Dutch {
    fn data(&self) -> &'static LanguageData {
        &DATA
    }

    fn digit(&self, d: u8) -> &'static str {
        match d % 10 {
            1 => "één",
            d => ONES[usize::from(d)],
        }
    }

    fn cardinal(&self, n: u64, out: &mut Out) {
        out.word(&cardinal_string(n));
    }

    fn ordinal(&self, n: u64, _gender: Gender, out: &mut Out) {
        out.word(&ordinal_string(n));
    }

    /// `1e`, `2e`, `1ste`, `2de`, `8ste`, `20ste`, before a non-letter (a digit after
    /// it becomes a word, so it must not change the reading: idempotence).
    fn ordinal_suffix(&self, _n: u64, rest: &str) -> Option<(usize, Gender)> {
        ["ste", "de", "e"].into_iter().find_map(|s| {
            let after = rest.strip_prefix(s)?;
            (!after.starts_with(char::is_alphabetic)).then_some((s.len(), Gender::Masculine))
        })
    }

    fn year(&self, n: u64, out: &mut Out) {
        out.word(&year_string(n));
    }

    /// "een half", "driekwart", "twee derde"; after a whole number "tweeënhalf",
    /// "anderhalf" (Woordenlijst).
    fn fraction(&self, num: u64, den: u64, mixed: bool, out: &mut Out) {
        if mixed && den == 2 {
            if let Some(whole) = out.s.strip_suffix(" en").map(str::len) {
                out.s.truncate(whole);
                if let Some(before) = out.s.strip_suffix("één").map(str::len) {
                    out.s.truncate(before);
                    out.raw("anderhalf");
                } else if out.s.ends_with('e') {
                    out.raw("ënhalf");
                } else {
                    out.raw("enhalf");
                }
                return;
            }
        }
        let numerator = if num == 1 {
            "een".to_string()
        } else {
            cardinal_string(num)
        };
        match den {
            2 => out.word(&format!("{numerator} half")),
            4 if num == 1 => out.word("een kwart"),
            4 => out.word(&format!("{numerator}kwart")),
            _ => {
                out.word(&numerator);
                out.word(&ordinal_string(den));
            }
        }
    }

    fn is_plural(&self, int: u64, frac: Option<&str>) -> bool {
        int != 1 || frac.is_some()
    }

    /// "drie euro vijftig", "vijftig cent", "twee komma vijf miljoen euro".
    fn money(&self, m: &Money<'_>, out: &mut Out) {
        let names = DATA.currency(m.currency);
        // Two decimals only (`€ 5,00` is read by the default, "vijf euro").
        let cents = match m.frac {
            Some(f) if f.len() == 2 && !names.minor_one.is_empty() => f.parse::<u64>().ok(),
            _ => None,
        };
        match cents {
            Some(c) if m.scale.is_none() => {
                if m.negative {
                    out.word(DATA.words.minus);
                }
                money_bare_cents(self, m.int, c, names, out);
            }
            _ => default_money(self, m, out),
        }
    }

    fn date(&self, d: &Date<'_>, out: &mut Out) {
        self.cardinal(u64::from(d.day), out);
        out.word(MONTHS[usize::from(d.month - 1)]);
        if let Some(y) = d.year {
            out.word(&year_string(y));
        }
    }

    /// "vijftien uur dertig".
    fn time(&self, t: &Time, out: &mut Out) {
        hour_word_time(self, &CLOCK, t, out);
    }

    fn meridiem_at(&self, _rest: &str) -> Option<(Meridiem, usize)> {
        None
    }

    fn time_suffix(&self, rest: &str) -> usize {
        hour_word_suffix(&CLOCK, rest)
    }

    /// "Willem de Derde", "Lodewijk de Veertiende".
    fn regnal(&self, n: u64, _gender: Gender, out: &mut Out) {
        out.word("de");
        out.word(&capitalised(&ordinal_string(n)));
    }
}
