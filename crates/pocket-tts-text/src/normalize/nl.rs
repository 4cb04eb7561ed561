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

use super::rules::ab;
use super::rules::{
    Abbrev, AbbrevWhen::*, Currency, CurrencyNames, Date, DateOrder, Gender, LanguageRules, Money,
    Out, Scale, ScaleToken, Sym, Time, UnitEntry, Words,
};
use super::scan::match_table;

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

static WORDS: Words = Words {
    minus: "min",
    plus: "plus",
    decimal_point: "komma",
    version: "versie",
    version_dot: "punt",
    range_to: "tot",
    and: "en",
};

const fn cur(
    one: &'static str,
    many: &'static str,
    minor_one: &'static str,
    minor_many: &'static str,
) -> CurrencyNames {
    CurrencyNames {
        one,
        many,
        minor_one,
        minor_many,
        gender: Gender::Masculine,
        minor_gender: Gender::Masculine,
    }
}
static EURO: CurrencyNames = cur("euro", "euro", "cent", "cent");
static DOLLAR: CurrencyNames = cur("dollar", "dollar", "cent", "cent");
static POUND: CurrencyNames = cur("pond", "pond", "penny", "pence");
static YEN: CurrencyNames = cur("yen", "yen", "", "");
static FRANC: CurrencyNames = cur("frank", "frank", "rappen", "rappen");
static REAL: CurrencyNames = cur("real", "reais", "centavo", "centavos");

const fn st(text: &'static str, scale: Scale) -> ScaleToken {
    ScaleToken {
        text,
        scale,
        attached_only: false,
    }
}
static SCALE_TOKENS: [ScaleToken; 6] = [
    st("biljoen", Scale::Trillion),
    st("miljard", Scale::Billion),
    st("mld.", Scale::Billion),
    st("miljoen", Scale::Million),
    st("mln.", Scale::Million),
    st("duizend", Scale::Thousand),
];

const fn u(symbol: &'static str, one: &'static str, many: &'static str) -> UnitEntry {
    UnitEntry {
        symbol,
        one,
        many,
        gender: Gender::Masculine,
    }
}
/// Units of measure keep the singular after a number ("vijf kilometer"), except
/// "minuten", "seconden", "graden".
static UNITS: &[UnitEntry] = &[
    u("km", "kilometer", "kilometer"),
    u("m", "meter", "meter"),
    u("cm", "centimeter", "centimeter"),
    u("mm", "millimeter", "millimeter"),
    u("km²", "vierkante kilometer", "vierkante kilometer"),
    u("m²", "vierkante meter", "vierkante meter"),
    u("m³", "kubieke meter", "kubieke meter"),
    u("kg", "kilogram", "kilogram"),
    u("g", "gram", "gram"),
    u("mg", "milligram", "milligram"),
    u("l", "liter", "liter"),
    u("L", "liter", "liter"),
    u("cl", "centiliter", "centiliter"),
    u("ml", "milliliter", "milliliter"),
    u("km/h", "kilometer per uur", "kilometer per uur"),
    u("km/u", "kilometer per uur", "kilometer per uur"),
    u("m/s", "meter per seconde", "meter per seconde"),
    u("°C", "graad Celsius", "graden Celsius"),
    u("°F", "graad Fahrenheit", "graden Fahrenheit"),
    u("°", "graad", "graden"),
    u("%", "procent", "procent"),
    u("‰", "promille", "promille"),
    u("h", "uur", "uur"),
    u("min", "minuut", "minuten"),
    u("s", "seconde", "seconden"),
    u("sec", "seconde", "seconden"),
    u("kWh", "kilowattuur", "kilowattuur"),
    u("kW", "kilowatt", "kilowatt"),
    u("W", "watt", "watt"),
    u("V", "volt", "volt"),
    u("Hz", "hertz", "hertz"),
    u("MB", "megabyte", "megabyte"),
    u("GB", "gigabyte", "gigabyte"),
];

/// Woordenlijst Nederlandse Taal, "Lijst van afkortingen".
static ABBREVIATIONS: &[Abbrev] = &[
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

fn capitalised(s: &str) -> String {
    let mut cs = s.chars();
    cs.next()
        .map(|c| c.to_uppercase().chain(cs).collect())
        .unwrap_or_default()
}

impl LanguageRules for Dutch {
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

    /// One or two decimals as a number ("drie komma veertien"), else digit by digit.
    fn decimal(&self, int: u64, frac: &str, out: &mut Out) {
        self.cardinal(int, out);
        out.word(WORDS.decimal_point);
        match frac.parse::<u64>() {
            Ok(v) if frac.len() <= 2 && !frac.starts_with('0') => self.cardinal(v, out),
            _ => out.digits(self, frac),
        }
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

    fn phone_long_groups(&self) -> bool {
        true
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

    fn scale_word(&self, s: Scale, _plural: bool) -> &'static str {
        match s {
            Scale::Thousand => "duizend",
            Scale::Million => "miljoen",
            Scale::Billion => "miljard",
            Scale::Trillion => "biljoen",
        }
    }

    /// "drie euro vijftig", "vijftig cent", "twee komma vijf miljoen euro".
    fn money(&self, m: &Money<'_>, out: &mut Out) {
        let names = self.currency(m.currency);
        let cents = match m.frac {
            Some(f) if f.len() == 2 && !names.minor_one.is_empty() => f.parse::<u64>().ok(),
            _ => None,
        };
        match cents {
            Some(c) if m.scale.is_none() => {
                if m.negative {
                    out.word(WORDS.minus);
                }
                if m.int > 0 || c == 0 {
                    self.cardinal(m.int, out);
                    out.word(names.one);
                }
                if c > 0 {
                    self.cardinal(c, out);
                    if m.int == 0 {
                        out.word(if c == 1 {
                            names.minor_one
                        } else {
                            names.minor_many
                        });
                    }
                }
            }
            _ => super::rules::default_money(self, m, out),
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
        self.cardinal(u64::from(d.day), out);
        out.word(MONTHS[usize::from(d.month - 1)]);
        if let Some(y) = d.year {
            out.word(&year_string(y));
        }
    }

    fn time(&self, t: &Time, out: &mut Out) {
        self.cardinal(u64::from(t.hour), out);
        out.word("uur");
        if let Some(m @ 1..) = t.minute {
            self.cardinal(u64::from(m), out);
        }
        if let Some(s) = t.second {
            out.word("en");
            self.cardinal(u64::from(s), out);
            out.word(if s == 1 { "seconde" } else { "seconden" });
        }
    }

    fn meridiem_at(&self, _rest: &str) -> Option<(super::rules::Meridiem, usize)> {
        None
    }

    fn time_separators(&self) -> &'static [char] {
        &[':', '.']
    }

    fn time_suffix(&self, rest: &str) -> usize {
        match rest.strip_prefix(" uur") {
            Some(after) if !after.starts_with(char::is_alphanumeric) => 4,
            _ => 0,
        }
    }

    fn abbreviations(&self) -> &'static [Abbrev] {
        ABBREVIATIONS
    }

    fn roman_triggers(&self) -> &'static [&'static str] {
        &[
            "hoofdstuk",
            "deel",
            "boek",
            "artikel",
            "bijlage",
            "akte",
            "bedrijf",
            "seizoen",
            "klasse",
        ]
    }

    fn regnal_names(&self) -> &'static [&'static str] {
        &[
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
        ]
    }

    /// "Willem de Derde", "Lodewijk de Veertiende".
    fn regnal(&self, n: u64, _gender: Gender, out: &mut Out) {
        out.word("de");
        out.word(&capitalised(&ordinal_string(n)));
    }

    fn symbol(&self, s: Sym) -> &'static str {
        match s {
            Sym::Ampersand => "en",
            Sym::Plus => "plus",
            Sym::Equals => "is",
            Sym::At => "apenstaartje",
            Sym::NumberSign => "nummer",
            Sym::Sharp => "sharp",
            Sym::Hashtag => "hashtag",
            Sym::Times => "keer",
            Sym::Divide => "gedeeld door",
            Sym::PlusMinus => "plus min",
            Sym::About => "ongeveer",
            Sym::Section => "paragraaf",
            Sym::Dot => "punt",
            Sym::Slash => "slash",
            Sym::Dash => "streepje",
            Sym::Underscore => "underscore",
            Sym::Colon => "dubbele punt",
            Sym::Question => "vraagteken",
            Sym::Hash => "hekje",
            Sym::Percent => "procent",
            Sym::Tilde => "tilde",
        }
    }

    fn dyn_self(&self) -> &dyn LanguageRules {
        self
    }
}
