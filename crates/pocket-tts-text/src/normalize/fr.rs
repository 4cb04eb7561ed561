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

use super::readings::{money_of_millions, suffix_at};
use super::rules::{
    ab, cur, st, unit, Abbrev, AbbrevWhen::*, Currencies, Date, DateOrder, Gender, LanguageData,
    LanguageRules, Meridiem, Money, Out, Scale, ScaleToken, ScaleWords, Symbols, Time, UnitEntry,
    Words,
};
use super::scan::{boundary_at, value};

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

const SCALE_TOKENS: &[ScaleToken] = &[
    st("milliards", Scale::Billion, false),
    st("milliard", Scale::Billion, false),
    st("millions", Scale::Million, false),
    st("million", Scale::Million, false),
    st("mille", Scale::Thousand, false),
    st("Mds", Scale::Billion, false),
    st("Md", Scale::Billion, false),
    st("M", Scale::Million, false),
    st("k", Scale::Thousand, false),
];

const M: Gender = Gender::Masculine;
const F: Gender = Gender::Feminine;
const UNITS_TABLE: &[UnitEntry] = &[
    unit("km", "kilomètre", "kilomètres", M),
    unit("m", "mètre", "mètres", M),
    unit("cm", "centimètre", "centimètres", M),
    unit("mm", "millimètre", "millimètres", M),
    unit("km²", "kilomètre carré", "kilomètres carrés", M),
    unit("km2", "kilomètre carré", "kilomètres carrés", M),
    unit("m²", "mètre carré", "mètres carrés", M),
    unit("m2", "mètre carré", "mètres carrés", M),
    unit("m³", "mètre cube", "mètres cubes", M),
    unit("m3", "mètre cube", "mètres cubes", M),
    unit("kg", "kilogramme", "kilogrammes", M),
    unit("g", "gramme", "grammes", M),
    unit("mg", "milligramme", "milligrammes", M),
    unit("t", "tonne", "tonnes", F),
    unit("L", "litre", "litres", M),
    unit("l", "litre", "litres", M),
    unit("mL", "millilitre", "millilitres", M),
    unit("ml", "millilitre", "millilitres", M),
    unit("cl", "centilitre", "centilitres", M),
    unit("lb", "livre", "livres", F),
    unit("km/h", "kilomètre à l'heure", "kilomètres à l'heure", M),
    unit("m/s", "mètre par seconde", "mètres par seconde", M),
    unit("°C", "degré Celsius", "degrés Celsius", M),
    unit("°F", "degré Fahrenheit", "degrés Fahrenheit", M),
    unit("°", "degré", "degrés", M),
    unit("%", "pour cent", "pour cent", M),
    unit("‰", "pour mille", "pour mille", M),
    unit("h", "heure", "heures", F),
    unit("min", "minute", "minutes", F),
    unit("s", "seconde", "secondes", F),
    unit("ms", "milliseconde", "millisecondes", F),
    unit("Hz", "hertz", "hertz", M),
    unit("kHz", "kilohertz", "kilohertz", M),
    unit("MHz", "mégahertz", "mégahertz", M),
    unit("GHz", "gigahertz", "gigahertz", M),
    unit("W", "watt", "watts", M),
    unit("kW", "kilowatt", "kilowatts", M),
    unit("kWh", "kilowattheure", "kilowattheures", M),
    unit("V", "volt", "volts", M),
    unit("Ko", "kilooctet", "kilooctets", M),
    unit("Mo", "mégaoctet", "mégaoctets", M),
    unit("Go", "gigaoctet", "gigaoctets", M),
    unit("To", "téraoctet", "téraoctets", M),
    unit("Mbit/s", "mégabit par seconde", "mégabits par seconde", M),
];

const ABBREVIATIONS: &[Abbrev] = &[
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

/// The French table.
static DATA: LanguageData = LanguageData {
    group_separators: &[' ', '\u{a0}', '\u{202f}', '\u{2009}'],
    decimal_separator: ',',
    // « trois virgule quatorze », « trois virgule zéro cinq »; longer decimals digit by
    // digit.
    decimals_as_number: 3,
    words: Words {
        minus: "moins",
        plus: "plus",
        decimal_point: "virgule",
        version: "version",
        version_dot: "point",
        range_to: "à",
        and: "et",
    },
    phone_group_max: 4,
    phone_long_groups: false,
    currencies: Currencies {
        dollar: cur("dollar", "dollars", "cent", "cents", M),
        euro: cur("euro", "euros", "centime", "centimes", M),
        pound: cur("livre sterling", "livres sterling", "penny", "pence", F),
        yen: cur("yen", "yens", "", "", M),
        franc: cur("franc suisse", "francs suisses", "centime", "centimes", M),
        real: cur(
            "réal brésilien",
            "réaux brésiliens",
            "centavo",
            "centavos",
            M,
        ),
    },
    scale_tokens: SCALE_TOKENS,
    scale_connectors: &[],
    scale_words: ScaleWords {
        thousand: ("mille", "mille"),
        million: ("million", "millions"),
        billion: ("milliard", "milliards"),
        trillion: ("billion", "billions"),
    },
    units: UNITS_TABLE,
    date_order: DateOrder::DayMonthYear,
    month_words: MONTH_WORDS,
    month_before_day: false,
    date_connectors: &[],
    time_separators: &[':'],
    hour_letter_times: true,
    abbreviations: ABBREVIATIONS,
    roman_triggers: &[
        "chapitre", "tome", "volume", "partie", "acte", "scène", "titre", "annexe", "leçon",
        "épisode", "saison", "phase", "niveau", "type", "classe",
    ],
    regnal_names: &[
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
    ],
    symbols: Symbols {
        ampersand: "et",
        plus: "plus",
        equals: "égal",
        at: "arobase",
        number_sign: "numéro",
        sharp: "dièse",
        hashtag: "hashtag",
        times: "fois",
        divide: "divisé par",
        plus_minus: "plus ou moins",
        about: "environ",
        section: "paragraphe",
        dot: "point",
        slash: "barre oblique",
        dash: "tiret",
        underscore: "tiret bas",
        colon: "deux-points",
        question: "point d'interrogation",
        hash: "dièse",
        percent: "pour cent",
        tilde: "tilde",
    },
};

impl LanguageRules for French {
    fn data(&self) -> &'static LanguageData {
        &DATA
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
        suffix_at(rest, table)
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

    /// « deux virgule cinq millions d'euros », « un million de dollars »: after a
    /// million and more, `de`; otherwise the default reading with `et`.
    fn money(&self, m: &Money<'_>, out: &mut Out) {
        money_of_millions(self, m, elided_de, out);
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

    /// `3 h 20 min`: the minutes are already said.
    fn time_suffix(&self, rest: &str) -> usize {
        let start = usize::from(rest.starts_with(' '));
        match rest[start..].strip_prefix("min") {
            Some(after) if boundary_at(after, 0) => start + 3,
            _ => 0,
        }
    }

    fn regnal(&self, n: u64, gender: Gender, out: &mut Out) {
        if n == 1 {
            out.word(&ordinal_string(1, gender));
        } else {
            self.cardinal(n, out);
        }
    }
}
