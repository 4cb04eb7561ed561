//! `prepare-text`: the text's chunks exactly as the model will read them (after
//! `--normalize` and `--markup` if asked, the reference's `prepare_text_prompt` and
//! chunking), from the config and tokenizer alone: no weights are read or downloaded.

use std::io::{self, Write};

use anyhow::{bail, Context, Result};
use clap::Args;
use pocket_tts_core::tts_model::{TtsModel, MAX_TOKENS_PER_CHUNK};
use pocket_tts_text::prep::{model_inputs, ModelInput};
use pocket_tts_text::tokenizer::Tokenizer;
use serde_json::{json, Value};

use crate::model::{self, BackendArg, ModelArgs};
use crate::speech::read_text;
use crate::text_args::TextArgs;

/// Flags of `prepare-text`.
#[derive(Args, Debug)]
pub struct PrepareTextArgs {
    /// Text to prepare; `-` reads it from stdin. Default: the greeting `generate` speaks.
    #[arg(long)]
    pub text: Option<String>,
    /// Language of a built-in model (its config and tokenizer are used). Incompatible with
    /// --config. Default: english.
    #[arg(long)]
    pub language: Option<String>,
    /// Model config .yaml (local or hf://): its text settings and tokenizer are used.
    /// Incompatible with --language.
    #[arg(long)]
    pub config: Option<String>,
    #[command(flatten)]
    pub text_prep: TextArgs,
    /// Maximum number of tokens per chunk (as generate's --max-tokens).
    #[arg(long, default_value_t = MAX_TOKENS_PER_CHUNK)]
    pub max_tokens: usize,
    /// Print a JSON array instead of lines: `{"text", "tokens"}` per chunk (the text
    /// tokenized and its token ids), `{"pause_ms"}` per pause.
    #[arg(long)]
    pub json: bool,
    /// Only print errors (no warning about over-long chunks).
    #[arg(short, long)]
    pub quiet: bool,
}

/// Runs `prepare-text`.
pub fn run(args: PrepareTextArgs) -> Result<()> {
    if args.max_tokens == 0 {
        bail!("--max-tokens must be at least 1");
    }
    let choice = model::choose(&ModelArgs {
        language: args.language.clone(),
        config: args.config.clone(),
        backend: BackendArg::Cpu,
        quantize: None,
        dtype: None,
        mimi_dtype: None,
    })?;
    let prep = args.text_prep.prep(&choice)?;
    let text = read_text(args.text.as_deref(), args.language.as_deref())?;
    let origin = match &args.config {
        Some(c) => format!("--config {c}"),
        None => format!(
            "--language {}",
            choice.language.as_deref().unwrap_or("english")
        ),
    };
    let opts = choice
        .config
        .text_options()
        .with_context(|| origin.clone())?;
    let lt = &choice.config.flow_lm.lookup_table;
    let path = TtsModel::resolve_tokenizer(&choice.config, choice.dir.as_deref(), true)
        .with_context(|| format!("{origin}: cannot get the tokenizer"))?;
    let tokenizer = Tokenizer::from_file(&path, &lt.tokenizer, lt.n_bins)
        .with_context(|| format!("{origin}: cannot read the tokenizer"))?;
    let inputs =
        model_inputs(&tokenizer, &text, args.max_tokens, &opts, &prep).context("--text")?;
    let out = if args.json {
        let items: Vec<Value> = inputs
            .iter()
            .map(|input| match input {
                ModelInput::Chunk {
                    prepared, tokens, ..
                } => json!({ "text": prepared, "tokens": tokens }),
                ModelInput::Pause(ms) => json!({ "pause_ms": ms }),
            })
            .collect();
        let mut s = serde_json::to_string_pretty(&Value::Array(items))?;
        s.push('\n');
        s
    } else {
        inputs
            .iter()
            .map(|input| match input {
                ModelInput::Chunk { prepared, .. } => format!("{prepared}\n"),
                ModelInput::Pause(ms) => format!("[pause {ms} ms]\n"),
            })
            .collect()
    };
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
    {
        // The reader went away (`| head`): nothing more to say.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r.context("writing to stdout"),
    }
}
