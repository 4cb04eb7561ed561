//! The text pipeline of pocket-tts-rs, without the model (no Candle): what turns a text
//! into the token ids the model reads (reference: `pocket-tts` 4.0.1 on PyPI).
//!
//! Each module names the reference file it mirrors:
//!
//! | module | reference (`pocket_tts/`) | job |
//! |---|---|---|
//! | [`tokenizer`] | `modules/text_conditioner.py` | SentencePiece Unigram (own Viterbi), `tokenizer.json` |
//! | [`chunking`] | `models/text_chunking.py` | prompt preparation, sentence chunks ([`chunking::TextOptions`]: the config's switches) |
//! | [`markup`] | (ours) | opt-in pause markup: `[pause 500ms]`, `<break time="500ms"/>` |
//! | [`normalize`] | (ours) | opt-in normalization: numbers, dates, money, units, abbreviations read aloud per [`normalize::Language`] |
//! | [`prep`] | (ours, around `split_into_best_sentences`) | what the model reads: markup, normalization, then the reference's chunks |
//!
//! `pocket-tts-core` builds [`chunking::TextOptions`] and the text language from its model
//! config and runs [`prep`] before generating.

#![warn(missing_docs)]

pub mod chunking;
pub mod error;
pub mod markup;
pub mod normalize;
pub mod prep;
pub mod tokenizer;

pub use error::{Error, Result};
