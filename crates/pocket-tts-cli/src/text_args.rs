//! The opt-in text flags shared by `generate`, `stream`, `bench-streams`, `serve` and
//! `prepare-text`: `--normalize`, `--text-language`, `--markup` (ours, not the
//! reference's; off, the text is read exactly as the reference reads it).

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use pocket_tts_core::GenerationParams;
use pocket_tts_text::normalize::Language;
use pocket_tts_text::prep::{self, TextPrep};

use crate::model::ModelChoice;

/// Text normalization and pause markup flags.
#[derive(Args, Debug, Clone, Default)]
pub struct TextArgs {
    /// Rewrite numbers, dates, times, money, units, abbreviations and symbols into words of
    /// the text's language before the reference's own text preparation ("3 cats" → "three
    /// cats"). Off by default; when on, the output differs from the reference's. For
    /// serve: the default of every request, which may set its own `normalize`.
    #[arg(long)]
    pub normalize: bool,
    /// Language of the text for --normalize: english, french, german, italian,
    /// portuguese, spanish, dutch (or en, fr, de, it, pt, es, nl). Default: the config's
    /// `language` field, else the built-in model's (--language).
    #[arg(long, value_name = "L")]
    pub text_language: Option<String>,
    /// Read pause tags: `[pause 500ms]`, `[pause 1.5s]` or `<break time="500ms"/>` insert
    /// that much silence (0 to 10 s), the text on each side generated as separate chunks;
    /// a malformed tag is an error. Off by default: brackets are read as text, as the
    /// reference does. For serve: the default of every request, which may set its own
    /// `markup`.
    #[arg(long)]
    pub markup: bool,
}

impl TextArgs {
    /// `--text-language`, parsed.
    fn explicit_language(&self) -> Result<Option<Language>> {
        self.text_language
            .as_deref()
            .map(|l| {
                l.parse::<Language>()
                    .with_context(|| format!("--text-language {l}"))
            })
            .transpose()
    }

    /// The text's language: `--text-language`, else the config's `language`, else the
    /// built-in model's. `None` when none names one.
    pub fn language(&self, choice: &ModelChoice) -> Result<Option<Language>> {
        let explicit = self.explicit_language()?;
        prep::text_language(
            explicit,
            choice.config.language.as_deref(),
            choice.language.as_deref(),
        )
        .context("--config")
    }

    /// [`Self::language`], required by `--normalize` (or a request's `normalize`).
    ///
    /// # Errors
    /// Naming `--text-language` and the config's `language` field when none resolves.
    pub fn require_language(&self, choice: &ModelChoice) -> Result<Language> {
        self.language(choice)?.ok_or_else(|| {
            anyhow!(
                "--normalize needs the text's language and this config names none: give \
                 --text-language (e.g. --text-language english), or add `language: english` \
                 (or french, german, italian, portuguese, spanish, dutch) to the config"
            )
        })
    }

    /// The text steps asked for, for a command that reads one text (`generate`, `stream`,
    /// `prepare-text`): `--text-language` only with `--normalize`.
    pub fn prep(&self, choice: &ModelChoice) -> Result<TextPrep> {
        if self.text_language.is_some() && !self.normalize {
            // Check its value anyway: a typo is reported as such.
            self.explicit_language()?;
            bail!("--text-language only applies with --normalize");
        }
        let normalize = if self.normalize {
            Some(self.require_language(choice)?)
        } else {
            None
        };
        Ok(TextPrep {
            normalize,
            markup: self.markup,
        })
    }

    /// Sets `params`' text fields from [`Self::prep`].
    pub fn apply(&self, params: &mut GenerationParams, choice: &ModelChoice) -> Result<()> {
        let prep = self.prep(choice)?;
        params.normalize = prep.normalize.is_some();
        params.text_language = prep.normalize;
        params.markup = prep.markup;
        Ok(())
    }
}
