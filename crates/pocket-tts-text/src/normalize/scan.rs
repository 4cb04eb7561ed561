//! Character-level scanning: digit runs, numbers with separators, Roman numerals,
//! spaces, words. Every function takes a byte index that is a char boundary and returns
//! char boundaries only (ASCII bytes never occur inside a multi-byte character, so a
//! position found by an ASCII test is always a boundary).

/// The character at byte `i`.
pub(crate) fn char_at(text: &str, i: usize) -> Option<char> {
    text.get(i..).and_then(|s| s.chars().next())
}

/// The character before byte `i`.
pub(crate) fn prev_char(text: &str, i: usize) -> Option<char> {
    text.get(..i).and_then(|s| s.chars().next_back())
}

/// A letter (any script). Digits are not letters: every rule treats a digit next to a
/// word like a space, because digits are always rewritten into separate words.
pub(crate) fn is_letter(c: char) -> bool {
    c.is_alphabetic() || ('\u{300}'..='\u{36f}').contains(&c)
}

/// Whether the character at `i` (if any) is not a letter.
pub(crate) fn boundary_at(text: &str, i: usize) -> bool {
    !char_at(text, i).is_some_and(is_letter)
}

/// End of the run of ASCII digits starting at `i`.
pub(crate) fn digits_end(b: &[u8], i: usize) -> usize {
    let mut j = i;
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    j
}

/// Whether byte `i` is an ASCII digit.
pub(crate) fn digit_at(b: &[u8], i: usize) -> bool {
    b.get(i).is_some_and(u8::is_ascii_digit)
}

/// The value of an ASCII digit string of at most 18 digits (ignores anything else).
pub(crate) fn value(digits: &str) -> Option<u64> {
    let mut n: u64 = 0;
    let mut count = 0;
    for b in digits.bytes().filter(u8::is_ascii_digit) {
        count += 1;
        if count > 18 {
            return None;
        }
        n = n * 10 + u64::from(b - b'0');
    }
    (count > 0).then_some(n)
}

/// Horizontal spaces allowed inside a number or between a number and its unit.
pub(crate) fn is_inline_space(c: char) -> bool {
    matches!(c, ' ' | '\u{a0}' | '\u{202f}' | '\u{2009}')
}

/// `i` moved past at most one inline space.
pub(crate) fn skip_one_space(text: &str, i: usize) -> usize {
    match char_at(text, i) {
        Some(c) if is_inline_space(c) => i + c.len_utf8(),
        _ => i,
    }
}

/// `s.starts_with(prefix)`, testing the first byte before calling `memcmp` (most tests
/// fail there; this is the hot path of table lookups).
pub(crate) fn has_prefix(s: &str, prefix: &str) -> bool {
    let (s, p) = (s.as_bytes(), prefix.as_bytes());
    match (s.first(), p.first()) {
        (Some(a), Some(b)) if a == b => s.len() >= p.len() && s[..p.len()] == *p,
        (_, None) => true,
        _ => false,
    }
}

/// If `text[i..]` starts with `word` followed by a non-letter, the end of the word.
pub(crate) fn word_at(text: &str, i: usize, word: &str) -> Option<usize> {
    let rest = text.get(i..)?;
    if !has_prefix(rest, word) {
        return None;
    }
    let end = i + word.len();
    let ends_with_letter = word.chars().next_back().is_some_and(is_letter);
    (!ends_with_letter || boundary_at(text, end)).then_some(end)
}

/// End of the run of letters starting at `i`.
pub(crate) fn letters_end(text: &str, i: usize) -> usize {
    let mut j = i;
    for c in text[i..].chars() {
        if !is_letter(c) {
            break;
        }
        j += c.len_utf8();
    }
    j
}

/// A number as written: digits with optional group separators and decimals.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Number<'a> {
    /// First byte (the first digit).
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// The whole part as written, separators included.
    pub int_text: &'a str,
    /// Number of digits in the whole part.
    pub int_digits: usize,
    /// The whole part's value when it is read as a cardinal: not too long, and no
    /// leading zero in a plain run (`007`); else it is read digit by digit.
    pub value: Option<u64>,
    /// Whether group separators were used.
    pub grouped: bool,
    /// The decimals (ASCII digits).
    pub frac: Option<&'a str>,
}

/// Longest whole part read as a cardinal with group separators (`999,999,999,999,999`).
pub(crate) const MAX_GROUPED_DIGITS: usize = 15;
/// Longest whole part read as a cardinal without separators (`999999999`); longer runs
/// are identifiers or phone numbers and are read digit by digit.
pub(crate) const MAX_PLAIN_DIGITS: usize = 9;

impl Number<'_> {
    /// A plain integer: no separators, no decimals.
    pub fn is_plain_int(&self) -> bool {
        !self.grouped && self.frac.is_none()
    }
}

/// Parses the number starting at the digit at `i`, with the given group separators and
/// decimal separator.
pub(crate) fn parse_number<'a>(text: &'a str, i: usize, groups: &[char], dec: char) -> Number<'a> {
    let b = text.as_bytes();
    let first_end = digits_end(b, i);
    let mut end = first_end;
    let mut grouped = false;
    if first_end - i <= 3 {
        // Groups of exactly three digits, all with the same separator.
        let mut sep_used: Option<char> = None;
        while let Some(c) = char_at(text, end) {
            if !groups.contains(&c) || sep_used.is_some_and(|s| s != c) {
                break;
            }
            let g = end + c.len_utf8();
            let g_end = digits_end(b, g);
            if g_end - g != 3 {
                break;
            }
            sep_used = Some(c);
            grouped = true;
            end = g_end;
        }
    }
    let int_text = &text[i..end];
    let int_digits = int_text.bytes().filter(u8::is_ascii_digit).count();
    let mut frac = None;
    if char_at(text, end) == Some(dec) && digit_at(b, end + dec.len_utf8()) {
        let f = end + dec.len_utf8();
        let f_end = digits_end(b, f);
        frac = Some(&text[f..f_end]);
        end = f_end;
    }
    let leading_zero = !grouped && int_digits > 1 && int_text.starts_with('0');
    let max = if grouped {
        MAX_GROUPED_DIGITS
    } else {
        MAX_PLAIN_DIGITS
    };
    let value = if leading_zero || int_digits > max {
        None
    } else {
        value(int_text)
    };
    Number {
        start: i,
        end,
        int_text,
        int_digits,
        value,
        grouped,
        frac,
    }
}

/// The value of a canonical Roman numeral in capitals (`XIV`, not `IIII` or `IC`),
/// 1–3999.
pub(crate) fn roman_value(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 15 {
        return None;
    }
    let digit = |c: u8| match c {
        b'I' => Some(1),
        b'V' => Some(5),
        b'X' => Some(10),
        b'L' => Some(50),
        b'C' => Some(100),
        b'D' => Some(500),
        b'M' => Some(1000),
        _ => None,
    };
    let bytes = s.as_bytes();
    let mut total: i64 = 0;
    for (k, &c) in bytes.iter().enumerate() {
        let v = digit(c)?;
        match bytes.get(k + 1).and_then(|&n| digit(n)) {
            Some(next) if next > v => total -= v,
            _ => total += v,
        }
    }
    // Canonical form only: write it back and compare.
    let total = u64::try_from(total)
        .ok()
        .filter(|t| (1..=3999).contains(t))?;
    (to_roman(total) == s).then_some(total)
}

fn to_roman(mut n: u64) -> String {
    const TABLE: [(u64, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut s = String::new();
    for (v, r) in TABLE {
        while n >= v {
            s.push_str(r);
            n -= v;
        }
    }
    s
}

/// End of the run of Roman-numeral capitals starting at `i`.
pub(crate) fn roman_end(b: &[u8], i: usize) -> usize {
    let mut j = i;
    while j < b.len() && matches!(b[j], b'I' | b'V' | b'X' | b'L' | b'C' | b'D' | b'M') {
        j += 1;
    }
    j
}

/// Matches one of `table`'s words at `i` (case-sensitive, ending at a non-letter, or
/// right after a final `.`): the value and the end.
pub(crate) fn match_table<T: Copy>(
    text: &str,
    i: usize,
    table: &[(&str, T)],
) -> Option<(T, usize)> {
    table
        .iter()
        .filter_map(|&(w, v)| word_at(text, i, w).map(|end| (v, end)))
        .max_by_key(|&(_, end)| end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_with_separators() {
        let n = parse_number("1,234,567.89 x", 0, &[','], '.');
        assert_eq!(
            (n.value, n.frac, n.end, n.grouped),
            (Some(1234567), Some("89"), 12, true)
        );
        let n = parse_number("1,23", 0, &[','], '.');
        assert_eq!((n.value, n.end), (Some(1), 1));
        let n = parse_number("12\u{a0}345,5", 0, &[' ', '\u{a0}'], ',');
        assert_eq!((n.value, n.frac), (Some(12345), Some("5")));
        let n = parse_number("007", 0, &[], '.');
        assert_eq!(n.value, None);
        let n = parse_number("1234567890", 0, &[], '.');
        assert_eq!(n.value, None);
    }

    #[test]
    fn roman_numerals() {
        assert_eq!(roman_value("XIV"), Some(14));
        assert_eq!(roman_value("MCMXCIX"), Some(1999));
        assert_eq!(roman_value("IIII"), None);
        assert_eq!(roman_value("IC"), None);
        assert_eq!(roman_value("MIX"), Some(1009));
        assert_eq!(roman_value(""), None);
    }
}
