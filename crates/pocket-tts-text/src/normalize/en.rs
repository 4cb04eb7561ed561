//! English rules (US conventions: AP style for money, times and dates; Chicago Manual
//! of Style, chapter 9, for how numbers are written).
//!
//! - Numbers: `1,234,567.89`; cardinals without "and" ("one hundred twenty-three"),
//!   short scale (billion = 10⁹); decimals digit by digit ("three point one four").
//! - Years: bare four-digit numbers 1000–2099 are read as years ("nineteen ninety-nine",
//!   "two thousand five", "twenty twenty-six"); decades `1980s` → "nineteen eighties".
//! - Dates: numeric dates are month/day/year (US); when the first number cannot be a
//!   month (`25/12/2026`) day/month/year. Read "March fourth, twenty twenty-six";
//!   `4 March` → "the fourth of March".
//! - Times: 12-hour reading ("three thirty PM", "nine oh five"); 24-hour times after
//!   noon are said as PM (`15:30` → "three thirty PM"), `0:30` as "twelve thirty AM".
//! - Money: "nineteen dollars and ninety-nine cents", "two point five million dollars".

use super::rules::{
    ab, cur, st, unit, Abbrev, AbbrevWhen::*, Currencies, Date, DateOrder, DateStyle, Gender,
    LanguageData, LanguageRules, Meridiem, Out, Scale, ScaleToken, ScaleWords, Symbols, Time,
    UnitEntry, Words,
};
use super::scan::{boundary_at, match_table};

/// The English rules.
pub(crate) struct English;

const ONES: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: [&str; 10] = [
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];
const SCALES: [(u64, &str); 6] = [
    (1_000_000_000_000_000_000, "quintillion"),
    (1_000_000_000_000_000, "quadrillion"),
    (1_000_000_000_000, "trillion"),
    (1_000_000_000, "billion"),
    (1_000_000, "million"),
    (1_000, "thousand"),
];

fn push_word(s: &mut String, w: &str) {
    if !s.is_empty() {
        s.push(' ');
    }
    s.push_str(w);
}

fn below_100(n: u64, s: &mut String) {
    let n = n as usize % 100;
    if n < 20 {
        push_word(s, ONES[n]);
    } else {
        push_word(s, TENS[n / 10]);
        if !n.is_multiple_of(10) {
            s.push('-');
            s.push_str(ONES[n % 10]);
        }
    }
}

fn below_1000(n: u64, s: &mut String) {
    if n >= 100 {
        push_word(s, ONES[(n / 100) as usize]);
        s.push_str(" hundred");
    }
    if !n.is_multiple_of(100) {
        below_100(n % 100, s);
    }
}

/// "one hundred twenty-three".
pub(crate) fn cardinal_string(n: u64) -> String {
    if n == 0 {
        return ONES[0].to_string();
    }
    let mut s = String::new();
    let mut rest = n;
    for (scale, name) in SCALES {
        if rest >= scale {
            below_1000(rest / scale, &mut s);
            push_word(&mut s, name);
            rest %= scale;
        }
    }
    if rest > 0 {
        below_1000(rest, &mut s);
    }
    s
}

/// "twenty-first", "one hundredth".
fn ordinal_string(n: u64) -> String {
    let mut s = cardinal_string(n);
    let cut = s.rfind([' ', '-']).map_or(0, |k| k + 1);
    let last = s.split_off(cut);
    let irregular = match last.as_str() {
        "one" => Some("first"),
        "two" => Some("second"),
        "three" => Some("third"),
        "five" => Some("fifth"),
        "eight" => Some("eighth"),
        "nine" => Some("ninth"),
        "twelve" => Some("twelfth"),
        _ => None,
    };
    match irregular {
        Some(w) => s.push_str(w),
        None => match last.strip_suffix('y') {
            Some(stem) => {
                s.push_str(stem);
                s.push_str("ieth");
            }
            None => {
                s.push_str(&last);
                s.push_str("th");
            }
        },
    }
    s
}

/// "nineteen ninety-nine", "two thousand five", "nineteen oh five".
fn year_string(n: u64) -> String {
    if !(1000..=9999).contains(&n) || n.is_multiple_of(1000) || (2000..2010).contains(&n) {
        return cardinal_string(n);
    }
    let (hi, lo) = (n / 100, n % 100);
    let mut s = cardinal_string(hi);
    match lo {
        0 => s.push_str(" hundred"),
        1..=9 => {
            s.push_str(" oh ");
            s.push_str(ONES[lo as usize]);
        }
        _ => {
            s.push(' ');
            s.push_str(&cardinal_string(lo));
        }
    }
    s
}

/// Plural of a number word: "eighties", "hundreds".
fn pluralize(mut s: String) -> String {
    match s.strip_suffix('y') {
        Some(stem) => {
            let stem_len = stem.len();
            s.truncate(stem_len);
            s.push_str("ies");
        }
        None => s.push('s'),
    }
    s
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

const MONTH_WORDS: &[(&str, u8)] = &[
    ("January", 1),
    ("February", 2),
    ("March", 3),
    ("April", 4),
    ("May", 5),
    ("June", 6),
    ("July", 7),
    ("August", 8),
    ("September", 9),
    ("October", 10),
    ("November", 11),
    ("December", 12),
    ("Jan.", 1),
    ("Jan", 1),
    ("Feb.", 2),
    ("Feb", 2),
    ("Mar.", 3),
    ("Apr.", 4),
    ("Apr", 4),
    ("Jun.", 6),
    ("Jun", 6),
    ("Jul.", 7),
    ("Jul", 7),
    ("Aug.", 8),
    ("Aug", 8),
    ("Sept.", 9),
    ("Sept", 9),
    ("Sep.", 9),
    ("Sep", 9),
    ("Oct.", 10),
    ("Oct", 10),
    ("Nov.", 11),
    ("Nov", 11),
    ("Dec.", 12),
    ("Dec", 12),
];

const SCALE_TOKENS: &[ScaleToken] = &[
    st("trillion", Scale::Trillion, false),
    st("billion", Scale::Billion, false),
    st("million", Scale::Million, false),
    st("thousand", Scale::Thousand, false),
    st("tn", Scale::Trillion, true),
    st("bn", Scale::Billion, true),
    st("mn", Scale::Million, true),
    st("M", Scale::Million, true),
    st("m", Scale::Million, true),
    st("k", Scale::Thousand, true),
];

const M: Gender = Gender::Masculine;
const UNITS: &[UnitEntry] = &[
    unit("km", "kilometer", "kilometers", M),
    unit("m", "meter", "meters", M),
    unit("cm", "centimeter", "centimeters", M),
    unit("mm", "millimeter", "millimeters", M),
    unit("km²", "square kilometer", "square kilometers", M),
    unit("km2", "square kilometer", "square kilometers", M),
    unit("m²", "square meter", "square meters", M),
    unit("m2", "square meter", "square meters", M),
    unit("m³", "cubic meter", "cubic meters", M),
    unit("m3", "cubic meter", "cubic meters", M),
    unit("kg", "kilogram", "kilograms", M),
    unit("g", "gram", "grams", M),
    unit("mg", "milligram", "milligrams", M),
    unit("lb", "pound", "pounds", M),
    unit("lbs", "pounds", "pounds", M),
    unit("oz", "ounce", "ounces", M),
    unit("L", "liter", "liters", M),
    unit("l", "liter", "liters", M),
    unit("mL", "milliliter", "milliliters", M),
    unit("ml", "milliliter", "milliliters", M),
    unit("cl", "centiliter", "centiliters", M),
    unit("mi", "mile", "miles", M),
    unit("ft", "foot", "feet", M),
    unit("yd", "yard", "yards", M),
    unit("km/h", "kilometer per hour", "kilometers per hour", M),
    unit("kph", "kilometer per hour", "kilometers per hour", M),
    unit("mph", "mile per hour", "miles per hour", M),
    unit("m/s", "meter per second", "meters per second", M),
    unit("°C", "degree Celsius", "degrees Celsius", M),
    unit("°F", "degree Fahrenheit", "degrees Fahrenheit", M),
    unit("°", "degree", "degrees", M),
    unit("%", "percent", "percent", M),
    unit("‰", "per mille", "per mille", M),
    unit("h", "hour", "hours", M),
    unit("hr", "hour", "hours", M),
    unit("hrs", "hours", "hours", M),
    unit("min", "minute", "minutes", M),
    unit("s", "second", "seconds", M),
    unit("sec", "second", "seconds", M),
    unit("ms", "millisecond", "milliseconds", M),
    unit("Hz", "hertz", "hertz", M),
    unit("kHz", "kilohertz", "kilohertz", M),
    unit("MHz", "megahertz", "megahertz", M),
    unit("GHz", "gigahertz", "gigahertz", M),
    unit("W", "watt", "watts", M),
    unit("kW", "kilowatt", "kilowatts", M),
    unit("kWh", "kilowatt-hour", "kilowatt-hours", M),
    unit("V", "volt", "volts", M),
    unit("mAh", "milliamp-hour", "milliamp-hours", M),
    unit("KB", "kilobyte", "kilobytes", M),
    unit("kB", "kilobyte", "kilobytes", M),
    unit("MB", "megabyte", "megabytes", M),
    unit("GB", "gigabyte", "gigabytes", M),
    unit("TB", "terabyte", "terabytes", M),
    unit("Mbps", "megabit per second", "megabits per second", M),
];

const ABBREVIATIONS: &[Abbrev] = &[
    ab("Mr.", "Mister", Always),
    ab("Mrs.", "Missus", Always),
    ab("Ms.", "Miz", Always),
    ab("Dr.", "Doctor", Always),
    ab("Prof.", "Professor", Always),
    ab("Rev.", "Reverend", Always),
    ab("Hon.", "Honorable", Always),
    ab("Gen.", "General", Always),
    ab("Capt.", "Captain", Always),
    ab("Lt.", "Lieutenant", Always),
    ab("Col.", "Colonel", Always),
    ab("Sgt.", "Sergeant", Always),
    ab("Gov.", "Governor", Always),
    ab("Sen.", "Senator", Always),
    ab("Rep.", "Representative", Always),
    ab("Pres.", "President", Always),
    ab("Mt.", "Mount", Always),
    ab("Ft.", "Fort", Always),
    // Street after a name (`Main St.`), Saint before one (`St. Louis`), else street.
    ab("St.", "Street", AfterName),
    ab("St.", "Saint", BeforeName),
    ab("St.", "Street", MaybeFinal),
    ab("Jr.", "Junior", MaybeFinal),
    ab("Sr.", "Senior", MaybeFinal),
    ab("etc.", "et cetera", MaybeFinal),
    ab("Inc.", "Incorporated", MaybeFinal),
    ab("Ltd.", "Limited", MaybeFinal),
    ab("Corp.", "Corporation", MaybeFinal),
    ab("Co.", "Company", MaybeFinal),
    ab("Bros.", "Brothers", MaybeFinal),
    ab("Ave.", "Avenue", MaybeFinal),
    ab("Blvd.", "Boulevard", MaybeFinal),
    ab("Rd.", "Road", MaybeFinal),
    ab("Dept.", "Department", MaybeFinal),
    ab("Univ.", "University", MaybeFinal),
    ab("approx.", "approximately", Always),
    ab("e.g.", "for example", Always),
    ab("i.e.", "that is", Always),
    ab("vs.", "versus", Always),
    ab("cf.", "compare", Always),
    ab("a.k.a.", "also known as", Always),
    ab("No.", "number", BeforeNumber),
    ab("no.", "number", BeforeNumber),
    ab("Nos.", "numbers", BeforeNumber),
    ab("p.", "page", BeforeNumber),
    ab("pp.", "pages", BeforeNumber),
    ab("Fig.", "Figure", BeforeNumber),
    ab("fig.", "figure", BeforeNumber),
    ab("Vol.", "Volume", BeforeNumber),
    ab("vol.", "volume", BeforeNumber),
    ab("Ch.", "Chapter", BeforeNumber),
    ab("ch.", "chapter", BeforeNumber),
];

/// The English table.
static DATA: LanguageData = LanguageData {
    group_separators: &[',', '\u{a0}', '\u{202f}', '\u{2009}'],
    decimal_separator: '.',
    decimals_as_number: 0,
    words: Words {
        minus: "minus",
        plus: "plus",
        decimal_point: "point",
        version: "version",
        version_dot: "point",
        range_to: "to",
        and: "and",
    },
    phone_group_max: 4,
    phone_long_groups: false,
    currencies: Currencies {
        dollar: cur("dollar", "dollars", "cent", "cents", M),
        euro: cur("euro", "euros", "cent", "cents", M),
        pound: cur("pound", "pounds", "penny", "pence", M),
        yen: cur("yen", "yen", "", "", M),
        franc: cur("Swiss franc", "Swiss francs", "centime", "centimes", M),
        real: cur("real", "reais", "centavo", "centavos", M),
    },
    scale_tokens: SCALE_TOKENS,
    scale_connectors: &[],
    scale_words: ScaleWords {
        thousand: ("thousand", "thousand"),
        million: ("million", "million"),
        billion: ("billion", "billion"),
        trillion: ("trillion", "trillion"),
    },
    units: UNITS,
    date_order: DateOrder::MonthDayYear,
    month_words: MONTH_WORDS,
    month_before_day: true,
    date_connectors: &["of"],
    time_separators: &[':'],
    hour_letter_times: false,
    abbreviations: ABBREVIATIONS,
    roman_triggers: &[
        "chapter", "part", "volume", "book", "act", "scene", "section", "appendix", "war", "phase",
        "stage", "level", "type", "class", "episode", "season", "title", "article", "psalm",
        "canto", "bowl",
    ],
    regnal_names: &[],
    symbols: Symbols {
        ampersand: "and",
        plus: "plus",
        equals: "equals",
        at: "at",
        number_sign: "number",
        sharp: "sharp",
        hashtag: "hashtag",
        times: "times",
        divide: "divided by",
        plus_minus: "plus or minus",
        about: "about",
        section: "section",
        dot: "dot",
        slash: "slash",
        dash: "dash",
        underscore: "underscore",
        colon: "colon",
        question: "question mark",
        hash: "hash",
        percent: "percent",
        tilde: "tilde",
    },
};

impl LanguageRules for English {
    fn data(&self) -> &'static LanguageData {
        &DATA
    }

    fn digit(&self, d: u8) -> &'static str {
        ONES[usize::from(d % 10)]
    }

    fn cardinal(&self, n: u64, out: &mut Out) {
        out.word(&cardinal_string(n));
    }

    fn ordinal(&self, n: u64, _gender: Gender, out: &mut Out) {
        out.word(&ordinal_string(n));
    }

    fn ordinal_suffix(&self, n: u64, rest: &str) -> Option<(usize, Gender)> {
        let want = match (n % 100, n % 10) {
            (11..=13, _) => "th",
            (_, 1) => "st",
            (_, 2) => "nd",
            (_, 3) => "rd",
            _ => "th",
        };
        let head = rest.get(..2)?;
        (head.eq_ignore_ascii_case(want) && boundary_at(rest, 2)).then_some((2, Gender::Masculine))
    }

    fn special_suffix(&self, n: u64, rest: &str, out: &mut Out) -> Option<usize> {
        // Decades: `1980s`, `1980's`, `80s`.
        let len = if rest.starts_with("'s") {
            2
        } else if rest.starts_with('s') {
            1
        } else {
            return None;
        };
        let decade = n.is_multiple_of(10) && ((20..=90).contains(&n) || (1000..=2090).contains(&n));
        if !decade || !boundary_at(rest, len) {
            return None;
        }
        let words = if n >= 1000 {
            year_string(n)
        } else {
            cardinal_string(n)
        };
        out.word(&pluralize(words));
        Some(len)
    }

    fn year(&self, n: u64, out: &mut Out) {
        out.word(&year_string(n));
    }

    fn fraction(&self, num: u64, den: u64, mixed: bool, out: &mut Out) {
        let plural = num > 1;
        let name = match den {
            2 => (if plural { "halves" } else { "half" }).to_string(),
            4 => (if plural { "quarters" } else { "quarter" }).to_string(),
            _ => {
                let o = ordinal_string(den);
                if plural {
                    o + "s"
                } else {
                    o
                }
            }
        };
        if mixed && num == 1 {
            out.word("a");
        } else {
            self.cardinal(num, out);
        }
        out.word(&name);
    }

    fn is_plural(&self, int: u64, frac: Option<&str>) -> bool {
        int != 1 || frac.is_some()
    }

    fn month_at(&self, rest: &str) -> Option<(u8, usize)> {
        // All English month names are capitalised: most words fail here, cheaply.
        if !rest.as_bytes().first().is_some_and(u8::is_ascii_uppercase) {
            return None;
        }
        match_table(rest, 0, MONTH_WORDS)
    }

    fn date(&self, d: &Date<'_>, out: &mut Out) {
        let month = MONTHS[usize::from(d.month - 1)];
        if d.style == DateStyle::DayFirst {
            if !d.prev_word.eq_ignore_ascii_case("the") {
                out.word("the");
            }
            out.word(&ordinal_string(u64::from(d.day)));
            out.word("of");
            out.word(month);
            if let Some(y) = d.year {
                out.word(&year_string(y));
            }
        } else {
            out.word(month);
            out.word(&ordinal_string(u64::from(d.day)));
            if let Some(y) = d.year {
                out.raw(", ");
                out.word(&year_string(y));
            }
        }
    }

    fn time(&self, t: &Time, out: &mut Out) {
        let (hour, meridiem) = match (t.meridiem, t.hour) {
            (Some(m), h) => (h, Some(m)),
            (None, 0) => (12, Some(Meridiem::Am)),
            (None, h @ 13..) => (h - 12, Some(Meridiem::Pm)),
            (None, h) => (h, None),
        };
        out.word(ONES[usize::from(hour % 20)]);
        match t.minute {
            Some(0) if meridiem.is_none() && t.second.is_none() => out.word("o'clock"),
            Some(m @ 1..=9) => {
                out.word("oh");
                out.word(ONES[usize::from(m)]);
            }
            Some(m @ 10..) => out.word(&cardinal_string(u64::from(m))),
            _ => {}
        }
        if let Some(m) = meridiem {
            out.word(if m == Meridiem::Am { "AM" } else { "PM" });
        }
        if let Some(s) = t.second {
            out.word("and");
            out.word(&cardinal_string(u64::from(s)));
            out.word(if s == 1 { "second" } else { "seconds" });
        }
    }

    fn regnal(&self, n: u64, _gender: Gender, out: &mut Out) {
        out.word("the");
        out.word(&ordinal_string(n));
    }
}
