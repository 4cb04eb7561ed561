//! Protobuf messages for the parts of SentencePiece's `sentencepiece_model.proto`
//! that encoding and decoding depend on, written by hand as prost messages.
//!
//! reference: SentencePiece `src/sentencepiece_model.proto` (`ModelProto`,
//! `TrainerSpec`, `NormalizerSpec`), read the way `SentencePieceProcessor::Load` reads
//! the bytes that modules/text_conditioner.py (pocket-tts 4.0.1) hands to
//! `sentencepiece`. Unknown fields are skipped by prost, so any newer or older model
//! file parses.

/// `sentencepiece.ModelProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelProto {
    #[prost(message, repeated, tag = "1")]
    pub pieces: Vec<SentencePiece>,
    #[prost(message, optional, tag = "2")]
    pub trainer_spec: Option<TrainerSpec>,
    #[prost(message, optional, tag = "3")]
    pub normalizer_spec: Option<NormalizerSpec>,
    #[prost(message, optional, tag = "5")]
    pub denormalizer_spec: Option<NormalizerSpec>,
}

/// `sentencepiece.ModelProto.SentencePiece`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SentencePiece {
    #[prost(string, optional, tag = "1")]
    pub piece: Option<String>,
    #[prost(float, optional, tag = "2")]
    pub score: Option<f32>,
    /// `Type` enum: NORMAL=1 (default), UNKNOWN=2, CONTROL=3, USER_DEFINED=4,
    /// UNUSED=5, BYTE=6.
    #[prost(int32, optional, tag = "3")]
    pub r#type: Option<i32>,
}

/// `sentencepiece.TrainerSpec` (only the fields that change encoding or decoding).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrainerSpec {
    /// UNIGRAM=1 (default), BPE=2, WORD=3, CHAR=4.
    #[prost(int32, optional, tag = "3")]
    pub model_type: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub vocab_size: Option<i32>,
    #[prost(bool, optional, tag = "24")]
    pub treat_whitespace_as_suffix: Option<bool>,
    #[prost(bool, optional, tag = "35")]
    pub byte_fallback: Option<bool>,
    #[prost(int32, optional, tag = "40")]
    pub unk_id: Option<i32>,
    #[prost(string, optional, tag = "44")]
    pub unk_surface: Option<String>,
}

/// `sentencepiece.NormalizerSpec`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NormalizerSpec {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub precompiled_charsmap: Option<Vec<u8>>,
    #[prost(bool, optional, tag = "3")]
    pub add_dummy_prefix: Option<bool>,
    #[prost(bool, optional, tag = "4")]
    pub remove_extra_whitespaces: Option<bool>,
    #[prost(bool, optional, tag = "5")]
    pub escape_whitespaces: Option<bool>,
}
