//! Readings shared by several languages, each with a table or a hook for what differs:
//! the defaults of [`LanguageRules`] (money, decimals) and the readings two or more
//! languages have in common (Spanish and Portuguese money and clock times, French and
//! Italian round millions, German and Dutch money and times). A language calls them from
//! its `LanguageRules` methods.

use super::rules::{CurrencyNames, Gender, LanguageRules, Meridiem, Money, Out, Scale, Time};
use super::scan::{boundary_at, value};

/// The default money reading (see [`LanguageRules::money`]); languages that override
/// `money` can call it for the cases they do not change.
pub(crate) fn default_money(r: &dyn LanguageRules, m: &Money<'_>, out: &mut Out) {
    let names = r.data().currency(m.currency);
    if m.negative {
        out.word(r.data().words.minus);
    }
    if let Some(scale) = m.scale {
        say_amount(r, m.int, m.frac, Gender::Masculine, out);
        out.word(r.data().scale_word(scale, r.is_plural(m.int, m.frac)));
        out.word(names.many);
        return;
    }
    let cents = m.cents(names);
    match cents {
        Some(c) => {
            if m.int > 0 || c == 0 {
                r.cardinal_before_noun(m.int, names.gender, out);
                out.word(if r.is_plural(m.int, None) {
                    names.many
                } else {
                    names.one
                });
            }
            if c > 0 {
                if m.int > 0 {
                    out.word(r.data().words.and);
                }
                r.cardinal_before_noun(c, names.minor_gender, out);
                out.word(if r.is_plural(c, None) {
                    names.minor_many
                } else {
                    names.minor_one
                });
            }
        }
        None => {
            match m.frac {
                Some(f) if !f.is_empty() => r.decimal(m.int, f, out),
                _ => r.cardinal_before_noun(m.int, names.gender, out),
            }
            out.word(if r.is_plural(m.int, m.frac) {
                names.many
            } else {
                names.one
            });
        }
    }
}

/// A whole number or a decimal, counting something of `gender`.
pub(crate) fn say_amount(
    r: &dyn LanguageRules,
    int: u64,
    frac: Option<&str>,
    gender: Gender,
    out: &mut Out,
) {
    match frac {
        Some(f) if !f.is_empty() => r.decimal(int, f, out),
        _ => r.cardinal_gender(int, gender, out),
    }
}

/// A whole number or a decimal counting nothing in particular (`uno`, not `un`).
pub(crate) fn say_amount_plain(r: &dyn LanguageRules, int: u64, frac: Option<&str>, out: &mut Out) {
    match frac {
        Some(f) if !f.is_empty() => r.decimal(int, f, out),
        _ => r.cardinal(int, out),
    }
}

/// The default [`LanguageRules::decimal`]: the cardinal, the decimal point word, then
/// the decimals: digit by digit when longer than
/// [`decimals_as_number`](super::rules::LanguageData::decimals_as_number), else their
/// leading zeros as digits and the rest as a number (`3,05` « trois virgule zéro cinq »,
/// `3,14` « trois virgule quatorze »).
pub(crate) fn default_decimal(r: &dyn LanguageRules, int: u64, frac: &str, out: &mut Out) {
    r.cardinal(int, out);
    out.word(r.data().words.decimal_point);
    if frac.len() > r.data().decimals_as_number {
        out.digits(r, frac);
        return;
    }
    let zeros = frac.bytes().take_while(|&b| b == b'0').count();
    for _ in 0..zeros {
        out.word(r.digit(0));
    }
    if let Some(v) = value(&frac[zeros..]) {
        r.cardinal(v, out);
    }
}

/// The first of `suffixes` that `rest` starts with, ending at a non-letter: its length
/// and the gender it marks (ordinal suffixes: `º`, `ª`, `er`).
pub(crate) fn suffix_at(rest: &str, suffixes: &[(&str, Gender)]) -> Option<(usize, Gender)> {
    suffixes.iter().find_map(|&(s, g)| {
        (rest.starts_with(s) && boundary_at(rest, s.len())).then_some((s.len(), g))
    })
}

/// `s` with its first letter upper-cased (German "der Dritte", Dutch "de Derde",
/// German "Drittel").
pub(crate) fn capitalised(s: &str) -> String {
    let mut cs = s.chars();
    cs.next()
        .map(|c| c.to_uppercase().chain(cs).collect())
        .unwrap_or_default()
}

/// Whether `word` (the word before a number, if any) is one of `words`, ignoring case
/// (`Teléfono 912 345 678`).
pub(crate) fn word_is_one_of(word: Option<&str>, words: &[&str]) -> bool {
    word.is_some_and(|w| words.contains(&w.to_lowercase().as_str()))
}

/// A regnal number read as the ordinal up to ten and as the cardinal above (Spanish
/// "Felipe sexto", "Alfonso trece"; Portuguese "Dom João sexto", "Luís catorze").
pub(crate) fn regnal_ordinal_to_ten(r: &dyn LanguageRules, n: u64, gender: Gender, out: &mut Out) {
    if n <= 10 {
        r.ordinal(n, gender, out);
    } else {
        r.cardinal(n, out);
    }
}

// ----- Spanish and Portuguese ------------------------------------------------------------

/// Spanish and Portuguese money: "diecinueve euros con noventa y nueve céntimos" /
/// "dezenove reais e noventa e nove centavos", "un millón de euros" (`de` after round
/// millions and after a scale other than thousands), "dos coma cinco millones de euros",
/// "mil euros" (not "un mil"). `cents_and`: the word before the hundredths (`con`, `e`).
pub(crate) fn money_with_de(r: &dyn LanguageRules, m: &Money<'_>, cents_and: &str, out: &mut Out) {
    const OF: &str = "de";
    let data = r.data();
    let names = data.currency(m.currency);
    if m.negative {
        out.word(data.words.minus);
    }
    // No decimals: a whole amount, read as one with no hundredths.
    let cents = match m.frac {
        None => Some(0),
        Some(_) => m.cents(names),
    };
    let Some(c) = cents.filter(|_| m.scale.is_none()) else {
        match m.frac {
            Some(f) if !f.is_empty() => r.decimal(m.int, f, out),
            // "mil euros", not "un mil".
            _ if m.int == 1 && m.scale == Some(Scale::Thousand) => {}
            _ => r.cardinal_before_noun(m.int, names.gender, out),
        }
        let plural = r.is_plural(m.int, m.frac);
        if let Some(s) = m.scale {
            out.word(data.scale_word(s, plural));
            if s != Scale::Thousand {
                out.word(OF);
            }
        }
        // "mil dólares", "un millón de euros": the currency counts the scale.
        out.word(if plural || m.scale.is_some() {
            names.many
        } else {
            names.one
        });
        return;
    };
    if m.int > 0 || c == 0 {
        r.cardinal_before_noun(m.int, names.gender, out);
        if m.int > 0 && m.int.is_multiple_of(1_000_000) {
            out.word(OF);
        }
        out.word(if m.int == 1 { names.one } else { names.many });
    }
    if c > 0 {
        if m.int > 0 {
            out.word(cents_and);
        }
        r.cardinal_before_noun(c, names.minor_gender, out);
        out.word(if c == 1 {
            names.minor_one
        } else {
            names.minor_many
        });
    }
}

/// The words of a clock read "hour and minutes" with the part of the day (Spanish
/// "quince y treinta", "tres de la tarde"; Portuguese "quinze e trinta", "três da
/// tarde"): what [`day_part_time`] reads with.
#[derive(Debug)]
pub(crate) struct DayPartClock {
    /// The hour, singular and plural (`hora`, `horas`).
    pub hour: (&'static str, &'static str),
    /// The minute, singular and plural.
    pub minute: (&'static str, &'static str),
    /// The second, singular and plural.
    pub second: (&'static str, &'static str),
    /// Written raw between the hours and the minutes of a time with seconds (`", "` in
    /// Portuguese, empty in Spanish).
    pub before_minutes_with_seconds: &'static str,
    /// Said after a full hour of the 12-hour clock written with its minutes (`9:00` →
    /// Spanish "nueve en punto"); `None`: the hour word, as for any full hour.
    pub on_the_hour: Option<&'static str>,
    /// After 12 am (midnight): "de la noche".
    pub am_twelve: &'static str,
    /// After any other am hour: "de la mañana".
    pub am: &'static str,
    /// After 12 pm (noon): "del mediodía".
    pub pm_twelve: &'static str,
    /// The first pm hour of the evening (8 in Spanish, 7 in Portuguese); 12 pm excepted,
    /// until 11 pm.
    pub evening_from: u8,
    /// After an evening hour: "de la noche".
    pub evening: &'static str,
    /// After the other pm hours: "de la tarde".
    pub pm: &'static str,
}

/// A time read "hour and minutes" (see [`DayPartClock`]): the hour as a feminine
/// cardinal, then with minutes "y"/"e" (the language's `and`) and the minutes; with
/// seconds, "N horas, M minutos y S segundos"; a full hour with its word (or
/// [`DayPartClock::on_the_hour`]); with am/pm, the part of the day instead of the hour
/// word.
pub(crate) fn day_part_time(r: &dyn LanguageRules, c: &DayPartClock, t: &Time, out: &mut Out) {
    let h = u64::from(t.hour);
    let pick = |(one, many): (&'static str, &'static str), plural: bool| {
        if plural {
            many
        } else {
            one
        }
    };
    let hours = pick(c.hour, r.is_plural(h, None));
    r.cardinal_gender(h, Gender::Feminine, out);
    let minute = t.minute.unwrap_or(0);
    let and = r.data().words.and;
    if let Some(s) = t.second {
        out.word(hours);
        if !c.before_minutes_with_seconds.is_empty() {
            out.raw(c.before_minutes_with_seconds);
        }
        r.cardinal_before_noun(u64::from(minute), Gender::Masculine, out);
        out.word(pick(c.minute, minute != 1));
        out.word(and);
        r.cardinal_before_noun(u64::from(s), Gender::Masculine, out);
        out.word(pick(c.second, s != 1));
    } else if minute > 0 {
        out.word(and);
        r.cardinal(u64::from(minute), out);
    } else if t.meridiem.is_some() {
        // "las tres de la tarde": the part of the day says it all.
    } else {
        match c.on_the_hour {
            Some(w) if t.minute.is_some() && (1..=12).contains(&h) => out.word(w),
            _ => out.word(hours),
        }
    }
    match (t.meridiem, t.hour) {
        (Some(Meridiem::Am), 12) => out.word(c.am_twelve),
        (Some(Meridiem::Am), _) => out.word(c.am),
        (Some(Meridiem::Pm), 12) => out.word(c.pm_twelve),
        (Some(Meridiem::Pm), h) if (c.evening_from..=11).contains(&h) => out.word(c.evening),
        (Some(Meridiem::Pm), _) => out.word(c.pm),
        (None, _) => {}
    }
}

// ----- French and Italian ----------------------------------------------------------------

/// French and Italian money: with a scale (`2,5 M€`) or a round number of millions
/// (`1 000 000 €`) « deux virgule cinq millions d'euros », « un milione di dollari »: the
/// currency after `of` (French `de`/`d'`, Italian `di`), but none after thousands
/// (« cinq mille euros »); any other amount, the default reading.
pub(crate) fn money_of_millions(
    r: &dyn LanguageRules,
    m: &Money<'_>,
    of: fn(&str, &mut Out),
    out: &mut Out,
) {
    let data = r.data();
    let names = data.currency(m.currency);
    let whole = m.frac.is_none_or(|f| f.bytes().all(|b| b == b'0'));
    let round_millions = whole && m.int >= 1_000_000 && m.int.is_multiple_of(1_000_000);
    if m.scale.is_none() && !round_millions {
        return default_money(r, m, out);
    }
    if m.negative {
        out.word(data.words.minus);
    }
    match m.scale {
        Some(scale) => {
            say_amount(r, m.int, m.frac, Gender::Masculine, out);
            out.word(data.scale_word(scale, r.is_plural(m.int, m.frac)));
            if scale == Scale::Thousand {
                out.word(names.many);
            } else {
                of(names.many, out);
            }
        }
        None => {
            r.cardinal_gender(m.int, Gender::Masculine, out);
            of(names.many, out);
        }
    }
}

// ----- German and Dutch -------------------------------------------------------------------

/// German and Dutch money with hundredths: the amount and the currency, then the
/// hundredths without their name ("neunzehn Euro neunundneunzig", "drie euro vijftig");
/// hundredths alone keep it ("fünfzig Cent", "vijftig cent"). `cents`: the hundredths,
/// `0` for an amount written with zero decimals.
pub(crate) fn money_bare_cents(
    r: &dyn LanguageRules,
    int: u64,
    cents: u64,
    names: &CurrencyNames,
    out: &mut Out,
) {
    if int > 0 || cents == 0 {
        r.cardinal_before_noun(int, names.gender, out);
        out.word(names.one);
    }
    if cents > 0 {
        if int == 0 {
            r.cardinal_before_noun(cents, names.minor_gender, out);
            out.word(if cents == 1 {
                names.minor_one
            } else {
                names.minor_many
            });
        } else {
            r.cardinal(cents, out);
        }
    }
}

/// The words of a clock read "hours, the hour word, minutes" (German "fünfzehn Uhr
/// dreißig", Dutch "vijftien uur dertig"): what [`hour_word_time`] and
/// [`hour_word_suffix`] read with.
#[derive(Debug)]
pub(crate) struct HourWordClock {
    /// Said after the hours (`Uhr`, `uur`), and skipped when written after a time.
    pub hour_word: &'static str,
    /// The second, singular and plural.
    pub second: (&'static str, &'static str),
}

/// A time read "N <hour word> [M] [and S seconds]": the hours before the hour word as
/// before a neuter noun (German "ein Uhr"), the minutes unless zero, the seconds after
/// the language's `and` as before a feminine noun ("eine Sekunde").
pub(crate) fn hour_word_time(r: &dyn LanguageRules, c: &HourWordClock, t: &Time, out: &mut Out) {
    r.cardinal_before_noun(u64::from(t.hour), Gender::Neuter, out);
    out.word(c.hour_word);
    if let Some(m @ 1..) = t.minute {
        r.cardinal(u64::from(m), out);
    }
    if let Some(s) = t.second {
        out.word(r.data().words.and);
        r.cardinal_before_noun(u64::from(s), Gender::Feminine, out);
        out.word(if s == 1 { c.second.0 } else { c.second.1 });
    }
}

/// [`LanguageRules::time_suffix`] for [`hour_word_time`]: a space and the hour word
/// written after a time (`15:30 Uhr`), already read.
pub(crate) fn hour_word_suffix(c: &HourWordClock, rest: &str) -> usize {
    match rest
        .strip_prefix(' ')
        .and_then(|r| r.strip_prefix(c.hour_word))
    {
        Some(after) if !after.starts_with(char::is_alphanumeric) => 1 + c.hour_word.len(),
        _ => 0,
    }
}
