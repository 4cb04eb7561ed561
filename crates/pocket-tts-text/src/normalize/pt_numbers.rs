//! Portuguese number words, Brazilian spelling (Acordo Ortográfico de 1990 as applied
//! in Brazil; VOLP of the Academia Brasileira de Letras): cardinals on the short scale
//! (`bilhão` = 10⁹) with the conjunction "e" where the grammars put it, feminine forms
//! ("uma", "duas", "duzentas"), and ordinals ("vigésimo primeiro").

use super::rules::Gender;

/// 0–19 (masculine).
pub(super) const ONES: [&str; 20] = [
    "zero",
    "um",
    "dois",
    "três",
    "quatro",
    "cinco",
    "seis",
    "sete",
    "oito",
    "nove",
    "dez",
    "onze",
    "doze",
    "treze",
    "catorze",
    "quinze",
    "dezesseis",
    "dezessete",
    "dezoito",
    "dezenove",
];
const TENS: [&str; 10] = [
    "",
    "",
    "vinte",
    "trinta",
    "quarenta",
    "cinquenta",
    "sessenta",
    "setenta",
    "oitenta",
    "noventa",
];
/// Hundreds 200–900 without their ending (`duzent` + `os`/`as`).
const HUNDREDS: [&str; 10] = [
    "",
    "",
    "duzent",
    "trezent",
    "quatrocent",
    "quinhent",
    "seiscent",
    "setecent",
    "oitocent",
    "novecent",
];
/// Scales above a thousand (short scale, Brazil): singular and plural.
const SCALES: [(&str, &str); 5] = [
    ("milhão", "milhões"),
    ("bilhão", "bilhões"),
    ("trilhão", "trilhões"),
    ("quatrilhão", "quatrilhões"),
    ("quintilhão", "quintilhões"),
];

fn fem(g: Gender) -> bool {
    g == Gender::Feminine
}

/// 1–19 agreeing: "um"/"uma", "dois"/"duas".
fn unit(n: usize, g: Gender) -> &'static str {
    match (n, fem(g)) {
        (1, true) => "uma",
        (2, true) => "duas",
        _ => ONES[n],
    }
}

fn push(s: &mut String, sep: &str, w: &str) {
    if !s.is_empty() {
        s.push_str(sep);
    }
    s.push_str(w);
}

/// 1–999: "cem", "cento e um", "duzentas e vinte e uma".
fn below_1000(n: u64, g: Gender, s: &mut String) {
    let n = (n % 1000) as usize;
    if n == 100 {
        push(s, " ", "cem");
        return;
    }
    let (h, rest) = (n / 100, n % 100);
    let mut group = String::new();
    if h == 1 {
        group.push_str("cento");
    } else if h > 1 {
        group.push_str(HUNDREDS[h]);
        group.push_str(if fem(g) { "as" } else { "os" });
    }
    if rest > 0 && rest < 20 {
        push(&mut group, " e ", unit(rest, g));
    } else if rest >= 20 {
        push(&mut group, " e ", TENS[rest / 10]);
        if rest % 10 > 0 {
            push(&mut group, " e ", unit(rest % 10, g));
        }
    }
    push(s, " ", &group);
}

/// A cardinal agreeing with `g` (the thousands agree too: "duzentas mil"; the counts of
/// `milhão` and above are masculine: "dois milhões").
pub(super) fn cardinal_string(n: u64, g: Gender) -> String {
    if n == 0 {
        return ONES[0].to_string();
    }
    // Groups of three digits, lowest first.
    let mut groups = [0u64; 7];
    let mut rest = n;
    for slot in &mut groups {
        *slot = rest % 1000;
        rest /= 1000;
    }
    let last = groups.iter().position(|&v| v > 0).unwrap_or(0);
    let mut s = String::new();
    for k in (0..groups.len()).rev() {
        let v = groups[k];
        if v == 0 {
            continue;
        }
        // "e" before the last group when it is below 100 or whole hundreds: "mil e
        // duzentos", "dois mil e vinte e seis", but "mil duzentos e trinta".
        if k == last && !s.is_empty() && (v < 100 || v % 100 == 0) {
            s.push_str(" e");
        }
        match k {
            0 => below_1000(v, g, &mut s),
            1 => {
                if v > 1 {
                    below_1000(v, g, &mut s);
                }
                push(&mut s, " ", "mil");
            }
            _ => {
                below_1000(v, Gender::Masculine, &mut s);
                let (one, many) = SCALES[k - 2];
                push(&mut s, " ", if v == 1 { one } else { many });
            }
        }
    }
    s
}

const ORD_UNITS: [&str; 10] = [
    "", "primeir", "segund", "terceir", "quart", "quint", "sext", "sétim", "oitav", "non",
];
const ORD_TENS: [&str; 10] = [
    "",
    "décim",
    "vigésim",
    "trigésim",
    "quadragésim",
    "quinquagésim",
    "sexagésim",
    "septuagésim",
    "octogésim",
    "nonagésim",
];
const ORD_HUNDREDS: [&str; 10] = [
    "",
    "centésim",
    "ducentésim",
    "trecentésim",
    "quadringentésim",
    "quingentésim",
    "sexcentésim",
    "septingentésim",
    "octingentésim",
    "nongentésim",
];

/// An ordinal: "primeiro", "vigésima primeira", "centésimo décimo"; "milésimo" for
/// 1000, the cardinal above.
pub(super) fn ordinal_string(n: u64, g: Gender) -> String {
    let end = if fem(g) { "a" } else { "o" };
    if n == 1000 {
        return format!("milésim{end}");
    }
    if n == 0 || n > 1000 {
        return cardinal_string(n, g);
    }
    let n = n as usize;
    let mut s = String::new();
    for stem in [
        ORD_HUNDREDS[n / 100],
        ORD_TENS[n / 10 % 10],
        ORD_UNITS[n % 10],
    ] {
        if !stem.is_empty() {
            push(&mut s, " ", stem);
            s.push_str(end);
        }
    }
    s
}

/// A fraction's denominator: "meio", "terço", "quarto", …, "avos" after the cardinal
/// for the others (`1/16` → "um dezesseis avos"). Singular and plural.
pub(super) fn denominator(den: u64) -> Option<(&'static str, &'static str)> {
    Some(match den {
        2 => ("meio", "meios"),
        3 => ("terço", "terços"),
        4 => ("quarto", "quartos"),
        5 => ("quinto", "quintos"),
        6 => ("sexto", "sextos"),
        7 => ("sétimo", "sétimos"),
        8 => ("oitavo", "oitavos"),
        9 => ("nono", "nonos"),
        10 => ("décimo", "décimos"),
        100 => ("centésimo", "centésimos"),
        1000 => ("milésimo", "milésimos"),
        _ => return None,
    })
}
