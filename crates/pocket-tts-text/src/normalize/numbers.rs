//! Rules that start at a digit, a sign or a currency: dates, times, phone numbers,
//! versions, money, ordinals, units, fractions, ranges and plain numbers, tried in that
//! order (the first that recognises the span wins).

use super::engine::{valid_day, vulgar_fraction, Engine};
use super::readings::{say_amount, say_amount_plain};
use super::rules::{Currency, Date, DateOrder, DateStyle, Gender, Money, Scale, Sym, Time};
use super::scan::{
    char_at, digit_at, digits_end, has_prefix, is_inline_space, parse_number, prev_char,
    skip_one_space, value, word_at, Number,
};

/// Currency signs written only before an amount, tried before [`CURRENCY`] (`US$`
/// before `$`).
const CURRENCY_BEFORE_ONLY: &[(&str, Currency)] = &[
    ("US$", Currency::Dollar),
    ("CA$", Currency::Dollar),
    ("AU$", Currency::Dollar),
    ("C$", Currency::Dollar),
    ("A$", Currency::Dollar),
];

/// Currency signs and codes written before or after an amount (`R$` before `$`).
const CURRENCY: &[(&str, Currency)] = &[
    ("R$", Currency::Real),
    ("$", Currency::Dollar),
    ("€", Currency::Euro),
    ("£", Currency::Pound),
    ("¥", Currency::Yen),
    ("USD", Currency::Dollar),
    ("CAD", Currency::Dollar),
    ("AUD", Currency::Dollar),
    ("EUR", Currency::Euro),
    ("GBP", Currency::Pound),
    ("JPY", Currency::Yen),
    ("CHF", Currency::Franc),
    ("BRL", Currency::Real),
];

fn currency_at(text: &str, i: usize, table: &[(&str, Currency)]) -> Option<(Currency, usize)> {
    table
        .iter()
        .find_map(|&(sym, c)| word_at(text, i, sym).map(|end| (c, end)))
}

/// At most this many groups in a phone number.
const MAX_PHONE_GROUPS: usize = 8;

impl Engine<'_> {
    /// The rules at a digit; `sign`: `Some(true)` after a minus sign, `Some(false)` after
    /// a plus sign.
    pub(super) fn at_digit(&mut self, i: usize, sign: Option<bool>) -> usize {
        let text = self.text;
        if sign.is_none() {
            if prev_char(text, i).is_some_and(char::is_alphanumeric) {
                return self.glued(i);
            }
            let found = self
                .iso_date(i)
                .or_else(|| self.numeric_date(i))
                .or_else(|| self.time(i))
                .or_else(|| self.phone(i))
                .or_else(|| self.dotted(i));
            if let Some(end) = found {
                return end;
            }
        }
        let r = self.r;
        let num = parse_number(
            text,
            i,
            r.data().group_separators,
            r.data().decimal_separator,
        );
        if let Some(end) = self.money_after(&num, sign) {
            return end;
        }
        if sign.is_none() {
            if let Some(end) = self.ordinal_or_date(&num) {
                return end;
            }
            if let (true, Some(v)) = (num.is_plain_int(), num.value) {
                if let Some(len) = r.special_suffix(v, &text[num.end..], &mut self.out) {
                    return num.end + len;
                }
            }
        }
        if let Some(end) = self.unit_after(&num, sign) {
            return end;
        }
        if sign.is_none() {
            if let Some(end) = self.fraction_after(&num) {
                return end;
            }
        }
        match (sign, num.value) {
            (None, Some(v)) if num.is_plain_int() && num.int_digits == 4 && v <= 2099 => {
                r.year(v, &mut self.out);
            }
            _ => {
                let noun = r.noun_after(&text[num.end..]);
                self.say_quantity(&num, sign, noun);
            }
        }
        // A range: `10-20`, `1990–2000` (not `2024-0042`, an identifier).
        let end = num.end;
        for dash in ["-", "–"] {
            let right = end + dash.len();
            if text[end..].starts_with(dash)
                && digit_at(self.b, right)
                && (self.b[right] != b'0' || !digit_at(self.b, right + 1))
            {
                self.out.word(r.data().words.range_to);
                return right;
            }
        }
        end
    }

    /// Writes the sign word, then the number (digit by digit when too long); `noun`:
    /// the gender of the noun it counts, if one follows (a unit, a noun the language's
    /// [`LanguageRules::noun_after`] recognizes): Spanish `veintiún km`, Italian `un
    /// chilometro`, but `veintiuno`, `uno` alone.
    fn say_quantity(&mut self, num: &Number<'_>, sign: Option<bool>, noun: Option<Gender>) {
        let r = self.r;
        match sign {
            Some(true) => self.out.word(r.data().words.minus),
            Some(false) => self.out.word(r.data().words.plus),
            None => {}
        }
        match (num.value, noun) {
            (Some(v), Some(g)) if num.frac.is_none() => {
                r.cardinal_before_noun(v, g, &mut self.out);
            }
            (Some(v), Some(g)) => say_amount(r, v, num.frac, g, &mut self.out),
            (Some(v), None) => say_amount_plain(r, v, num.frac, &mut self.out),
            (None, _) => {
                self.out.digits(r, num.int_text);
                if let Some(f) = num.frac {
                    self.out.word(r.data().words.decimal_point);
                    self.out.digits(r, f);
                }
            }
        }
    }

    /// Digits right after a letter (`mp3`, `A320`): a cardinal up to four digits, else
    /// digit by digit.
    fn glued(&mut self, i: usize) -> usize {
        let end = digits_end(self.b, i);
        let run = &self.text[i..end];
        if run.len() <= 4 {
            self.say_digits_or_number(run);
        } else {
            self.out.digits(self.r, run);
        }
        end
    }

    /// `2026-03-04`, `2026/03/04`.
    fn iso_date(&mut self, i: usize) -> Option<usize> {
        let b = self.b;
        let e1 = digits_end(b, i);
        let sep = *b.get(e1)?;
        if e1 - i != 4 || !matches!(sep, b'-' | b'/') {
            return None;
        }
        let e2 = digits_end(b, e1 + 1);
        if e2 - e1 != 3 || b.get(e2) != Some(&sep) {
            return None;
        }
        let e3 = digits_end(b, e2 + 1);
        if e3 - e2 != 3 || !self.ends_cleanly(e3, sep) {
            return None;
        }
        let month = u8::try_from(value(&self.text[e1 + 1..e2])?).ok()?;
        let day = valid_day(value(&self.text[e2 + 1..e3])?, month)?;
        let year = value(&self.text[i..e1])?;
        self.say_date(day, month, Some(year), DateStyle::Numeric);
        Some(e3)
    }

    /// `03/04/2026`, `3.4.2026`, `03-04-2026`, in the language's order (swapped when
    /// only the other order is valid: `25/12/2026` in English).
    fn numeric_date(&mut self, i: usize) -> Option<usize> {
        let b = self.b;
        let e1 = digits_end(b, i);
        let sep = *b.get(e1)?;
        if e1 - i > 2 || !matches!(sep, b'/' | b'.' | b'-') {
            return None;
        }
        let e2 = digits_end(b, e1 + 1);
        if !(2..=3).contains(&(e2 - e1)) || b.get(e2) != Some(&sep) {
            return None;
        }
        let e3 = digits_end(b, e2 + 1);
        if e3 - e2 != 5 || !self.ends_cleanly(e3, sep) {
            return None;
        }
        let a = value(&self.text[i..e1])?;
        let c = value(&self.text[e1 + 1..e2])?;
        let (mut day, mut month) = match self.r.data().date_order {
            DateOrder::DayMonthYear => (a, c),
            DateOrder::MonthDayYear => (c, a),
        };
        if month > 12 && day <= 12 {
            std::mem::swap(&mut day, &mut month);
        }
        let month = u8::try_from(month).ok().filter(|m| (1..=12).contains(m))?;
        let day = valid_day(day, month)?;
        let year = value(&self.text[e2 + 1..e3])?;
        self.say_date(day, month, Some(year), DateStyle::Numeric);
        Some(e3)
    }

    fn say_date(&mut self, day: u8, month: u8, year: Option<u64>, style: DateStyle) {
        let prev = self.prev_out_word().unwrap_or("").to_owned();
        let d = Date {
            day,
            month,
            year,
            style,
            prev_word: &prev,
        };
        self.r.date(&d, &mut self.out);
    }

    /// Whether a number ends at `end`: [`Engine::number_ends_cleanly`], and not followed
    /// by `sep` and a digit.
    fn ends_cleanly(&self, end: usize, sep: u8) -> bool {
        self.number_ends_cleanly(end)
            && !(self.b.get(end) == Some(&sep) && digit_at(self.b, end + 1))
    }

    /// `3:30`, `15:30:05`, `3:30 pm`, `3 pm` (`15.30` in languages whose
    /// [`time_separators`](super::rules::LanguageRules::time_separators) include `.`),
    /// and `15h30`, `15 h 30`, `15 h` in languages that write hours with `h`.
    fn time(&mut self, i: usize) -> Option<usize> {
        let (text, b, r) = (self.text, self.b, self.r);
        let h_end = digits_end(b, i);
        if h_end - i > 2 {
            return None;
        }
        let hour = u8::try_from(value(&text[i..h_end])?).ok()?;
        let two_digits = |k: usize| -> Option<u8> {
            (digits_end(b, k) == k + 2)
                .then(|| value(&text[k..k + 2]))
                .flatten()
                .and_then(|v| u8::try_from(v).ok())
                .filter(|&v| v <= 59)
        };
        let mut t = Time {
            hour,
            minute: None,
            second: None,
            meridiem: None,
        };
        let mut end;
        let sep = b
            .get(h_end)
            .copied()
            .filter(|&c| r.data().time_separators.contains(&char::from(c)));
        if sep == Some(b'.') && !r.dotted_time_after(self.prev_out_word()) {
            return None;
        }
        if let Some(sep) = sep {
            t.minute = Some(two_digits(h_end + 1)?);
            end = h_end + 3;
            if b.get(end) == Some(&sep) {
                if let Some(s) = two_digits(end + 1) {
                    t.second = Some(s);
                    end += 3;
                }
            }
        } else if r.data().hour_letter_times && b.get(skip_one_space(text, h_end)) == Some(&b'h') {
            let k = skip_one_space(text, h_end) + 1;
            let k2 = skip_one_space(text, k);
            match two_digits(k2) {
                Some(m) if self.number_ends_cleanly(k2 + 2) => {
                    t.minute = Some(m);
                    end = k2 + 2;
                }
                _ if !char_at(text, k).is_some_and(char::is_alphanumeric) => end = k,
                _ => return None,
            }
        } else {
            end = h_end;
        }
        let j = skip_one_space(text, end);
        let mer = r
            .meridiem_at(&text[j..])
            .filter(|_| (1..=12).contains(&hour));
        if let Some((m, len)) = mer {
            t.meridiem = Some(m);
            end = j + len;
        } else if (t.minute.is_none() && end == h_end) || !self.number_ends_cleanly(end) {
            return None;
        }
        if hour > 23 {
            return None;
        }
        end += r.time_suffix(&text[end..]);
        r.time(&t, &mut self.out);
        if mer.is_some() && text[..end].ends_with('.') && self.sentence_final(end) {
            self.out.raw(".");
        }
        Some(end)
    }

    /// Phone numbers and other grouped digit strings (`+33 1 23 45 67 89`,
    /// `(555) 123-4567`, `555-123-4567`, `06.12.34.56.78`, `4111 1111 1111 1111`): groups
    /// read by [`LanguageRules::phone_group`](super::rules::LanguageRules::phone_group),
    /// separated by commas.
    pub(super) fn phone(&mut self, i: usize) -> Option<usize> {
        let (text, b) = (self.text, self.b);
        let mut j = i;
        let plus = b.get(j) == Some(&b'+');
        if plus {
            j += 1;
        }
        let mut groups = [(0usize, 0usize); MAX_PHONE_GROUPS];
        let mut n = 0;
        let paren = b.get(j) == Some(&b'(');
        if paren {
            let e = digits_end(b, j + 1);
            if !(2..=4).contains(&(e - j - 1)) || b.get(e) != Some(&b')') {
                return None;
            }
            groups[0] = (j + 1, e);
            n = 1;
            j = skip_one_space(text, e + 1);
        }
        let (mut dots, mut spaces, mut dashes) = (false, false, false);
        let long = self.r.data().phone_long_groups;
        let max_group = if long {
            self.r.data().phone_group_max.max(8)
        } else {
            self.r.data().phone_group_max
        };
        loop {
            let e = digits_end(b, j);
            if e == j || e - j > max_group || n == MAX_PHONE_GROUPS {
                return None;
            }
            groups[n] = (j, e);
            n += 1;
            let Some(c) = char_at(text, e) else { break };
            let next = e + c.len_utf8();
            if !(matches!(c, '-' | '.') || is_inline_space(c)) || !digit_at(b, next) {
                break;
            }
            match c {
                '.' => dots = true,
                '-' => dashes = true,
                _ => spaces = true,
            }
            j = next;
        }
        let groups = &groups[..n];
        let end = groups[n - 1].1;
        let len = |g: &(usize, usize)| g.1 - g.0;
        let total: usize = groups.iter().map(len).sum();
        if n < 2 || !(7..=16).contains(&total) || !self.number_ends_cleanly(end) {
            return None;
        }
        // Dots: French pairs (`06.12.34.56.78`) or US `555.123.4567`.
        let us = n == 3 && len(&groups[0]) == 3 && len(&groups[1]) == 3 && len(&groups[2]) == 4;
        if dots && (spaces || dashes || (!plus && !us && groups.iter().any(|g| len(g) != 2))) {
            return None;
        }
        if !plus && !paren {
            let inner_ok = groups[1..].iter().all(|g| (2..=4).contains(&len(g)));
            // `030 123456`, `06-12345678`: an area code and the subscriber's number.
            let area = long
                && b[groups[0].0] == b'0'
                && (2..=5).contains(&len(&groups[0]))
                && (3..=8).contains(&len(&groups[1]));
            let ok = if n == 2 {
                (dashes && len(&groups[0]) == 3 && len(&groups[1]) == 4) || area
            } else {
                inner_ok
            };
            // Spaces only: a number grouped by thousands, or a list of small numbers.
            let thousands = len(&groups[0]) <= 3 && groups[1..].iter().all(|g| len(g) == 3);
            let phone_like = total >= 9 || b[groups[0].0] == b'0';
            if !ok || (spaces && !dashes && !dots && (thousands || !phone_like)) {
                let mut digits = [""; MAX_PHONE_GROUPS];
                for (d, g) in digits.iter_mut().zip(groups) {
                    *d = &text[g.0..g.1];
                }
                let spaced = ok && spaces && !dashes && !dots;
                if !(spaced && self.r.spaced_phone(&digits[..n], self.prev_out_word())) {
                    return None;
                }
            }
        }
        let r = self.r;
        if plus {
            self.out.word(r.data().symbol(Sym::Plus));
        }
        for (k, g) in groups.iter().enumerate() {
            if k > 0 {
                self.out.raw(", ");
            }
            r.phone_group(&text[g.0..g.1], &mut self.out);
        }
        Some(end)
    }

    /// Three or more dotted numbers (`3.11.2`, `192.168.0.1`), or two where `.` is
    /// neither the decimal nor the group separator (French `3.5`): a version.
    fn dotted(&mut self, i: usize) -> Option<usize> {
        let b = self.b;
        let r = self.r;
        let mut j = i;
        let mut parts = 1;
        let end = loop {
            let e = digits_end(b, j);
            if b.get(e) == Some(&b'.') && digit_at(b, e + 1) {
                parts += 1;
                j = e + 1;
            } else {
                break e;
            }
        };
        if parts < 2 || (parts == 2 && r.data().decimal_separator == '.') {
            return None;
        }
        if r.data().group_separators.contains(&'.') {
            let num = parse_number(
                self.text,
                i,
                r.data().group_separators,
                r.data().decimal_separator,
            );
            if num.end >= end {
                return None;
            }
        }
        Some(self.version(i, false))
    }

    /// A currency sign or code before an amount (`$5`, `€ 3,50`, `USD 10`, `$2.5bn`),
    /// from the sign at `i`.
    pub(super) fn money_first(&mut self, i: usize, negative: bool) -> Option<usize> {
        let text = self.text;
        let (currency, after) = currency_at(text, i, CURRENCY_BEFORE_ONLY)
            .or_else(|| currency_at(text, i, CURRENCY))?;
        let j = skip_one_space(text, after);
        if !digit_at(self.b, j) {
            return None;
        }
        let r = self.r;
        let num = parse_number(
            text,
            j,
            r.data().group_separators,
            r.data().decimal_separator,
        );
        let int = num.value?;
        let (scale, end) = self.scale_after(num.end);
        let m = Money {
            negative,
            int,
            frac: num.frac,
            scale,
            currency,
        };
        r.money(&m, &mut self.out);
        Some(end)
    }

    /// A scale token after an amount: attached (`5bn`, `5M`) or after one space
    /// (`5 million`).
    fn scale_after(&self, end: usize) -> (Option<Scale>, usize) {
        let text = self.text;
        let spaced = skip_one_space(text, end);
        for t in self.r.data().scale_tokens {
            let at = if t.attached_only { end } else { spaced };
            if let Some(e) = word_at(text, at, t.text) {
                return (Some(t.scale), e);
            }
        }
        (None, end)
    }

    /// An amount followed by a currency (`5 €`, `19,99 $`, `2,5 M€`, `10 USD`).
    fn money_after(&mut self, num: &Number<'_>, sign: Option<bool>) -> Option<usize> {
        let int = num.value?;
        if sign == Some(false) {
            return None;
        }
        let text = self.text;
        let (scale, mut k) = self.scale_after(num.end);
        if scale.is_some() {
            let j = skip_one_space(text, k);
            if let Some(e) = self
                .r
                .data()
                .scale_connectors
                .iter()
                .find_map(|c| word_at(text, j, c))
            {
                k = e;
            }
        }
        let j = skip_one_space(text, k);
        let (currency, end) = currency_at(text, j, CURRENCY)?;
        let m = Money {
            negative: sign == Some(true),
            int,
            frac: num.frac,
            scale,
            currency,
        };
        self.r.money(&m, &mut self.out);
        Some(end)
    }

    /// An ordinal (`21st`, `1er`), or a date with the day first (`4 March 2026`,
    /// `1er mars`, `the 4th of July`).
    fn ordinal_or_date(&mut self, num: &Number<'_>) -> Option<usize> {
        let n = num.value.filter(|_| num.frac.is_none())?;
        let (text, r) = (self.text, self.r);
        let suffix = r.ordinal_suffix(n, &text[num.end..]);
        let after = num.end + suffix.map_or(0, |s| s.0);
        if num.int_digits <= 2 && !num.grouped {
            if let Some(end) = self.day_first_date(n, after) {
                return Some(end);
            }
        }
        let (_, gender) = suffix?;
        r.ordinal(n, gender, &mut self.out);
        Some(after)
    }

    fn day_first_date(&mut self, day: u64, after: usize) -> Option<usize> {
        let text = self.text;
        let j = skip_one_space(text, after);
        if j == after {
            return None;
        }
        let mut k = j;
        for c in self.r.data().date_connectors {
            if let Some(e) = word_at(text, j, c) {
                let e2 = skip_one_space(text, e);
                if e2 > e {
                    k = e2;
                }
                break;
            }
        }
        let (month, len) = self.r.month_at(&text[k..])?;
        let day = valid_day(day, month)?;
        let (year, end) = match self.year_after(k + len) {
            Some((y, e)) => (Some(y), e),
            None => (None, k + len),
        };
        self.say_date(day, month, year, DateStyle::DayFirst);
        Some(end)
    }

    /// A unit after the number (`5 km`, `20°C`, `50 %`, `3,5 km/h`).
    fn unit_after(&mut self, num: &Number<'_>, sign: Option<bool>) -> Option<usize> {
        let text = self.text;
        let j = skip_one_space(text, num.end);
        let unit = self.t.units.iter().find(|u| {
            has_prefix(&text[j..], u.symbol)
                && !char_at(text, j + u.symbol.len())
                    .is_some_and(|c| c.is_alphanumeric() || c == '\'' || c == '’')
        })?;
        self.say_quantity(num, sign, Some(unit.gender));
        let plural = num.value.is_none_or(|v| self.r.is_plural(v, num.frac));
        self.r
            .unit_name(if plural { unit.many } else { unit.one }, &mut self.out);
        Some(j + unit.symbol.len())
    }

    /// `3/4`, `1 1/2`, `2½`, `2 ½`. Only the usual denominators (2–6, 8, 10, 16, 32,
    /// 64, 100), and the numerator below the denominator: `3/12`, `24/7` or `50/50` are
    /// more often dates, schedules or ratios, and stay as written.
    fn fraction_after(&mut self, num: &Number<'_>) -> Option<usize> {
        let n = num.value.filter(|_| num.is_plain_int())?;
        let (text, b, r) = (self.text, self.b, self.r);
        if prev_char(text, num.start) == Some('/') {
            return None;
        }
        // `a/b` at `k`: numerator, denominator, end.
        let slash = |k: usize| -> Option<(u64, u64, usize)> {
            let e = digits_end(b, k);
            if e == k || b.get(e) != Some(&b'/') || b.get(e + 1) == Some(&b'0') {
                return None;
            }
            let e2 = digits_end(b, e + 1);
            let (a, d) = (value(&text[k..e])?, value(&text[e + 1..e2])?);
            let clean = !(b.get(e2) == Some(&b'/') && digit_at(b, e2 + 1));
            let common = matches!(d, 2..=6 | 8 | 10 | 16 | 32 | 64 | 100);
            (clean && common && a >= 1 && a < d).then_some((a, d, e2))
        };
        if let Some((a, d, end)) = slash(num.start) {
            r.fraction(a, d, false, &mut self.out);
            return Some(end);
        }
        let j = skip_one_space(text, num.end);
        let mixed = if j > num.end { slash(j) } else { None }.or_else(|| {
            let (a, d) = vulgar_fraction(char_at(text, j)?)?;
            Some((a, d, j + char_at(text, j)?.len_utf8()))
        });
        let (a, d, end) = mixed?;
        r.cardinal(n, &mut self.out);
        self.out.word(r.data().words.and);
        r.fraction(a, d, true, &mut self.out);
        Some(end)
    }
}
