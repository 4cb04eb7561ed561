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
use super::it_tables::{
    DATA, F, FEMININE_NAMES, FEMININE_TRIGGERS, M, MONTHS, NOT_AFTER_ORDINAL, ONE_FEMININE,
    ONE_MASCULINE, ORDINAL_BEFORE,
};
use super::readings::money_of_millions;
use super::rules::{Date, Gender, LanguageData, LanguageRules, Meridiem, Money, Out, Scale, Time};
use super::scan::{boundary_at, char_at, is_inline_space, is_letter};

/// The Italian rules.
pub(crate) struct Italian;

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
    fn data(&self) -> &'static LanguageData {
        &DATA
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

    fn fraction(&self, num: u64, den: u64, mixed: bool, out: &mut Out) {
        out.word(&fraction_string(num, den, mixed));
    }

    /// Singular only for exactly one: `1 km`, but `0 km`, `1,5 km` plural.
    fn is_plural(&self, int: u64, frac: Option<&str>) -> bool {
        int != 1 || frac.is_some_and(|f| f.bytes().any(|b| b != b'0'))
    }

    /// « due virgola cinque milioni di euro », « un milione di dollari »,
    /// « cinquemila euro »; otherwise the default reading with `e`.
    fn money(&self, m: &Money<'_>, out: &mut Out) {
        let whole = m.frac.is_none_or(|f| f.bytes().all(|b| b == b'0'));
        if whole && m.scale == Some(Scale::Thousand) {
            // One word: « cinquemila euro ».
            if m.negative {
                out.word(DATA.words.minus);
            }
            self.cardinal(m.int.saturating_mul(1000), out);
            out.word(DATA.currency(m.currency).many);
            return;
        }
        money_of_millions(
            self,
            m,
            |noun, out| {
                out.word("di");
                out.word(noun);
            },
            out,
        );
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
}
