//! Italian rules, after the Accademia della Crusca's « consulenza linguistica »
//! (« Quarantaquattro gatti in fila per sei col resto di due, o di quando e come scrivere
//! i numeri in lettere », which follows Serianni's *Grammatica italiana*, VI) and
//! Treccani's *Enciclopedia dell'Italiano* (« numerali [prontuario] », 2011). Number
//! words are in `it_numbers.rs`.
//!
//! - Numbers: `.` groups thousands, `,` marks decimals (`1.234.567,89`); cardinals are
//!   one word below a million (`duemilaventisei`), `milioni` and `miliardi` apart.
//!   Decimals up to three digits are read as a number (`3,14` « tre virgola
//!   quattordici », `3,05` « tre virgola zero cinque »), longer ones digit by digit.
//! - `uno` agrees before a unit or a currency: `un chilometro`, `una tonnellata`,
//!   `un'ora`; its compounds are invariable (`ventuno chilometri`).
//! - Ordinals `1°`, `1º`, `2ª` (« primo », « seconda »); `°` is an ordinal only before a
//!   word (`il 5° piano`), not before a unit letter (`5° C`, `5°C`: degrees) nor at the
//!   end or before a small function word (`un angolo di 90°`, `90° e`); `º` (the
//!   ordinal indicator) is an ordinal except in `5ºC`, `5º C`. So `il 2° e il 3°` is
//!   read as degrees: nothing but the following word decides.
//! - Dates day first: `03/04/2026` « tre aprile duemilaventisei », the first of the
//!   month is « primo » (`1° maggio`, `1 maggio`). Times `15:30`, `15.30` « quindici e
//!   trenta ».
//! - Money: `€ 19,99` and `19,99 €` « diciannove euro e novantanove centesimi » (`euro`
//!   is invariable), `2,5 milioni di euro`.
//! - Roman numerals are ordinals: `Luigi XIV` « Luigi quattordicesimo », `capitolo IV`
//!   « capitolo quarto », `XIX secolo` « diciannovesimo secolo », `Elisabetta II`
//!   « Elisabetta seconda ».
//! - Phone numbers digit by digit (`06 1234 5678`).
//!
//! Not handled: the gender of most nouns after a plain `1` (`1 tenda` is « uno tenda »;
//! a short list of common nouns agrees: `1 ora` « un'ora », `1 giorno` « un giorno »),
//! and prepositions before a time
//! (`alle 1` is not turned into « all'una »); `3.11` is read as a time (« tre e
//! undici »), as `15.30` is, except after `versione`, `release`, `build`,
//! `aggiornamento` or `patch` (`Python 3.11` stays a time: write `v3.11`); ranges
//! read `10-20` as « dieci a venti » (Italian says « da dieci a venti »: the `da` is
//! not added); `02 12345678` (a prefix, then the number in one block) is read as a
//! number after the prefix, not digit by digit.

use super::it_numbers::{
    cardinal_agreeing, cardinal_string, fraction_string, ordinal_string, UNITS,
};
use super::rules::{
    default_money, say_amount, Abbrev, AbbrevWhen, AbbrevWhen::*, Currency, CurrencyNames, Date,
    DateOrder, Gender, LanguageRules, Meridiem, Money, Out, Scale, ScaleToken, Sym, Time,
    UnitEntry, Words,
};
use super::scan::{boundary_at, char_at, is_inline_space, is_letter, match_table, value};

/// The Italian rules.
pub(crate) struct Italian;

const MONTHS: [&str; 12] = [
    "gennaio",
    "febbraio",
    "marzo",
    "aprile",
    "maggio",
    "giugno",
    "luglio",
    "agosto",
    "settembre",
    "ottobre",
    "novembre",
    "dicembre",
];

const MONTH_WORDS: &[(&str, u8)] = &[
    ("gennaio", 1),
    ("febbraio", 2),
    ("marzo", 3),
    ("aprile", 4),
    ("maggio", 5),
    ("giugno", 6),
    ("luglio", 7),
    ("agosto", 8),
    ("settembre", 9),
    ("ottobre", 10),
    ("novembre", 11),
    ("dicembre", 12),
    ("Gennaio", 1),
    ("Febbraio", 2),
    ("Marzo", 3),
    ("Aprile", 4),
    ("Maggio", 5),
    ("Giugno", 6),
    ("Luglio", 7),
    ("Agosto", 8),
    ("Settembre", 9),
    ("Ottobre", 10),
    ("Novembre", 11),
    ("Dicembre", 12),
    ("gen.", 1),
    ("feb.", 2),
    ("febbr.", 2),
    ("mar.", 3),
    ("apr.", 4),
    ("mag.", 5),
    ("giu.", 6),
    ("lug.", 7),
    ("ago.", 8),
    ("set.", 9),
    ("sett.", 9),
    ("ott.", 10),
    ("nov.", 11),
    ("dic.", 12),
];

static WORDS: Words = Words {
    minus: "meno",
    plus: "più",
    decimal_point: "virgola",
    version: "versione",
    version_dot: "punto",
    range_to: "a",
    and: "e",
};

const M: Gender = Gender::Masculine;
const F: Gender = Gender::Feminine;

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
static DOLLAR: CurrencyNames = cur("dollaro", "dollari", ("centesimo", "centesimi"), M);
static EURO: CurrencyNames = cur("euro", "euro", ("centesimo", "centesimi"), M);
static POUND: CurrencyNames = cur("sterlina", "sterline", ("penny", "pence"), F);
static YEN: CurrencyNames = cur("yen", "yen", ("", ""), M);
static FRANC: CurrencyNames = cur(
    "franco svizzero",
    "franchi svizzeri",
    ("centesimo", "centesimi"),
    M,
);
static REAL: CurrencyNames = cur(
    "real brasiliano",
    "real brasiliani",
    ("centavo", "centavos"),
    M,
);

const fn st(text: &'static str, scale: Scale, attached_only: bool) -> ScaleToken {
    ScaleToken {
        text,
        scale,
        attached_only,
    }
}
static SCALE_TOKENS: [ScaleToken; 10] = [
    st("miliardi", Scale::Billion, false),
    st("miliardo", Scale::Billion, false),
    st("milioni", Scale::Million, false),
    st("milione", Scale::Million, false),
    st("mila", Scale::Thousand, false),
    st("mld", Scale::Billion, false),
    st("mln", Scale::Million, false),
    st("Mld", Scale::Billion, false),
    st("M", Scale::Million, true),
    st("k", Scale::Thousand, true),
];

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
    u("km", "chilometro", "chilometri", M),
    u("m", "metro", "metri", M),
    u("cm", "centimetro", "centimetri", M),
    u("mm", "millimetro", "millimetri", M),
    u("km²", "chilometro quadrato", "chilometri quadrati", M),
    u("km2", "chilometro quadrato", "chilometri quadrati", M),
    u("m²", "metro quadrato", "metri quadrati", M),
    u("m2", "metro quadrato", "metri quadrati", M),
    u("mq", "metro quadrato", "metri quadrati", M),
    u("m³", "metro cubo", "metri cubi", M),
    u("m3", "metro cubo", "metri cubi", M),
    u("mc", "metro cubo", "metri cubi", M),
    u("kg", "chilogrammo", "chilogrammi", M),
    u("g", "grammo", "grammi", M),
    u("mg", "milligrammo", "milligrammi", M),
    u("t", "tonnellata", "tonnellate", F),
    u("q", "quintale", "quintali", M),
    u("L", "litro", "litri", M),
    u("l", "litro", "litri", M),
    u("ml", "millilitro", "millilitri", M),
    u("mL", "millilitro", "millilitri", M),
    u("cl", "centilitro", "centilitri", M),
    u("km/h", "chilometro orario", "chilometri orari", M),
    u("m/s", "metro al secondo", "metri al secondo", M),
    u("°C", "grado Celsius", "gradi Celsius", M),
    u("° C", "grado Celsius", "gradi Celsius", M),
    u("ºC", "grado Celsius", "gradi Celsius", M),
    u("º C", "grado Celsius", "gradi Celsius", M),
    u("ºF", "grado Fahrenheit", "gradi Fahrenheit", M),
    u("º F", "grado Fahrenheit", "gradi Fahrenheit", M),
    u("°F", "grado Fahrenheit", "gradi Fahrenheit", M),
    u("° F", "grado Fahrenheit", "gradi Fahrenheit", M),
    u("°", "grado", "gradi", M),
    u("%", "per cento", "per cento", M),
    u("‰", "per mille", "per mille", M),
    u("h", "ora", "ore", F),
    u("min", "minuto", "minuti", M),
    u("s", "secondo", "secondi", M),
    u("ms", "millisecondo", "millisecondi", M),
    u("Hz", "hertz", "hertz", M),
    u("kHz", "chilohertz", "chilohertz", M),
    u("MHz", "megahertz", "megahertz", M),
    u("GHz", "gigahertz", "gigahertz", M),
    u("W", "watt", "watt", M),
    u("kW", "chilowatt", "chilowatt", M),
    u("kWh", "chilowattora", "chilowattora", M),
    u("V", "volt", "volt", M),
    u("kB", "kilobyte", "kilobyte", M),
    u("KB", "kilobyte", "kilobyte", M),
    u("MB", "megabyte", "megabyte", M),
    u("GB", "gigabyte", "gigabyte", M),
    u("TB", "terabyte", "terabyte", M),
    u("Mbit/s", "megabit al secondo", "megabit al secondo", M),
];

const fn ab(text: &'static str, expansion: &'static str, when: AbbrevWhen) -> Abbrev {
    Abbrev {
        text,
        expansion,
        when,
    }
}
static ABBREVIATIONS: &[Abbrev] = &[
    // Titles before a name (the truncated forms: « il signor Rossi »).
    ab("Sig.", "signor", BeforeName),
    ab("sig.", "signor", BeforeName),
    ab("Sig.ra", "signora", Always),
    ab("sig.ra", "signora", Always),
    ab("Sig.na", "signorina", Always),
    ab("Sigg.", "signori", BeforeName),
    ab("Sig.ri", "signori", Always),
    ab("Dott.", "dottor", BeforeName),
    ab("dott.", "dottor", BeforeName),
    ab("Dr.", "dottor", BeforeName),
    ab("Dott.ssa", "dottoressa", Always),
    ab("dott.ssa", "dottoressa", Always),
    ab("Dr.ssa", "dottoressa", Always),
    ab("Prof.", "professor", BeforeName),
    ab("prof.", "professor", BeforeName),
    ab("Prof.ssa", "professoressa", Always),
    ab("prof.ssa", "professoressa", Always),
    ab("Ing.", "ingegner", BeforeName),
    ab("Avv.", "avvocato", BeforeName),
    ab("Arch.", "architetto", BeforeName),
    ab("Geom.", "geometra", BeforeName),
    ab("Rag.", "ragionier", BeforeName),
    ab("On.", "onorevole", BeforeName),
    ab("Mons.", "monsignor", BeforeName),
    ab("Egr.", "egregio", BeforeName),
    ab("Gent.mo", "gentilissimo", Always),
    ab("Gent.ma", "gentilissima", Always),
    ab("Spett.", "spettabile", BeforeName),
    // Words.
    ab("ecc.", "eccetera", MaybeFinal),
    ab("etc.", "eccetera", MaybeFinal),
    ab("p. es.", "per esempio", Always),
    ab("p.es.", "per esempio", Always),
    ab("ad es.", "ad esempio", Always),
    ab("es.", "esempio", Always),
    ab("Es.", "esempio", Always),
    ab("cfr.", "confronta", Always),
    ab("tel.", "telefono", Always),
    ab("Tel.", "telefono", Always),
    ab("cell.", "cellulare", Always),
    ab("a.C.", "avanti Cristo", MaybeFinal),
    ab("d.C.", "dopo Cristo", MaybeFinal),
    ab("c.so", "corso", Always),
    ab("C.so", "corso", Always),
    ab("v.le", "viale", Always),
    ab("V.le", "viale", Always),
    ab("p.zza", "piazza", Always),
    ab("P.zza", "piazza", Always),
    ab("cap.", "capitolo", Always),
    // Before a number.
    ab("pag.", "pagina", BeforeNumber),
    ab("pagg.", "pagine", BeforeNumber),
    ab("pp.", "pagine", BeforeNumber),
    ab("p.", "pagina", BeforeNumber),
    ab("n.", "numero", BeforeNumber),
    ab("nn.", "numeri", BeforeNumber),
    ab("nr.", "numero", BeforeNumber),
    ab("n°", "numero", BeforeNumber),
    ab("nº", "numero", BeforeNumber),
    ab("N.", "numero", BeforeNumber),
    ab("vol.", "volume", BeforeNumber),
    ab("art.", "articolo", BeforeNumber),
    ab("artt.", "articoli", BeforeNumber),
    ab("fig.", "figura", BeforeNumber),
    ab("tab.", "tabella", BeforeNumber),
    ab("par.", "paragrafo", BeforeNumber),
    ab("ca.", "circa", BeforeNumber),
];

/// Common masculine nouns after `1` (« un giorno », « un anno »): a plain number is
/// otherwise read « uno », not knowing the gender of the word after it.
const ONE_MASCULINE: &[&str] = &[
    "giorno",
    "anno",
    "mese",
    "minuto",
    "libro",
    "uomo",
    "bambino",
    "figlio",
    "fratello",
    "posto",
    "bicchiere",
    "pezzo",
    "attimo",
    "momento",
    "chilo",
    "litro",
    "metro",
    "caffè",
    "voto",
    "biglietto",
    "amico",
    "ospite",
    "euro",
    "dollaro",
    "premio",
    "gol",
];

/// Common feminine nouns after `1` (« una volta », « un'ora »).
const ONE_FEMININE: &[&str] = &[
    "ora",
    "volta",
    "settimana",
    "persona",
    "notte",
    "sera",
    "mattina",
    "giornata",
    "pagina",
    "cosa",
    "parola",
    "domanda",
    "lettera",
    "bottiglia",
    "tazza",
    "fetta",
    "stanza",
    "camera",
    "casa",
    "stella",
    "squadra",
    "partita",
    "sterlina",
    "figlia",
    "sorella",
    "amica",
    "foto",
    "mela",
];

/// Small words after which `5°` is an angle or a temperature, not an ordinal
/// (`90° e 45°`, `20° di latitudine`).
const NOT_AFTER_ORDINAL: &[&str] = &[
    "e", "ed", "o", "od", "di", "a", "in", "per", "con", "su", "tra", "fra", "da", "circa",
    "sotto", "sopra", "nord", "sud", "est", "ovest",
];

/// Feminine regnal names (`Elisabetta II` « Elisabetta seconda »).
const FEMININE_NAMES: &[&str] = &[
    "Elisabetta",
    "Elizabeth",
    "Caterina",
    "Maria",
    "Anna",
    "Isabella",
    "Giovanna",
    "Vittoria",
    "Margherita",
    "Cristina",
];

/// Roman-numeral trigger words whose noun is feminine (`parte II` « parte seconda »).
const FEMININE_TRIGGERS: &[&str] = &[
    "parte",
    "scena",
    "sezione",
    "lezione",
    "stagione",
    "classe",
    "tavola",
    "appendice",
    "legislatura",
];

/// Words after a Roman numeral that make it an ordinal, and their gender.
const ORDINAL_BEFORE: &[(&str, Gender)] = &[
    ("secolo", M),
    ("millennio", M),
    ("Reich", M),
    ("guerra mondiale", F),
    ("Guerra mondiale", F),
    ("Guerra Mondiale", F),
    ("edizione", F),
    ("legislatura", F),
    ("Repubblica", F),
];

/// Whether `°`/`º` after a number is an ordinal mark: a word follows (after at most one
/// space) that is neither a single letter (`5° C`, `45° N`) nor a small function word.
fn degree_sign_is_ordinal(after: &str) -> bool {
    let start = match char_at(after, 0) {
        Some(c) if is_inline_space(c) => c.len_utf8(),
        _ => 0,
    };
    let rest = &after[start..];
    let end = rest
        .char_indices()
        .find(|&(_, c)| !is_letter(c))
        .map_or(rest.len(), |(k, _)| k);
    let word = &rest[..end];
    word.chars().count() > 1 && !NOT_AFTER_ORDINAL.contains(&word)
}

impl Italian {
    /// ` C` or ` F` after `º`: a temperature typed with the ordinal indicator (`5º C`),
    /// unless that letter is itself rewritten (`C$ 5`, Roman `C secolo`).
    fn temperature(&self, after: &str) -> bool {
        let Some(rest) = after.strip_prefix(' ') else {
            return false;
        };
        let Some(tail) = rest.strip_prefix(['C', 'F']) else {
            return false;
        };
        boundary_at(tail, 0)
            && !tail.starts_with('$')
            && !(rest.starts_with('C') && self.roman_before_word(tail).is_some())
    }
}

impl LanguageRules for Italian {
    fn group_separators(&self) -> &'static [char] {
        &['.']
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
        out.word(&cardinal_agreeing(n, gender));
    }

    fn ordinal(&self, n: u64, gender: Gender, out: &mut Out) {
        out.word(&ordinal_string(n, gender));
    }

    /// `°` and `º` (masculine), `ª` (feminine); `°`/`º` only before a word
    /// ([`degree_sign_is_ordinal`]).
    fn ordinal_suffix(&self, n: u64, rest: &str) -> Option<(usize, Gender)> {
        if n == 0 {
            return None;
        }
        let (mark, gender) = ["°", "º", "ª"]
            .into_iter()
            .zip([M, M, F])
            .find(|(m, _)| rest.starts_with(m))?;
        let after = &rest[mark.len()..];
        let ok = match mark {
            "°" => degree_sign_is_ordinal(after),
            // `º` and `ª` are lower-case letters, so after a Roman numeral (`IVº`) the
            // engine asks again on a second pass, when digits and symbols after them
            // have become words: only what follows at once may decide (idempotence).
            "º" => boundary_at(after, 0) && !self.temperature(after),
            _ => boundary_at(after, 0),
        };
        ok.then_some((mark.len(), gender))
    }

    /// A number before `mila` is one word with it (`5 mila` « cinquemila »); `1` before
    /// `milione`/`miliardo` and the common nouns of [`ONE_MASCULINE`] and
    /// [`ONE_FEMININE`] agrees with them (`1 milione` « un milione », `1 volta` « una
    /// volta », `1 ora` « un'ora »).
    fn special_suffix(&self, n: u64, rest: &str, out: &mut Out) -> Option<usize> {
        let after_space = rest.strip_prefix(' ')?;
        let word_is = |w: &str| after_space.starts_with(w) && boundary_at(after_space, w.len());
        if (2..1000).contains(&n) && word_is("mila") {
            self.cardinal(n * 1000, out);
            return Some(1 + "mila".len());
        }
        if n != 1 {
            return None;
        }
        if word_is("milione") || word_is("miliardo") || ONE_MASCULINE.iter().any(|w| word_is(w)) {
            out.word("un");
            return Some(0);
        }
        let noun = ONE_FEMININE.iter().find(|w| word_is(w))?;
        if noun.starts_with(['a', 'e', 'i', 'o', 'u']) {
            // `un'ora`: the noun is written here, joined to the article.
            out.word("un'");
            out.raw(noun);
            return Some(1 + noun.len());
        }
        out.word("una");
        Some(0)
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
        out.word(&fraction_string(num, den, mixed));
    }

    /// Singular only for exactly one: `1 km`, but `0 km`, `1,5 km` plural.
    fn is_plural(&self, int: u64, frac: Option<&str>) -> bool {
        int != 1 || frac.is_some_and(|f| f.bytes().any(|b| b != b'0'))
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
            (Scale::Thousand, false) => "mille",
            (Scale::Thousand, true) => "mila",
            (Scale::Million, false) => "milione",
            (Scale::Million, true) => "milioni",
            (Scale::Billion, false) => "miliardo",
            (Scale::Billion, true) => "miliardi",
            (Scale::Trillion, false) => "bilione",
            (Scale::Trillion, true) => "bilioni",
        }
    }

    /// « due virgola cinque milioni di euro », « un milione di dollari »,
    /// « cinquemila euro »; otherwise the default reading with `e`.
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
            Some(Scale::Thousand) if whole => {
                self.cardinal(m.int.saturating_mul(1000), out);
                out.word(names.many);
            }
            Some(scale) => {
                say_amount(self, m.int, m.frac, M, out);
                out.word(self.scale_word(scale, self.is_plural(m.int, m.frac)));
                if scale != Scale::Thousand {
                    out.word("di");
                }
                out.word(names.many);
            }
            None => {
                self.cardinal_gender(m.int, M, out);
                out.word("di");
                out.word(names.many);
            }
        }
    }

    fn units(&self) -> &'static [UnitEntry] {
        UNITS_TABLE
    }

    /// `una` + `ora` → `un'ora`.
    fn unit_name(&self, name: &str, out: &mut Out) {
        let s = out.s.as_str();
        let una = s.ends_with("una") && (s.len() == 3 || s[..s.len() - 3].ends_with(' '));
        if una && name.starts_with(['a', 'e', 'i', 'o', 'u']) {
            out.s.pop();
            out.raw("'");
            out.raw(name);
        } else {
            out.word(name);
        }
    }

    fn date_order(&self) -> DateOrder {
        DateOrder::DayMonthYear
    }

    fn month_at(&self, rest: &str) -> Option<(u8, usize)> {
        match_table(rest, 0, MONTH_WORDS)
    }

    fn date(&self, d: &Date<'_>, out: &mut Out) {
        if d.day == 1 {
            out.word("primo");
        } else {
            self.cardinal(u64::from(d.day), out);
        }
        out.word(MONTHS[usize::from(d.month.clamp(1, 12) - 1)]);
        if let Some(y) = d.year {
            self.cardinal(y, out);
        }
    }

    /// « quindici e trenta », « una e cinque », « tre del pomeriggio ».
    fn time(&self, t: &Time, out: &mut Out) {
        out.word(&cardinal_agreeing(u64::from(t.hour), F));
        let minute = t.minute.filter(|&m| m > 0 || t.second.is_some());
        if let Some(m) = minute {
            out.word("e");
            self.cardinal(u64::from(m), out);
            if let Some(s) = t.second {
                out.word(if m == 1 { "minuto" } else { "minuti" });
                out.word("e");
                out.word(&cardinal_agreeing(u64::from(s), M));
                out.word(if s == 1 { "secondo" } else { "secondi" });
            }
        }
        match (t.meridiem, t.hour) {
            (Some(Meridiem::Am), 1..=5 | 12) => out.word("di notte"),
            (Some(Meridiem::Am), _) => out.word("del mattino"),
            (Some(Meridiem::Pm), 1..=5 | 12) => out.word("del pomeriggio"),
            (Some(Meridiem::Pm), _) => out.word("di sera"),
            (None, _) => {}
        }
    }

    fn time_separators(&self) -> &'static [char] {
        &[':', '.']
    }

    /// Not after a word announcing a version: `versione 2.10`, `release 3.11`.
    fn dotted_time_after(&self, prev: Option<&str>) -> bool {
        const VERSION_WORDS: [&str; 6] = [
            "versione",
            "versioni",
            "release",
            "build",
            "aggiornamento",
            "patch",
        ];
        !prev.is_some_and(|w| {
            VERSION_WORDS
                .iter()
                .any(|v| w.chars().flat_map(char::to_lowercase).eq(v.chars()))
        })
    }

    fn abbreviations(&self) -> &'static [Abbrev] {
        ABBREVIATIONS
    }

    fn roman_triggers(&self) -> &'static [&'static str] {
        &[
            "capitolo",
            "tomo",
            "volume",
            "parte",
            "atto",
            "scena",
            "libro",
            "canto",
            "titolo",
            "sezione",
            "lezione",
            "episodio",
            "stagione",
            "classe",
            "tavola",
            "appendice",
            "legislatura",
            "fascicolo",
        ]
    }

    /// Italian reads the ordinal: « capitolo quarto », « parte seconda ».
    fn roman_after_trigger(&self, n: u64, trigger: &str, out: &mut Out) {
        let gender = if FEMININE_TRIGGERS.contains(&trigger) {
            F
        } else {
            M
        };
        self.ordinal(n, gender, out);
    }

    fn roman_before_word(&self, rest: &str) -> Option<Gender> {
        let rest = rest.strip_prefix(' ')?;
        ORDINAL_BEFORE
            .iter()
            .find_map(|&(w, g)| (rest.starts_with(w) && boundary_at(rest, w.len())).then_some(g))
    }

    fn regnal_names(&self) -> &'static [&'static str] {
        &[
            "Giovanni",
            "Paolo",
            "Luigi",
            "Carlo",
            "Enrico",
            "Emanuele",
            "Umberto",
            "Pio",
            "Benedetto",
            "Gregorio",
            "Leone",
            "Clemente",
            "Innocenzo",
            "Urbano",
            "Bonifacio",
            "Alessandro",
            "Sisto",
            "Francesco",
            "Ferdinando",
            "Federico",
            "Guglielmo",
            "Elisabetta",
            "Filippo",
            "Pietro",
            "Napoleone",
            "Edoardo",
            "Giacomo",
            "Caterina",
            "Ottone",
            "Ranieri",
            "Martino",
            "Niccolò",
            "Nicola",
            "Stefano",
            "Adriano",
            "Giulio",
            "Eugenio",
            "Celestino",
            "Callisto",
            "Onorio",
            "Marcello",
            "Massimiliano",
            "Rodolfo",
            "Giuseppe",
            "Amedeo",
            "Costantino",
            "Ludovico",
            "Cosimo",
            "Lorenzo",
            "Maria",
            "Giovanna",
            "Isabella",
            "Ramses",
            "Tolomeo",
        ]
    }

    /// The ordinal, feminine after a queen's name: « Luigi quattordicesimo »,
    /// « Elisabetta seconda ».
    fn regnal(&self, n: u64, gender: Gender, out: &mut Out) {
        let s = out.s.trim_end();
        let name_start = s
            .char_indices()
            .rev()
            .take_while(|&(_, c)| is_letter(c))
            .last()
            .map_or(s.len(), |(k, _)| k);
        let gender = if FEMININE_NAMES.contains(&&s[name_start..]) {
            F
        } else {
            gender
        };
        self.ordinal(n, gender, out);
    }

    fn symbol(&self, s: Sym) -> &'static str {
        match s {
            Sym::Ampersand => "e",
            Sym::Plus => "più",
            Sym::Equals => "uguale",
            Sym::At => "chiocciola",
            Sym::NumberSign => "numero",
            Sym::Sharp => "diesis",
            Sym::Hashtag => "hashtag",
            Sym::Times => "per",
            Sym::Divide => "diviso",
            Sym::PlusMinus => "più o meno",
            Sym::About => "circa",
            Sym::Section => "paragrafo",
            Sym::Dot => "punto",
            Sym::Slash => "barra",
            Sym::Dash => "trattino",
            Sym::Underscore => "trattino basso",
            Sym::Colon => "due punti",
            Sym::Question => "punto interrogativo",
            Sym::Hash => "cancelletto",
            Sym::Percent => "per cento",
            Sym::Tilde => "tilde",
        }
    }

    fn dyn_self(&self) -> &dyn LanguageRules {
        self
    }
}
