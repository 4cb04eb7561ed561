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
use super::readings::{
    day_part_time, money_with_de, regnal_ordinal_to_ten, suffix_at, word_is_one_of, DayPartClock,
};
use super::rules::{
    ab, cur, st, unit, Abbrev, AbbrevWhen::*, Currencies, Date, DateOrder, Gender, LanguageData,
    LanguageRules, Money, Out, Scale, ScaleToken, ScaleWords, Symbols, Time, UnitEntry, Words,
};

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

const M: Gender = Gender::Masculine;
const F: Gender = Gender::Feminine;

const SCALE_TOKENS: &[ScaleToken] = &[
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

const UNITS: &[UnitEntry] = &[
    unit("km", "quilômetro", "quilômetros", M),
    unit("m", "metro", "metros", M),
    unit("cm", "centímetro", "centímetros", M),
    unit("mm", "milímetro", "milímetros", M),
    unit("km²", "quilômetro quadrado", "quilômetros quadrados", M),
    unit("km2", "quilômetro quadrado", "quilômetros quadrados", M),
    unit("m²", "metro quadrado", "metros quadrados", M),
    unit("m2", "metro quadrado", "metros quadrados", M),
    unit("m³", "metro cúbico", "metros cúbicos", M),
    unit("m3", "metro cúbico", "metros cúbicos", M),
    unit("ha", "hectare", "hectares", M),
    unit("kg", "quilograma", "quilogramas", M),
    unit("g", "grama", "gramas", M),
    unit("mg", "miligrama", "miligramas", M),
    unit("t", "tonelada", "toneladas", F),
    unit("L", "litro", "litros", M),
    unit("l", "litro", "litros", M),
    unit("ml", "mililitro", "mililitros", M),
    unit("mL", "mililitro", "mililitros", M),
    unit("km/h", "quilômetro por hora", "quilômetros por hora", M),
    unit("m/s", "metro por segundo", "metros por segundo", M),
    unit("°C", "grau Celsius", "graus Celsius", M),
    unit("°F", "grau Fahrenheit", "graus Fahrenheit", M),
    unit("°", "grau", "graus", M),
    unit("%", "por cento", "por cento", M),
    unit("‰", "por mil", "por mil", M),
    unit("min", "minuto", "minutos", M),
    unit("s", "segundo", "segundos", M),
    unit("ms", "milissegundo", "milissegundos", M),
    unit("Hz", "hertz", "hertz", M),
    unit("kHz", "quilohertz", "quilohertz", M),
    unit("MHz", "mega-hertz", "mega-hertz", M),
    unit("GHz", "giga-hertz", "giga-hertz", M),
    unit("W", "watt", "watts", M),
    unit("kW", "quilowatt", "quilowatts", M),
    unit("kWh", "quilowatt-hora", "quilowatts-hora", M),
    unit("V", "volt", "volts", M),
    unit("KB", "quilobyte", "quilobytes", M),
    unit("kB", "quilobyte", "quilobytes", M),
    unit("MB", "megabyte", "megabytes", M),
    unit("GB", "gigabyte", "gigabytes", M),
    unit("TB", "terabyte", "terabytes", M),
];

const ABBREVIATIONS: &[Abbrev] = &[
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

/// The Portuguese clock: "quinze e trinta", "quinze horas", "três da tarde".
const CLOCK: DayPartClock = DayPartClock {
    hour: ("hora", "horas"),
    minute: ("minuto", "minutos"),
    second: ("segundo", "segundos"),
    before_minutes_with_seconds: ", ",
    on_the_hour: None,
    am_twelve: "da noite",
    am: "da manhã",
    pm_twelve: "da tarde",
    evening_from: 7,
    evening: "da noite",
    pm: "da tarde",
};

/// The Portuguese table.
static DATA: LanguageData = LanguageData {
    // `1.234.567` (Brazil), and the space of the SI and of Portugal (`10 000`); spaced
    // groups of nine digits or more are phone numbers (`spaced_phone`).
    group_separators: &['.', ' ', '\u{a0}', '\u{202f}', '\u{2009}'],
    decimal_separator: ',',
    // "três vírgula catorze"; longer decimals digit by digit.
    decimals_as_number: 2,
    words: Words {
        minus: "menos",
        plus: "mais",
        decimal_point: "vírgula",
        version: "versão",
        version_dot: "ponto",
        range_to: "a",
        and: "e",
    },
    // Brazilian mobiles: `98765-4321`.
    phone_group_max: 5,
    phone_long_groups: false,
    currencies: Currencies {
        dollar: cur("dólar", "dólares", "centavo", "centavos", M),
        euro: cur("euro", "euros", "centavo", "centavos", M),
        pound: cur("libra", "libras", "pêni", "pence", F),
        yen: cur("iene", "ienes", "", "", M),
        franc: cur("franco suíço", "francos suíços", "centavo", "centavos", M),
        real: cur("real", "reais", "centavo", "centavos", M),
    },
    scale_tokens: SCALE_TOKENS,
    scale_connectors: &["de"],
    scale_words: ScaleWords {
        thousand: ("mil", "mil"),
        million: ("milhão", "milhões"),
        billion: ("bilhão", "bilhões"),
        trillion: ("trilhão", "trilhões"),
    },
    units: UNITS,
    date_order: DateOrder::DayMonthYear,
    month_words: MONTH_WORDS,
    month_before_day: false,
    date_connectors: &["de"],
    time_separators: &[':'],
    hour_letter_times: true,
    abbreviations: ABBREVIATIONS,
    roman_triggers: &[
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
    ],
    regnal_names: &[
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
    ],
    symbols: Symbols {
        ampersand: "e",
        plus: "mais",
        equals: "igual a",
        at: "arroba",
        number_sign: "número",
        sharp: "sustenido",
        hashtag: "hashtag",
        times: "vezes",
        divide: "dividido por",
        plus_minus: "mais ou menos",
        about: "aproximadamente",
        section: "parágrafo",
        dot: "ponto",
        slash: "barra",
        dash: "hífen",
        underscore: "sublinhado",
        colon: "dois pontos",
        question: "interrogação",
        hash: "cerquilha",
        percent: "por cento",
        tilde: "til",
    },
};

impl LanguageRules for Portuguese {
    fn data(&self) -> &'static LanguageData {
        &DATA
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
        suffix_at(rest, &[(".º", M), (".ª", F), ("º", M), ("ª", F)])
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
        total >= 9 || word_is_one_of(prev_word, &TRIGGERS)
    }

    /// "dezenove reais e noventa e nove centavos", "um milhão de reais", "dois vírgula
    /// cinco milhões de reais", "cinco mil reais".
    fn money(&self, m: &Money<'_>, out: &mut Out) {
        money_with_de(self, m, "e", out);
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
        day_part_time(self, &CLOCK, t, out);
    }

    fn regnal_gender(&self, name: &str) -> Gender {
        if FEMININE_REGNAL.contains(&name) {
            F
        } else {
            M
        }
    }

    fn regnal(&self, n: u64, gender: Gender, out: &mut Out) {
        regnal_ordinal_to_ten(self, n, gender, out);
    }
}
