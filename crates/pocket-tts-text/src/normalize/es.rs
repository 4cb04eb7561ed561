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
use super::readings::{
    day_part_time, money_with_de, regnal_ordinal_to_ten, suffix_at, word_is_one_of, DayPartClock,
};
use super::rules::{
    ab, cur, default_meridiem_at, st, unit, Abbrev, AbbrevWhen::*, Currencies, Date, DateOrder,
    Gender, LanguageData, LanguageRules, Meridiem, Money, Out, Scale, ScaleToken, ScaleWords,
    Symbols, Time, UnitEntry, Words,
};
use super::scan::boundary_at;

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

const M: Gender = Gender::Masculine;
const F: Gender = Gender::Feminine;

const SCALE_TOKENS: &[ScaleToken] = &[
    st("mil millones", Scale::Billion, false),
    st("billones", Scale::Trillion, false),
    st("billón", Scale::Trillion, false),
    st("millones", Scale::Million, false),
    st("millón", Scale::Million, false),
    st("mil", Scale::Thousand, false),
    st("M", Scale::Million, true),
    st("k", Scale::Thousand, true),
];

const UNITS: &[UnitEntry] = &[
    unit("km", "kilómetro", "kilómetros", M),
    unit("m", "metro", "metros", M),
    unit("cm", "centímetro", "centímetros", M),
    unit("mm", "milímetro", "milímetros", M),
    unit("km²", "kilómetro cuadrado", "kilómetros cuadrados", M),
    unit("km2", "kilómetro cuadrado", "kilómetros cuadrados", M),
    unit("m²", "metro cuadrado", "metros cuadrados", M),
    unit("m2", "metro cuadrado", "metros cuadrados", M),
    unit("m³", "metro cúbico", "metros cúbicos", M),
    unit("m3", "metro cúbico", "metros cúbicos", M),
    unit("ha", "hectárea", "hectáreas", F),
    unit("kg", "kilogramo", "kilogramos", M),
    unit("g", "gramo", "gramos", M),
    unit("mg", "miligramo", "miligramos", M),
    unit("t", "tonelada", "toneladas", F),
    unit("L", "litro", "litros", M),
    unit("l", "litro", "litros", M),
    unit("ml", "mililitro", "mililitros", M),
    unit("mL", "mililitro", "mililitros", M),
    unit("cl", "centilitro", "centilitros", M),
    unit("km/h", "kilómetro por hora", "kilómetros por hora", M),
    unit("m/s", "metro por segundo", "metros por segundo", M),
    unit("°C", "grado Celsius", "grados Celsius", M),
    unit("°F", "grado Fahrenheit", "grados Fahrenheit", M),
    unit("°", "grado", "grados", M),
    unit("%", "por ciento", "por ciento", Gender::Neuter),
    unit("‰", "por mil", "por mil", Gender::Neuter),
    unit("min", "minuto", "minutos", M),
    unit("s", "segundo", "segundos", M),
    unit("ms", "milisegundo", "milisegundos", M),
    unit("Hz", "hercio", "hercios", M),
    unit("kHz", "kilohercio", "kilohercios", M),
    unit("MHz", "megahercio", "megahercios", M),
    unit("GHz", "gigahercio", "gigahercios", M),
    unit("W", "vatio", "vatios", M),
    unit("kW", "kilovatio", "kilovatios", M),
    unit("kWh", "kilovatio hora", "kilovatios hora", M),
    unit("V", "voltio", "voltios", M),
    unit("KB", "kilobyte", "kilobytes", M),
    unit("kB", "kilobyte", "kilobytes", M),
    unit("MB", "megabyte", "megabytes", M),
    unit("GB", "gigabyte", "gigabytes", M),
    unit("TB", "terabyte", "terabytes", M),
];

const ABBREVIATIONS: &[Abbrev] = &[
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

/// The Spanish clock (see the module docs for the convention): "quince y treinta",
/// "nueve en punto", "tres de la tarde".
const CLOCK: DayPartClock = DayPartClock {
    hour: ("hora", "horas"),
    minute: ("minuto", "minutos"),
    second: ("segundo", "segundos"),
    before_minutes_with_seconds: "",
    on_the_hour: Some("en punto"),
    am_twelve: "de la noche",
    am: "de la mañana",
    pm_twelve: "del mediodía",
    evening_from: 8,
    evening: "de la noche",
    pm: "de la tarde",
};

/// The Spanish table.
static DATA: LanguageData = LanguageData {
    group_separators: &['.', ' ', '\u{a0}', '\u{202f}', '\u{2009}'],
    decimal_separator: ',',
    // "tres coma catorce"; longer decimals digit by digit.
    decimals_as_number: 2,
    words: Words {
        minus: "menos",
        plus: "más",
        decimal_point: "coma",
        version: "versión",
        version_dot: "punto",
        range_to: "a",
        and: "y",
    },
    phone_group_max: 4,
    phone_long_groups: false,
    currencies: Currencies {
        dollar: cur("dólar", "dólares", "centavo", "centavos", M),
        euro: cur("euro", "euros", "céntimo", "céntimos", M),
        pound: cur("libra", "libras", "penique", "peniques", F),
        yen: cur("yen", "yenes", "", "", M),
        franc: cur("franco suizo", "francos suizos", "céntimo", "céntimos", M),
        real: cur("real", "reales", "centavo", "centavos", M),
    },
    scale_tokens: SCALE_TOKENS,
    scale_connectors: &["de"],
    scale_words: ScaleWords {
        thousand: ("mil", "mil"),
        million: ("millón", "millones"),
        billion: ("mil millones", "mil millones"),
        trillion: ("billón", "billones"),
    },
    units: UNITS,
    date_order: DateOrder::DayMonthYear,
    month_words: MONTH_WORDS,
    month_before_day: false,
    date_connectors: &["de", "del"],
    time_separators: &[':'],
    hour_letter_times: true,
    abbreviations: ABBREVIATIONS,
    roman_triggers: &[
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
    ],
    regnal_names: &[
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
    ],
    symbols: Symbols {
        ampersand: "y",
        plus: "más",
        equals: "igual a",
        at: "arroba",
        number_sign: "número",
        sharp: "sostenido",
        hashtag: "etiqueta",
        times: "por",
        divide: "entre",
        plus_minus: "más o menos",
        about: "aproximadamente",
        section: "sección",
        dot: "punto",
        slash: "barra",
        dash: "guion",
        underscore: "guion bajo",
        colon: "dos puntos",
        question: "interrogación",
        hash: "almohadilla",
        percent: "por ciento",
        tilde: "virgulilla",
    },
};

impl LanguageRules for Spanish {
    fn data(&self) -> &'static LanguageData {
        &DATA
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
        suffix_at(
            rest,
            &[
                (".º", M),
                (".ª", F),
                ("º", M),
                ("ª", F),
                (".o", M),
                (".a", F),
            ],
        )
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
        spanish || word_is_one_of(prev_word, &TRIGGERS)
    }

    /// "diecinueve euros con noventa y nueve céntimos", "un millón de euros".
    fn money(&self, m: &Money<'_>, out: &mut Out) {
        money_with_de(self, m, "con", out);
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
        day_part_time(self, &CLOCK, t, out);
    }

    fn meridiem_at(&self, rest: &str) -> Option<(Meridiem, usize)> {
        for (f, m) in [("a. m.", Meridiem::Am), ("p. m.", Meridiem::Pm)] {
            if rest.starts_with(f) {
                return Some((m, f.len()));
            }
        }
        default_meridiem_at(rest)
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
        regnal_ordinal_to_ten(self, n, gender, out);
    }
}
