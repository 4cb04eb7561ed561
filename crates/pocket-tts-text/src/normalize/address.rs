//! Web addresses: where a URL or an e-mail address starts and ends. Shared by the engine
//! (which reads them) and by [`Out`](super::rules::Out), which keeps a word it writes
//! from joining an address on a second pass.

use super::scan::{digit_at, digits_end};

/// Characters that continue a URL, e-mail or path token (a token never starts right
/// after one of them).
pub(crate) fn is_url_punct(c: char) -> bool {
    matches!(
        c,
        '.' | '-' | '_' | '@' | '/' | ':' | '%' | '+' | '~' | '#' | '=' | '&' | '?'
    )
}

/// Longest host name (RFC 1035) and e-mail local part (RFC 5321) considered: longer
/// runs are not addresses, and the scans stay bounded.
const MAX_HOST: usize = 253;
const MAX_LOCAL: usize = 64;

/// Top-level domains that make `word.tld` a web address without `www.` or a scheme.
const TLDS: &[&str] = &[
    "com", "org", "net", "edu", "gov", "io", "ai", "dev", "app", "co", "uk", "us", "fr", "de",
    "it", "es", "nl", "pt", "be", "ch", "eu", "ca", "info", "biz", "tv",
];

/// A URL or e-mail address at the start of `s`: the length of its scheme (dropped when
/// read) and its whole length.
pub(crate) fn address_at(s: &str) -> Option<(usize, usize)> {
    let lower_starts =
        |p: &str| s.len() >= p.len() && s.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes());
    let scheme = ["https://", "http://", "ftp://"]
        .into_iter()
        .find(|p| lower_starts(p))
        .map_or(0, str::len);
    let end = if scheme > 0 || lower_starts("www.") {
        let host_end = host_end(s, scheme);
        if host_end == scheme {
            // A scheme with no host (`http://` alone) is read as its name; what follows
            // must not become its host on a second pass.
            return (scheme > 0).then_some((scheme, scheme));
        }
        path_end(s, host_end)
    } else if let Some(end) = email_end(s, 0) {
        end
    } else {
        let he = host_end(s, 0);
        let tld = &s[s[..he].rfind('.')? + 1..he];
        // A dot and a non-ASCII letter after it (`x.com.één`: Dutch digits read after a
        // dot, where the first pass saw the label `1` and no host): not a host.
        let goes_on = s[he..]
            .strip_prefix('.')
            .is_some_and(|r| r.starts_with(char::is_alphanumeric));
        if !TLDS.contains(&tld) || goes_on {
            return None;
        }
        path_end(s, he)
    };
    Some((scheme, end))
}

/// End of a host name: ASCII labels of letters, digits and inner hyphens, joined by dots.
/// A label ends where a digit follows a letter (`com0`): digits after a letter are read
/// as a separate word, so a second pass sees the host end there.
pub(crate) fn host_end(text: &str, i: usize) -> usize {
    let b = text.as_bytes();
    let mut j = i;
    loop {
        let start = j;
        while j < b.len()
            && (b[j].is_ascii_alphanumeric() || (b[j] == b'-' && j > start))
            && !(j > start && b[j].is_ascii_digit() && b[j - 1].is_ascii_alphabetic())
        {
            j += 1;
            if j - i > MAX_HOST {
                // Not a host name; and the scan stays short, so the pass stays linear.
                return i;
            }
        }
        if j == start {
            // An empty label: give back the dot that led here.
            return if start > i { start - 1 } else { i };
        }
        if b.get(j) == Some(&b'.') && b.get(j + 1).is_some_and(u8::is_ascii_alphanumeric) {
            j += 1;
        } else {
            return j;
        }
    }
}

/// End of an optional port and path after a host: ASCII non-space characters, without
/// trailing punctuation that belongs to the sentence.
fn path_end(text: &str, host_end: usize) -> usize {
    let b = text.as_bytes();
    let mut j = host_end;
    if b.get(j) == Some(&b':') && digit_at(b, j + 1) {
        j = digits_end(b, j + 1);
    }
    if b.get(j) != Some(&b'/') {
        return j;
    }
    let mut e = j;
    while e < b.len() && b[e].is_ascii_graphic() && !b"\"<>`{}|\\^".contains(&b[e]) {
        e += 1;
    }
    while e > j + 1 && b".,;:!?')]*".contains(&b[e - 1]) {
        e -= 1;
    }
    e
}

/// End of an e-mail address starting at `i`: a local part, `@`, and a host name with a
/// top-level domain of letters.
fn email_end(text: &str, i: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut j = i;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b"._%+-".contains(&b[j])) {
        j += 1;
        if j - i > MAX_LOCAL {
            return None;
        }
    }
    if j == i || b.get(j) != Some(&b'@') {
        return None;
    }
    let h = j + 1;
    let he = host_end(text, h);
    let host = &text[h..he];
    let tld = host.rsplit('.').next().unwrap_or("");
    (host.contains('.') && tld.len() >= 2 && tld.bytes().all(|c| c.is_ascii_alphabetic()))
        .then_some(he)
}

/// Whether writing `word` right after `out` (which ends with address punctuation) would
/// make the two one address for a second pass (`www.` + `at`).
pub(crate) fn absorbs(out: &str, word: &str) -> bool {
    let tail_len = out
        .bytes()
        .rev()
        .take(256)
        .take_while(|&b| b.is_ascii_alphanumeric() || is_url_punct(char::from(b)))
        .count();
    if tail_len == 0 {
        return false;
    }
    let mut joined = String::with_capacity(tail_len + word.len());
    joined.push_str(&out[out.len() - tail_len..]);
    joined.push_str(word);
    address_at(&joined).is_some_and(|(_, len)| len > tail_len)
}
