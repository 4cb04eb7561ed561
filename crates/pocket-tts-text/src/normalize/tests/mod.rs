//! Tests: per-language tables (`en.rs`, …) and the properties every language keeps
//! (`props.rs`: idempotence, no panic, bounded output).

mod de;
mod en;
mod es;
mod fr;
mod it;
mod nl;
mod props;
mod pt;

use super::{normalize, Language};

/// Checks every `(input, expected)` pair and that each expected output is stable.
pub(super) fn check_table(language: Language, table: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for &(input, expected) in table {
        let got = normalize(input, language);
        if got != expected {
            failures.push(format!(
                "  {input:?}\n    expected {expected:?}\n    got      {got:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} {language} cases differ:\n{}",
        failures.len(),
        table.len(),
        failures.join("\n")
    );
}

/// A debugging aid: prints the reading of each line of the file named by `NORM_SHOW`
/// (language `NORM_LANG`, default English):
/// `NORM_SHOW=lines.txt NORM_LANG=fr cargo test -p pocket-tts-text --lib
/// normalize::tests::show -- --ignored --nocapture`.
#[test]
#[ignore]
fn show() {
    let path = std::env::var("NORM_SHOW").unwrap();
    let lang: Language = std::env::var("NORM_LANG")
        .unwrap_or("en".into())
        .parse()
        .unwrap();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        println!("{line}\n  => {}", normalize(line, lang));
    }
}
