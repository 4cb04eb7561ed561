//! Spanish number words (RAE/ASALE, *Nueva gramática*, § 21, and the *Ortografía*
//! (2010), chapter VIII): cardinals on the long scale with the forms of "uno"
//! ("uno", "un", "una"), and ordinals ("vigésimo primero", "primer").

use super::rules::Gender;

pub(super) const ONES: [&str; 30] = [
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
    "",
    "",
    "",
    "treinta",
    "cuarenta",
    "cincuenta",
    "sesenta",
    "setenta",
    "ochenta",
    "noventa",
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
pub(super) enum One {
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
        below_1000(
            th,
            if one == One::Fem {
                One::Fem
            } else {
                One::Short
            },
            s,
        );
        push(s, "mil");
    }
    if rest > 0 {
        below_1000(rest, one, s);
    }
}

/// A Spanish cardinal (long scale).
pub(super) fn cardinal_string(n: u64, one: One) -> String {
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

/// A number on its own, or agreeing with a noun it does not precede: "uno",
/// "veintiuno", "veintiuna".
pub(super) fn one_of(g: Gender) -> One {
    match g {
        Gender::Feminine => One::Fem,
        Gender::Masculine | Gender::Neuter => One::Full,
    }
}

/// A number right before the noun it counts: "un kilómetro", "veintiún euros",
/// "veintiuna toneladas". [`Gender::Neuter`] marks a unit that is not a noun (`%`, read
/// "por ciento", where Fundéu and the DPD keep "veintiuno").
pub(super) fn one_before_noun(g: Gender) -> One {
    match g {
        Gender::Masculine => One::Short,
        Gender::Feminine => One::Fem,
        Gender::Neuter => One::Full,
    }
}

pub(super) const ORD_UNITS: [&str; 10] = [
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

/// The form of an ordinal.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Ord {
    /// "primero", "tercero".
    Masc,
    /// "primera".
    Fem,
    /// "primer", "tercer": before a masculine noun, written `1.er`, `3.er`.
    Short,
}

impl Ord {
    pub(super) fn of(g: Gender) -> Ord {
        if g == Gender::Feminine {
            Ord::Fem
        } else {
            Ord::Masc
        }
    }
}

/// An ordinal stem with its ending: `primer` + `o`/`a`/`` (apocope).
fn ord_word(stem: &str, g: Ord, s: &mut String) {
    push(s, stem);
    match (g, stem) {
        (Ord::Fem, _) => s.push('a'),
        (Ord::Short, "primer" | "tercer") => {}
        _ => s.push('o'),
    }
}

/// "vigésimo primero", "decimotercera"; cardinals from 1000 on.
pub(super) fn ordinal_string(n: u64, g: Ord) -> String {
    if n == 0 || n >= 1000 {
        return cardinal_string(n, if g == Ord::Fem { One::Fem } else { One::Full });
    }
    let mut s = String::new();
    let (h, t, u) = (
        (n / 100) as usize,
        (n / 10 % 10) as usize,
        (n % 10) as usize,
    );
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
