//! Properties of every language with rules: idempotence (over the tables and random
//! text), no panic, and output length within the documented bound.

use proptest::prelude::*;

use super::super::{normalize, Language, MAX_EXPANSION};

/// Languages with rules and their tables.
fn tables() -> Vec<(Language, &'static [(&'static str, &'static str)])> {
    vec![
        (Language::English, super::en::TABLE),
        (Language::French, super::fr::TABLE),
        (Language::Spanish, super::es::TABLE),
        (Language::Portuguese, super::pt::TABLE),
        (Language::German, super::de::TABLE),
        (Language::Dutch, super::nl::TABLE),
        (Language::Italian, super::it::TABLE),
    ]
}

fn languages() -> Vec<Language> {
    tables().into_iter().map(|(l, _)| l).collect()
}

fn check_properties(text: &str, language: Language) -> Result<(), TestCaseError> {
    let once = normalize(text, language);
    prop_assert!(
        once.len() <= MAX_EXPANSION * (text.len() + 1),
        "{language}: {} bytes from {} bytes",
        once.len(),
        text.len()
    );
    let twice = normalize(&once, language);
    prop_assert_eq!(&twice, &once, "{}: not idempotent on {:?}", language, text);
    Ok(())
}

#[test]
fn idempotent_on_the_tables() {
    for (language, table) in tables() {
        for &(input, expected) in table {
            for text in [input, expected] {
                let once = normalize(text, language);
                assert_eq!(normalize(&once, language), once, "{language}: {text:?}");
            }
        }
    }
}

/// Pieces that make rules fire and interact.
const FRAGMENTS: &[&str] = &[
    "0",
    "1",
    "7",
    "12",
    "21",
    "300",
    "2026",
    "1999",
    "1,000",
    "1 000",
    "3.5",
    "3,5",
    ".",
    ",",
    ":",
    "/",
    "-",
    "–",
    " ",
    "\u{a0}",
    "\n",
    "$",
    "€",
    "£",
    "¥",
    "%",
    "°C",
    "°",
    "km",
    "kg",
    "g",
    "m",
    "h",
    "min",
    "pm",
    "a.m.",
    "st",
    "nd",
    "e",
    "er",
    "re",
    "s",
    "'s",
    "Dr.",
    "St.",
    "M.",
    "Mme",
    "Me",
    "etc.",
    "No.",
    "n°",
    "p.",
    "March",
    "mars",
    "May",
    "of",
    "the",
    "Louis",
    "chapter",
    "chapitre",
    "IV",
    "XIX",
    "I",
    "v",
    "www.",
    "http://",
    "example",
    ".com",
    ".fr",
    "@",
    "&",
    "+",
    "=",
    "#",
    "(",
    ")",
    "½",
    "×",
    "é",
    "Ω",
    "日",
    "x",
    "A",
    "million",
    "M",
    "bn",
    "USD",
    "EUR",
    "Jean",
    "Paul",
    "_",
    "'",
    "R$",
    "D.",
    "D. Maria",
    "João",
    "º",
    "ª",
    ".º",
    "de",
    "millones",
    "milhões",
    "mi",
    "teléfono",
    "telefone",
    "1.er",
    "p. m.",
    "nº",
    "(11)",
    "Uhr",
    "uur",
    "Mai",
    "mei",
    "am",
    "z. B.",
    "usw.",
    "Nr.",
    "Kapitel",
    "hoofdstuk",
    "Die",
    "Ludwig",
    "Mio.",
    "ste",
    "Sig.",
    "Sig.ra",
    "Dott.ssa",
    "ecc.",
    "n.",
    "pag.",
    "cap.",
    "maggio",
    "secolo",
    "capitolo",
    "parte",
    "Luigi",
    "Maria",
    "15.30",
    "1.000",
    "mila",
    "milioni",
    "una",
    "ora",
    "a.C.",
    "p. es.",
    "C",
    "C$",
];

/// 512 cases per property, or `PROPTEST_CASES` for a longer search (`with_cases`
/// would otherwise ignore the variable).
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

fn fragment_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn arbitrary_unicode(text in any::<String>()) {
        for language in languages() {
            check_properties(&text, language)?;
        }
    }

    #[test]
    fn digits_and_punctuation(text in "[0-9 .,:/+=%$€£¥#@&()°½\\-–−]{0,48}") {
        for language in languages() {
            check_properties(&text, language)?;
        }
    }

    #[test]
    fn rule_fragments(text in fragment_text()) {
        for language in languages() {
            check_properties(&text, language)?;
        }
    }
}

#[test]
fn long_inputs_stay_bounded() {
    let digits = "9".repeat(100_000);
    for language in languages() {
        let out = normalize(&digits, language);
        assert!(out.len() <= MAX_EXPANSION * digits.len());
        assert!(!out.contains('9'));
    }
}

/// Inputs that would make a careless scanner quadratic (each position rescanning the
/// rest): they must finish quickly even in a debug build.
#[test]
fn pathological_inputs_stay_linear() {
    let inputs = [
        "a1".repeat(50_000),
        "1a".repeat(50_000),
        "a.".repeat(50_000),
        "1.".repeat(50_000),
        "1 ".repeat(50_000),
        "x-".repeat(50_000),
        "a@".repeat(50_000),
        "é1".repeat(50_000),
        " ".repeat(100_000) + "IV",
        "St. ".repeat(20_000),
    ];
    let start = std::time::Instant::now();
    for language in languages() {
        for text in &inputs {
            let out = normalize(text, language);
            assert!(out.len() <= MAX_EXPANSION * (text.len() + 1));
        }
    }
    assert!(start.elapsed().as_secs() < 20, "took {:?}", start.elapsed());
}

#[test]
fn languages_without_rules_are_unchanged() {
    for language in Language::ALL {
        if !languages().contains(&language) {
            assert_eq!(normalize("Dr. 5 km", language), "Dr. 5 km");
        }
    }
}
