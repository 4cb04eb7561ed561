//! The UTF-8 rules of SentencePiece: character length from a lead byte, validity of
//! the first character (malformed sequences consume one byte), and the lossy
//! reassembly of byte-fallback runs with one `U+FFFD` per invalid byte.
//!
//! reference: SentencePiece `src/util.h` / `util.cc` (`string_util::OneCharLen`,
//! `IsValidDecodeUTF8`) and the byte-piece handling of
//! `SentencePieceProcessor::Decode`.

/// `string_util::OneCharLen`: the UTF-8 length announced by a lead byte.
pub(super) fn one_char_len(b: u8) -> usize {
    const TABLE: [usize; 16] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4];
    TABLE[(b >> 4) as usize]
}

/// `string_util::IsValidDecodeUTF8`: length of the first character of `bytes` and
/// whether it is valid (a malformed sequence consumes one byte).
pub(super) fn decode_utf8_prefix(bytes: &[u8]) -> (usize, bool) {
    let Some(&b0) = bytes.first() else {
        return (0, false);
    };
    let trail = |i: usize| bytes.get(i).is_some_and(|&b| b & 0xC0 == 0x80);
    let valid_cp = |cp: u32| cp < 0xD800 || (0xE000..=0x10FFFF).contains(&cp);
    if b0 < 0x80 {
        return (1, true);
    }
    if bytes.len() >= 2 && b0 & 0xE0 == 0xC0 {
        let cp = ((b0 as u32 & 0x1F) << 6) | (bytes[1] as u32 & 0x3F);
        if trail(1) && cp >= 0x80 && valid_cp(cp) {
            return (2, true);
        }
    } else if bytes.len() >= 3 && b0 & 0xF0 == 0xE0 {
        let cp =
            ((b0 as u32 & 0x0F) << 12) | ((bytes[1] as u32 & 0x3F) << 6) | (bytes[2] as u32 & 0x3F);
        if trail(1) && trail(2) && cp >= 0x800 && valid_cp(cp) {
            return (3, true);
        }
    } else if bytes.len() >= 4 && b0 & 0xF8 == 0xF0 {
        let cp = ((b0 as u32 & 0x07) << 18)
            | ((bytes[1] as u32 & 0x3F) << 12)
            | ((bytes[2] as u32 & 0x3F) << 6)
            | (bytes[3] as u32 & 0x3F);
        if trail(1) && trail(2) && trail(3) && cp >= 0x10000 && valid_cp(cp) {
            return (4, true);
        }
    }
    (1, false)
}

/// Appends the SentencePiece decoding of a run of raw bytes: each valid UTF-8
/// character as is, each byte that does not start one as U+FFFD.
pub(super) fn push_bytes_lossy(out: &mut String, bytes: &[u8]) {
    let mut offset = 0;
    while offset < bytes.len() {
        let (len, valid) = decode_utf8_prefix(&bytes[offset..]);
        match std::str::from_utf8(&bytes[offset..offset + len]) {
            Ok(s) if valid => out.push_str(s),
            _ => out.push('\u{FFFD}'),
        }
        offset += len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_prefix_matches_sentencepiece() {
        assert_eq!(decode_utf8_prefix("é".as_bytes()), (2, true));
        assert_eq!(decode_utf8_prefix(&[0xE4, 0xB8]), (1, false));
        assert_eq!(decode_utf8_prefix(&[0xED, 0xA0, 0x80]), (1, false)); // surrogate
        assert_eq!(decode_utf8_prefix(&[0xC0, 0x80]), (1, false)); // overlong
        let mut s = String::new();
        push_bytes_lossy(&mut s, &[b'a', 0xE4, 0xB8, 0xE4, 0xB8, 0xAD]);
        assert_eq!(s, "a\u{FFFD}\u{FFFD}\u{4E2D}");
    }
}
