//! `pocket-tts-cli`: text-to-speech with Pocket TTS, without Python.
//!
//! Commands and flags mirror the reference's `pocket-tts` CLI (pocket-tts 4.0.1, `main.py`).

mod allocator;
mod audio_out;
mod bench_streams;
mod defaults;
mod export_model;
mod export_voice;
mod generate;
mod interrupt;
mod memory;
mod model;
mod outputs;
mod prepare_text;
mod progress;
mod serve;
mod speech;
mod stats;
mod stream;
mod text_args;
mod threads;

use std::io::IsTerminal;

use clap::{Parser, Subcommand};

/// Kyutai Pocket TTS in Rust: text-to-speech with voice cloning on the CPU.
#[derive(Parser, Debug)]
#[command(name = "pocket-tts-cli", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Generate speech from text into a WAV file (or stdout).
    Generate(generate::GenerateArgs),
    /// Speak text to stdout as it is generated (WAV or raw PCM); --measure-first-chunk
    /// measures the time to first audio.
    Stream(stream::StreamArgs),
    /// Encode a voice prompt (audio file or folder of files) into .safetensors voice states.
    ExportVoice(export_voice::ExportVoiceArgs),
    /// Write a pre-quantized checkpoint (--quantize int8 or q4): the FlowLM transformer's
    /// linears stored quantized, loaded as stored (no conversion at start).
    ExportModel(export_model::ExportModelArgs),
    /// Print the text's chunks exactly as the model will read them (after --normalize and
    /// --markup if asked, the reference's text preparation and chunking), one per line, or
    /// as JSON with their token ids. Reads the config and tokenizer only, no weights.
    PrepareText(prepare_text::PrepareTextArgs),
    /// Throughput of many concurrent streams on one model (the batched engine): one
    /// measurement per --streams count, JSON lines on stdout.
    BenchStreams(bench_streams::BenchStreamsArgs),
    /// Serve speech over HTTP (the reference's web page and /tts, an OpenAI-compatible
    /// /v1/audio/speech) and optionally the Wyoming protocol, many clients at once.
    Serve(Box<serve::ServeArgs>),
}

/// Logging on stderr, filtered by `POCKET_TTS_LOG` (default: info, errors only with
/// `quiet`). The commands that draw a progress bar log through it, without timestamps; the
/// server's log (`serve`) has timestamps.
fn init_logging(quiet: bool, server: bool) {
    // symphonia logs its own view of unreadable audio at ERROR level ("probe reached
    // EOF …") before the core returns a proper error: keep it out of the user's way.
    let default = if quiet {
        "error,symphonia=off"
    } else {
        "info,symphonia=off"
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("POCKET_TTS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal());
    let _ = if server {
        builder.with_writer(std::io::stderr).try_init()
    } else {
        builder
            .with_writer(progress::LogWriter)
            .with_target(false)
            .without_time()
            .try_init()
    };
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse_from(model::quantize_args(std::env::args_os()));
    // One voice prompt, one text: freed temporaries go back to the system. (`serve`
    // keeps glibc's adaptive threshold: it reuses its large buffers request after
    // request.)
    if matches!(
        cli.command,
        Command::Generate(_) | Command::Stream(_) | Command::ExportVoice(_)
    ) {
        allocator::map_large_blocks();
    }
    // `serve` handles SIGINT/SIGTERM itself (a graceful shutdown); the other commands
    // remove their unfinished outputs and exit.
    if !matches!(cli.command, Command::Serve(_)) {
        interrupt::install();
    }
    let result = match cli.command {
        Command::Generate(args) => {
            init_logging(args.speech.quiet, false);
            generate::run(args)
        }
        Command::Stream(args) => {
            init_logging(args.speech.quiet, false);
            stream::run(args)
        }
        Command::BenchStreams(args) => {
            init_logging(args.speech.quiet, false);
            bench_streams::run(args)
        }
        Command::Serve(args) => {
            init_logging(args.quiet, true);
            serve::run(*args)
        }
        Command::ExportVoice(args) => {
            init_logging(args.quiet, false);
            export_voice::run(args)
        }
        Command::ExportModel(args) => {
            init_logging(args.quiet, false);
            export_model::run(args)
        }
        Command::PrepareText(args) => {
            init_logging(args.quiet, false);
            prepare_text::run(args)
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_line(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, `context: cause: cause`.
///
/// A cause that the previous message already ends with (`…: cause`) is skipped (errors that print
/// their source, like the core's `Io`, would otherwise show it twice), and multi-line
/// messages (YAML diagnostics with source snippets) are folded into one line.
fn error_line(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let text = one_line(&cause.to_string());
        let repeated = parts
            .last()
            .is_some_and(|prev| *prev == text || prev.ends_with(&format!(": {text}")));
        if text.is_empty() || repeated {
            continue;
        }
        parts.push(text);
    }
    parts.join(": ")
}

/// Folds a message onto one line: lines trimmed, blank ones dropped, joined by spaces.
fn one_line(msg: &str) -> String {
    msg.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
