//! French rules, after the Office québécois de la langue française's Banque de dépannage
//! linguistique (BDL: « Écriture des nombres », « Heure », « Date », « Symboles des
//! unités monétaires », « Abréviations ») and the Lexique des règles typographiques en
//! usage à l'Imprimerie nationale (ordinals `1er`, `2e`, `XIXe`; `M.`, `Mme`).
//!
//! - Numbers: spaces (or no-break spaces) group thousands, the comma marks decimals
//!   (`1 234 567,89`). Traditional spelling: hyphens below 100 only, `et` in 21…71,
//!   `quatre-vingts`/`deux cents` with their `s` only at the end (`quatre-vingt mille`,
//!   but `deux cents millions`), long scale (`milliard` = 10⁹, `billion` = 10¹²).
//!   Decimals up to three digits are read as a number (`3,14` « trois virgule
//!   quatorze », `3,05` « trois virgule zéro cinq »), longer ones digit by digit.
//! - Feminine agreement: `une heure`, `vingt et une tonnes`, `une livre sterling`.
//! - Dates day first: `03/04/2026` « trois avril deux mille vingt-six », `1er mars`
//!   « premier mars ». Times: `15 h 30`, `15h30`, `15:30` « quinze heures trente ».
//! - Money after the amount: `19,99 $` « dix-neuf dollars et quatre-vingt-dix-neuf
//!   cents », `2,5 M€` « deux virgule cinq millions d'euros ».
//! - Phone numbers by pairs: `06 12 34 56 78` « zéro six, douze, trente-quatre, … ».

use super::rules::ab;
use super::rules::{
    default_money, say_amount, Abbrev, AbbrevWhen::*, Currency, CurrencyNames, Date, DateOrder,
    Gender, LanguageRules, Meridiem, Money, Out, Scale, ScaleToken, Sym, Time, UnitEntry, Words,
};
use super::scan::{boundary_at, match_table, value};

/// The French rules.
pub(crate) struct French;

const UNITS: [&str; 17] = [
    "zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze",
    "douze", "treize", "quatorze", "quinze", "seize",
];
const TENS: [&str; 7] = [
    "",
    "",
    "vingt",
    "trente",
    "quarante",
    "cinquante",
    "soixante",
];
/// Long scale, from the top; `mille` is handled apart (invariable, no `un`).
const SCALES: [(u64, &str); 5] = [
    (1_000_000_000_000_000_000, "trillion"),
    (1_000_000_000_000_000, "billiard"),
    (1_000_000_000_000, "billion"),
    (1_000_000_000, "milliard"),
    (1_000_000, "million"),
];

/// 0–99 without a leading space. `last`: nothing follows (`quatre-vingts` keeps its
/// `s`).
fn below_100(n: usize, last: bool, s: &mut String) {
    match n {
        0..=16 => s.push_str(UNITS[n]),
        17..=19 => {
            s.push_str("dix-");
            s.push_str(UNITS[n - 10]);
        }
        _ => {
            let (t, u) = (n / 10, n % 10);
            match t {
                2..=6 => {
                    s.push_str(TENS[t]);
                    match u {
                        0 => {}
                        1 => s.push_str(" et un"),
                        _ => {
                            s.push('-');
                            s.push_str(UNITS[u]);
                        }
                    }
                }
                7 if u == 1 => s.push_str("soixante et onze"),
                7 => {
                    s.push_str("soixante-");
                    below_100(10 + u, last, s);
                }
                8 if u == 0 => s.push_str(if last {
                    "quatre-vingts"
                } else {
                    "quatre-vingt"
                }),
                8 => {
                    s.push_str("quatre-vingt-");
                    s.push_str(UNITS[u]);
                }
                _ => {
                    s.push_str("quatre-vingt-");
                    below_100(10 + u, last, s);
                }
            }
        }
    }
}

/// 1–999 (or 0–18 for the top scale) after a space if `s` is not empty.
fn below_1000(n: u64, last: bool, s: &mut String) {
    if !s.is_empty() {
        s.push(' ');
    }
    let (c, r) = ((n / 100) as usize, (n % 100) as usize);
    if c > 0 {
        if c > 1 {
            s.push_str(UNITS[c % 10]);
            s.push(' ');
        }
        s.push_str("cent");
        if r == 0 && c > 1 && last {
            s.push('s');
        }
        if r > 0 {
            s.push(' ');
        }
    }
    if r > 0 {
        below_100(r, last, s);
    }
}

/// « deux cent mille », « quatre-vingts millions ».
pub(crate) fn cardinal_string(n: u64) -> String {
    if n == 0 {
        return UNITS[0].to_string();
    }
    let mut s = String::new();
    let mut rest = n;
    for (scale, name) in SCALES {
        let count = rest / scale;
        if count > 0 {
            below_1000(count, true, &mut s);
            s.push(' ');
            s.push_str(name);
            if count > 1 {
                s.push('s');
            }
            rest %= scale;
        }
    }
    let thousands = rest / 1000;
    if thousands == 1 {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str("mille");
    } else if thousands > 1 {
        below_1000(thousands, false, &mut s);
        s.push_str(" mille");
    }
    if !rest.is_multiple_of(1000) {
        below_1000(rest % 1000, true, &mut s);
    }
    s
}

/// The cardinal agreeing with a feminine noun: a final `un` becomes `une`.
fn cardinal_feminine(n: u64) -> String {
    let mut s = cardinal_string(n);
    let ends_in_un = s.ends_with("un") && (s.len() == 2 || s[..s.len() - 2].ends_with([' ', '-']));
    if ends_in_un {
        s.push('e');
    }
    s
}

/// « deuxième », « vingt et unième », « quatre-vingtième », « millionième ».
fn ordinal_string(n: u64, gender: Gender) -> String {
    if n == 1 {
        return (if gender == Gender::Feminine {
            "première"
        } else {
            "premier"
        })
        .to_string();
    }
    let mut s = cardinal_string(n);
    if [1_000_000, 1_000_000_000, 1_000_000_000_000].contains(&n) {
        s.replace_range(..3, "");
    }
    let cut = s.rfind([' ', '-']).map_or(0, |k| k + 1);
    let last = s.split_off(cut);
    let stem = match last.as_str() {
        "cinq" => "cinqu",
        "neuf" => "neuv",
        "cents" | "vingts" | "millions" | "milliards" | "billions" => &last[..last.len() - 1],
        w => w.strip_suffix('e').unwrap_or(w),
    };
    s.push_str(stem);
    s.push_str("ième");
    s
}

fn elided_de(noun: &str, out: &mut Out) {
    if noun.starts_with(['a', 'e', 'i', 'o', 'u', 'y', 'é', 'h']) {
        out.word("d'");
        out.raw(noun);
    } else {
        out.word("de");
        out.word(noun);
    }
}

const MONTHS: [&str; 12] = [
    "janvier",
    "février",
    "mars",
    "avril",
    "mai",
    "juin",
    "juillet",
    "août",
    "septembre",
    "octobre",
    "novembre",
    "décembre",
];

const MONTH_WORDS: &[(&str, u8)] = &[
    ("janvier", 1),
    ("février", 2),
    ("mars", 3),
    ("avril", 4),
    ("mai", 5),
    ("juin", 6),
    ("juillet", 7),
    ("août", 8),
    ("aout", 8),
    ("septembre", 9),
    ("octobre", 10),
    ("novembre", 11),
    ("décembre", 12),
    ("Janvier", 1),
    ("Février", 2),
    ("Mars", 3),
    ("Avril", 4),
    ("Mai", 5),
    ("Juin", 6),
    ("Juillet", 7),
    ("Août", 8),
    ("Septembre", 9),
    ("Octobre", 10),
    ("Novembre", 11),
    ("Décembre", 12),
    ("janv.", 1),
    ("févr.", 2),
    ("avr.", 4),
    ("juill.", 7),
    ("sept.", 9),
    ("oct.", 10),
    ("nov.", 11),
    ("déc.", 12),
];

static WORDS: Words = Words {
    minus: "moins",
    plus: "plus",
    decimal_point: "virgule",
    version: "version",
    version_dot: "point",
    range_to: "à",
    and: "et",
};

const fn cur(
    one: &'static str,
    many: &'static str,
    minor: (&'static str, &'static str),
    gender: Gender,
) -> CurrencyNames {
    CurrencyNames {
        one,
        many,
        minor_one: minor.0,
        minor_many: minor.1,
        gender,
        minor_gender: Gender::Masculine,
    }
}
static DOLLAR: CurrencyNames = cur("dollar", "dollars", ("cent", "cents"), Gender::Masculine);
static EURO: CurrencyNames = cur("euro", "euros", ("centime", "centimes"), Gender::Masculine);
static POUND: CurrencyNames = cur(
    "livre sterling",
    "livres sterling",
    ("penny", "pence"),
    Gender::Feminine,
);
static YEN: CurrencyNames = cur("yen", "yens", ("", ""), Gender::Masculine);
static FRANC: CurrencyNames = cur(
    "franc suisse",
    "francs suisses",
    ("centime", "centimes"),
    Gender::Masculine,
);
static REAL: CurrencyNames = cur(
    "réal brésilien",
    "réaux brésiliens",
    ("centavo", "centavos"),
    Gender::Masculine,
);

const fn st(text: &'static str, scale: Scale) -> ScaleToken {
    ScaleToken {
        text,
        scale,
        attached_only: false,
    }
}
static SCALE_TOKENS: [ScaleToken; 9] = [
    st("milliards", Scale::Billion),
    st("milliard", Scale::Billion),
    st("millions", Scale::Million),
    st("million", Scale::Million),
    st("mille", Scale::Thousand),
    st("Mds", Scale::Billion),
    st("Md", Scale::Billion),
    st("M", Scale::Million),
    st("k", Scale::Thousand),
];

const M: Gender = Gender::Masculine;
const F: Gender = Gender::Feminine;
const fn u(
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
static UNITS_TABLE: &[UnitEntry] = &[
    u("km", "kilomètre", "kilomètres", M),
    u("m", "mètre", "mètres", M),
    u("cm", "centimètre", "centimètres", M),
    u("mm", "millimètre", "millimètres", M),
    u("km²", "kilomètre carré", "kilomètres carrés", M),
    u("km2", "kilomètre carré", "kilomètres carrés", M),
    u("m²", "mètre carré", "mètres carrés", M),
    u("m2", "mètre carré", "mètres carrés", M),
    u("m³", "mètre cube", "mètres cubes", M),
    u("m3", "mètre cube", "mètres cubes", M),
    u("kg", "kilogramme", "kilogrammes", M),
    u("g", "gramme", "grammes", M),
    u("mg", "milligramme", "milligrammes", M),
    u("t", "tonne", "tonnes", F),
    u("L", "litre", "litres", M),
    u("l", "litre", "litres", M),
    u("mL", "millilitre", "millilitres", M),
    u("ml", "millilitre", "millilitres", M),
    u("cl", "centilitre", "centilitres", M),
    u("lb", "livre", "livres", F),
    u("km/h", "kilomètre à l'heure", "kilomètres à l'heure", M),
    u("m/s", "mètre par seconde", "mètres par seconde", M),
    u("°C", "degré Celsius", "degrés Celsius", M),
    u("°F", "degré Fahrenheit", "degrés Fahrenheit", M),
    u("°", "degré", "degrés", M),
    u("%", "pour cent", "pour cent", M),
    u("‰", "pour mille", "pour mille", M),
    u("h", "heure", "heures", F),
    u("min", "minute", "minutes", F),
    u("s", "seconde", "secondes", F),
    u("ms", "milliseconde", "millisecondes", F),
    u("Hz", "hertz", "hertz", M),
    u("kHz", "kilohertz", "kilohertz", M),
    u("MHz", "mégahertz", "mégahertz", M),
    u("GHz", "gigahertz", "gigahertz", M),
    u("W", "watt", "watts", M),
    u("kW", "kilowatt", "kilowatts", M),
    u("kWh", "kilowattheure", "kilowattheures", M),
    u("V", "volt", "volts", M),
    u("Ko", "kilooctet", "kilooctets", M),
    u("Mo", "mégaoctet", "mégaoctets", M),
    u("Go", "gigaoctet", "gigaoctets", M),
    u("To", "téraoctet", "téraoctets", M),
    u("Mbit/s", "mégabit par seconde", "mégabits par seconde", M),
];

static ABBREVIATIONS: &[Abbrev] = &[
    ab("M.", "Monsieur", BeforeName),
    ab("MM.", "Messieurs", BeforeName),
    ab("Mme", "Madame", Always),
    ab("Mmes", "Mesdames", Always),
    ab("Mlle", "Mademoiselle", Always),
    ab("Mlles", "Mesdemoiselles", Always),
    ab("Dr", "Docteur", Always),
    ab("Dre", "Docteure", Always),
    ab("Pr", "Professeur", Always),
    ab("Me", "Maître", BeforeName),
    ab("Mgr", "Monseigneur", Always),
    ab("St-", "Saint-", BeforeName),
    ab("Ste-", "Sainte-", BeforeName),
    ab("Cie", "Compagnie", Always),
    ab("etc.", "et cetera", MaybeFinal),
    ab("p. ex.", "par exemple", Always),
    ab("c.-à-d.", "c'est-à-dire", Always),
    ab("c-à-d", "c'est-à-dire", Always),
    ab("cf.", "confer", Always),
    ab("env.", "environ", Always),
    ab("av. J.-C.", "avant Jésus-Christ", MaybeFinal),
    ab("apr. J.-C.", "après Jésus-Christ", MaybeFinal),
    ab("J.-C.", "Jésus-Christ", MaybeFinal),
    ab("av.", "avenue", Always),
    ab("boul.", "boulevard", Always),
    ab("tél.", "téléphone", Always),
    ab("n°", "numéro", BeforeNumber),
    ab("nº", "numéro", BeforeNumber),
    ab("N°", "numéro", BeforeNumber),
    ab("no", "numéro", BeforeNumber),
    ab("p.", "page", BeforeNumber),
    ab("vol.", "volume", BeforeNumber),
    ab("chap.", "chapitre", BeforeNumber),
    ab("art.", "article", BeforeNumber),
    ab("fig.", "figure", BeforeNumber),
];

impl LanguageRules for French {
    fn group_separators(&self) -> &'static [char] {
        &[' ', '\u{a0}', '\u{202f}', '\u{2009}']
    }

    fn decimal_separator(&self) -> char {
        ','
    }

    fn words(&self) -> &'static Words {
        &WORDS
    }

    fn digit(&self, d: u8) -> &'static str {
        UNITS[usize::from(d % 10)]
    }

    fn cardinal(&self, n: u64, out: &mut Out) {
        out.word(&cardinal_string(n));
    }

    fn cardinal_gender(&self, n: u64, gender: Gender, out: &mut Out) {
        if gender == Gender::Feminine {
            out.word(&cardinal_feminine(n));
        } else {
            self.cardinal(n, out);
        }
    }

    fn ordinal(&self, n: u64, gender: Gender, out: &mut Out) {
        out.word(&ordinal_string(n, gender));
    }

    fn ordinal_suffix(&self, n: u64, rest: &str) -> Option<(usize, Gender)> {
        const FIRST: [(&str, Gender); 5] = [
            ("ère", Gender::Feminine),
            ("ʳᵉ", Gender::Feminine),
            ("ᵉʳ", Gender::Masculine),
            ("er", Gender::Masculine),
            ("re", Gender::Feminine),
        ];
        const OTHER: [(&str, Gender); 3] = [
            ("ème", Gender::Masculine),
            ("ᵉ", Gender::Masculine),
            ("e", Gender::Masculine),
        ];
        let table: &[(&str, Gender)] = match n {
            0 => return None,
            1 => &FIRST,
            _ => &OTHER,
        };
        table.iter().find_map(|&(suffix, gender)| {
            (rest.starts_with(suffix) && boundary_at(rest, suffix.len()))
                .then_some((suffix.len(), gender))
        })
    }

    /// `2nd`, `2nde` (« second », « seconde ») and plural ordinals: `1ers`, `1res`,
    /// `2es`, `3èmes`.
    fn special_suffix(&self, n: u64, rest: &str, out: &mut Out) -> Option<usize> {
        const FIRST: [(&str, &str); 4] = [
            ("ères", "premières"),
            ("ers", "premiers"),
            ("res", "premières"),
            ("ʳᵉˢ", "premières"),
        ];
        const SECOND: [(&str, &str); 2] = [("nde", "seconde"), ("nd", "second")];
        let fixed: &[(&str, &str)] = match n {
            1 => &FIRST,
            2 => &SECOND,
            _ => &[],
        };
        if let Some(&(suffix, word)) = fixed
            .iter()
            .find(|(suffix, _)| rest.starts_with(suffix) && boundary_at(rest, suffix.len()))
        {
            out.word(word);
            return Some(suffix.len());
        }
        let len = ["èmes", "es", "ᵉˢ"]
            .into_iter()
            .find(|s| n >= 2 && rest.starts_with(s) && boundary_at(rest, s.len()))?
            .len();
        let mut o = ordinal_string(n, Gender::Masculine);
        o.push('s');
        out.word(&o);
        Some(len)
    }

    fn decimal(&self, int: u64, frac: &str, out: &mut Out) {
        self.cardinal(int, out);
        out.word(WORDS.decimal_point);
        if frac.len() > 3 {
            out.digits(self, frac);
            return;
        }
        let zeros = frac.bytes().take_while(|&b| b == b'0').count();
        for _ in 0..zeros {
            out.word(UNITS[0]);
        }
        if let Some(v) = value(&frac[zeros..]) {
            self.cardinal(v, out);
        }
    }

    fn fraction(&self, num: u64, den: u64, mixed: bool, out: &mut Out) {
        match den {
            2 => {
                if !mixed {
                    self.cardinal(num, out);
                }
                out.word("demi");
            }
            4 if mixed && num == 1 => out.word("quart"),
            3 | 4 => {
                self.cardinal(num, out);
                out.word(match (den, num > 1) {
                    (3, _) => "tiers",
                    (_, false) => "quart",
                    (_, true) => "quarts",
                });
            }
            _ => {
                self.cardinal(num, out);
                let mut o = ordinal_string(den, Gender::Masculine);
                if num > 1 {
                    o.push('s');
                }
                out.word(&o);
            }
        }
    }

    fn is_plural(&self, int: u64, _frac: Option<&str>) -> bool {
        int >= 2
    }

    fn phone_group(&self, digits: &str, out: &mut Out) {
        let leading_zero = digits.starts_with('0');
        match (digits.len(), value(digits)) {
            (2, Some(v)) if leading_zero => {
                out.word(UNITS[0]);
                out.word(UNITS[v as usize % 10]);
            }
            (2 | 3, Some(v)) if !leading_zero => self.cardinal(v, out),
            _ => out.digits(self, digits),
        }
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
            (Scale::Thousand, _) => "mille",
            (Scale::Million, false) => "million",
            (Scale::Million, true) => "millions",
            (Scale::Billion, false) => "milliard",
            (Scale::Billion, true) => "milliards",
            (Scale::Trillion, false) => "billion",
            (Scale::Trillion, true) => "billions",
        }
    }

    /// « deux virgule cinq millions d'euros », « un million de dollars »: after a
    /// million and more, `de`; otherwise the default reading with `et`.
    fn money(&self, m: &Money<'_>, out: &mut Out) {
        let names = self.currency(m.currency);
        let whole = m.frac.is_none_or(|f| f.bytes().all(|b| b == b'0'));
        let round_millions = whole && m.int >= 1_000_000 && m.int.is_multiple_of(1_000_000);
        if m.scale.is_none() && !round_millions {
            return default_money(self, m, out);
        }
        if m.negative {
            out.word(WORDS.minus);
        }
        match m.scale {
            Some(scale) => {
                say_amount(self, m.int, m.frac, Gender::Masculine, out);
                out.word(self.scale_word(scale, self.is_plural(m.int, m.frac)));
                if scale == Scale::Thousand {
                    out.word(names.many);
                } else {
                    elided_de(names.many, out);
                }
            }
            None => {
                self.cardinal(m.int, out);
                elided_de(names.many, out);
            }
        }
    }

    fn units(&self) -> &'static [UnitEntry] {
        UNITS_TABLE
    }

    fn date_order(&self) -> DateOrder {
        DateOrder::DayMonthYear
    }

    fn month_at(&self, rest: &str) -> Option<(u8, usize)> {
        match_table(rest, 0, MONTH_WORDS)
    }

    fn date(&self, d: &Date<'_>, out: &mut Out) {
        if d.day == 1 {
            out.word("premier");
        } else {
            self.cardinal(u64::from(d.day), out);
        }
        out.word(MONTHS[usize::from(d.month - 1)]);
        if let Some(y) = d.year {
            self.cardinal(y, out);
        }
    }

    fn time(&self, t: &Time, out: &mut Out) {
        out.word(&cardinal_feminine(u64::from(t.hour)));
        out.word(if t.hour >= 2 { "heures" } else { "heure" });
        let minute = t.minute.filter(|&m| m > 0 || t.second.is_some());
        if let Some(m) = minute {
            out.word(&cardinal_feminine(u64::from(m)));
            if let Some(s) = t.second {
                out.word(if m >= 2 { "minutes" } else { "minute" });
                out.word("et");
                out.word(&cardinal_feminine(u64::from(s)));
                out.word(if s >= 2 { "secondes" } else { "seconde" });
            }
        }
        match t.meridiem {
            Some(Meridiem::Am) => out.word("du matin"),
            Some(Meridiem::Pm) => out.word("de l'après-midi"),
            None => {}
        }
    }

    fn hour_letter_times(&self) -> bool {
        true
    }

    /// `3 h 20 min`: the minutes are already said.
    fn time_suffix(&self, rest: &str) -> usize {
        let start = usize::from(rest.starts_with(' '));
        match rest[start..].strip_prefix("min") {
            Some(after) if boundary_at(after, 0) => start + 3,
            _ => 0,
        }
    }

    fn abbreviations(&self) -> &'static [Abbrev] {
        ABBREVIATIONS
    }

    fn roman_triggers(&self) -> &'static [&'static str] {
        &[
            "chapitre", "tome", "volume", "partie", "acte", "scène", "titre", "annexe", "leçon",
            "épisode", "saison", "phase", "niveau", "type", "classe",
        ]
    }

    fn regnal_names(&self) -> &'static [&'static str] {
        &[
            "Guillaume",
            "Édouard",
            "Rodolphe",
            "Othon",
            "Childéric",
            "Clovis",
            "Clotaire",
            "Dagobert",
            "Pépin",
            "Lothaire",
            "Robert",
            "Hugues",
            "Eugène",
            "Sixte",
            "Urbain",
            "Jules",
            "Isabelle",
            "Amédée",
            "Baudouin",
            "Albert",
            "Frédéric",
        ]
    }

    fn regnal(&self, n: u64, gender: Gender, out: &mut Out) {
        if n == 1 {
            out.word(&ordinal_string(1, gender));
        } else {
            self.cardinal(n, out);
        }
    }

    fn symbol(&self, s: Sym) -> &'static str {
        match s {
            Sym::Ampersand => "et",
            Sym::Plus => "plus",
            Sym::Equals => "égal",
            Sym::At => "arobase",
            Sym::NumberSign => "numéro",
            Sym::Sharp => "dièse",
            Sym::Hashtag => "hashtag",
            Sym::Times => "fois",
            Sym::Divide => "divisé par",
            Sym::PlusMinus => "plus ou moins",
            Sym::About => "environ",
            Sym::Section => "paragraphe",
            Sym::Dot => "point",
            Sym::Slash => "barre oblique",
            Sym::Dash => "tiret",
            Sym::Underscore => "tiret bas",
            Sym::Colon => "deux-points",
            Sym::Question => "point d'interrogation",
            Sym::Hash => "dièse",
            Sym::Percent => "pour cent",
            Sym::Tilde => "tilde",
        }
    }

    fn dyn_self(&self) -> &dyn LanguageRules {
        self
    }
}
