//! Italian tables: month names, currencies, money scales, units, abbreviations and the
//! word lists the rules of `it.rs` consult (see there for the sources).

use super::rules::ab;
use super::rules::{
    Abbrev, AbbrevWhen::*, CurrencyNames, Gender, Scale, ScaleToken, UnitEntry, Words,
};

/// Month names, January first, as read.
pub(super) const MONTHS: [&str; 12] = [
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

/// Month names and abbreviations as written, with their number.
pub(super) const MONTH_WORDS: &[(&str, u8)] = &[
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

/// The fixed Italian words.
pub(super) static WORDS: Words = Words {
    minus: "meno",
    plus: "più",
    decimal_point: "virgola",
    version: "versione",
    version_dot: "punto",
    range_to: "a",
    and: "e",
};

/// Masculine, for short tables.
pub(super) const M: Gender = Gender::Masculine;
/// Feminine, for short tables.
pub(super) const F: Gender = Gender::Feminine;

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
/// `$`: dollari, centesimi.
pub(super) static DOLLAR: CurrencyNames = cur("dollaro", "dollari", ("centesimo", "centesimi"), M);
/// `€`: euro (invariable), centesimi.
pub(super) static EURO: CurrencyNames = cur("euro", "euro", ("centesimo", "centesimi"), M);
/// `£`: sterline (feminine), pence.
pub(super) static POUND: CurrencyNames = cur("sterlina", "sterline", ("penny", "pence"), F);
/// `¥`: yen, no hundredths in speech.
pub(super) static YEN: CurrencyNames = cur("yen", "yen", ("", ""), M);
/// `CHF`: franchi svizzeri.
pub(super) static FRANC: CurrencyNames = cur(
    "franco svizzero",
    "franchi svizzeri",
    ("centesimo", "centesimi"),
    M,
);
/// `R$`: real brasiliani.
pub(super) static REAL: CurrencyNames = cur(
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
/// Money scales after an amount (`€ 2,5 milioni`, `3 mln €`).
pub(super) static SCALE_TOKENS: [ScaleToken; 10] = [
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
/// Units after a number, with their singular, plural and gender.
pub(super) static UNITS_TABLE: &[UnitEntry] = &[
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

/// Abbreviations and what is read instead.
pub(super) static ABBREVIATIONS: &[Abbrev] = &[
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
pub(super) const ONE_MASCULINE: &[&str] = &[
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
pub(super) const ONE_FEMININE: &[&str] = &[
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
pub(super) const NOT_AFTER_ORDINAL: &[&str] = &[
    "e", "ed", "o", "od", "di", "a", "in", "per", "con", "su", "tra", "fra", "da", "circa",
    "sotto", "sopra", "nord", "sud", "est", "ovest",
];

/// Feminine regnal names (`Elisabetta II` « Elisabetta seconda »).
pub(super) const FEMININE_NAMES: &[&str] = &[
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
pub(super) const FEMININE_TRIGGERS: &[&str] = &[
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
pub(super) const ORDINAL_BEFORE: &[(&str, Gender)] = &[
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
