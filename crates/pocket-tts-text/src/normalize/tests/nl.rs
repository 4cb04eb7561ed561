//! Dutch cases. Conventions: Taalunie (taaladvies.net: "Getallen in letters" — aaneen
//! tot en met duizend, spatie na duizend en rond miljoen/miljard, trema in
//! "tweeënveertig"; "Punt of komma in getallen"; "Datum" — dag, maand, jaar; "Tijd" —
//! "15.30 uur"; "Bedragen" — "€ 3,50"), Onze Taal ("Getallen uitschrijven", "Jaartallen
//! in letters": "negentienhonderdnegenennegentig"; "1e, 2de, 3e") and the Woordenlijst
//! Nederlandse Taal (afkortingen: "bijv.", "o.a.", "d.w.z.", "dhr.", "mevr.", "blz.";
//! "tweeënhalf", "anderhalf", "driekwart").

use super::check_table;
use crate::normalize::Language;

pub(super) const TABLE: &[(&str, &str)] = &[
    // Hoofdtelwoorden, decimalen, tekens.
    ("Ik heb 3 appels.", "Ik heb drie appels."),
    ("21 en 42", "eenentwintig en tweeënveertig"),
    ("23 en 33", "drieëntwintig en drieëndertig"),
    ("101 en 200", "honderdeen en tweehonderd"),
    ("1.000 mensen", "duizend mensen"),
    (
        "1.234.567 inwoners",
        "één miljoen tweehonderdvierendertigduizend vijfhonderdzevenenzestig inwoners",
    ),
    (
        "2.500 en 100.000",
        "tweeduizend vijfhonderd en honderdduizend",
    ),
    ("3.000.000.000", "drie miljard"),
    ("pi is 3,14", "pi is drie komma veertien"),
    ("0,5 liter", "nul komma vijf liter"),
    ("-5 en +7", "min vijf en plus zeven"),
    ("nummer 1", "nummer één"),
    ("1.001 en 1.000.001", "duizend één en één miljoen één"),
    // Rangtelwoorden.
    ("de 1e keer", "de eerste keer"),
    ("de 2de plaats", "de tweede plaats"),
    ("de 3e dag", "de derde dag"),
    ("het 8ste jaar", "het achtste jaar"),
    ("de 20ste eeuw", "de twintigste eeuw"),
    ("de 100ste klant", "de honderdste klant"),
    // Jaartallen.
    ("in 1999", "in negentienhonderdnegenennegentig"),
    ("in 2026", "in tweeduizend zesentwintig"),
    ("in 1800", "in achttienhonderd"),
    // Bedragen.
    ("€ 3,50", "drie euro vijftig"),
    (
        "Het kost € 19,99.",
        "Het kost negentien euro negenennegentig.",
    ),
    ("€ 1 en € 5", "één euro en vijf euro"),
    ("€ 0,50", "vijftig cent"),
    ("$ 20", "twintig dollar"),
    ("£ 2", "twee pond"),
    ("€ 2,5 miljoen", "twee komma vijf miljoen euro"),
    // Procenten en eenheden.
    ("50% korting", "vijftig procent korting"),
    ("5 km en 1 km", "vijf kilometer en één kilometer"),
    ("2,5 kg meel", "twee komma vijf kilogram meel"),
    ("250 g boter", "tweehonderdvijftig gram boter"),
    ("-3 °C", "min drie graden Celsius"),
    ("1 °C", "één graad Celsius"),
    ("100 km/h", "honderd kilometer per uur"),
    ("10 min", "tien minuten"),
    // Tijden.
    ("om 15.30 uur", "om vijftien uur dertig"),
    ("om 15:30", "om vijftien uur dertig"),
    ("om 3 uur", "om drie uur"),
    ("9:05", "negen uur vijf"),
    // Datums.
    ("op 3 maart 2026", "op drie maart tweeduizend zesentwintig"),
    ("03-04-2026", "drie april tweeduizend zesentwintig"),
    ("2026-04-03", "drie april tweeduizend zesentwintig"),
    ("1 januari", "één januari"),
    // Telefoonnummers en lange cijferreeksen.
    (
        "06-12345678",
        "nul zes, één twee drie vier vijf zes zeven acht",
    ),
    (
        "020 123 4567",
        "nul twee nul, één twee drie, vier vijf zes zeven",
    ),
    (
        "+31 20 123 4567",
        "plus drie één, twee nul, één twee drie, vier vijf zes zeven",
    ),
    // Afkortingen.
    ("bijv. appels", "bijvoorbeeld appels"),
    ("o.a. peren", "onder andere peren"),
    ("d.w.z. niets", "dat wil zeggen niets"),
    ("dhr. Jansen", "de heer Jansen"),
    ("mevr. De Vries", "mevrouw De Vries"),
    ("nr. 5", "nummer vijf"),
    ("blz. 12", "bladzijde twaalf"),
    ("ca. 20 mensen", "circa twintig mensen"),
    ("appels, peren enz.", "appels, peren enzovoort."),
    ("1 t/m 5", "één tot en met vijf"),
    // Breuken.
    ("1/2 uur", "een half uur"),
    ("3/4 van de mensen", "driekwart van de mensen"),
    ("2/3", "twee derde"),
    ("2 1/2 uur", "tweeënhalf uur"),
    ("1 1/2 uur", "anderhalf uur"),
    // Romeinse cijfers.
    ("Willem III", "Willem de Derde"),
    ("hoofdstuk IV", "hoofdstuk vier"),
    // Symbolen, adressen.
    ("Jansen & De Vries", "Jansen en De Vries"),
    ("2 + 2 = 4", "twee plus twee is vier"),
    ("#1", "nummer één"),
    ("info@voorbeeld.nl", "info apenstaartje voorbeeld punt nl"),
];

#[test]
fn table() {
    check_table(Language::Dutch, TABLE);
}
