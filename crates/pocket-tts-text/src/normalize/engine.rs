//! The single pass over the text: at each position, the first rule that recognises a
//! span writes its reading and the pass continues after it; anything else is copied.
//! Rules starting at a digit or at a currency sign live in `numbers.rs`; this file has
//! the loop, the rules starting at a letter (URLs, e-mails, versions, abbreviations,
//! Roman numerals, English month-first dates) and the stand-alone symbols.
//!
//! Idempotence rests on three habits: every ASCII digit is rewritten (so no digit rule
//! fires on a second pass), every context test treats a digit like a space (the digit
//! becomes a separate word), and context to the left is read from the output written so
//! far (what a second pass would see).

use std::cmp::Reverse;

use super::address::{address_at, is_url_punct};
use super::rules::{
    Abbrev, AbbrevWhen, Date, DateStyle, Gender, LanguageRules, Out, Sym, UnitEntry,
};
use super::scan::{
    boundary_at, char_at, digit_at, digits_end, is_inline_space, is_letter, letters_end, prev_char,
    roman_end, roman_value, skip_one_space, value,
};

/// A language's rules with its tables sorted for matching (longest first).
pub(crate) struct Tables {
    pub(crate) rules: &'static dyn LanguageRules,
    /// Abbreviations by their first byte, longest first.
    pub(crate) abbrevs: Vec<Vec<&'static Abbrev>>,
    pub(crate) units: Vec<&'static UnitEntry>,
}

impl Tables {
    pub(crate) fn new(rules: &'static dyn LanguageRules) -> Tables {
        let mut abbrevs: Vec<Vec<&'static Abbrev>> = vec![Vec::new(); 256];
        for a in rules.data().abbreviations {
            if let Some(&first) = a.text.as_bytes().first() {
                abbrevs[usize::from(first)].push(a);
            }
        }
        for list in &mut abbrevs {
            list.sort_by_key(|a| Reverse(a.text.len()));
        }
        let mut units: Vec<&'static UnitEntry> = rules.data().units.iter().collect();
        units.sort_by_key(|u| Reverse(u.symbol.len()));
        Tables {
            rules,
            abbrevs,
            units,
        }
    }
}

/// Regnal names shared by all languages: a Roman numeral after one of these is a regnal
/// number (`Louis XIV`, `Elizabeth II`, `Benedict XVI`). Languages add theirs with
/// [`LanguageRules::regnal_names`].
const REGNAL_NAMES: &[&str] = &[
    "Albert",
    "Alexander",
    "Alexandre",
    "Alfonso",
    "Alphonse",
    "Anne",
    "Benedict",
    "Benoît",
    "Boniface",
    "Carlos",
    "Catherine",
    "Charles",
    "Clement",
    "Clément",
    "Constantine",
    "Constantin",
    "Edward",
    "Elizabeth",
    "Elisabeth",
    "Élisabeth",
    "Ferdinand",
    "Francis",
    "François",
    "Frederick",
    "Frédéric",
    "George",
    "Georges",
    "Gregory",
    "Grégoire",
    "Henri",
    "Henry",
    "Innocent",
    "Isabel",
    "Isabella",
    "James",
    "Jacques",
    "Jean",
    "John",
    "Juan",
    "Leo",
    "Léon",
    "Leopold",
    "Léopold",
    "Louis",
    "Ludwig",
    "Mary",
    "Marie",
    "Napoleon",
    "Napoléon",
    "Nicholas",
    "Nicolas",
    "Paul",
    "Peter",
    "Philip",
    "Philippe",
    "Pie",
    "Pierre",
    "Pius",
    "Ptolemy",
    "Ramesses",
    "Ramses",
    "Richard",
    "Rainier",
    "Sixtus",
    "Urban",
    "Victor",
    "Victoria",
    "Wilhelm",
    "William",
    "Willem",
];

pub(crate) struct Engine<'a> {
    pub(super) r: &'static dyn LanguageRules,
    pub(super) t: &'a Tables,
    pub(super) text: &'a str,
    pub(super) b: &'a [u8],
    pub(super) out: Out,
}

/// Normalizes `text` with the language tables `t`.
pub(crate) fn run(t: &Tables, text: &str) -> String {
    let mut e = Engine {
        r: t.rules,
        t,
        text,
        b: text.as_bytes(),
        out: Out {
            s: String::with_capacity(text.len() + text.len() / 2 + 16),
            pending_space: false,
        },
    };
    let mut i = 0;
    while i < text.len() {
        let next = e.step(i);
        debug_assert!(next > i, "no progress at byte {i}");
        i = if next > i {
            next
        } else {
            // Never reached: every rule consumes something. Copy a character to be sure
            // the pass ends.
            let len = char_at(text, i).map_or(1, char::len_utf8);
            e.copy(&text[i..i + len]);
            i + len
        };
    }
    e.out.s
}

impl<'a> Engine<'a> {
    /// Handles the span starting at `i`; returns where the next one starts (> `i`).
    fn step(&mut self, i: usize) -> usize {
        let text = self.text;
        let Some(c) = char_at(text, i) else {
            return text.len();
        };
        let next = i + c.len_utf8();
        if (c.is_ascii_alphanumeric() || is_letter(c)) && self.token_start(i, c) {
            if let Some(end) = self.web_address(i) {
                return end;
            }
        }
        if c.is_ascii_digit() {
            return self.at_digit(i, None);
        }
        if is_letter(c) {
            if !prev_char(text, i).is_some_and(is_letter) {
                if let Some(end) = self.at_word(i, c) {
                    return end;
                }
            }
            let end = letters_end(text, i).max(next);
            self.copy(&text[i..end]);
            return end;
        }
        if let Some(end) = self.at_symbol(i, c) {
            return end;
        }
        self.copy(&text[i..next]);
        next
    }

    /// Copies input text, after a space if a rule has just written a word and `s` starts
    /// with a letter or digit.
    pub(super) fn copy(&mut self, s: &str) {
        if self.out.pending_space && s.chars().next().is_some_and(char::is_alphanumeric) {
            self.out.s.push(' ');
        }
        if self.out.pending_space && s.starts_with(is_url_punct) {
            self.separate_from_address(s);
        }
        self.out.s.push_str(s);
        self.out.pending_space = false;
    }

    /// A rule has just written a word and `s` (the next input, from a URL punctuation
    /// character) would make an address with it (`@.com` → `at.com`): a space keeps a
    /// second pass from reading the two as one address.
    fn separate_from_address(&mut self, s: &str) {
        let out = self.out.s.as_str();
        let tail_len = out
            .bytes()
            .rev()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'-')
            .count();
        if tail_len == 0 {
            return;
        }
        let start = s.as_ptr() as usize - self.text.as_ptr() as usize;
        let rest = &self.text[start..];
        let cut = rest
            .char_indices()
            .map(|(k, c)| k + c.len_utf8())
            .take_while(|&k| k <= 512)
            .last()
            .unwrap_or(0);
        let mut joined = String::with_capacity(tail_len + cut);
        joined.push_str(&out[out.len() - tail_len..]);
        joined.push_str(&rest[..cut]);
        if address_at(&joined).is_some_and(|(_, len)| len > tail_len) {
            self.out.s.push(' ');
        }
    }

    /// The last word of the output when only whitespace follows it (the word before the
    /// current position, as a second pass would see it).
    pub(super) fn prev_out_word(&self) -> Option<&str> {
        let s = self.out.s.as_str();
        let trimmed = s.trim_end_matches(char::is_whitespace);
        if trimmed.len() == s.len() && !self.out.pending_space {
            return None;
        }
        let start = trimmed
            .char_indices()
            .rev()
            .take_while(|&(_, c)| is_letter(c))
            .last()
            .map(|(k, _)| k)?;
        Some(&trimmed[start..])
    }

    /// Whether a URL or e-mail may start at `i`: after a character that cannot be inside
    /// one, or where a space will separate `i` from what precedes it in the output.
    fn token_start(&self, i: usize, c: char) -> bool {
        match prev_char(self.text, i) {
            None => true,
            Some(p) => {
                self.out.pending_space
                    || (c.is_ascii_digit() && p.is_alphanumeric())
                    || !(p.is_alphanumeric() || is_url_punct(p))
            }
        }
    }

    /// Rules at the start of a word (`c` is a letter after a non-letter).
    fn at_word(&mut self, i: usize, c: char) -> Option<usize> {
        if matches!(c, 'v' | 'V') && digit_at(self.b, i + 1) {
            return Some(self.version(i + 1, true));
        }
        if c.is_ascii_uppercase() {
            if let Some(end) = self.money_first(i, false) {
                return Some(end);
            }
        }
        if self.r.data().month_before_day {
            if let Some(end) = self.month_first_date(i) {
                return Some(end);
            }
        }
        if let Some(end) = self.abbreviation(i) {
            return Some(end);
        }
        if c.is_ascii_uppercase() {
            return self.roman(i);
        }
        None
    }

    /// Whether the text after `end` closes a sentence (end of text, a line break, or
    /// spaces then a capital).
    pub(super) fn sentence_final(&self, end: usize) -> bool {
        let mut j = end;
        loop {
            match char_at(self.text, j) {
                None | Some('\n' | '\r') => return true,
                Some(c) if is_inline_space(c) || c == '\t' => j += c.len_utf8(),
                Some(c) => return j > end && c.is_uppercase(),
            }
        }
    }

    /// The abbreviation at `i` whose condition holds, and its end.
    fn abbreviation_at(&self, i: usize) -> Option<(&'static Abbrev, usize)> {
        let text = self.text;
        let rest = &text[i..];
        let first = *rest.as_bytes().first()?;
        for &a in &self.t.abbrevs[usize::from(first)] {
            if !rest.starts_with(a.text) {
                continue;
            }
            let end = i + a.text.len();
            if a.text.chars().next_back().is_some_and(is_letter) && !boundary_at(text, end) {
                continue;
            }
            let fire = match a.when {
                AbbrevWhen::Always | AbbrevWhen::MaybeFinal => true,
                AbbrevWhen::BeforeNumber => digit_at(self.b, skip_one_space(text, end)),
                AbbrevWhen::BeforeName => {
                    let mut j = end;
                    while let Some(c) = char_at(text, j).filter(|&c| is_inline_space(c)) {
                        j += c.len_utf8();
                    }
                    char_at(text, j).is_some_and(char::is_uppercase)
                }
                AbbrevWhen::AfterName => self
                    .prev_out_word()
                    .and_then(|w| w.chars().next())
                    .is_some_and(char::is_uppercase),
            };
            if fire {
                return Some((a, end));
            }
        }
        None
    }

    fn abbreviation(&mut self, i: usize) -> Option<usize> {
        let (a, end) = self.abbreviation_at(i)?;
        self.out.word(a.expansion);
        if matches!(a.when, AbbrevWhen::MaybeFinal | AbbrevWhen::AfterName)
            && a.text.ends_with('.')
            && self.sentence_final(end)
        {
            self.out.raw(".");
        }
        Some(end)
    }

    /// Roman numerals: after a regnal name (`Louis XIV`), after a trigger word
    /// (`chapter IV`), before a word that makes them ordinals (Italian `XIX secolo`), or
    /// with an ordinal suffix (`XIXe`).
    fn roman(&mut self, i: usize) -> Option<usize> {
        let text = self.text;
        let rend = roman_end(self.b, i);
        let roman = &text[i..rend];
        let n = roman_value(roman)?;
        let r = self.r;
        let suffix = r.ordinal_suffix(n, &text[rend..]);
        let (regnal, trigger, name_gender) = match self.prev_out_word() {
            Some(w) => (
                REGNAL_NAMES.contains(&w) || r.data().regnal_names.contains(&w),
                r.data()
                    .roman_triggers
                    .iter()
                    .copied()
                    .find(|t| w.chars().flat_map(char::to_lowercase).eq(t.chars())),
                r.regnal_gender(w),
            ),
            None => (false, None, Gender::Masculine),
        };
        if regnal && n <= 50 {
            if let Some((len, gender)) = suffix {
                r.regnal(n, gender, &mut self.out);
                return Some(rend + len);
            }
            // "I" alone is the pronoun unless punctuation or the end follows it.
            let next = char_at(text, rend);
            let ok = match next {
                None => true,
                Some(c) if is_letter(c) => false,
                Some(c) => n != 1 || !c.is_whitespace(),
            };
            if ok {
                r.regnal(n, name_gender, &mut self.out);
                return Some(rend);
            }
        }
        if let Some(word) = trigger.filter(|_| boundary_at(text, rend)) {
            r.roman_after_trigger(n, word, &mut self.out);
            return Some(rend);
        }
        if let Some(gender) = r.roman_before_word(&text[rend..]) {
            r.ordinal(n, gender, &mut self.out);
            return Some(rend);
        }
        if roman.len() >= 2 {
            if let Some((len, gender)) = suffix {
                if char_at(text, rend).is_some_and(|c| c.is_lowercase()) {
                    r.ordinal(n, gender, &mut self.out);
                    return Some(rend + len);
                }
            }
        }
        None
    }

    /// `March 4`, `March 4th, 2026` (languages with [`LanguageRules::month_before_day`]).
    fn month_first_date(&mut self, i: usize) -> Option<usize> {
        let text = self.text;
        let (month, len) = self.r.month_at(&text[i..])?;
        let mend = i + len;
        let d0 = skip_one_space(text, mend);
        if d0 == mend || !digit_at(self.b, d0) {
            return None;
        }
        let dend = digits_end(self.b, d0);
        if dend - d0 > 2 {
            return None;
        }
        let day = value(&text[d0..dend])?;
        let mut end = dend;
        if let Some((l, _)) = self.r.ordinal_suffix(day, &text[dend..]) {
            end += l;
        } else if !self.number_ends_cleanly(dend) {
            return None;
        }
        let (year, yend) = match self.year_after(end) {
            Some((y, e)) => (Some(y), e),
            None => (None, end),
        };
        let day = valid_day(day, month)?;
        let prev = self.prev_out_word().unwrap_or("").to_owned();
        let d = Date {
            day,
            month,
            year,
            style: DateStyle::MonthFirst,
            prev_word: &prev,
        };
        self.r.date(&d, &mut self.out);
        Some(yend)
    }

    /// Whether a number ending at `end` is complete: no letter or digit after it, and no
    /// separator followed by a digit (`3:30`, `3.5`, `3/4`).
    pub(super) fn number_ends_cleanly(&self, end: usize) -> bool {
        match char_at(self.text, end) {
            None => true,
            Some(c) if c.is_alphanumeric() => false,
            Some(':' | '.' | ',' | '/') => !digit_at(self.b, end + 1),
            Some(_) => true,
        }
    }

    /// A four-digit year after a date's day or month: `, 2026`, ` 2026`, ` de 2026`.
    pub(super) fn year_after(&self, end: usize) -> Option<(u64, usize)> {
        let text = self.text;
        let mut j = end;
        if text[j..].starts_with(',') {
            j += 1;
        }
        let k = skip_one_space(text, j);
        if k == j {
            return None;
        }
        let mut k2 = k;
        for c in self.r.data().date_connectors {
            if let Some(e) = super::scan::word_at(text, k, c) {
                let after = skip_one_space(text, e);
                if after > e {
                    k2 = after;
                }
                break;
            }
        }
        let yend = digits_end(self.b, k2);
        if yend - k2 != 4 || !self.number_ends_cleanly(yend) {
            return None;
        }
        let y = value(&text[k2..yend])?;
        (1000..=2999).contains(&y).then_some((y, yend))
    }

    /// `v1.2.3` (from the first digit at `i`, `prefixed` when a `v` was written) and
    /// dotted versions and addresses `3.11.2`: the parts as numbers, joined by the
    /// version dot word.
    pub(super) fn version(&mut self, i: usize, prefixed: bool) -> usize {
        let (text, b, r) = (self.text, self.b, self.r);
        if prefixed {
            self.out.word(r.data().words.version);
        }
        let mut j = i;
        loop {
            let e = digits_end(b, j);
            self.say_digits_or_number(&text[j..e]);
            if b.get(e) == Some(&b'.') && digit_at(b, e + 1) {
                self.out.word(r.data().words.version_dot);
                j = e + 1;
            } else {
                return e;
            }
        }
    }

    /// A digit string as a cardinal when it is one (no leading zero, at most 9 digits),
    /// else digit by digit.
    pub(super) fn say_digits_or_number(&mut self, digits: &str) {
        let r = self.r;
        if digits.len() <= super::scan::MAX_PLAIN_DIGITS
            && (digits.len() == 1 || !digits.starts_with('0'))
        {
            if let Some(v) = value(digits) {
                r.cardinal(v, &mut self.out);
                return;
            }
        }
        self.out.digits(r, digits);
    }

    /// Stand-alone symbols, signs, vulgar fractions, currency signs before an amount.
    fn at_symbol(&mut self, i: usize, c: char) -> Option<usize> {
        let (text, b, r) = (self.text, self.b, self.r);
        let next = i + c.len_utf8();
        let prev = prev_char(text, i);
        match c {
            '-' | '−' | '+' => {
                let signable = !prev.is_some_and(|p| p.is_alphanumeric() || "-−+.,".contains(p));
                if signable {
                    if c == '+' {
                        if let Some(end) = self.phone(i) {
                            return Some(end);
                        }
                    }
                    if digit_at(b, next) {
                        return Some(self.at_digit(next, Some(c != '+')));
                    }
                    if c != '+' {
                        if let Some(end) = self.money_first(next, true) {
                            return Some(end);
                        }
                    }
                }
                if c == '+' {
                    self.out.word(r.data().symbol(Sym::Plus));
                    return Some(next);
                }
                None
            }
            '(' => self.phone(i),
            '~' | '≈' if self.amount_at(skip_one_space(text, next)) => {
                self.out.word(r.data().symbol(Sym::About));
                Some(next)
            }
            '&' | '=' | '@' | '×' | '÷' | '±' | '§' => {
                let s = match c {
                    '&' => Sym::Ampersand,
                    '=' => Sym::Equals,
                    '@' => Sym::At,
                    '×' => Sym::Times,
                    '÷' => Sym::Divide,
                    '±' => Sym::PlusMinus,
                    _ => Sym::Section,
                };
                self.out.word(r.data().symbol(s));
                Some(next)
            }
            '#' => {
                // What precedes as written so far (a second pass sees that).
                let before = self.out.s.chars().next_back();
                let s = if before.is_some_and(char::is_alphanumeric) {
                    Sym::Sharp
                } else if digit_at(b, next) {
                    Sym::NumberSign
                } else if char_at(text, next).is_none_or(char::is_whitespace) {
                    return None;
                } else {
                    Sym::Hashtag
                };
                self.out.word(r.data().symbol(s));
                Some(next)
            }
            _ => {
                if let Some((num, den)) = vulgar_fraction(c) {
                    r.fraction(num, den, false, &mut self.out);
                    return Some(next);
                }
                if matches!(c, '$' | '€' | '£' | '¥') {
                    return self.money_first(i, false);
                }
                None
            }
        }
    }

    /// Whether a number, or a currency sign and a number, starts at `j`.
    fn amount_at(&self, j: usize) -> bool {
        let sign = char_at(self.text, j).filter(|c| "$€£¥".contains(*c));
        digit_at(self.b, j + sign.map_or(0, char::len_utf8))
    }

    /// URLs (`https://…`, `www.…`, `example.com/…`) and e-mail addresses, read part by
    /// part: letters as written (lower case), digits one by one, punctuation by name.
    fn web_address(&mut self, i: usize) -> Option<usize> {
        let text = self.text;
        let (scheme, len) = address_at(&text[i..])?;
        let mut end = i + len;
        // A last label that makes an abbreviation with what follows (`www.etc.`) is left
        // to the abbreviation rule, as a second pass would do.
        let last = end
            - text[i..end]
                .bytes()
                .rev()
                .take_while(u8::is_ascii_alphabetic)
                .count();
        if last >= i + scheme && last > i && self.abbreviation_at(last).is_some() {
            end = last;
        }
        if end == i + scheme {
            let name = text[i..end].trim_end_matches([':', '/']);
            self.out.word(&name.to_ascii_lowercase());
            return Some(end);
        }
        self.say_address(&text[i + scheme..end]);
        Some(end)
    }

    fn say_address(&mut self, body: &str) {
        let r = self.r;
        let body = body.trim_end_matches('/');
        let mut k = 0;
        let bytes = body.as_bytes();
        while k < body.len() {
            let c = bytes[k];
            if c.is_ascii_digit() {
                let e = digits_end(bytes, k);
                self.out.digits(r, &body[k..e]);
                k = e;
            } else if c.is_ascii_alphabetic() {
                let e = k + bytes[k..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .count();
                self.out.word(&body[k..e].to_ascii_lowercase());
                k = e;
            } else {
                let s = match c {
                    b'.' => Some(Sym::Dot),
                    b'/' => Some(Sym::Slash),
                    b'-' => Some(Sym::Dash),
                    b'_' => Some(Sym::Underscore),
                    b':' => Some(Sym::Colon),
                    b'@' => Some(Sym::At),
                    b'?' => Some(Sym::Question),
                    b'=' => Some(Sym::Equals),
                    b'&' => Some(Sym::Ampersand),
                    b'#' => Some(Sym::Hash),
                    b'%' => Some(Sym::Percent),
                    b'+' => Some(Sym::Plus),
                    b'~' => Some(Sym::Tilde),
                    _ => None,
                };
                if let Some(s) = s {
                    self.out.word(r.data().symbol(s));
                }
                k += 1;
            }
        }
    }
}

/// The day if it exists in `month` (29 February is accepted).
pub(super) fn valid_day(day: u64, month: u8) -> Option<u8> {
    const DAYS: [u64; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let max = *DAYS.get(usize::from(month).checked_sub(1)?)?;
    u8::try_from(day).ok().filter(|_| (1..=max).contains(&day))
}

/// The Unicode vulgar fractions (`½`, `¾`, …).
pub(super) fn vulgar_fraction(c: char) -> Option<(u64, u64)> {
    Some(match c {
        '½' => (1, 2),
        '⅓' => (1, 3),
        '⅔' => (2, 3),
        '¼' => (1, 4),
        '¾' => (3, 4),
        '⅕' => (1, 5),
        '⅖' => (2, 5),
        '⅗' => (3, 5),
        '⅘' => (4, 5),
        '⅙' => (1, 6),
        '⅚' => (5, 6),
        '⅐' => (1, 7),
        '⅛' => (1, 8),
        '⅜' => (3, 8),
        '⅝' => (5, 8),
        '⅞' => (7, 8),
        '⅑' => (1, 9),
        '⅒' => (1, 10),
        _ => return None,
    })
}
