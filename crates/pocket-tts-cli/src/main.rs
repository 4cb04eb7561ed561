//! `pocket-tts-cli`: text-to-speech with Pocket TTS, without Python.
//!
//! Commands and flags mirror the reference's `pocket-tts` CLI (pocket-tts 4.0.1, `main.py`).

mod defaults;
mod export_voice;
mod generate;
mod model;

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
    /// Encode a voice prompt (audio file or folder of files) into .safetensors voice states.
    ExportVoice(export_voice::ExportVoiceArgs),
}

fn init_logging(quiet: bool) {
    let default = if quiet { "error" } else { "info" };
    let filter = tracing_subscriber::EnvFilter::try_from_env("POCKET_TTS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .without_time()
        .try_init();
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Generate(args) => {
            init_logging(args.quiet);
            generate::run(args)
        }
        Command::ExportVoice(args) => {
            init_logging(args.quiet);
            export_voice::run(args)
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // One line: the error and its causes.
            let msg = e
                .chain()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(": ");
            eprintln!("error: {msg}");
            std::process::ExitCode::FAILURE
        }
    }
}
