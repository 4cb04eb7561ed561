//! English cases. Conventions: The Chicago Manual of Style, 17th ed., chapter 9
//! "Numbers" (comma group separators, decimal point, years and decades, fractions,
//! times and dates as written) and The Associated Press Stylebook entries "dollars",
//! "cents", "times", "dates", "percent", "telephone numbers" (how they are said:
//! "nineteen dollars and ninety-nine cents", "three thirty PM", "March fourth"). US
//! readings: month/day numeric dates, short-scale billions, cardinals without "and".

use super::check_table;
use crate::normalize::Language;

pub(super) const TABLE: &[(&str, &str)] = &[
    // Cardinals, decimals, signs.
    ("I have 3 apples.", "I have three apples."),
    (
        "1,234,567 people",
        "one million two hundred thirty-four thousand five hundred sixty-seven people",
    ),
    (
        "It weighs 1,000,000,000,000 tons.",
        "It weighs one trillion tons.",
    ),
    ("pi is 3.14", "pi is three point one four"),
    ("a 0.5 chance", "a zero point five chance"),
    ("-5 and +7", "minus five and plus seven"),
    ("007", "zero zero seven"),
    (
        "12345678901234",
        "one two three four five six seven eight nine zero one two three four",
    ),
    // Ordinals.
    ("1st, 2nd, 3rd, 4th", "first, second, third, fourth"),
    ("the 22nd floor", "the twenty-second floor"),
    (
        "the 103rd and 111th",
        "the one hundred third and one hundred eleventh",
    ),
    // Years and decades.
    ("in 1999", "in nineteen ninety-nine"),
    ("in 2005", "in two thousand five"),
    ("in 2026", "in twenty twenty-six"),
    (
        "in 1905 and 1900",
        "in nineteen oh five and nineteen hundred",
    ),
    (
        "the 1980s and the 90s",
        "the nineteen eighties and the nineties",
    ),
    // Money.
    (
        "It costs $19.99.",
        "It costs nineteen dollars and ninety-nine cents.",
    ),
    ("$1 or $5", "one dollar or five dollars"),
    ("$0.50", "fifty cents"),
    (
        "€20 and £3.50",
        "twenty euros and three pounds and fifty pence",
    ),
    ("¥500", "five hundred yen"),
    ("$2.5 million", "two point five million dollars"),
    ("a $3bn deal", "a three billion dollars deal"),
    ("USD 100", "one hundred dollars"),
    ("-$5", "minus five dollars"),
    ("CHF 20", "twenty Swiss francs"),
    ("R$ 50", "fifty reais"),
    // Percentages and units.
    ("50% off", "fifty percent off"),
    ("up 3.5%", "up three point five percent"),
    (
        "It was -3 °C outside.",
        "It was minus three degrees Celsius outside.",
    ),
    ("98.6°F", "ninety-eight point six degrees Fahrenheit"),
    (
        "5 km, 1 km, 50 g",
        "five kilometers, one kilometer, fifty grams",
    ),
    ("2.5 kg of flour", "two point five kilograms of flour"),
    ("100 km/h", "one hundred kilometers per hour"),
    ("10 cm by 5 mm", "ten centimeters by five millimeters"),
    ("a 3m pole", "a three meters pole"),
    // Times.
    ("at 3:30 pm", "at three thirty PM"),
    ("at 3 p.m.", "at three PM."),
    ("at 15:30", "at three thirty PM"),
    ("9:05 and 10:00", "nine oh five and ten o'clock"),
    ("00:30", "twelve thirty AM"),
    // Dates.
    ("03/04/2026", "March fourth, twenty twenty-six"),
    ("25/12/2026", "December twenty-fifth, twenty twenty-six"),
    ("2026-03-04", "March fourth, twenty twenty-six"),
    ("on March 4, 2026.", "on March fourth, twenty twenty-six."),
    (
        "on 4 July 1776",
        "on the fourth of July seventeen seventy-six",
    ),
    ("the 4th of July", "the fourth of July"),
    ("Jan. 5", "January fifth"),
    ("in March 2026", "in March twenty twenty-six"),
    // Phone numbers and digit strings.
    (
        "Call 555-123-4567.",
        "Call five five five, one two three, four five six seven.",
    ),
    (
        "+1 555 123 4567",
        "plus one, five five five, one two three, four five six seven",
    ),
    (
        "(555) 123-4567",
        "five five five, one two three, four five six seven",
    ),
    // Abbreviations.
    ("Dr. Smith", "Doctor Smith"),
    ("Mr. and Mrs. Jones", "Mister and Missus Jones"),
    ("St. Louis", "Saint Louis"),
    ("221 Baker St.", "two hundred twenty-one Baker Street."),
    ("apples, pears, etc.", "apples, pears, et cetera."),
    ("e.g. this one", "for example this one"),
    ("No. 5", "number five"),
    ("see p. 12", "see page twelve"),
    ("No. I said no.", "No. I said no."),
    // Fractions.
    ("1/2 and 2/3", "one half and two thirds"),
    ("3/4 cup", "three quarters cup"),
    ("2 1/2 hours", "two and a half hours"),
    ("½", "one half"),
    ("24/7 and 3/12", "twenty-four/seven and three/twelve"),
    // Roman numerals.
    ("Louis XIV", "Louis the fourteenth"),
    ("Elizabeth II's reign", "Elizabeth the second's reign"),
    ("Chapter IV", "Chapter four"),
    ("World War II", "World War two"),
    ("I think I can", "I think I can"),
    ("MIX IT", "MIX IT"),
    // Symbols.
    ("R&D", "R and D"),
    ("2+2=4", "two plus two equals four"),
    ("#1 hit", "number one hit"),
    ("C# code", "C sharp code"),
    // URLs, e-mails, versions.
    (
        "Visit https://www.example.com/docs.",
        "Visit www dot example dot com slash docs.",
    ),
    (
        "Mail john.doe@example.com",
        "Mail john dot doe at example dot com",
    ),
    ("See example.org", "See example dot org"),
    ("v1.2.3", "version one point two point three"),
    ("Python 3.11.2", "Python three point eleven point two"),
    // Ranges and words with digits.
    ("10-20 people", "ten to twenty people"),
    ("pages 10–20", "pages ten to twenty"),
    (
        "No. 2024-0042",
        "number twenty twenty-four-zero zero four two",
    ),
    ("mp3 and COVID-19", "mp three and COVID-nineteen"),
    ("a 3D film", "a three D film"),
    // Left alone.
    ("Hello, world!", "Hello, world!"),
    ("日本語 ١٢٣", "日本語 ١٢٣"),
];

#[test]
fn english_table() {
    assert!(TABLE.len() >= 40);
    check_table(Language::English, TABLE);
}
