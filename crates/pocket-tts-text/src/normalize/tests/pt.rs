//! Portuguese cases, Brazilian Portuguese (the variant chosen in `pt.rs`). Conventions:
//! the Acordo Ortográfico de 1990 (month names in lower case, ordinals `1.º`/`1º`), the
//! *Manual de Redação da Presidência da República* (3rd ed., 2018: `R$ 19,99`,
//! `1.234.567`, `15h30`, `1º de janeiro`), Ciberdúvidas da Língua Portuguesa and the
//! Priberam dictionary (the conjunction "e" between the groups of a number: "mil e
//! duzentos", "mil duzentos e trinta e quatro"; "cem" and "cento e um"; ordinals;
//! `1,5 milhão` in the singular below two).

use super::check_table;
use crate::normalize::Language;

pub(super) const TABLE: &[(&str, &str)] = &[
    // Cardinals, the conjunction "e", decimals, signs.
    ("Tenho 3 maçãs.", "Tenho três maçãs."),
    ("o número 1", "o número um"),
    ("100 e 101", "cem e cento e um"),
    ("123 livros", "cento e vinte e três livros"),
    ("1.200 carros", "mil e duzentos carros"),
    ("1.234 carros", "mil duzentos e trinta e quatro carros"),
    (
        "1.234.567 habitantes",
        "um milhão duzentos e trinta e quatro mil quinhentos e sessenta e sete habitantes",
    ),
    ("2.000.000", "dois milhões"),
    ("10 000 habitantes", "dez mil habitantes"),
    ("16, 17 e 19", "dezesseis, dezessete e dezenove"),
    ("1,5 e 3,14", "um vírgula cinco e três vírgula catorze"),
    ("0,05", "zero vírgula zero cinco"),
    ("-5 e +7", "menos cinco e mais sete"),
    ("007", "zero zero sete"),
    // Gender.
    ("2 t", "duas toneladas"),
    ("200 t", "duzentas toneladas"),
    ("21 t", "vinte e uma toneladas"),
    ("1 kg", "um quilograma"),
    ("1,5 kg", "um vírgula cinco quilograma"),
    ("250 g", "duzentos e cinquenta gramas"),
    // Years.
    ("em 1999", "em mil novecentos e noventa e nove"),
    ("em 2026", "em dois mil e vinte e seis"),
    // Ordinals.
    ("o 1º e a 2ª", "o primeiro e a segunda"),
    ("o 3.º lugar", "o terceiro lugar"),
    ("a 21ª edição", "a vigésima primeira edição"),
    ("o 100º aniversário", "o centésimo aniversário"),
    // Money.
    (
        "Custa R$ 19,99.",
        "Custa dezenove reais e noventa e nove centavos.",
    ),
    ("R$ 1,00", "um real"),
    ("R$ 0,50", "cinquenta centavos"),
    ("R$ 2,5 milhões", "dois vírgula cinco milhões de reais"),
    ("R$ 1,5 milhão", "um vírgula cinco milhão de reais"),
    ("R$ 1.000.000", "um milhão de reais"),
    ("R$ 5 mil e R$ 1 mil", "cinco mil reais e mil reais"),
    ("R$ 3 bi", "três bilhões de reais"),
    ("€ 3,50", "três euros e cinquenta centavos"),
    ("3,50 €", "três euros e cinquenta centavos"),
    ("US$ 5", "cinco dólares"),
    ("£200", "duzentas libras"),
    ("2,5 milhões de €", "dois vírgula cinco milhões de euros"),
    // Percentages and units.
    ("25%", "vinte e cinco por cento"),
    ("a 120 km/h", "a cento e vinte quilômetros por hora"),
    ("faz 25 °C", "faz vinte e cinco graus Celsius"),
    ("5 cm e 3 mm", "cinco centímetros e três milímetros"),
    ("10 km", "dez quilômetros"),
    // Times.
    ("às 15h30", "às quinze e trinta"),
    ("às 15:30", "às quinze e trinta"),
    ("às 15h", "às quinze horas"),
    ("à 1h", "à uma hora"),
    ("às 9:05", "às nove e cinco"),
    ("às 21h15", "às vinte e uma e quinze"),
    ("às 0h", "às zero hora"),
    (
        "às 15:30:05",
        "às quinze horas, trinta minutos e cinco segundos",
    ),
    // Dates.
    (
        "em 3 de março de 2026",
        "em três de março de dois mil e vinte e seis",
    ),
    (
        "em 03/04/2026",
        "em três de abril de dois mil e vinte e seis",
    ),
    ("1º de maio", "primeiro de maio"),
    ("2026-04-03", "três de abril de dois mil e vinte e seis"),
    // Phone numbers.
    (
        "Ligue para 912 345 678.",
        "Ligue para nove um dois, três quatro cinco, seis sete oito.",
    ),
    (
        "(11) 98765-4321",
        "um um, nove oito sete seis cinco, quatro três dois um",
    ),
    // Fractions.
    ("3/4 de xícara", "três quartos de xícara"),
    ("1/3 do total", "um terço do total"),
    ("2 1/2", "dois e meio"),
    // Abbreviations.
    (
        "O Sr. Silva e a Sra. Souza",
        "O senhor Silva e a senhora Souza",
    ),
    (
        "O Dr. Lima e a Dra. Costa",
        "O doutor Lima e a doutora Costa",
    ),
    ("frutas, legumes, etc.", "frutas, legumes, etcétera."),
    ("p. ex. isto", "por exemplo isto"),
    ("a casa nº 5", "a casa número cinco"),
    (
        "Tel. 21 234 5678",
        "Telefone dois um, dois três quatro, cinco seis sete oito",
    ),
    ("na pág. 12", "na página doze"),
    // Roman numerals.
    ("D. João VI", "Dom João sexto"),
    ("D. Maria II", "Dona Maria segunda"),
    ("vitamina D. Ela", "vitamina D. Ela"),
    ("Luís XIV", "Luís catorze"),
    ("o século XXI", "o século vinte e um"),
    ("capítulo IV", "capítulo quatro"),
    // Symbols and ranges.
    ("João & Maria", "João e Maria"),
    ("2 + 2 = 4", "dois mais dois igual a quatro"),
    ("10–20 anos", "dez a vinte anos"),
];

#[test]
fn portuguese_table() {
    check_table(Language::Portuguese, TABLE);
}
