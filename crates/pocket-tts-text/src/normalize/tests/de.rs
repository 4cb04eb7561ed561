//! German cases. Conventions: Duden, "Schreibung von Zahlen" (Zahlwörter unter einer
//! Million zusammengeschrieben, "Million"/"Milliarde" als Substantive; Punkt als
//! Tausendertrennzeichen, Komma als Dezimalzeichen; Ordinalzahlen mit Punkt, `3.`) and
//! DIN 5008 (Datum `03.04.2026` und ISO `2026-04-03`, Uhrzeit `15:30 Uhr`/`15.30 Uhr`,
//! Telefonnummern). Readings: "neunzehn Euro neunundneunzig", "fünfzehn Uhr dreißig",
//! "am dritten Mai", Jahre "neunzehnhundertneunundneunzig".

use super::check_table;
use crate::normalize::Language;

pub(super) const TABLE: &[(&str, &str)] = &[
    // Cardinals, decimals, signs.
    ("Ich habe 3 Äpfel.", "Ich habe drei Äpfel."),
    ("21 Gäste", "einundzwanzig Gäste"),
    // A final "eins" before a noun is "ein", without ending after hundreds (Duden:
    // "hundertein Gründe"; Bastian Sick, "Hundertundein Dalmatiner"); alone it stays.
    ("101 Dalmatiner", "einhundertein Dalmatiner"),
    ("101", "einhunderteins"),
    ("Nummer 1", "Nummer eins"),
    ("Seite 1 von 3", "Seite eins von drei"),
    ("1 Katze und 1 Hund", "eine Katze und ein Hund"),
    (
        "1.234.567 Einwohner",
        "eine Million zweihundertvierunddreißigtausendfünfhundertsiebenundsechzig Einwohner",
    ),
    ("3.000.000 Menschen", "drei Millionen Menschen"),
    ("2.000.000.000", "zwei Milliarden"),
    ("Pi ist 3,14", "Pi ist drei Komma eins vier"),
    ("-5 und +7", "minus fünf und plus sieben"),
    ("0,5 Liter", "null Komma fünf Liter"),
    // Ordinals.
    ("der 3. Platz", "der dritte Platz"),
    ("zum 2. Mal", "zum zweiten Mal"),
    ("im 19. Jh.", "im neunzehnten Jahrhundert."),
    ("der 20. Geburtstag", "der zwanzigste Geburtstag"),
    ("Sie kam als 7. ins Ziel", "Sie kam als siebte ins Ziel"),
    (
        "Wir waren 2. Die anderen nicht.",
        "Wir waren zwei. Die anderen nicht.",
    ),
    // Years.
    ("im Jahr 1999", "im Jahr neunzehnhundertneunundneunzig"),
    ("im Jahr 2026", "im Jahr zweitausendsechsundzwanzig"),
    (
        "1848 und 1900",
        "achtzehnhundertachtundvierzig und neunzehnhundert",
    ),
    // Money.
    (
        "Das kostet 19,99 €.",
        "Das kostet neunzehn Euro neunundneunzig.",
    ),
    ("1 € oder 5 €", "ein Euro oder fünf Euro"),
    (
        "101 Euro und 101 €",
        "einhundertein Euro und einhundertein Euro",
    ),
    ("19,01 €", "neunzehn Euro eins"),
    ("0,50 €", "fünfzig Cent"),
    ("€ 20 und $ 3,50", "zwanzig Euro und drei Dollar fünfzig"),
    ("£ 1", "ein Pfund"),
    ("500 ¥", "fünfhundert Yen"),
    ("2,5 Mio. €", "zwei Komma fünf Millionen Euro"),
    ("1 Mrd. €", "eine Milliarde Euro"),
    ("1 Tsd. €", "eintausend Euro"),
    // Percentages and units.
    ("50 % Rabatt", "fünfzig Prozent Rabatt"),
    ("1 km und 12 km", "ein Kilometer und zwölf Kilometer"),
    ("3,5 kg Mehl", "drei Komma fünf Kilogramm Mehl"),
    ("250 g Butter", "zweihundertfünfzig Gramm Butter"),
    ("-3 °C", "minus drei Grad Celsius"),
    ("100 km/h", "einhundert Kilometer pro Stunde"),
    ("1 h", "eine Stunde"),
    (
        "5 m, 20 cm und 4 mm",
        "fünf Meter, zwanzig Zentimeter und vier Millimeter",
    ),
    // Times.
    ("um 15:30 Uhr", "um fünfzehn Uhr dreißig"),
    ("um 15.30 Uhr", "um fünfzehn Uhr dreißig"),
    ("um 1:00 Uhr", "um ein Uhr"),
    ("um 1 Uhr", "um ein Uhr"),
    ("ab 15.30", "ab fünfzehn Uhr dreißig"),
    ("9:05", "neun Uhr fünf"),
    ("um 8 Uhr", "um acht Uhr"),
    // Dates.
    ("am 3. Mai", "am dritten Mai"),
    (
        "am 03.04.2026",
        "am dritten April zweitausendsechsundzwanzig",
    ),
    (
        "Berlin, 1. Januar 2000",
        "Berlin, erster Januar zweitausend",
    ),
    ("2026-04-03", "dritter April zweitausendsechsundzwanzig"),
    (
        "vom 24. Dez. 1999",
        "vom vierundzwanzigsten Dezember neunzehnhundertneunundneunzig",
    ),
    // Phone numbers and long digit strings.
    (
        "Tel. 030 123456",
        "Telefon null drei null, eins zwei drei vier fünf sechs",
    ),
    (
        "+49 30 12345678",
        "plus vier neun, drei null, eins zwei drei vier fünf sechs sieben acht",
    ),
    (
        "12345678901",
        "eins zwei drei vier fünf sechs sieben acht neun null eins",
    ),
    // Abbreviations.
    ("z. B. Äpfel", "zum Beispiel Äpfel"),
    ("d. h. nichts", "das heißt nichts"),
    ("Äpfel, Birnen usw.", "Äpfel, Birnen und so weiter."),
    ("Birnen bzw. Äpfel", "Birnen beziehungsweise Äpfel"),
    ("Dr. Müller", "Doktor Müller"),
    ("Nr. 5", "Nummer fünf"),
    ("ca. 20 Leute", "circa zwanzig Leute"),
    ("Str. der Einheit", "Straße der Einheit"),
    // Fractions.
    ("1/2 Liter", "einhalb Liter"),
    ("2 1/2 Stunden", "zweieinhalb Stunden"),
    ("1 1/2 Tage", "eineinhalb Tage"),
    ("1 1/3 Tassen", "ein und ein Drittel Tassen"),
    ("3/4 der Leute", "drei Viertel der Leute"),
    ("1/3", "ein Drittel"),
    // Roman numerals.
    ("Ludwig XIV", "Ludwig der Vierzehnte"),
    ("Kapitel IV", "Kapitel vier"),
    ("Ich bin hier.", "Ich bin hier."),
    // Symbols.
    ("Müller & Söhne", "Müller und Söhne"),
    ("2 + 2 = 4", "zwei plus zwei gleich vier"),
    ("#1", "Nummer eins"),
];

#[test]
fn table() {
    check_table(Language::German, TABLE);
}
