//! Portuguese rules, **Brazilian Portuguese** (pt-BR).
//!
//! Which variant: the model's configuration is named only "portuguese", and what its
//! training speech was is not documented here, so this is a choice, not a fact. Brazil
//! has by far the larger speaker base (over 200 million against about 10 million in
//! Portugal) and the large public Portuguese speech corpora are mostly Brazilian, so
//! the readings are Brazilian: "dezenove", "dezesseis", "dezessete" ("catorze", the
//! spelling of both variants, though Brazil also writes "quatorze"), "quilômetro",
//! "bilhão" = 10⁹ (short scale), "centavos" for the euro too, "primeiro de maio". A
//! European reader would say "dezanove", "quilómetro", "mil milhões", "cêntimos"; the
//! European ways of *writing* (`3.º`, `1.ª`) are read as well.
//!
//! Sources: the Acordo Ortográfico de 1990 (lower-case month names, `1.º`), the
//! *Manual de Redação da Presidência da República* (3rd ed., 2018: `R$ 19,99`, `15h30`,
//! `1º de janeiro`, `1.234.567`), Ciberdúvidas da Língua Portuguesa and the Priberam
//! dictionary (the "e" between groups, ordinals, `1,5 milhão`).
//!
//! - Numbers: `1.234.567` (dot between groups; a space too, as the SI and Portugal
//!   write it: `10 000`), decimal comma: `1,5` → "um vírgula
//!   cinco"; up to two decimals read as a number ("três vírgula catorze"), longer ones
//!   digit by digit. "e" inside a group ("cento e vinte e três") and before the last
//!   group when it is below 100 or whole hundreds ("mil e duzentos", "dois mil e vinte
//!   e seis", but "mil duzentos e trinta e quatro"); "cem" but "cento e um".
//! - Gender: "uma libra", "duas toneladas", "duzentas libras", "duas mil pessoas";
//!   counts of `milhão` are masculine. Plural from 2 on ("1,5 quilo", "1,5 milhão",
//!   "zero grau", as the Brazilian press manuals write).
//! - Ordinals: `1º`, `2ª`, `3.º`, `1.ª` → "primeiro", "segunda", "terceiro".
//! - Dates: day first; `3 de março de 2026`, `03/04/2026`; day 1 → "primeiro".
//! - Times: `15h30`, `15:30` → "quinze e trinta"; `15h` → "quinze horas"; hours are
//!   feminine ("uma e dez", "vinte e uma horas"); `0h` → "zero hora".
//! - Money: "dezenove reais e noventa e nove centavos", "um milhão de reais",
//!   `R$ 2,5 milhões` → "dois vírgula cinco milhões de reais", `R$ 5 mi`/`bi`.
//! - Roman numerals after a regnal name: ordinals up to ten ("Dom João sexto", "Dona
//!   Maria segunda"), cardinals above ("Luís catorze", "Bento dezesseis").
//! - Phone numbers: spaced digit groups are phone numbers (`912 345 678`, `+55 11
//!   98765 4321`), read digit by digit; groups of up to five digits (Brazilian mobiles,
//!   `(11) 98765-4321`).
//!
//! `D.` is read only before the names of monarchs ("Dom João", "Dona Maria"), never
//! alone (it also ends sentences: "vitamina D.").
//!
//! Not handled: `98765-4321` without area code or `+` (read as a range); `15h30min`
//! (left as written: the minutes are glued to `min`); the European readings above.

use super::pt_numbers::{cardinal_string, denominator, ordinal_string, ONES};
use super::rules::ab;
use super::rules::{
    Abbrev, AbbrevWhen::*, Currency, CurrencyNames, Date, DateOrder, Gender, LanguageRules,
    Meridiem, Money, Out, Scale, ScaleToken, Sym, Time, UnitEntry, Words,
};
use super::scan::{boundary_at, match_table};

/// The Portuguese rules (Brazilian).
pub(crate) struct Portuguese;

const MONTHS: [&str; 12] = [
    "janeiro",
    "fevereiro",
    "março",
    "abril",
    "maio",
    "junho",
    "julho",
    "agosto",
    "setembro",
    "outubro",
    "novembro",
    "dezembro",
];

const MONTH_WORDS: &[(&str, u8)] = &[
    ("janeiro", 1),
    ("fevereiro", 2),
    ("março", 3),
    ("abril", 4),
    ("maio", 5),
    ("junho", 6),
    ("julho", 7),
    ("agosto", 8),
    ("setembro", 9),
    ("outubro", 10),
    ("novembro", 11),
    ("dezembro", 12),
    ("Janeiro", 1),
    ("Fevereiro", 2),
    ("Março", 3),
    ("Abril", 4),
    ("Maio", 5),
    ("Junho", 6),
    ("Julho", 7),
    ("Agosto", 8),
    ("Setembro", 9),
    ("Outubro", 10),
    ("Novembro", 11),
    ("Dezembro", 12),
    ("jan.", 1),
    ("fev.", 2),
    ("mar.", 3),
    ("abr.", 4),
    ("jun.", 6),
    ("jul.", 7),
    ("ago.", 8),
    ("set.", 9),
    ("out.", 10),
    ("nov.", 11),
    ("dez.", 12),
];

static WORDS: Words = Words {
    minus: "menos",
    plus: "mais",
    decimal_point: "vírgula",
    version: "versão",
    version_dot: "ponto",
    range_to: "a",
    and: "e",
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
static EURO: CurrencyNames = cur("euro", "euros", "centavo", "centavos", M);
static POUND: CurrencyNames = cur("libra", "libras", "pêni", "pence", F);
static YEN: CurrencyNames = cur("iene", "ienes", "", "", M);
static FRANC: CurrencyNames = cur("franco suíço", "francos suíços", "centavo", "centavos", M);
static REAL: CurrencyNames = cur("real", "reais", "centavo", "centavos", M);

const fn st(text: &'static str, scale: Scale, attached_only: bool) -> ScaleToken {
    ScaleToken {
        text,
        scale,
        attached_only,
    }
}
static SCALE_TOKENS: [ScaleToken; 10] = [
    st("milhões", Scale::Million, false),
    st("milhão", Scale::Million, false),
    st("bilhões", Scale::Billion, false),
    st("bilhão", Scale::Billion, false),
    st("trilhões", Scale::Trillion, false),
    st("trilhão", Scale::Trillion, false),
    st("mil", Scale::Thousand, false),
    st("mi", Scale::Million, false),
    st("bi", Scale::Billion, false),
    st("tri", Scale::Trillion, false),
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
    u("km", "quilômetro", "quilômetros", M),
    u("m", "metro", "metros", M),
    u("cm", "centímetro", "centímetros", M),
    u("mm", "milímetro", "milímetros", M),
    u("km²", "quilômetro quadrado", "quilômetros quadrados", M),
    u("km2", "quilômetro quadrado", "quilômetros quadrados", M),
    u("m²", "metro quadrado", "metros quadrados", M),
    u("m2", "metro quadrado", "metros quadrados", M),
    u("m³", "metro cúbico", "metros cúbicos", M),
    u("m3", "metro cúbico", "metros cúbicos", M),
    u("ha", "hectare", "hectares", M),
    u("kg", "quilograma", "quilogramas", M),
    u("g", "grama", "gramas", M),
    u("mg", "miligrama", "miligramas", M),
    u("t", "tonelada", "toneladas", F),
    u("L", "litro", "litros", M),
    u("l", "litro", "litros", M),
    u("ml", "mililitro", "mililitros", M),
    u("mL", "mililitro", "mililitros", M),
    u("km/h", "quilômetro por hora", "quilômetros por hora", M),
    u("m/s", "metro por segundo", "metros por segundo", M),
    u("°C", "grau Celsius", "graus Celsius", M),
    u("°F", "grau Fahrenheit", "graus Fahrenheit", M),
    u("°", "grau", "graus", M),
    u("%", "por cento", "por cento", M),
    u("‰", "por mil", "por mil", M),
    u("min", "minuto", "minutos", M),
    u("s", "segundo", "segundos", M),
    u("ms", "milissegundo", "milissegundos", M),
    u("Hz", "hertz", "hertz", M),
    u("kHz", "quilohertz", "quilohertz", M),
    u("MHz", "mega-hertz", "mega-hertz", M),
    u("GHz", "giga-hertz", "giga-hertz", M),
    u("W", "watt", "watts", M),
    u("kW", "quilowatt", "quilowatts", M),
    u("kWh", "quilowatt-hora", "quilowatts-hora", M),
    u("V", "volt", "volts", M),
    u("KB", "quilobyte", "quilobytes", M),
    u("kB", "quilobyte", "quilobytes", M),
    u("MB", "megabyte", "megabytes", M),
    u("GB", "gigabyte", "gigabytes", M),
    u("TB", "terabyte", "terabytes", M),
];

static ABBREVIATIONS: &[Abbrev] = &[
    ab("Sr.", "senhor", Always),
    ab("Sra.", "senhora", Always),
    ab("Sr.ª", "senhora", Always),
    ab("Srta.", "senhorita", Always),
    ab("Srs.", "senhores", Always),
    ab("Dr.", "doutor", Always),
    ab("Dra.", "doutora", Always),
    ab("Dr.ª", "doutora", Always),
    ab("Prof.", "professor", Always),
    ab("Profa.", "professora", Always),
    ab("Prof.ª", "professora", Always),
    ab("Eng.", "engenheiro", Always),
    ab("Exmo.", "excelentíssimo", Always),
    ab("Exma.", "excelentíssima", Always),
    ab("V. Exa.", "Vossa Excelência", Always),
    ab("V. Ex.ª", "Vossa Excelência", Always),
    ab("p. ex.", "por exemplo", Always),
    ab("p.ex.", "por exemplo", Always),
    ab("etc.", "etcétera", MaybeFinal),
    ab("Ltda.", "limitada", MaybeFinal),
    ab("Cia.", "companhia", MaybeFinal),
    ab("aprox.", "aproximadamente", Always),
    ab("nº", "número", BeforeNumber),
    ab("n.º", "número", BeforeNumber),
    ab("Nº", "número", BeforeNumber),
    ab("N.º", "número", BeforeNumber),
    ab("núm.", "número", BeforeNumber),
    ab("pág.", "página", BeforeNumber),
    ab("págs.", "páginas", BeforeNumber),
    ab("p.", "página", BeforeNumber),
    ab("cap.", "capítulo", BeforeNumber),
    ab("tel.", "telefone", BeforeNumber),
    ab("Tel.", "Telefone", BeforeNumber),
    ab("vol.", "volume", BeforeNumber),
    ab("Av.", "Avenida", BeforeName),
    ab("Sto.", "Santo", BeforeName),
    ab("Sta.", "Santa", BeforeName),
    // `D.` is "Dona" before a woman's name, "Dom" before a man's; only before the names
    // of the monarchs (`D.` is also a letter ending a sentence: "vitamina D. Ela").
    ab("D. João", "Dom João", Always),
    ab("D. Pedro", "Dom Pedro", Always),
    ab("D. Manuel", "Dom Manuel", Always),
    ab("D. Afonso", "Dom Afonso", Always),
    ab("D. Sebastião", "Dom Sebastião", Always),
    ab("D. Dinis", "Dom Dinis", Always),
    ab("D. Duarte", "Dom Duarte", Always),
    ab("D. Fernando", "Dom Fernando", Always),
    ab("D. Henrique", "Dom Henrique", Always),
    ab("D. José", "Dom José", Always),
    ab("D. Luís", "Dom Luís", Always),
    ab("D. Carlos", "Dom Carlos", Always),
    ab("D. Filipe", "Dom Filipe", Always),
    ab("D. Maria", "Dona Maria", Always),
    ab("D. Amélia", "Dona Amélia", Always),
    ab("D. Leonor", "Dona Leonor", Always),
    ab("D. Isabel", "Dona Isabel", Always),
    ab("D. Beatriz", "Dona Beatriz", Always),
    ab("D. Teresa", "Dona Teresa", Always),
    ab("D. Catarina", "Dona Catarina", Always),
    ab("D. Filipa", "Dona Filipa", Always),
    ab("D. Ana", "Dona Ana", Always),
];

/// Female regnal names (the regnal ordinal agrees: "Maria segunda").
const FEMININE_REGNAL: [&str; 7] = [
    "Maria", "Isabel", "Leonor", "Beatriz", "Teresa", "Catarina", "Amélia",
];

impl LanguageRules for Portuguese {
    /// `1.234.567` (Brazil), and the space of the SI and of Portugal (`10 000`); spaced
    /// groups of nine digits or more are phone numbers ([`Self::spaced_phone`]).
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
        out.word(&cardinal_string(n, M));
    }

    fn cardinal_gender(&self, n: u64, gender: Gender, out: &mut Out) {
        out.word(&cardinal_string(n, gender));
    }

    fn ordinal(&self, n: u64, gender: Gender, out: &mut Out) {
        out.word(&ordinal_string(n, gender));
    }

    fn ordinal_suffix(&self, _n: u64, rest: &str) -> Option<(usize, Gender)> {
        const SUFFIXES: [(&str, Gender); 4] = [(".º", M), (".ª", F), ("º", M), ("ª", F)];
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
            out.word("meio");
            return;
        }
        self.cardinal(num, out);
        match denominator(den) {
            Some((one, many)) => out.word(if num == 1 { one } else { many }),
            None => {
                self.cardinal(den, out);
                out.word("avos");
            }
        }
    }

    fn is_plural(&self, int: u64, _frac: Option<&str>) -> bool {
        int >= 2
    }

    /// Spaced digit groups of nine digits or more are phone numbers (`912 345 678`,
    /// `11 98765 4321`: Portugal's numbers have nine digits, Brazil's ten or eleven with
    /// the area code), and any after a word such as `telefone`; shorter ones are
    /// thousands (`1 234 567`).
    fn spaced_phone(&self, groups: &[&str], prev_word: Option<&str>) -> bool {
        const TRIGGERS: [&str; 7] = [
            "telefone",
            "telefones",
            "tel",
            "celular",
            "telemóvel",
            "fax",
            "whatsapp",
        ];
        let total: usize = groups.iter().map(|g| g.len()).sum();
        total >= 9 || prev_word.is_some_and(|w| TRIGGERS.contains(&w.to_lowercase().as_str()))
    }

    fn phone_group_max(&self) -> usize {
        5
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
            (Scale::Million, false) => "milhão",
            (Scale::Million, true) => "milhões",
            (Scale::Billion, false) => "bilhão",
            (Scale::Billion, true) => "bilhões",
            (Scale::Trillion, false) => "trilhão",
            (Scale::Trillion, true) => "trilhões",
        }
    }

    /// "dezenove reais e noventa e nove centavos", "um milhão de reais", "dois vírgula
    /// cinco milhões de reais", "cinco mil reais".
    fn money(&self, m: &Money<'_>, out: &mut Out) {
        let names = self.currency(m.currency);
        if m.negative {
            out.word(WORDS.minus);
        }
        // No decimals: a whole amount, read as one with no hundredths.
        let cents = match m.frac {
            None => Some(0),
            Some(_) => m.cents(names),
        };
        let Some(c) = cents.filter(|_| m.scale.is_none()) else {
            match m.frac {
                Some(f) if !f.is_empty() => self.decimal(m.int, f, out),
                // "mil reais", not "um mil".
                _ if m.int == 1 && m.scale == Some(Scale::Thousand) => {}
                _ => self.cardinal_gender(m.int, names.gender, out),
            }
            let plural = self.is_plural(m.int, m.frac);
            if let Some(s) = m.scale {
                out.word(self.scale_word(s, plural));
                if s != Scale::Thousand {
                    out.word("de");
                }
                out.word(names.many);
            } else {
                out.word(if plural { names.many } else { names.one });
            }
            return;
        };
        if m.int > 0 || c == 0 {
            self.cardinal_gender(m.int, names.gender, out);
            if m.int > 0 && m.int.is_multiple_of(1_000_000) {
                out.word("de");
            }
            out.word(if m.int == 1 { names.one } else { names.many });
        }
        if c > 0 {
            if m.int > 0 {
                out.word("e");
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
        &["de"]
    }

    fn date(&self, d: &Date<'_>, out: &mut Out) {
        if d.day == 1 {
            out.word("primeiro");
        } else {
            self.cardinal(u64::from(d.day), out);
        }
        out.word("de");
        out.word(MONTHS[usize::from(d.month - 1)]);
        if let Some(y) = d.year {
            out.word("de");
            self.cardinal(y, out);
        }
    }

    fn time(&self, t: &Time, out: &mut Out) {
        let h = u64::from(t.hour);
        out.word(&cardinal_string(h, F));
        let minute = t.minute.unwrap_or(0);
        let hours = if h < 2 { "hora" } else { "horas" };
        if let Some(s) = t.second {
            out.word(hours);
            out.raw(", ");
            self.cardinal(u64::from(minute), out);
            out.word(if minute == 1 { "minuto" } else { "minutos" });
            out.word("e");
            self.cardinal(u64::from(s), out);
            out.word(if s == 1 { "segundo" } else { "segundos" });
        } else if minute > 0 {
            out.word("e");
            self.cardinal(u64::from(minute), out);
        } else if t.meridiem.is_none() {
            out.word(hours);
        }
        match (t.meridiem, t.hour) {
            (Some(Meridiem::Am), 12) => out.word("da noite"),
            (Some(Meridiem::Am), _) => out.word("da manhã"),
            (Some(Meridiem::Pm), 12) => out.word("da tarde"),
            (Some(Meridiem::Pm), 7..=11) => out.word("da noite"),
            (Some(Meridiem::Pm), _) => out.word("da tarde"),
            (None, _) => {}
        }
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
            "volume",
            "livro",
            "ato",
            "cena",
            "seção",
            "secção",
            "anexo",
            "título",
            "artigo",
            "século",
            "fase",
            "nível",
            "tipo",
            "classe",
            "canto",
            "salmo",
        ]
    }

    fn regnal_names(&self) -> &'static [&'static str] {
        &[
            "João",
            "Pedro",
            "Manuel",
            "Afonso",
            "Sebastião",
            "Dinis",
            "Duarte",
            "Fernando",
            "Henrique",
            "José",
            "Luís",
            "Filipe",
            "Carlos",
            "Bento",
            "Pio",
            "Leão",
            "Gregório",
            "Clemente",
            "Inocêncio",
            "Paulo",
            "Francisco",
            "Maria",
            "Isabel",
            "Leonor",
            "Beatriz",
            "Teresa",
            "Catarina",
            "Amélia",
            "Eduardo",
            "Guilherme",
            "Jorge",
            "Henriqueta",
        ]
    }

    fn regnal_gender(&self, name: &str) -> Gender {
        if FEMININE_REGNAL.contains(&name) {
            F
        } else {
            M
        }
    }

    fn regnal(&self, n: u64, gender: Gender, out: &mut Out) {
        if n <= 10 {
            out.word(&ordinal_string(n, gender));
        } else {
            self.cardinal(n, out);
        }
    }

    fn symbol(&self, s: Sym) -> &'static str {
        match s {
            Sym::Ampersand => "e",
            Sym::Plus => "mais",
            Sym::Equals => "igual a",
            Sym::At => "arroba",
            Sym::NumberSign => "número",
            Sym::Sharp => "sustenido",
            Sym::Hashtag => "hashtag",
            Sym::Times => "vezes",
            Sym::Divide => "dividido por",
            Sym::PlusMinus => "mais ou menos",
            Sym::About => "aproximadamente",
            Sym::Section => "parágrafo",
            Sym::Dot => "ponto",
            Sym::Slash => "barra",
            Sym::Dash => "hífen",
            Sym::Underscore => "sublinhado",
            Sym::Colon => "dois pontos",
            Sym::Question => "interrogação",
            Sym::Hash => "cerquilha",
            Sym::Percent => "por cento",
            Sym::Tilde => "til",
        }
    }

    fn dyn_self(&self) -> &dyn LanguageRules {
        self
    }
}
