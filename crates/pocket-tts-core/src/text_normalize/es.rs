//! Spanish rules (European Spanish, following the RAE/ASALE *Ortografía de la lengua
//! española* (2010), chapter VIII "La escritura de las expresiones numéricas", and the
//! Fundéu recommendations on numbers, times and money).
//!
//! - Numbers: `1.234.567` or `1 234 567`, decimal comma (`3,5` → "tres coma cinco");
//!   up to two decimals are read as a number ("tres coma catorce"), longer ones digit
//!   by digit. Long scale: `millón` (10⁶), `mil millones` (10⁹), `billón` (10¹²).
//! - Gender: "un kilómetro", "una libra", "doscientas libras"; a bare number is read
//!   in its pronominal form ("uno", "veintiuno"). Internally [`Gender::Neuter`] stands
//!   for that unapocopated masculine form (`%`: "veintiuno por ciento") and, for
//!   ordinals, for the apocopated `1.er` → "primer".
//! - Ordinals: `1.º`, `1º`, `2.ª`, `1.er`; "vigésimo primero", feminine "vigésima
//!   primera"; from 1000 on, the cardinal (as the RAE allows in speech).
//! - Dates: day first; "tres de abril de dos mil veintiséis"; the first of the month is
//!   "uno" (usage of Spain).
//! - Times (convention of this file): no article is added (the text has it: "a las");
//!   hours are feminine ("la una", "veintiuna"); `15:30` → "quince y treinta", `9:05`
//!   → "nueve y cinco"; full hours of the 24-hour clock (0 and 13–23) → "quince horas",
//!   others → "nueve en punto"; `15 h` and `15h30` are times (RAE's `15 h`).
//! - Money: "diecinueve euros con noventa y nueve céntimos", "un millón de euros".
//! - Roman numerals: regnal numbers are ordinals up to ten ("Felipe sexto") and
//!   cardinals above ("Alfonso trece"); after `capítulo`, `siglo`, … cardinals.

use super::rules::{
    Abbrev, AbbrevWhen, AbbrevWhen::*, Currency, CurrencyNames, Date, DateOrder, Gender,
    LanguageRules, Meridiem, Money, Out, Scale, ScaleToken, Sym, Time, UnitEntry, Words,
};
use super::scan::{boundary_at, match_table};

/// The Spanish rules.
pub(crate) struct Spanish;

const ONES: [&str; 30] = [
    "cero",
    "uno",
    "dos",
    "tres",
    "cuatro",
    "cinco",
    "seis",
    "siete",
    "ocho",
    "nueve",
    "diez",
    "once",
    "doce",
    "trece",
    "catorce",
    "quince",
    "dieciséis",
    "diecisiete",
    "dieciocho",
    "diecinueve",
    "veinte",
    "veintiuno",
    "veintidós",
    "veintitrés",
    "veinticuatro",
    "veinticinco",
    "veintiséis",
    "veintisiete",
    "veintiocho",
    "veintinueve",
];
const TENS: [&str; 10] = [
    "", "", "", "treinta", "cuarenta", "cincuenta", "sesenta", "setenta", "ochenta", "noventa",
];
const HUNDREDS: [&str; 10] = [
    "",
    "ciento",
    "doscient",
    "trescient",
    "cuatrocient",
    "quinient",
    "seiscient",
    "setecient",
    "ochocient",
    "novecient",
];

/// How the final "uno" of a group is said.
#[derive(Clone, Copy, PartialEq, Eq)]
enum One {
    /// "uno", "veintiuno" (a number on its own).
    Full,
    /// "un", "veintiún" (before a masculine noun, before `mil`/`millón`).
    Short,
    /// "una", "veintiuna".
    Fem,
}

fn push(s: &mut String, w: &str) {
    if !s.is_empty() {
        s.push(' ');
    }
    s.push_str(w);
}

fn ones_word(n: usize, one: One) -> &'static str {
    match (n, one) {
        (1, One::Short) => "un",
        (1, One::Fem) => "una",
        (21, One::Short) => "veintiún",
        (21, One::Fem) => "veintiuna",
        _ => ONES[n],
    }
}

fn below_1000(n: u64, one: One, s: &mut String) {
    let n = n as usize % 1000;
    let (h, rest) = (n / 100, n % 100);
    if n == 100 {
        push(s, "cien");
        return;
    }
    if h == 1 {
        push(s, "ciento");
    } else if h > 1 {
        push(s, HUNDREDS[h]);
        s.push_str(if one == One::Fem { "as" } else { "os" });
    }
    if rest == 0 {
        return;
    }
    if rest < 30 {
        push(s, ones_word(rest, one));
    } else {
        push(s, TENS[rest / 10]);
        if rest % 10 > 0 {
            s.push_str(" y ");
            s.push_str(ones_word(rest % 10, one));
        }
    }
}

/// Below a million: `one` applies to the thousands group too ("doscientas mil").
fn below_million(n: u64, one: One, s: &mut String) {
    let (th, rest) = (n / 1000, n % 1000);
    if th == 1 {
        push(s, "mil");
    } else if th > 1 {
        below_1000(th, if one == One::Fem { One::Fem } else { One::Short }, s);
        push(s, "mil");
    }
    if rest > 0 {
        below_1000(rest, one, s);
    }
}

/// A Spanish cardinal (long scale).
fn cardinal_string(n: u64, one: One) -> String {
    if n == 0 {
        return ONES[0].to_string();
    }
    const SCALES: [(u64, &str, &str); 3] = [
        (1_000_000_000_000_000_000, "trillón", "trillones"),
        (1_000_000_000_000, "billón", "billones"),
        (1_000_000, "millón", "millones"),
    ];
    let mut s = String::new();
    let mut rest = n;
    for (scale, sing, plur) in SCALES {
        if rest >= scale {
            let k = rest / scale;
            if k == 1 {
                push(&mut s, "un");
            } else {
                push(&mut s, &cardinal_string(k, One::Short));
            }
            push(&mut s, if k == 1 { sing } else { plur });
            rest %= scale;
        }
    }
    if rest > 0 {
        below_million(rest, one, &mut s);
    }
    s
}

fn one_of(g: Gender) -> One {
    match g {
        Gender::Masculine => One::Short,
        Gender::Feminine => One::Fem,
        Gender::Neuter => One::Full,
    }
}

const ORD_UNITS: [&str; 10] = [
    "", "primer", "segund", "tercer", "cuart", "quint", "sext", "séptim", "octav", "noven",
];
const ORD_TENS: [&str; 10] = [
    "",
    "décim",
    "vigésim",
    "trigésim",
    "cuadragésim",
    "quincuagésim",
    "sexagésim",
    "septuagésim",
    "octogésim",
    "nonagésim",
];
const ORD_HUNDREDS: [&str; 10] = [
    "",
    "centésim",
    "ducentésim",
    "tricentésim",
    "cuadringentésim",
    "quingentésim",
    "sexcentésim",
    "septingentésim",
    "octingentésim",
    "noningentésim",
];

/// An ordinal stem with its ending: `primer` + `o`/`a`/`` (apocope).
fn ord_word(stem: &str, g: Gender, s: &mut String) {
    push(s, stem);
    match (g, stem) {
        (Gender::Feminine, _) => s.push('a'),
        (Gender::Neuter, "primer" | "tercer") => {}
        _ => s.push('o'),
    }
}

/// "vigésimo primero", "decimotercera"; cardinals from 1000 on.
fn ordinal_string(n: u64, g: Gender) -> String {
    if n == 0 || n >= 1000 {
        return cardinal_string(n, if g == Gender::Feminine { One::Fem } else { One::Full });
    }
    let mut s = String::new();
    let (h, t, u) = ((n / 100) as usize, (n / 10 % 10) as usize, (n % 10) as usize);
    if h > 0 {
        ord_word(ORD_HUNDREDS[h], g, &mut s);
    }
    match (t, u) {
        (1, 1) => ord_word("undécim", g, &mut s),
        (1, 2) => ord_word("duodécim", g, &mut s),
        (1, 3..) => {
            // One word: "decimotercero", "decimoséptima".
            let mut last = String::new();
            ord_word(ORD_UNITS[u], g, &mut last);
            push(&mut s, &format!("decimo{last}"));
        }
        _ => {
            if t > 0 {
                ord_word(ORD_TENS[t], g, &mut s);
            }
            if u > 0 {
                ord_word(ORD_UNITS[u], g, &mut s);
            }
        }
    }
    s
}

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

const fn ab(text: &'static str, expansion: &'static str, when: AbbrevWhen) -> Abbrev {
    Abbrev {
        text,
        expansion,
        when,
    }
}
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

    fn ordinal(&self, n: u64, gender: Gender, out: &mut Out) {
        out.word(&ordinal_string(n, gender));
    }

    fn ordinal_suffix(&self, _n: u64, rest: &str) -> Option<(usize, Gender)> {
        const SUFFIXES: [(&str, Gender); 8] = [
            (".er", Gender::Neuter),
            (".º", Gender::Masculine),
            (".ª", Gender::Feminine),
            ("er", Gender::Neuter),
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
        self.cardinal_gender(num, M, out);
        out.word(&if plural { name + "s" } else { name });
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
        let cents = match m.frac {
            Some(f) if f.len() == 2 && !names.minor_one.is_empty() => f.parse::<u64>().ok(),
            Some(f) if !f.is_empty() && f.bytes().all(|b| b == b'0') => Some(0),
            None => Some(0),
            _ => None,
        };
        let Some(c) = cents.filter(|_| m.scale.is_none()) else {
            if m.negative {
                out.word(WORDS.minus);
            }
            match m.frac {
                Some(f) if !f.is_empty() => self.decimal(m.int, f, out),
                _ => self.cardinal_gender(m.int, names.gender, out),
            }
            let plural = self.is_plural(m.int, m.frac);
            if let Some(s) = m.scale {
                out.word(self.scale_word(s, plural));
                if s != Scale::Thousand {
                    out.word("de");
                }
            }
            out.word(if plural { names.many } else { names.one });
            return;
        };
        if m.negative {
            out.word(WORDS.minus);
        }
        if m.int > 0 || c == 0 {
            self.cardinal_gender(m.int, names.gender, out);
            if m.int > 0 && m.int % 1_000_000 == 0 {
                out.word("de");
            }
            out.word(if m.int == 1 { names.one } else { names.many });
        }
        if c > 0 {
            if m.int > 0 {
                out.word("con");
            }
            self.cardinal_gender(c, names.minor_gender, out);
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
            self.cardinal(u64::from(minute), out);
            out.word(if minute == 1 { "minuto" } else { "minutos" });
            out.word("y");
            self.cardinal(u64::from(s), out);
            out.word(if s == 1 { "segundo" } else { "segundos" });
        } else if minute > 0 {
            out.word("y");
            self.cardinal(u64::from(minute), out);
        } else if t.meridiem.is_none() && (h == 0 || h >= 13) {
            out.word("horas");
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
            "capítulo", "parte", "tomo", "volumen", "libro", "acto", "escena", "sección", "anexo",
            "título", "artículo", "siglo", "fase", "nivel", "tipo", "clase", "canto", "salmo",
        ]
    }

    fn regnal_names(&self) -> &'static [&'static str] {
        &[
            "Felipe", "Fernando", "Alfonso", "Carlos", "Juan", "Pedro", "Enrique", "Sancho",
            "Jaime", "Ramiro", "Luis", "Pío", "Gregorio", "Benedicto", "León", "Clemente",
        ]
    }

    fn regnal(&self, n: u64, gender: Gender, out: &mut Out) {
        if n <= 10 {
            let g = if gender == Gender::Feminine { F } else { M };
            out.word(&ordinal_string(n, g));
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
