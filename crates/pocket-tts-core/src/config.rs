//! Model configuration: the reference's YAML schema (`utils/config.py`), read strictly.
//!
//! Unknown fields are refused (the reference's pydantic models use `extra="forbid"`),
//! so a typo in a config is an error rather than a silently ignored setting.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};
use pocket_tts_text::chunking::TextOptions;
use pocket_tts_text::normalize::Language;

/// The built-in default config: the reference's `config/english.yaml`.
pub const ENGLISH_YAML: &str = include_str!("../configs/english.yaml");

/// The reference's built-in configs (`pocket_tts/config/*.yaml`, MIT), by language name.
pub const BUILTIN_CONFIGS: &[(&str, &str)] = &[
    ("dutch", include_str!("../configs/dutch.yaml")),
    ("dutch_24l", include_str!("../configs/dutch_24l.yaml")),
    ("english", include_str!("../configs/english.yaml")),
    (
        "english_18m_2026-10",
        include_str!("../configs/english_18m_2026-10.yaml"),
    ),
    (
        "english_18m_refl_2026-10",
        include_str!("../configs/english_18m_refl_2026-10.yaml"),
    ),
    (
        "english_2026-01",
        include_str!("../configs/english_2026-01.yaml"),
    ),
    (
        "english_2026-04",
        include_str!("../configs/english_2026-04.yaml"),
    ),
    (
        "english_2026-04_24l",
        include_str!("../configs/english_2026-04_24l.yaml"),
    ),
    (
        "english_2026-09",
        include_str!("../configs/english_2026-09.yaml"),
    ),
    (
        "english_2026-09_2",
        include_str!("../configs/english_2026-09_2.yaml"),
    ),
    (
        "english_2026-09_24l",
        include_str!("../configs/english_2026-09_24l.yaml"),
    ),
    (
        "english_2026-10",
        include_str!("../configs/english_2026-10.yaml"),
    ),
    (
        "english_2m_2026-10",
        include_str!("../configs/english_2m_2026-10.yaml"),
    ),
    (
        "english_2m_refl_2026-10",
        include_str!("../configs/english_2m_refl_2026-10.yaml"),
    ),
    (
        "english_7m_2026-10",
        include_str!("../configs/english_7m_2026-10.yaml"),
    ),
    (
        "english_7m_refl_2026-10",
        include_str!("../configs/english_7m_refl_2026-10.yaml"),
    ),
    (
        "english_drifting_26-09",
        include_str!("../configs/english_drifting_26-09.yaml"),
    ),
    ("french", include_str!("../configs/french.yaml")),
    ("french_24l", include_str!("../configs/french_24l.yaml")),
    ("german", include_str!("../configs/german.yaml")),
    ("german_24l", include_str!("../configs/german_24l.yaml")),
    ("italian", include_str!("../configs/italian.yaml")),
    ("italian_24l", include_str!("../configs/italian_24l.yaml")),
    ("portuguese", include_str!("../configs/portuguese.yaml")),
    (
        "portuguese_24l",
        include_str!("../configs/portuguese_24l.yaml"),
    ),
    ("spanish", include_str!("../configs/spanish.yaml")),
    ("spanish_24l", include_str!("../configs/spanish_24l.yaml")),
];

/// Default EOS threshold (reference: `default_parameters.py`, `DEFAULT_EOS_THRESHOLD`).
pub const DEFAULT_EOS_THRESHOLD: f32 = -4.0;
/// Default temperature (reference: `default_parameters.py`, `DEFAULT_TEMPERATURE`).
pub const DEFAULT_TEMPERATURE: f32 = 0.3;

/// Flow head (reference: `FlowConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Width of the flow MLP.
    pub dim: usize,
    /// Number of residual blocks.
    pub depth: usize,
    /// The sampler: `lsd` (2 time conditions), `flow_matching` (1), `drifting` or
    /// `pointwise` (0).
    #[serde(rename = "type", default = "default_flow_type")]
    pub kind: FlowType,
}

fn default_flow_type() -> FlowType {
    FlowType::Lsd
}

/// A config value outside a fixed set: the error of the `TryFrom<String>` of the config's
/// enums ([`FlowType`], [`PadMode`], [`WeightDtype`]), reported by [`Config::from_yaml_str`]
/// as [`Error::Unsupported`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedValue {
    /// The YAML key (`flow.type`, `pad_mode`, `dtype`).
    pub field: &'static str,
    /// The value found.
    pub value: String,
    /// The values this build supports.
    pub known: &'static [&'static str],
}

/// Start of [`UnsupportedValue`]'s message, to tell it from other YAML errors.
const UNSUPPORTED_MARKER: &str = "unsupported value";

impl std::fmt::Display for UnsupportedValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{UNSUPPORTED_MARKER} {:?} for {} (known: {})",
            self.value,
            self.field,
            self.known.join(", ")
        )
    }
}

impl std::error::Error for UnsupportedValue {}

/// Declares a config enum read from a fixed set of strings.
macro_rules! config_enum {
    ($(#[$meta:meta])* $name:ident, $field:literal, { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "&'static str")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// The accepted spellings, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text,)+];

            /// The config spelling.
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)+
                }
            }
        }

        impl TryFrom<String> for $name {
            type Error = UnsupportedValue;

            fn try_from(s: String) -> std::result::Result<Self, UnsupportedValue> {
                match s.as_str() {
                    $($text => Ok(Self::$variant),)+
                    _ => Err(UnsupportedValue { field: $field, value: s, known: Self::NAMES }),
                }
            }
        }

        impl From<$name> for &'static str {
            fn from(v: $name) -> Self {
                v.name()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

config_enum!(
    /// The flow head's sampler (`flow_lm.flow.type`; reference: `FlowLMModel`'s
    /// `lsd_decode`, `flow_matching_decode`, `drifting_decode`, `pointwise_decode`).
    FlowType, "flow.type", {
        /// Lagrangian Self Distillation (arXiv:2505.18825): two time conditions.
        Lsd = "lsd",
        /// Optimal-transport flow matching with Euler steps: one time condition.
        FlowMatching = "flow_matching",
        /// One step, the head's output is the sample.
        Drifting = "drifting",
        /// One step, noise plus the head's output.
        Pointwise = "pointwise",
    }
);

impl FlowType {
    /// Time conditions the head takes.
    pub fn num_time_conds(self) -> usize {
        match self {
            Self::Lsd => 2,
            Self::FlowMatching => 1,
            Self::Drifting | Self::Pointwise => 0,
        }
    }
}

config_enum!(
    /// Padding of the SEANet convolutions (`mimi.seanet.pad_mode`; reference:
    /// `StreamingConv1d`'s `pad_mode`).
    PadMode, "pad_mode", {
        /// Zeros.
        Constant = "constant",
        /// The first input sample, repeated.
        Replicate = "replicate",
    }
);

config_enum!(
    /// Weight dtype named by the config (`flow_lm.dtype`, `mimi.dtype`). The weights are
    /// computed in f32 whatever the file holds.
    WeightDtype, "dtype", {
        /// 32-bit float.
        Float32 = "float32",
        /// bfloat16.
        Bfloat16 = "bfloat16",
        /// IEEE half precision.
        Float16 = "float16",
    }
);

/// FlowLM backbone transformer (reference: `FlowLMTransformerConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowLmTransformerConfig {
    /// Feed-forward width multiplier when `dim_feedforward` is unset.
    pub hidden_scale: usize,
    /// RoPE maximum period.
    pub max_period: f64,
    /// Model width.
    pub d_model: usize,
    /// Query heads.
    pub num_heads: usize,
    /// Number of layers.
    pub num_layers: usize,
    /// Width of queries and of the attention output; `d_model` when unset.
    #[serde(default)]
    pub attn_dim: Option<usize>,
    /// Key/value heads (grouped-query attention); `num_heads` when unset.
    #[serde(default)]
    pub num_kv_heads: Option<usize>,
    /// Feed-forward width; `d_model * hidden_scale` when unset.
    #[serde(default)]
    pub dim_feedforward: Option<usize>,
}

/// Text lookup table (reference: `LookupTable`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LookupTableConfig {
    /// Embedding width.
    pub dim: usize,
    /// Vocabulary size (the table has `n_bins + 1` rows, the last one for padding).
    pub n_bins: usize,
    /// Tokenizer kind: `sentencepiece` or `tokenizers`.
    pub tokenizer: String,
    /// Tokenizer file: local path, `hf://repo/path@rev` or URL.
    pub tokenizer_path: String,
    /// Low-rank table width (with a bias-free projection to `dim`); full when unset.
    #[serde(default)]
    pub rank: Option<usize>,
}

/// FlowLM (reference: `FlowLMConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowLmConfig {
    /// Weight dtype (`float32`).
    pub dtype: WeightDtype,
    /// Flow head.
    pub flow: FlowConfig,
    /// Backbone.
    pub transformer: FlowLmTransformerConfig,
    /// Width of the backbone output fed to the flow and EOS heads (a bias-free
    /// projection from `d_model`), or the transformer output itself when unset.
    #[serde(default)]
    pub z_dim: Option<usize>,
    /// Text conditioner.
    pub lookup_table: LookupTableConfig,
    /// Separate FlowLM weights (training layout).
    #[serde(default)]
    pub weights_path: Option<String>,
    /// Insert a learnt embedding before the voice prompt.
    #[serde(default)]
    pub insert_bos_before_voice: bool,
}

/// SEANet encoder/decoder (reference: `SEANetConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeanetConfig {
    /// Latent channels.
    pub dimension: usize,
    /// Audio channels.
    pub channels: usize,
    /// Base number of filters.
    pub n_filters: usize,
    /// Residual blocks per stage.
    pub n_residual_layers: usize,
    /// Up/down-sampling ratios (decoder order).
    pub ratios: Vec<usize>,
    /// First conv kernel size.
    pub kernel_size: usize,
    /// Residual conv kernel size.
    pub residual_kernel_size: usize,
    /// Last conv kernel size.
    pub last_kernel_size: usize,
    /// Dilation growth per residual layer.
    pub dilation_base: usize,
    /// `constant` or `replicate`.
    pub pad_mode: PadMode,
    /// Residual hidden width divisor.
    pub compress: usize,
}

/// Mimi transformer (reference: `MimiTransformerConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MimiTransformerConfig {
    /// Model width.
    pub d_model: usize,
    /// Input channels (projected to `d_model` when different).
    pub input_dimension: usize,
    /// Output channels, one projection each.
    pub output_dimensions: Vec<usize>,
    /// Heads.
    pub num_heads: usize,
    /// Layers.
    pub num_layers: usize,
    /// LayerScale initial value (the scales are weights).
    pub layer_scale: f64,
    /// Attention window in steps at the encoder frame rate (200 Hz).
    pub context: usize,
    /// RoPE maximum period.
    #[serde(default = "default_max_period")]
    pub max_period: f64,
    /// Feed-forward width.
    pub dim_feedforward: usize,
}

fn default_max_period() -> f64 {
    10000.0
}

/// Quantizer output projection (reference: `QuantizerConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuantizerConfig {
    /// Latent width (the FlowLM's `ldim`).
    pub dimension: usize,
    /// Projected width.
    pub output_dimension: usize,
}

/// Mimi codec (reference: `MimiConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MimiConfig {
    /// Weight dtype.
    pub dtype: WeightDtype,
    /// Audio sample rate in Hz (24000).
    pub sample_rate: usize,
    /// Audio channels.
    pub channels: usize,
    /// Latent frame rate in Hz (12.5).
    pub frame_rate: f64,
    /// Encoder SEANet (and decoder, unless `decoder_seanet` is set).
    pub seanet: SeanetConfig,
    /// Encoder transformer (and decoder, unless `decoder_transformer` is set).
    pub transformer: MimiTransformerConfig,
    /// Quantizer projection.
    pub quantizer: QuantizerConfig,
    /// Separate Mimi weights.
    #[serde(default)]
    pub weights_path: Option<String>,
    /// Width of the downsampled latent.
    #[serde(default)]
    pub inner_dim: Option<usize>,
    /// Width fed to the upsampler.
    #[serde(default)]
    pub outer_dim: Option<usize>,
    /// Decoder SEANet when it differs from the encoder's.
    #[serde(default)]
    pub decoder_seanet: Option<SeanetConfig>,
    /// Decoder transformer when it differs from the encoder's.
    #[serde(default)]
    pub decoder_transformer: Option<MimiTransformerConfig>,
}

impl MimiConfig {
    /// The SEANet used by the decoder.
    pub fn decoder_seanet(&self) -> &SeanetConfig {
        self.decoder_seanet.as_ref().unwrap_or(&self.seanet)
    }

    /// The transformer used by the decoder.
    pub fn decoder_transformer(&self) -> &MimiTransformerConfig {
        self.decoder_transformer
            .as_ref()
            .unwrap_or(&self.transformer)
    }

    /// Encoder hop length in samples (product of the SEANet ratios).
    pub fn hop_length(&self) -> usize {
        self.seanet.ratios.iter().product()
    }

    /// Encoder frame rate in Hz (`sample_rate / hop_length`, 200 Hz for the released model).
    pub fn encoder_frame_rate(&self) -> f64 {
        self.sample_rate as f64 / self.hop_length() as f64
    }

    /// Samples per latent frame (1920 for 24 kHz at 12.5 Hz).
    pub fn frame_size(&self) -> usize {
        (self.sample_rate as f64 / self.frame_rate) as usize
    }

    /// Encoder steps per latent frame (16 for the released model).
    pub fn steps_per_latent(&self) -> usize {
        (self.encoder_frame_rate() / self.frame_rate) as usize
    }
}

/// Whole TTS model config (reference: `Config`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// FlowLM.
    pub flow_lm: FlowLmConfig,
    /// Mimi.
    pub mimi: MimiConfig,
    /// Whole-model checkpoint (`flow_lm.*` and `mimi.*` tensors).
    #[serde(default)]
    pub weights_path: Option<String>,
    /// Fallback checkpoint when the gated voice-cloning repo is refused.
    #[serde(default)]
    pub weights_path_without_voice_cloning: Option<String>,
    /// Prefix short inputs with 8 spaces.
    #[serde(default)]
    pub pad_with_spaces_for_short_inputs: bool,
    /// Replace `;` with `,`.
    #[serde(default)]
    pub remove_semicolons: bool,
    /// Append a period when the text lacks terminal punctuation.
    #[serde(default = "yes")]
    pub append_terminal_punctuation: bool,
    /// Upper-case the first letter.
    #[serde(default = "yes")]
    pub capitalize_first_letter: bool,
    /// Per-character rewrites before tokenization (`""` deletes).
    #[serde(default)]
    pub replace_characters: BTreeMap<String, String>,
    /// Frames to generate after EOS, overriding the text-length guess.
    #[serde(default)]
    pub model_recommended_frames_after_eos: Option<usize>,
    /// Temperature when the caller passes none.
    #[serde(default = "default_temperature")]
    pub default_temperature: f32,
    /// EOS threshold when the caller passes none.
    #[serde(default = "default_eos_threshold")]
    pub default_eos_threshold: f32,
    /// The language of the model's text (a name such as `german` or an ISO 639-1 code
    /// such as `de`; see [`Language`]), used by the opt-in text normalization
    /// ([`pocket_tts_text::prep::text_language`]). Ours, not in the reference's schema: the
    /// built-in configs leave it out (their name gives the language); a custom config of
    /// a non-English model sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

fn yes() -> bool {
    true
}
fn default_temperature() -> f32 {
    DEFAULT_TEMPERATURE
}
fn default_eos_threshold() -> f32 {
    DEFAULT_EOS_THRESHOLD
}

impl Config {
    /// Parses a config from YAML text. `origin` names the source in error messages.
    ///
    /// # Errors
    /// [`Error::InvalidData`] for malformed YAML, unknown fields or missing fields,
    /// and for values the model cannot use (see [`Config::validate`]).
    pub fn from_yaml_str(text: &str, origin: &str) -> Result<Self> {
        let config: Config = serde_saphyr::from_str(text).map_err(|e| {
            let msg = e.without_snippet().to_string();
            if msg.contains(UNSUPPORTED_MARKER) {
                // A kind this build does not implement (flow type, pad mode, dtype).
                Error::Unsupported(format!("config {origin}: {msg}"))
            } else {
                Error::InvalidData(format!(
                    "config {origin}: {msg}. Fix the YAML (fields follow pocket-tts 4.0.1's config schema)"
                ))
            }
        })?;
        config.validate(origin)?;
        Ok(config)
    }

    /// Reads a local YAML config file.
    ///
    /// # Errors
    /// [`Error::NotFound`] if the file does not exist, [`Error::Io`] if it cannot be
    /// read, and the errors of [`Config::from_yaml_str`].
    pub fn from_yaml_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::NotFound(format!(
                    "config file {} does not exist: check the path",
                    path.display()
                ))
            } else {
                Error::io(path, e)
            }
        })?;
        Self::from_yaml_str(&text, &path.display().to_string())
    }

    /// The text preprocessing switches of this config (its fields of the same names) for
    /// the text crate's chunking ([`pocket_tts_text::chunking`]).
    ///
    /// # Errors
    /// [`Error::InvalidData`] for a `replace_characters` key that is not exactly one
    /// character.
    pub fn text_options(&self) -> Result<TextOptions> {
        let replace_characters = TextOptions::replace_characters_from(
            self.replace_characters
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        )?;
        Ok(TextOptions {
            pad_with_spaces_for_short_inputs: self.pad_with_spaces_for_short_inputs,
            remove_semicolons: self.remove_semicolons,
            append_terminal_punctuation: self.append_terminal_punctuation,
            capitalize_first_letter: self.capitalize_first_letter,
            replace_characters,
        })
    }

    /// The built-in English config (the reference's `config/english.yaml`).
    pub fn english() -> Self {
        // The embedded file is tested; parsing it cannot fail at run time.
        Self::from_yaml_str(ENGLISH_YAML, "built-in english.yaml")
            .expect("the built-in english.yaml is valid")
    }

    /// The built-in config of a language (`english`, `french_24l`, …; see
    /// [`BUILTIN_CONFIGS`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an unknown language, listing the known ones.
    pub fn builtin(language: &str) -> Result<Self> {
        let Some((_, text)) = BUILTIN_CONFIGS.iter().find(|(n, _)| *n == language) else {
            let known: Vec<&str> = BUILTIN_CONFIGS.iter().map(|(n, _)| *n).collect();
            return Err(Error::invalid_argument(format!(
                "unknown language {language:?}; available: {}",
                known.join(", ")
            )));
        };
        Self::from_yaml_str(text, &format!("built-in {language}.yaml"))
    }

    /// Checks the values the model relies on (positive sizes, divisibility, known kinds).
    ///
    /// # Errors
    /// [`Error::InvalidData`] naming the field, or [`Error::Unsupported`] for a flow
    /// type or dtype this build does not implement.
    pub fn validate(&self, origin: &str) -> Result<()> {
        let bad = |msg: String| Err(Error::InvalidData(format!("config {origin}: {msg}")));
        if let Some(language) = &self.language {
            if let Err(e) = language.parse::<Language>() {
                let msg = match e {
                    pocket_tts_text::Error::InvalidArgument(m) => m,
                    other => other.to_string(),
                };
                return bad(format!("language: {msg}"));
            }
        }
        let t = &self.flow_lm.transformer;
        if t.d_model == 0 || t.num_heads == 0 || t.num_layers == 0 {
            return bad("flow_lm.transformer sizes must be positive".into());
        }
        let attn_dim = t.attn_dim.unwrap_or(t.d_model);
        let kv_heads = t.num_kv_heads.unwrap_or(t.num_heads);
        if !attn_dim.is_multiple_of(t.num_heads)
            || kv_heads == 0
            || !t.num_heads.is_multiple_of(kv_heads)
        {
            return bad(format!(
                "flow_lm.transformer: attn_dim {attn_dim} must divide by num_heads {} and num_heads by num_kv_heads {kv_heads}",
                t.num_heads
            ));
        }
        if !(attn_dim / t.num_heads).is_multiple_of(2) {
            return bad("flow_lm.transformer: head dimension must be even for RoPE".into());
        }
        let m = &self.mimi;
        if m.sample_rate == 0 || m.frame_rate <= 0.0 || m.seanet.ratios.is_empty() {
            return bad("mimi sample_rate, frame_rate and seanet.ratios must be positive".into());
        }
        let steps = m.encoder_frame_rate() / m.frame_rate;
        if steps < 1.0 || steps.fract() != 0.0 {
            return bad(format!(
                "mimi: encoder frame rate {} Hz is not an integer multiple of frame_rate {} Hz",
                m.encoder_frame_rate(),
                m.frame_rate
            ));
        }
        for (name, tc) in [
            ("transformer", &m.transformer),
            ("decoder_transformer", m.decoder_transformer()),
        ] {
            if tc.num_heads == 0
                || !tc.d_model.is_multiple_of(tc.num_heads)
                || tc.output_dimensions.is_empty()
            {
                return bad(format!(
                    "mimi.{name}: d_model {} must divide by num_heads {} and output_dimensions must not be empty",
                    tc.d_model, tc.num_heads
                ));
            }
        }
        if self.flow_lm.lookup_table.dim != t.d_model {
            // The text embeddings are concatenated with the d_model-wide latent inputs.
            return bad(format!(
                "flow_lm.lookup_table.dim {} must equal flow_lm.transformer.d_model {}",
                self.flow_lm.lookup_table.dim, t.d_model
            ));
        }
        Ok(())
    }

    /// Latent width of the FlowLM (`mimi.quantizer.dimension`).
    pub fn latent_dim(&self) -> usize {
        self.mimi.quantizer.dimension
    }

    /// Input width of the speaker projection (`mimi.inner_dim` or `mimi.seanet.dimension`).
    pub fn speaker_dim(&self) -> usize {
        self.mimi.inner_dim.unwrap_or(self.mimi.seanet.dimension)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_config_parses_and_validates() {
        for (name, _) in BUILTIN_CONFIGS {
            let c = Config::builtin(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(c.flow_lm.transformer.d_model > 0);
        }
        assert_eq!(Config::english(), Config::builtin("english").unwrap());
    }

    #[test]
    fn unknown_language_and_unknown_field_are_refused() {
        assert!(matches!(
            Config::builtin("klingon"),
            Err(Error::InvalidArgument { .. })
        ));
        let bad = ENGLISH_YAML.replace("default_temperature: 0.3", "default_temprature: 0.3");
        let err = Config::from_yaml_str(&bad, "typo.yaml").unwrap_err();
        assert!(
            matches!(err, Error::InvalidData(ref m) if m.contains("default_temprature")),
            "{err}"
        );
    }

    #[test]
    fn language_field_is_optional_and_checked() {
        assert_eq!(Config::english().language, None);
        let german = format!("{ENGLISH_YAML}\nlanguage: german\n");
        let c = Config::from_yaml_str(&german, "german.yaml").unwrap();
        assert_eq!(c.language.as_deref(), Some("german"));
        let code = format!("{ENGLISH_YAML}\nlanguage: NL\n");
        assert!(Config::from_yaml_str(&code, "nl.yaml").is_ok());
        let bad = format!("{ENGLISH_YAML}\nlanguage: klingon\n");
        let err = Config::from_yaml_str(&bad, "bad.yaml").unwrap_err();
        assert!(
            matches!(err, Error::InvalidData(ref m)
                if m.contains("bad.yaml") && m.contains("language") && m.contains("klingon")),
            "{err}"
        );
    }
}

/// How the FlowLM transformer's attention and feed-forward linears are quantized
/// ([`crate::LoadOptions::quantize`], CLI `--quantize int8|q4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Quantization {
    /// Int8 with one scale per output channel (reference: `quantize=True`,
    /// `quantization.py`; `pocket_tts_simd::QuantizedRows`).
    Int8,
    /// 4 bits in blocks of 32 weights with a `bf16` scale per block (ours:
    /// `pocket_tts_simd::Q4Rows`, whose docs give the layout): about 4.5 bits per weight,
    /// half of int8's bytes per step.
    Q4,
}

impl Quantization {
    /// Every mode, in the CLI's order.
    pub const ALL: [Quantization; 2] = [Quantization::Int8, Quantization::Q4];

    /// The CLI's and the checkpoints' name: `int8` or `q4`.
    pub fn name(self) -> &'static str {
        match self {
            Quantization::Int8 => "int8",
            Quantization::Q4 => "q4",
        }
    }
}

impl std::fmt::Display for Quantization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Quantization {
    type Err = crate::Error;

    /// `int8` or `q4` (ASCII case-insensitive).
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] on the field `quantize` naming the accepted values.
    fn from_str(s: &str) -> crate::Result<Self> {
        Quantization::ALL
            .into_iter()
            .find(|q| q.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| crate::Error::InvalidArgument {
                field: Some("quantize"),
                message: format!("unknown quantization {s:?}: use int8 or q4"),
            })
    }
}
