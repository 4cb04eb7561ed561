//! Spanish cases (European Spanish). Conventions: RAE/ASALE, *Ortografía de la lengua
//! española* (2010), chapter VIII "La escritura de las expresiones numéricas" (group
//! separators, decimal comma, ordinal abbreviations `1.º`/`1.ª`, `15 h`, Roman numerals
//! in regnal names and centuries, percent written `25 %`), and the Fundéu
//! recommendations on reading money ("con ... céntimos"), dates ("3 de abril de
//! 2026") and times. The forms of "uno" follow the *Diccionario panhispánico de dudas*
//! as Fundéu sums it up ("veintiuno por ciento, no veintiún por ciento": "un" only before
//! a masculine noun, so "treinta y un kilogramos", "veintiuna toneladas", but "el número
//! veintiuno"). The reading of times follows the convention documented in `es.rs`.

use super::check_table;
use crate::normalize::Language;

pub(super) const TABLE: &[(&str, &str)] = &[
    // Cardinals, decimals, signs.
    ("Tengo 3 manzanas.", "Tengo tres manzanas."),
    (
        "1.234.567 habitantes",
        "un millón doscientos treinta y cuatro mil quinientos sesenta y siete habitantes",
    ),
    (
        "12 345 personas",
        "doce mil trescientos cuarenta y cinco personas",
    ),
    ("el número 21", "el número veintiuno"),
    ("el número 1", "el número uno"),
    ("31 y 41", "treinta y uno y cuarenta y uno"),
    ("100 y 101", "cien y ciento uno"),
    ("3,5 y 3,14", "tres coma cinco y tres coma catorce"),
    ("0,05", "cero coma cero cinco"),
    ("2,718", "dos coma siete uno ocho"),
    ("-5 y +7", "menos cinco y más siete"),
    ("2.000.000.000", "dos mil millones"),
    ("007", "cero cero siete"),
    // Gender agreement.
    ("21 km", "veintiún kilómetros"),
    ("1 kg", "un kilogramo"),
    ("31 kg", "treinta y un kilogramos"),
    ("21 000 personas", "veintiún mil personas"),
    ("200 t", "doscientas toneladas"),
    ("21 t", "veintiuna toneladas"),
    ("500 ha", "quinientas hectáreas"),
    // Ordinals.
    ("el 1.º y la 2.ª", "el primero y la segunda"),
    ("el 1.er piso", "el primer piso"),
    ("el 3.er día", "el tercer día"),
    ("el 3º", "el tercero"),
    ("la 21ª edición", "la vigésima primera edición"),
    ("el 13.º", "el decimotercero"),
    // Years.
    ("en 1999", "en mil novecientos noventa y nueve"),
    ("en 2026", "en dos mil veintiséis"),
    // Money.
    (
        "Cuesta 19,99 €.",
        "Cuesta diecinueve euros con noventa y nueve céntimos.",
    ),
    ("1 € o 21 €", "un euro o veintiún euros"),
    ("21,01 €", "veintiún euros con un céntimo"),
    ("0,50 €", "cincuenta céntimos"),
    ("$5", "cinco dólares"),
    ("£200", "doscientas libras"),
    ("¥500", "quinientos yenes"),
    ("2,5 millones de €", "dos coma cinco millones de euros"),
    ("1.000.000 €", "un millón de euros"),
    ("1 millón de €", "un millón de euros"),
    ("$1 mil", "mil dólares"),
    // Percentages and units.
    ("un 25 %", "un veinticinco por ciento"),
    ("el 21%", "el veintiuno por ciento"),
    ("a 120 km/h", "a ciento veinte kilómetros por hora"),
    ("hace 25 °C", "hace veinticinco grados Celsius"),
    ("80 °F", "ochenta grados Fahrenheit"),
    ("5 cm y 3 mm", "cinco centímetros y tres milímetros"),
    ("250 g", "doscientos cincuenta gramos"),
    ("1,5 m", "uno coma cinco metros"),
    // Times.
    ("a las 15:30", "a las quince y treinta"),
    ("a las 9:05", "a las nueve y cinco"),
    ("a la 1:00", "a la una en punto"),
    ("a las 21:00", "a las veintiuna horas"),
    ("a las 15 h", "a las quince horas"),
    ("a las 15h30", "a las quince y treinta"),
    ("a las 8 p. m. y", "a las ocho de la noche y"),
    (
        "Llegó a las 3 p. m. y se fue.",
        "Llegó a las tres de la tarde y se fue.",
    ),
    ("a las 10:30 a. m.", "a las diez y treinta de la mañana."),
    // Dates.
    (
        "el 3 de abril de 2026",
        "el tres de abril de dos mil veintiséis",
    ),
    ("el 03/04/2026", "el tres de abril de dos mil veintiséis"),
    ("2026-04-03", "tres de abril de dos mil veintiséis"),
    ("el 1 de mayo", "el uno de mayo"),
    // Phone numbers and long digit strings.
    (
        "Llame al 912 345 678.",
        "Llame al nueve uno dos, tres cuatro cinco, seis siete ocho.",
    ),
    (
        "teléfono 91 234 56 78",
        "teléfono nueve uno, dos tres cuatro, cinco seis, siete ocho",
    ),
    // Fractions.
    ("3/4 de taza", "tres cuartos de taza"),
    ("1/3 del total", "un tercio del total"),
    ("2 1/2", "dos y medio"),
    // Abbreviations.
    (
        "El Sr. García y la Sra. Pérez",
        "El señor García y la señora Pérez",
    ),
    ("la Srta. Ruiz", "la señorita Ruiz"),
    (
        "El Dr. López y la Dra. Gil",
        "El doctor López y la doctora Gil",
    ),
    ("frutas, verduras, etc.", "frutas, verduras, etcétera."),
    ("p. ej. esto", "por ejemplo esto"),
    ("¿Ud. o Uds.?", "¿usted o ustedes?"),
    ("la casa núm. 5", "la casa número cinco"),
    // Roman numerals.
    ("Felipe VI", "Felipe sexto"),
    ("Alfonso XIII", "Alfonso trece"),
    ("Isabel II", "Isabel segunda"),
    ("el siglo XXI", "el siglo veintiuno"),
    ("capítulo IV", "capítulo cuatro"),
    // Symbols.
    ("Juan & Ana", "Juan y Ana"),
    ("2 + 2 = 4", "dos más dos igual a cuatro"),
    ("hola @ todos", "hola arroba todos"),
    ("el #1", "el número uno"),
    // Ranges.
    ("10–20 años", "diez a veinte años"),
];

#[test]
fn spanish_table() {
    check_table(Language::Spanish, TABLE);
}
