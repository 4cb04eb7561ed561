//! Text normalization before the Unigram search: the optional precompiled character
//! map (a darts-clone double array), user-defined symbols copied verbatim,
//! `remove_extra_whitespaces`, `add_dummy_prefix`, `escape_whitespaces`
//! (`' '` → `U+2581`) and `treat_whitespace_as_suffix`.
//!
//! reference: SentencePiece `src/normalizer.cc` (`Normalizer::Normalize`,
//! `NormalizePrefix`, `PrefixMatcher`) with darts-clone's `commonPrefixSearch`.

use std::collections::HashMap;

use super::proto;
use super::utf8::decode_utf8_prefix;
use crate::{Error, Result};

/// The whitespace symbol SentencePiece substitutes for `' '` (U+2581, LOWER ONE EIGHTH BLOCK).
pub(super) const SPACE_SYMBOL: &str = "\u{2581}";

/// The normalizer of `normalizer.cc` for one `NormalizerSpec`.
#[derive(Debug, Clone)]
pub(super) struct Normalizer {
    pub(super) add_dummy_prefix: bool,
    pub(super) remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
    treat_whitespace_as_suffix: bool,
    charsmap: Option<CharsMap>,
}

/// A decoded `precompiled_charsmap`: a darts-clone double array whose values index
/// NUL-terminated replacement strings.
#[derive(Debug, Clone)]
struct CharsMap {
    units: Vec<u32>,
    normalized: Vec<u8>,
}

impl CharsMap {
    fn parse(blob: &[u8], origin: &str) -> Result<CharsMap> {
        let bad = |what: &str| {
            Error::InvalidData(format!("{origin}: broken precompiled_charsmap ({what})"))
        };
        if blob.len() <= 4 {
            return Err(bad("blob too short"));
        }
        let trie_size = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
        let rest = &blob[4..];
        if trie_size > rest.len() || !trie_size.is_multiple_of(4) {
            return Err(bad("trie size exceeds the blob"));
        }
        let units = rest[..trie_size]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect::<Vec<_>>();
        if units.is_empty() {
            return Err(bad("empty trie"));
        }
        Ok(CharsMap {
            units,
            normalized: rest[trie_size..].to_vec(),
        })
    }

    /// darts-clone `commonPrefixSearch`, returning the longest match as
    /// `(value, length)`.
    fn longest_prefix(&self, key: &[u8]) -> Option<(usize, usize)> {
        let has_leaf = |u: u32| (u >> 8) & 1 == 1;
        let value = |u: u32| (u & ((1u32 << 31) - 1)) as usize;
        let label = |u: u32| u & ((1u32 << 31) | 0xFF);
        let offset = |u: u32| ((u >> 10) << ((u & (1u32 << 9)) >> 6)) as usize;

        let mut best = None;
        let mut node_pos = offset(*self.units.first()?);
        for (i, &b) in key.iter().enumerate() {
            node_pos ^= b as usize;
            let unit = *self.units.get(node_pos)?;
            if label(unit) != b as u32 {
                break;
            }
            node_pos ^= offset(unit);
            if has_leaf(unit) {
                let leaf = *self.units.get(node_pos)?;
                best = Some((value(leaf), i + 1));
            }
        }
        best
    }

    /// The NUL-terminated replacement string at `value`.
    fn replacement(&self, value: usize) -> Option<&[u8]> {
        let tail = self.normalized.get(value..)?;
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        Some(&tail[..end])
    }
}

impl Normalizer {
    pub(super) fn from_spec(
        spec: Option<&proto::NormalizerSpec>,
        treat_whitespace_as_suffix: bool,
        origin: &str,
    ) -> Result<Normalizer> {
        let charsmap = match spec.and_then(|s| s.precompiled_charsmap.as_deref()) {
            Some(blob) if !blob.is_empty() => Some(CharsMap::parse(blob, origin)?),
            _ => None,
        };
        Ok(Normalizer {
            add_dummy_prefix: spec.and_then(|s| s.add_dummy_prefix).unwrap_or(true),
            remove_extra_whitespaces: spec
                .and_then(|s| s.remove_extra_whitespaces)
                .unwrap_or(true),
            escape_whitespaces: spec.and_then(|s| s.escape_whitespaces).unwrap_or(true),
            treat_whitespace_as_suffix,
            charsmap,
        })
    }

    /// `Normalizer::NormalizePrefix`: the normalized form of the first unit of `input`
    /// and how many input bytes it consumes.
    fn normalize_prefix<'a>(
        &'a self,
        input: &'a [u8],
        user_defined: &UserDefinedMatcher,
    ) -> (&'a [u8], usize) {
        if let Some(len) = user_defined.longest_match(input) {
            return (&input[..len], len);
        }
        if let Some(map) = &self.charsmap {
            if let Some((value, len)) = map.longest_prefix(input) {
                if let Some(rep) = map.replacement(value) {
                    return (rep, len);
                }
            }
        }
        let (len, valid) = decode_utf8_prefix(input);
        if valid {
            (&input[..len], len)
        } else {
            ("\u{FFFD}".as_bytes(), 1)
        }
    }

    /// `Normalizer::Normalize`, without the offset mapping.
    pub(super) fn normalize(&self, input: &str, user_defined: &UserDefinedMatcher) -> Vec<u8> {
        let space_sym = SPACE_SYMBOL.as_bytes();
        let mut input = input.as_bytes();
        let mut out: Vec<u8> = Vec::with_capacity(input.len() * 3);
        if input.is_empty() {
            return out;
        }
        if self.remove_extra_whitespaces {
            while !input.is_empty() {
                let (norm, consumed) = self.normalize_prefix(input, user_defined);
                if norm != b" " {
                    break;
                }
                input = &input[consumed..];
            }
        }
        if input.is_empty() {
            return out;
        }
        let add_ws = |out: &mut Vec<u8>| {
            if self.escape_whitespaces {
                out.extend_from_slice(space_sym);
            } else {
                out.push(b' ');
            }
        };
        if !self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            add_ws(&mut out);
        }
        let mut is_prev_space = self.remove_extra_whitespaces;
        while !input.is_empty() {
            let (mut sp, consumed) = self.normalize_prefix(input, user_defined);
            while is_prev_space && sp.first() == Some(&b' ') {
                sp = &sp[1..];
            }
            if !sp.is_empty() {
                for &b in sp {
                    if self.escape_whitespaces && b == b' ' {
                        out.extend_from_slice(space_sym);
                    } else {
                        out.push(b);
                    }
                }
                is_prev_space = sp.last() == Some(&b' ');
            }
            input = &input[consumed..];
            if !self.remove_extra_whitespaces {
                is_prev_space = false;
            }
        }
        if self.remove_extra_whitespaces {
            let space: &[u8] = if self.escape_whitespaces {
                space_sym
            } else {
                b" "
            };
            while out.ends_with(space) {
                out.truncate(out.len() - space.len());
            }
        }
        if self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            add_ws(&mut out);
        }
        out
    }
}

/// `normalizer::PrefixMatcher` over the user-defined symbols: longest match at the start.
#[derive(Debug, Clone, Default)]
pub(super) struct UserDefinedMatcher {
    pub(super) symbols: HashMap<Vec<u8>, ()>,
    pub(super) max_len: usize,
}

impl UserDefinedMatcher {
    fn longest_match(&self, input: &[u8]) -> Option<usize> {
        if self.symbols.is_empty() {
            return None;
        }
        (1..=self.max_len.min(input.len()))
            .rev()
            .find(|&len| self.symbols.contains_key(&input[..len]))
    }
}
