//! The messages of Kyutai's streaming TTS websocket and its audio formats. Reference (for
//! understanding; no code taken): kyutai-labs/moshi `rust/moshi-server/src/tts.rs` (the
//! message enums), kyutai-labs/unmute `unmute/tts/text_to_speech.py` (the client's
//! models, which accept only `Text`, `Audio`, `Error` and `Ready`).
//!
//! Every message is a MessagePack map with string keys, tagged by `"type"`; `pcm` is an
//! array of float32 values.

use serde::{Deserialize, Serialize};

/// What the server sends for audio, chosen by the `format` query parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Raw little-endian `f32` samples (24 kHz mono) in binary frames, and nothing else:
    /// no `Ready`, `Text` nor `Error` messages.
    Pcm,
    /// MessagePack messages: `Ready`, `Audio {pcm}`, `Text {text, start_s, stop_s}`,
    /// `Error {message}`.
    PcmMessagePack,
    /// Ogg Opus pages in binary frames (the default, as moshi-server's).
    OggOpus,
    /// MessagePack messages with `OggOpus {data}` in place of `Audio`.
    OggOpusMessagePack,
}

impl Format {
    /// The names the `format` query parameter takes.
    pub const NAMES: [&'static str; 4] = ["Pcm", "PcmMessagePack", "OggOpus", "OggOpusMessagePack"];

    /// Parses a `format` value (its name, in any case).
    ///
    /// # Errors
    /// A message naming the value and the accepted ones.
    pub fn parse(value: &str) -> Result<Self, String> {
        let all = [
            Format::Pcm,
            Format::PcmMessagePack,
            Format::OggOpus,
            Format::OggOpusMessagePack,
        ];
        Self::NAMES
            .iter()
            .zip(all)
            .find(|(name, _)| name.eq_ignore_ascii_case(value))
            .map(|(_, f)| f)
            .ok_or_else(|| format!("format {value:?} is not one of {}", Self::NAMES.join(", ")))
    }

    /// The name of the format.
    pub fn name(self) -> &'static str {
        match self {
            Format::Pcm => "Pcm",
            Format::PcmMessagePack => "PcmMessagePack",
            Format::OggOpus => "OggOpus",
            Format::OggOpusMessagePack => "OggOpusMessagePack",
        }
    }

    /// Whether control messages (`Ready`, `Text`, `Error`) are sent.
    pub fn has_messages(self) -> bool {
        matches!(self, Format::PcmMessagePack | Format::OggOpusMessagePack)
    }
}

/// A message from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientMessage {
    /// One or more whole words (split on whitespace).
    Text(String),
    /// A voice given as data: `embeddings` (row-major) of `shape`.
    Voice {
        /// The values.
        embeddings: Vec<f32>,
        /// Their shape.
        shape: Vec<usize>,
    },
    /// End of input: speak what is left, then close.
    Eos,
}

#[derive(Deserialize)]
struct Tag {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct TextBody {
    text: String,
}

#[derive(Deserialize)]
struct VoiceBody {
    embeddings: Vec<f32>,
    shape: Vec<usize>,
}

/// Decodes a binary frame: a MessagePack message, or the single byte `0` (the legacy
/// end of input).
///
/// # Errors
/// A message saying what is wrong with the frame and what the server expects.
pub fn decode(bytes: &[u8]) -> Result<ClientMessage, String> {
    if bytes == [0] {
        return Ok(ClientMessage::Eos);
    }
    let tag: Tag = rmp_serde::from_slice(bytes).map_err(|e| {
        format!(
            "a binary message is not a MessagePack map with a string \"type\" ({e}): send \
             {{\"type\": \"Text\", \"text\": ...}}, {{\"type\": \"Voice\", ...}} or \
             {{\"type\": \"Eos\"}}"
        )
    })?;
    match tag.kind.as_str() {
        "Text" => rmp_serde::from_slice::<TextBody>(bytes)
            .map(|b| ClientMessage::Text(b.text))
            .map_err(|e| format!("Text message: {e}: it needs \"text\", a string")),
        "Voice" => rmp_serde::from_slice::<VoiceBody>(bytes)
            .map(|b| ClientMessage::Voice {
                embeddings: b.embeddings,
                shape: b.shape,
            })
            .map_err(|e| {
                format!(
                    "Voice message: {e}: it needs \"embeddings\", an array of numbers, and \
                     \"shape\", an array of sizes"
                )
            }),
        "Eos" => Ok(ClientMessage::Eos),
        other => Err(format!(
            "message type {:?} is unknown: send Text, Voice or Eos",
            truncate(other, 40)
        )),
    }
}

/// A message to the client.
#[derive(Debug, Serialize)]
#[serde(tag = "type")]
pub enum ServerMessage<'a> {
    /// The connection is accepted: send text.
    Ready,
    /// One block of 1920 samples (80 ms at 24 kHz), values in [-1, 1].
    Audio {
        /// The samples.
        pcm: &'a [f32],
    },
    /// A word of the input, once spoken, with its time on the audio's timeline (seconds
    /// from the first sample sent).
    Text {
        /// The word as the client sent it.
        text: &'a str,
        /// Where it starts.
        start_s: f64,
        /// Where it ends.
        stop_s: f64,
    },
    /// Ogg Opus bytes (`format=OggOpusMessagePack`): Ogg pages of the stream, the first
    /// ones carrying its headers; sent as a MessagePack array of integers, as moshi-server
    /// does.
    OggOpus {
        /// The pages' bytes.
        data: &'a [u8],
    },
    /// Why the request failed; the server closes the connection next.
    Error {
        /// What went wrong and what to do.
        message: &'a str,
    },
}

impl ServerMessage<'_> {
    /// The message in MessagePack (a map with string keys).
    pub fn encode(&self) -> Vec<u8> {
        // Serializing these plain structs to a Vec cannot fail.
        rmp_serde::to_vec_named(self).unwrap_or_default()
    }
}

/// `s` cut to `max` characters, for messages that quote the client.
pub fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Msg<'a> {
        #[serde(rename = "type")]
        kind: &'a str,
        text: &'a str,
    }

    #[test]
    fn client_messages_decode() {
        let text = rmp_serde::to_vec_named(&Msg {
            kind: "Text",
            text: " Hello,",
        })
        .unwrap();
        assert_eq!(
            decode(&text).unwrap(),
            ClientMessage::Text(" Hello,".into())
        );
        assert_eq!(decode(&[0]).unwrap(), ClientMessage::Eos);
        #[derive(Serialize)]
        struct Eos {
            #[serde(rename = "type")]
            kind: &'static str,
        }
        let eos = rmp_serde::to_vec_named(&Eos { kind: "Eos" }).unwrap();
        assert_eq!(decode(&eos).unwrap(), ClientMessage::Eos);
        #[derive(Serialize)]
        struct Voice {
            #[serde(rename = "type")]
            kind: &'static str,
            embeddings: Vec<f32>,
            shape: Vec<usize>,
        }
        let voice = rmp_serde::to_vec_named(&Voice {
            kind: "Voice",
            embeddings: vec![0.5, -1.0],
            shape: vec![1, 2],
        })
        .unwrap();
        assert_eq!(
            decode(&voice).unwrap(),
            ClientMessage::Voice {
                embeddings: vec![0.5, -1.0],
                shape: vec![1, 2]
            }
        );
    }

    #[test]
    fn bad_client_messages_say_what_is_expected() {
        let e = decode(b"\x01\x02").unwrap_err();
        assert!(e.contains("MessagePack map"), "{e}");
        let other = rmp_serde::to_vec_named(&Msg {
            kind: "Shout",
            text: "x",
        })
        .unwrap();
        let e = decode(&other).unwrap_err();
        assert!(
            e.contains("\"Shout\"") && e.contains("Text, Voice or Eos"),
            "{e}"
        );
        #[derive(Serialize)]
        struct NoText {
            #[serde(rename = "type")]
            kind: &'static str,
        }
        let e = decode(&rmp_serde::to_vec_named(&NoText { kind: "Text" }).unwrap()).unwrap_err();
        assert!(e.contains("\"text\""), "{e}");
    }

    #[test]
    fn server_messages_are_maps_tagged_by_type() {
        #[derive(Deserialize, Debug, PartialEq)]
        struct Any {
            #[serde(rename = "type")]
            kind: String,
            pcm: Option<Vec<f32>>,
            text: Option<String>,
            start_s: Option<f64>,
            stop_s: Option<f64>,
            message: Option<String>,
        }
        let back = |m: ServerMessage| rmp_serde::from_slice::<Any>(&m.encode()).unwrap();
        assert_eq!(back(ServerMessage::Ready).kind, "Ready");
        let audio = back(ServerMessage::Audio { pcm: &[0.25, -0.5] });
        assert_eq!(
            (audio.kind.as_str(), audio.pcm),
            ("Audio", Some(vec![0.25, -0.5]))
        );
        let text = back(ServerMessage::Text {
            text: "Hi",
            start_s: 0.5,
            stop_s: 0.75,
        });
        assert_eq!(
            (text.text.as_deref(), text.start_s, text.stop_s),
            (Some("Hi"), Some(0.5), Some(0.75))
        );
        let error = back(ServerMessage::Error { message: "busy" });
        assert_eq!(error.message.as_deref(), Some("busy"));
        // `pcm` is an array of float32 (0xdc/0x92 array header, then 0xca per value).
        let bytes = ServerMessage::Audio { pcm: &[1.0] }.encode();
        assert!(
            bytes
                .windows(5)
                .any(|w| w == [0x91, 0xca, 0x3f, 0x80, 0x00]),
            "{bytes:x?}"
        );
    }

    #[test]
    fn formats_parse_by_name() {
        assert_eq!(Format::parse("PcmMessagePack"), Ok(Format::PcmMessagePack));
        assert_eq!(Format::parse("pcm"), Ok(Format::Pcm));
        assert_eq!(Format::parse("OggOpus"), Ok(Format::OggOpus));
        let e = Format::parse("Mp3").unwrap_err();
        assert!(
            e.contains("\"Mp3\"") && e.contains("OggOpusMessagePack"),
            "{e}"
        );
        for name in Format::NAMES {
            assert_eq!(Format::parse(name).unwrap().name(), name);
        }
    }
}
