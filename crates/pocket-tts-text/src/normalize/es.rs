//! Spanish rules (European Spanish, following the RAE/ASALE *Ortografía de la lengua
//! española* (2010), chapter VIII "La escritura de las expresiones numéricas", and the
//! Fundéu recommendations on numbers, times and money).
//!
//! - Numbers: `1.234.567` or `1 234 567`, decimal comma (`3,5` → "tres coma cinco");
//!   up to two decimals are read as a number ("tres coma catorce"), longer ones digit
//!   by digit. Long scale: `millón` (10⁶), `mil millones` (10⁹), `billón` (10¹²).
//! - Gender: a number on its own keeps its full form ("el número uno", "veintiuno");
//!   right before the noun it counts (a unit, a currency) it is shortened or agrees
//!   (`cardinal_before_noun`: "un kilómetro", "veintiún euros", "treinta y un
//!   kilogramos", "veintiuna toneladas", "doscientas libras"). "Por ciento" is not a
//!   noun: `21 %` → "veintiuno por ciento" (Fundéu, after the DPD); the `%` unit is
//!   marked [`Gender::Neuter`] for that.
//! - Phone numbers: `912 345 678` (three groups of three starting with 6–9, Spain's
//!   numbering plan) or any spaced digits after `teléfono`, `móvil`, … are read group
//!   by group, digit by digit; other spaced groups are thousands (`12 345`, RAE).
//! - Ordinals: `1.º`, `1º`, `2.ª`, `1.er`/`3.er` ("primer", "tercer"); "vigésimo
//!   primero", feminine "vigésima primera"; from 1000 on, the cardinal (as the RAE
//!   allows in speech).
//! - Dates: day first; "tres de abril de dos mil veintiséis"; the first of the month is
//!   "uno" (usage of Spain).
//! - Times (convention of this file): no article is added (the text has it: "a las");
//!   hours are feminine ("la una", "veintiuna"); `15:30` → "quince y treinta", `9:05`
//!   → "nueve y cinco"; full hours of the 24-hour clock (0 and 13–23) and `15 h` →
//!   "quince horas", `9:00` → "nueve en punto"; with `a. m.`/`p. m.` the part of the
//!   day replaces both: `3 p. m.` → "tres de la tarde"; `15 h` and `15h30` are times
//!   (RAE's `15 h`).
//! - Money: "diecinueve euros con noventa y nueve céntimos", "un millón de euros",
//!   `2,5 millones de €` → "dos coma cinco millones de euros".
//! - Roman numerals: regnal numbers are ordinals up to ten ("Felipe sexto", "Isabel
//!   segunda") and cardinals above ("Alfonso trece"); after `capítulo`, `siglo`, …
//!   cardinals.
//!
//! Not handled: a feminine noun after a plain number (`21 personas` reads "veintiuno
//! personas": only units and currencies give the number its gender, see the module
//! docs' known limits); `1 h 40 min` (a duration) reads as a time, "una y cuarenta
//! min"; `1/2 kilo` reads "un medio kilo", not "medio kilo"; Latin American readings
//! (`1.000,5` is always Spain's decimal comma; "billón" is always 10¹²).

use super::es_numbers::{
    cardinal_string, one_before_noun, one_of, ordinal_string, One, Ord, ONES, ORD_UNITS,
};
use super::rules::ab;
use super::rules::{
    Abbrev, AbbrevWhen::*, Currency, CurrencyNames, Date, DateOrder, Gender, LanguageRules,
    Meridiem, Money, Out, Scale, ScaleToken, Sym, Time, UnitEntry, Words,
};
use super::scan::{boundary_at, match_table};

/// The Spanish rules.
pub(crate) struct Spanish;

const MONTHS: [&str; 12] = [
    "enero",
    "febrero",
    "marzo",
    "abril",
    "mayo",
    "junio",
    "julio",
    "agosto",
    "septiembre",
    "octubre",
    "noviembre",
    "diciembre",
];

const MONTH_WORDS: &[(&str, u8)] = &[
    ("enero", 1),
    ("febrero", 2),
    ("marzo", 3),
    ("abril", 4),
    ("mayo", 5),
    ("junio", 6),
    ("julio", 7),
    ("agosto", 8),
    ("septiembre", 9),
    ("setiembre", 9),
    ("octubre", 10),
    ("noviembre", 11),
    ("diciembre", 12),
    ("Enero", 1),
    ("Febrero", 2),
    ("Marzo", 3),
    ("Abril", 4),
    ("Mayo", 5),
    ("Junio", 6),
    ("Julio", 7),
    ("Agosto", 8),
    ("Septiembre", 9),
    ("Octubre", 10),
    ("Noviembre", 11),
    ("Diciembre", 12),
    ("ene.", 1),
    ("feb.", 2),
    ("mar.", 3),
    ("abr.", 4),
    ("jun.", 6),
    ("jul.", 7),
    ("ago.", 8),
    ("sept.", 9),
    ("oct.", 10),
    ("nov.", 11),
    ("dic.", 12),
];

static WORDS: Words = Words {
    minus: "menos",
    plus: "más",
    decimal_point: "coma",
    version: "versión",
    version_dot: "punto",
    range_to: "a",
    and: "y",
};

const M: Gender = Gender::Masculine;
const F: Gender = Gender::Feminine;

const fn cur(
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
        minor_gender: M,
    }
}
static DOLLAR: CurrencyNames = cur("dólar", "dólares", "centavo", "centavos", M);
static EURO: CurrencyNames = cur("euro", "euros", "céntimo", "céntimos", M);
static POUND: CurrencyNames = cur("libra", "libras", "penique", "peniques", F);
static YEN: CurrencyNames = cur("yen", "yenes", "", "", M);
static FRANC: CurrencyNames = cur("franco suizo", "francos suizos", "céntimo", "céntimos", M);
static REAL: CurrencyNames = cur("real", "reales", "centavo", "centavos", M);

const fn st(text: &'static str, scale: Scale, attached_only: bool) -> ScaleToken {
    ScaleToken {
        text,
        scale,
        attached_only,
    }
}
static SCALE_TOKENS: [ScaleToken; 8] = [
    st("mil millones", Scale::Billion, false),
    st("billones", Scale::Trillion, false),
    st("billón", Scale::Trillion, false),
    st("millones", Scale::Million, false),
    st("millón", Scale::Million, false),
    st("mil", Scale::Thousand, false),
    st("M", Scale::Million, true),
    st("k", Scale::Thousand, true),
];

const fn u(symbol: &'static str, one: &'static str, many: &'static str, g: Gender) -> UnitEntry {
    UnitEntry {
        symbol,
        one,
        many,
        gender: g,
    }
}
static UNITS: &[UnitEntry] = &[
    u("km", "kilómetro", "kilómetros", M),
    u("m", "metro", "metros", M),
    u("cm", "centímetro", "centímetros", M),
    u("mm", "milímetro", "milímetros", M),
    u("km²", "kilómetro cuadrado", "kilómetros cuadrados", M),
    u("km2", "kilómetro cuadrado", "kilómetros cuadrados", M),
    u("m²", "metro cuadrado", "metros cuadrados", M),
    u("m2", "metro cuadrado", "metros cuadrados", M),
    u("m³", "metro cúbico", "metros cúbicos", M),
    u("m3", "metro cúbico", "metros cúbicos", M),
    u("ha", "hectárea", "hectáreas", F),
    u("kg", "kilogramo", "kilogramos", M),
    u("g", "gramo", "gramos", M),
    u("mg", "miligramo", "miligramos", M),
    u("t", "tonelada", "toneladas", F),
    u("L", "litro", "litros", M),
    u("l", "litro", "litros", M),
    u("ml", "mililitro", "mililitros", M),
    u("mL", "mililitro", "mililitros", M),
    u("cl", "centilitro", "centilitros", M),
    u("km/h", "kilómetro por hora", "kilómetros por hora", M),
    u("m/s", "metro por segundo", "metros por segundo", M),
    u("°C", "grado Celsius", "grados Celsius", M),
    u("°F", "grado Fahrenheit", "grados Fahrenheit", M),
    u("°", "grado", "grados", M),
    u("%", "por ciento", "por ciento", Gender::Neuter),
    u("‰", "por mil", "por mil", Gender::Neuter),
    u("min", "minuto", "minutos", M),
    u("s", "segundo", "segundos", M),
    u("ms", "milisegundo", "milisegundos", M),
    u("Hz", "hercio", "hercios", M),
    u("kHz", "kilohercio", "kilohercios", M),
    u("MHz", "megahercio", "megahercios", M),
    u("GHz", "gigahercio", "gigahercios", M),
    u("W", "vatio", "vatios", M),
    u("kW", "kilovatio", "kilovatios", M),
    u("kWh", "kilovatio hora", "kilovatios hora", M),
    u("V", "voltio", "voltios", M),
    u("KB", "kilobyte", "kilobytes", M),
    u("kB", "kilobyte", "kilobytes", M),
    u("MB", "megabyte", "megabytes", M),
    u("GB", "gigabyte", "gigabytes", M),
    u("TB", "terabyte", "terabytes", M),
];

static ABBREVIATIONS: &[Abbrev] = &[
    ab("Sr.", "señor", Always),
    ab("Sra.", "señora", Always),
    ab("Srta.", "señorita", Always),
    ab("Sres.", "señores", Always),
    ab("Dr.", "doctor", Always),
    ab("Dra.", "doctora", Always),
    ab("Lic.", "licenciado", Always),
    ab("Ing.", "ingeniero", Always),
    ab("Prof.", "profesor", Always),
    ab("Profa.", "profesora", Always),
    ab("Ud.", "usted", MaybeFinal),
    ab("Uds.", "ustedes", MaybeFinal),
    ab("Vd.", "usted", MaybeFinal),
    ab("Vds.", "ustedes", MaybeFinal),
    ab("etc.", "etcétera", MaybeFinal),
    ab("p. ej.", "por ejemplo", Always),
    ab("p.ej.", "por ejemplo", Always),
    ab("aprox.", "aproximadamente", Always),
    ab("EE. UU.", "Estados Unidos", MaybeFinal),
    ab("EE.UU.", "Estados Unidos", MaybeFinal),
    ab("núm.", "número", BeforeNumber),
    ab("Núm.", "número", BeforeNumber),
    ab("n.º", "número", BeforeNumber),
    ab("nº", "número", BeforeNumber),
    ab("pág.", "página", BeforeNumber),
    ab("págs.", "páginas", BeforeNumber),
    ab("cap.", "capítulo", BeforeNumber),
    ab("tel.", "teléfono", BeforeNumber),
    ab("vol.", "volumen", BeforeNumber),
];

impl LanguageRules for Spanish {
    fn group_separators(&self) -> &'static [char] {
        &['.', ' ', '\u{a0}', '\u{202f}', '\u{2009}']
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
        out.word(&cardinal_string(n, One::Full));
    }

    fn cardinal_gender(&self, n: u64, gender: Gender, out: &mut Out) {
        out.word(&cardinal_string(n, one_of(gender)));
    }

    fn cardinal_before_noun(&self, n: u64, gender: Gender, out: &mut Out) {
        out.word(&cardinal_string(n, one_before_noun(gender)));
    }

    fn ordinal(&self, n: u64, gender: Gender, out: &mut Out) {
        out.word(&ordinal_string(n, Ord::of(gender)));
    }

    /// `1.er`, `3.er`, `21.er`: the shortened "primer", "tercer" (before a masculine
    /// noun).
    fn special_suffix(&self, n: u64, rest: &str, out: &mut Out) -> Option<usize> {
        let len = [".er", "er"]
            .into_iter()
            .find(|s| rest.starts_with(s) && boundary_at(rest, s.len()))?
            .len();
        if !matches!(n % 10, 1 | 3) {
            return None;
        }
        out.word(&ordinal_string(n, Ord::Short));
        Some(len)
    }

    fn ordinal_suffix(&self, _n: u64, rest: &str) -> Option<(usize, Gender)> {
        const SUFFIXES: [(&str, Gender); 6] = [
            (".º", Gender::Masculine),
            (".ª", Gender::Feminine),
            ("º", Gender::Masculine),
            ("ª", Gender::Feminine),
            (".o", Gender::Masculine),
            (".a", Gender::Feminine),
        ];
        SUFFIXES.into_iter().find_map(|(s, g)| {
            (rest.starts_with(s) && boundary_at(rest, s.len())).then_some((s.len(), g))
        })
    }

    fn decimal(&self, int: u64, frac: &str, out: &mut Out) {
        self.cardinal(int, out);
        out.word(WORDS.decimal_point);
        if frac.len() > 2 {
            out.digits(self, frac);
            return;
        }
        let digits = frac.trim_start_matches('0');
        for _ in 0..frac.len() - digits.len() {
            out.word(ONES[0]);
        }
        if let Ok(v) = digits.parse::<u64>() {
            self.cardinal(v, out);
        }
    }

    fn fraction(&self, num: u64, den: u64, mixed: bool, out: &mut Out) {
        if mixed && num == 1 && den == 2 {
            out.word("medio");
            return;
        }
        let plural = num > 1;
        let name = match den {
            2 => "medio",
            3 => "tercio",
            4..=9 => ORD_UNITS[den as usize],
            10 => "décim",
            _ => "",
        };
        if name.is_empty() {
            self.cardinal(num, out);
            out.word("partido por");
            self.cardinal(den, out);
            return;
        }
        let name = match den {
            4..=10 => format!("{name}o"),
            _ => name.to_string(),
        };
        self.cardinal_before_noun(num, M, out);
        out.word(&if plural { name + "s" } else { name });
    }

    fn is_plural(&self, int: u64, frac: Option<&str>) -> bool {
        int != 1 || frac.is_some()
    }

    /// Spain's numbering plan: nine digits, landlines from 8 or 9, mobiles from 6 or 7,
    /// written in three groups of three (`912 345 678`); after a word such as
    /// `teléfono` any spaced grouping.
    fn spaced_phone(&self, groups: &[&str], prev_word: Option<&str>) -> bool {
        const TRIGGERS: [&str; 6] = ["teléfono", "teléfonos", "móvil", "celular", "fax", "tel"];
        let spanish = groups.len() == 3
            && groups.iter().all(|g| g.len() == 3)
            && groups[0].starts_with(['6', '7', '8', '9']);
        spanish || prev_word.is_some_and(|w| TRIGGERS.contains(&w.to_lowercase().as_str()))
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

    fn scale_connectors(&self) -> &'static [&'static str] {
        &["de"]
    }

    fn scale_word(&self, s: Scale, plural: bool) -> &'static str {
        match (s, plural) {
            (Scale::Thousand, _) => "mil",
            (Scale::Million, false) => "millón",
            (Scale::Million, true) => "millones",
            (Scale::Billion, _) => "mil millones",
            (Scale::Trillion, false) => "billón",
            (Scale::Trillion, true) => "billones",
        }
    }

    /// "diecinueve euros con noventa y nueve céntimos", "un millón de euros".
    fn money(&self, m: &Money<'_>, out: &mut Out) {
        let names = self.currency(m.currency);
        // No decimals: a whole amount, read as one with no hundredths.
        let cents = match m.frac {
            None => Some(0),
            Some(_) => m.cents(names),
        };
        let Some(c) = cents.filter(|_| m.scale.is_none()) else {
            if m.negative {
                out.word(WORDS.minus);
            }
            match m.frac {
                Some(f) if !f.is_empty() => self.decimal(m.int, f, out),
                // "mil euros", not "un mil".
                _ if m.int == 1 && m.scale == Some(Scale::Thousand) => {}
                _ => self.cardinal_before_noun(m.int, names.gender, out),
            }
            let plural = self.is_plural(m.int, m.frac);
            if let Some(s) = m.scale {
                out.word(self.scale_word(s, plural));
                if s != Scale::Thousand {
                    out.word("de");
                }
            }
            // "mil dólares", "un millón de euros": the currency counts the scale.
            out.word(if plural || m.scale.is_some() {
                names.many
            } else {
                names.one
            });
            return;
        };
        if m.negative {
            out.word(WORDS.minus);
        }
        if m.int > 0 || c == 0 {
            self.cardinal_before_noun(m.int, names.gender, out);
            if m.int > 0 && m.int.is_multiple_of(1_000_000) {
                out.word("de");
            }
            out.word(if m.int == 1 { names.one } else { names.many });
        }
        if c > 0 {
            if m.int > 0 {
                out.word("con");
            }
            self.cardinal_before_noun(c, names.minor_gender, out);
            out.word(if c == 1 {
                names.minor_one
            } else {
                names.minor_many
            });
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

    fn date_connectors(&self) -> &'static [&'static str] {
        &["de", "del"]
    }

    fn date(&self, d: &Date<'_>, out: &mut Out) {
        self.cardinal(u64::from(d.day), out);
        out.word("de");
        out.word(MONTHS[usize::from(d.month - 1)]);
        if let Some(y) = d.year {
            out.word("de");
            self.cardinal(y, out);
        }
    }

    fn time(&self, t: &Time, out: &mut Out) {
        let h = u64::from(t.hour);
        out.word(&cardinal_string(h, One::Fem));
        let minute = t.minute.unwrap_or(0);
        if let Some(s) = t.second {
            out.word(if h == 1 { "hora" } else { "horas" });
            self.cardinal_before_noun(u64::from(minute), M, out);
            out.word(if minute == 1 { "minuto" } else { "minutos" });
            out.word("y");
            self.cardinal_before_noun(u64::from(s), M, out);
            out.word(if s == 1 { "segundo" } else { "segundos" });
        } else if minute > 0 {
            out.word("y");
            self.cardinal(u64::from(minute), out);
        } else if t.meridiem.is_some() {
            // "las tres de la tarde": the part of the day says it all.
        } else if t.minute.is_none() || h == 0 || h >= 13 {
            out.word(if h == 1 { "hora" } else { "horas" });
        } else {
            out.word("en punto");
        }
        match (t.meridiem, t.hour) {
            (Some(Meridiem::Am), 12) => out.word("de la noche"),
            (Some(Meridiem::Am), _) => out.word("de la mañana"),
            (Some(Meridiem::Pm), 12) => out.word("del mediodía"),
            (Some(Meridiem::Pm), 8..=11) => out.word("de la noche"),
            (Some(Meridiem::Pm), _) => out.word("de la tarde"),
            (None, _) => {}
        }
    }

    fn meridiem_at(&self, rest: &str) -> Option<(Meridiem, usize)> {
        for (f, m) in [("a. m.", Meridiem::Am), ("p. m.", Meridiem::Pm)] {
            if rest.starts_with(f) {
                return Some((m, f.len()));
            }
        }
        super::rules::default_meridiem_at(rest)
    }

    fn hour_letter_times(&self) -> bool {
        true
    }

    fn abbreviations(&self) -> &'static [Abbrev] {
        ABBREVIATIONS
    }

    fn roman_triggers(&self) -> &'static [&'static str] {
        &[
            "capítulo",
            "parte",
            "tomo",
            "volumen",
            "libro",
            "acto",
            "escena",
            "sección",
            "anexo",
            "título",
            "artículo",
            "siglo",
            "fase",
            "nivel",
            "tipo",
            "clase",
            "canto",
            "salmo",
        ]
    }

    fn regnal_names(&self) -> &'static [&'static str] {
        &[
            "Felipe",
            "Fernando",
            "Alfonso",
            "Carlos",
            "Juan",
            "Pedro",
            "Enrique",
            "Sancho",
            "Jaime",
            "Ramiro",
            "Luis",
            "Pío",
            "Gregorio",
            "Benedicto",
            "León",
            "Clemente",
        ]
    }

    fn regnal_gender(&self, name: &str) -> Gender {
        const FEMININE: [&str; 6] = ["Isabel", "María", "Juana", "Catalina", "Leonor", "Urraca"];
        if FEMININE.contains(&name) {
            F
        } else {
            M
        }
    }

    fn regnal(&self, n: u64, gender: Gender, out: &mut Out) {
        if n <= 10 {
            out.word(&ordinal_string(n, Ord::of(gender)));
        } else {
            self.cardinal(n, out);
        }
    }

    fn symbol(&self, s: Sym) -> &'static str {
        match s {
            Sym::Ampersand => "y",
            Sym::Plus => "más",
            Sym::Equals => "igual a",
            Sym::At => "arroba",
            Sym::NumberSign => "número",
            Sym::Sharp => "sostenido",
            Sym::Hashtag => "etiqueta",
            Sym::Times => "por",
            Sym::Divide => "entre",
            Sym::PlusMinus => "más o menos",
            Sym::About => "aproximadamente",
            Sym::Section => "sección",
            Sym::Dot => "punto",
            Sym::Slash => "barra",
            Sym::Dash => "guion",
            Sym::Underscore => "guion bajo",
            Sym::Colon => "dos puntos",
            Sym::Question => "interrogación",
            Sym::Hash => "almohadilla",
            Sym::Percent => "por ciento",
            Sym::Tilde => "virgulilla",
        }
    }

    fn dyn_self(&self) -> &dyn LanguageRules {
        self
    }
}
