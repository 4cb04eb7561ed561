//! Italian number words: cardinals, ordinals and fractions, after the Accademia della
//! Crusca (consulenza « Quarantaquattro gatti in fila per sei col resto di due, o di
//! quando e come scrivere i numeri in lettere », after Serianni's *Grammatica italiana*
//! VI) and Treccani's *Enciclopedia dell'Italiano* (« numerali [prontuario] »):
//!
//! - one word below a million, no spaces: `duecentodiecimila`, `duemilaventisei`;
//! - tens drop their vowel before `uno` and `otto` (`ventuno`, `trentotto`, Treccani);
//!   hundreds keep it (`centouno`, `centootto`, as the Università di Messina's DICO, « La
//!   forma dei numerali cardinali e ordinali », and A. Gabrielli's *Si dice o non si
//!   dice?* give it; `centuno`, `centotto` also occur) except before `ottanta`
//!   (`centottanta`); `mille` never elides (`milleuno`, `milleotto`);
//! - compounds ending in `tre` take the accent (`ventitré`, `centotré`), `tre` alone and
//!   inside a word does not (`tremila`, `ventitremila`);
//! - `mille`, plural `mila` (`duemila`); `milione`, `miliardo` are nouns, written apart
//!   (`un milione`, `due milioni`, `tre milioni duecentomila`), `e` before a last group
//!   below a thousand (`un milione e uno`); 10¹² is `mille miliardi`;
//! - ordinals: `primo`…`decimo`, then the cardinal without its last vowel and `-esimo`
//!   (`undicesimo`, `ventitreesimo`, `ventiseiesimo`, `duemillesimo`).

use super::rules::Gender;

pub(crate) const UNITS: [&str; 20] = [
    "zero",
    "uno",
    "due",
    "tre",
    "quattro",
    "cinque",
    "sei",
    "sette",
    "otto",
    "nove",
    "dieci",
    "undici",
    "dodici",
    "tredici",
    "quattordici",
    "quindici",
    "sedici",
    "diciassette",
    "diciotto",
    "diciannove",
];

const TENS: [&str; 10] = [
    "",
    "",
    "venti",
    "trenta",
    "quaranta",
    "cinquanta",
    "sessanta",
    "settanta",
    "ottanta",
    "novanta",
];

const FIRST_ORDINALS: [&str; 10] = [
    "primo", "secondo", "terzo", "quarto", "quinto", "sesto", "settimo", "ottavo", "nono", "decimo",
];

/// Scales from the top: (value, singular, plural). Above a thousand billion, Italian
/// counts in `miliardi` (`mille miliardi`, `duemilacinquecento miliardi`) rather than
/// with `bilione`, whose value has varied (10⁹ or 10¹²).
const SCALES: [(u64, &str, &str); 2] = [
    (1_000_000_000, "miliardo", "miliardi"),
    (1_000_000, "milione", "milioni"),
];

/// 1–99 appended to `s`.
fn below_100(n: usize, s: &mut String) {
    if n < 20 {
        s.push_str(UNITS[n]);
        return;
    }
    let (t, u) = (n / 10, n % 10);
    let tens = TENS[t];
    if u == 1 || u == 8 {
        s.push_str(&tens[..tens.len() - 1]);
    } else {
        s.push_str(tens);
    }
    if u > 0 {
        s.push_str(UNITS[u]);
    }
}

/// 1–999 appended to `s`.
fn below_1000(n: u64, s: &mut String) {
    let (c, r) = ((n / 100) as usize, (n % 100) as usize);
    if c > 0 {
        if c > 1 {
            s.push_str(UNITS[c]);
        }
        // `centottanta`, but `centouno`, `centootto`.
        s.push_str(if (80..90).contains(&r) {
            "cent"
        } else {
            "cento"
        });
    }
    if r > 0 {
        below_100(r, s);
    }
}

/// `ventitre` → `ventitré` (a compound ending in `tre`; not `tre` itself).
fn accent_final_tre(s: &mut String) {
    if s.len() > 3 && s.ends_with("tre") {
        s.truncate(s.len() - 1);
        s.push('é');
    }
}

/// 1–999 999 as one word: `duemilaventisei`, `ventunomila`.
fn below_million(n: u64) -> String {
    let mut s = String::new();
    let (th, low) = (n / 1000, n % 1000);
    match th {
        0 => {}
        1 => s.push_str("mille"),
        _ => {
            below_1000(th, &mut s);
            s.push_str("mila");
        }
    }
    if low > 0 {
        below_1000(low, &mut s);
    }
    accent_final_tre(&mut s);
    s
}

/// The cardinal in words: `tre milioni duecentomila`, `un milione e uno`.
pub(crate) fn cardinal_string(n: u64) -> String {
    if n == 0 {
        return UNITS[0].to_string();
    }
    let mut s = String::new();
    let mut rest = n;
    for (scale, one, many) in SCALES {
        let count = rest / scale;
        if count == 0 {
            continue;
        }
        if !s.is_empty() {
            s.push(' ');
        }
        if count == 1 {
            s.push_str("un ");
            s.push_str(one);
        } else if count < 1_000_000 {
            s.push_str(&below_million(count));
            s.push(' ');
            s.push_str(many);
        } else {
            // 10¹⁵ and more (never sent by the engine): « un milione di miliardi ».
            s.push_str(&cardinal_string(count));
            s.push_str(" di ");
            s.push_str(many);
        }
        rest %= scale;
    }
    if rest > 0 {
        if !s.is_empty() {
            s.push_str(if rest < 1000 { " e " } else { " " });
        }
        s.push_str(&below_million(rest));
    }
    s
}

/// The cardinal before a noun of `gender`: `uno` becomes `un` / `una` when it stands
/// alone (`un chilometro`, `una tonnellata`, `un milione e una`); its compounds are
/// invariable (`ventuno tonnellate`).
pub(crate) fn cardinal_agreeing(n: u64, gender: Gender) -> String {
    let mut s = cardinal_string(n);
    let alone = s == "uno" || s.ends_with(" uno");
    if alone {
        s.truncate(s.len() - 1);
        if gender == Gender::Feminine {
            s.push('a');
        }
    }
    s
}

/// Masculine ordinal → feminine (`primo` → `prima`).
fn feminine(mut s: String, gender: Gender) -> String {
    if gender == Gender::Feminine && s.ends_with('o') {
        s.pop();
        s.push('a');
    }
    s
}

/// The ordinal: `quarto`, `ventitreesimo`, `duemillesimo`, `milionesimo`.
pub(crate) fn ordinal_string(n: u64, gender: Gender) -> String {
    if (1..=10).contains(&n) {
        return feminine(FIRST_ORDINALS[(n - 1) as usize].to_string(), gender);
    }
    if n == 0 {
        return feminine("zeresimo".to_string(), gender);
    }
    let mut s = cardinal_string(n);
    // `un milione` → `milionesimo`, `due milioni` → `duemilionesimo`.
    for (scale, one, _) in SCALES {
        if n.is_multiple_of(scale) && n / scale < 1_000_000 {
            let count = n / scale;
            let mut o = if count == 1 {
                String::new()
            } else {
                below_million(count)
            };
            accent_strip(&mut o);
            o.push_str(&one[..one.len() - 1]);
            o.push_str("esimo");
            return feminine(o, gender);
        }
    }
    if let Some(stem) = s.strip_suffix("mila") {
        s = format!("{stem}millesimo");
    } else if s.ends_with("tré") {
        s.truncate(s.len() - "é".len());
        s.push_str("eesimo");
    } else if s.ends_with("sei") {
        s.push_str("esimo");
    } else {
        s.pop();
        s.push_str("esimo");
    }
    feminine(s, gender)
}

/// `ventitré` → `ventitre` before a suffix.
fn accent_strip(s: &mut String) {
    if s.ends_with('é') {
        s.truncate(s.len() - 'é'.len_utf8());
        s.push('e');
    }
}

/// A fraction: `un mezzo`, `tre quarti`, `due terzi`, `cinque ottavi`; after a whole
/// number (`mixed`), a half is `mezzo` (`due e mezzo`).
pub(crate) fn fraction_string(num: u64, den: u64, mixed: bool) -> String {
    let numerator = if num == 1 {
        "un".to_string()
    } else {
        cardinal_string(num)
    };
    if den == 2 {
        return match (mixed, num) {
            (true, _) => "mezzo".to_string(),
            (false, 1) => "un mezzo".to_string(),
            _ => format!("{numerator} mezzi"),
        };
    }
    let mut d = ordinal_string(den, Gender::Masculine);
    if num > 1 && d.ends_with('o') {
        d.pop();
        d.push('i');
    }
    format!("{numerator} {d}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cardinals() {
        let cases: &[(u64, &str)] = &[
            (0, "zero"),
            (1, "uno"),
            (3, "tre"),
            (17, "diciassette"),
            (21, "ventuno"),
            (23, "ventitré"),
            (28, "ventotto"),
            (33, "trentatré"),
            (81, "ottantuno"),
            (100, "cento"),
            (101, "centouno"),
            (103, "centotré"),
            (108, "centootto"),
            (180, "centottanta"),
            (188, "centottantotto"),
            (1000, "mille"),
            (1001, "milleuno"),
            (1080, "milleottanta"),
            (2026, "duemilaventisei"),
            (3000, "tremila"),
            (21_000, "ventunomila"),
            (23_000, "ventitremila"),
            (210_000, "duecentodiecimila"),
            (1_000_000, "un milione"),
            (1_000_001, "un milione e uno"),
            (2_000_000, "due milioni"),
            (3_200_000, "tre milioni duecentomila"),
            (1_000_000_000, "un miliardo"),
            (23_000_000_000, "ventitré miliardi"),
            (1_000_000_000_000, "mille miliardi"),
            (2_500_000_000_000, "duemilacinquecento miliardi"),
            (1_000_000_000_000_000, "un milione di miliardi"),
        ];
        for &(n, w) in cases {
            assert_eq!(cardinal_string(n), w, "{n}");
        }
        assert_eq!(cardinal_agreeing(1, Gender::Feminine), "una");
        assert_eq!(cardinal_agreeing(1, Gender::Masculine), "un");
        assert_eq!(cardinal_agreeing(21, Gender::Feminine), "ventuno");
        assert!(!cardinal_string(u64::MAX).is_empty());
    }

    #[test]
    fn ordinals() {
        let m = Gender::Masculine;
        let cases: &[(u64, &str)] = &[
            (1, "primo"),
            (4, "quarto"),
            (10, "decimo"),
            (11, "undicesimo"),
            (14, "quattordicesimo"),
            (19, "diciannovesimo"),
            (20, "ventesimo"),
            (21, "ventunesimo"),
            (23, "ventitreesimo"),
            (26, "ventiseiesimo"),
            (28, "ventottesimo"),
            (100, "centesimo"),
            (101, "centounesimo"),
            (1000, "millesimo"),
            (2000, "duemillesimo"),
            (1_000_000, "milionesimo"),
            (3_000_000, "tremilionesimo"),
        ];
        for &(n, w) in cases {
            assert_eq!(ordinal_string(n, m), w, "{n}");
        }
        assert_eq!(ordinal_string(2, Gender::Feminine), "seconda");
        assert_eq!(ordinal_string(21, Gender::Feminine), "ventunesima");
        assert!(!ordinal_string(u64::MAX, m).is_empty());
    }
}
