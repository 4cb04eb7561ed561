//! Issue 24's clients, unchanged: the reference's `/tts` as a url-encoded form, OpenAI's
//! formats (mp3 by default, opus, aac, flac, wav, pcm) decoded by symphonia to the WAV's
//! length, `speed` (time-stretched to `1 / speed` of the length), OpenAI's voice names
//! and `--voice-alias`, and `instructions` accepted.

use crate::common;

use std::time::Duration;

use base64::Engine as _;
use common::server::{get_with, post_form, post_json, Reply, Setup};
use common::*;

/// `POST url` with a url-encoded form (what `requests.post(url, data={...})` sends).
fn post_urlencoded(url: &str, fields: &[(&str, &str)]) -> Reply {
    let r = ureq::post(url)
        .timeout(Duration::from_secs(60))
        .send_form(fields);
    let r = match r {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("request failed: {e}"),
    };
    let status = r.status();
    let content_type = r.header("content-type").unwrap_or_default().to_string();
    let mut body = Vec::new();
    std::io::Read::read_to_end(&mut r.into_reader(), &mut body).expect("the body");
    Reply {
        status,
        content_type,
        retry_after: None,
        body,
    }
}

/// Decodes with symphonia: the samples' count and the rate.
fn decoded_len(bytes: &[u8], ext: &str) -> (usize, u32) {
    use symphonia::core::codecs::audio::AudioDecoderOptions;
    use symphonia::core::formats::probe::Hint;
    use symphonia::core::formats::{FormatOptions, TrackType};
    use symphonia::core::io::MediaSourceStream;
    use symphonia::core::meta::MetadataOptions;

    let source = std::io::Cursor::new(bytes.to_vec());
    let mss = MediaSourceStream::new(Box::new(source), Default::default());
    let mut hint = Hint::new();
    hint.with_extension(ext);
    let mut format = symphonia::default::get_probe()
        .probe(
            &hint,
            mss,
            FormatOptions::default(),
            MetadataOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{ext}: symphonia cannot read it: {e}"));
    let track = format
        .default_track(TrackType::Audio)
        .expect("an audio track");
    let id = track.id;
    let params = track
        .codec_params
        .as_ref()
        .and_then(|p| p.audio())
        .unwrap()
        .clone();
    let mut decoder = symphonia::default::get_codecs()
        .make_audio_decoder(&params, &AudioDecoderOptions::default())
        .expect("a decoder");
    let (mut n, mut rate) = (0, 0);
    while let Ok(Some(packet)) = format.next_packet() {
        if packet.track_id == id {
            let buf = decoder.decode(&packet).expect("a packet decodes");
            rate = buf.spec().rate();
            n += buf.frames();
        }
    }
    (n, rate)
}

/// The length an Ogg Opus stream says it decodes to, at 48 kHz (RFC 7845: the last
/// page's granule position less the pre-skip), and its `OpusHead` input rate.
fn opus_len(bytes: &[u8]) -> (usize, u32) {
    assert_eq!(&bytes[..4], b"OggS");
    assert_eq!(&bytes[28..36], b"OpusHead");
    let pre_skip = u16::from_le_bytes([bytes[38], bytes[39]]) as usize;
    let rate = u32_at(bytes, 40);
    // The last page: its header starts at the last "OggS" with the end-of-stream flag.
    let last = (0..bytes.len() - 27)
        .rev()
        .find(|&i| &bytes[i..i + 4] == b"OggS")
        .expect("pages");
    assert_eq!(bytes[last + 5] & 4, 4, "the last page ends the stream");
    let granule = u64::from_le_bytes(bytes[last + 6..last + 14].try_into().unwrap()) as usize;
    (granule - pre_skip, rate)
}

#[test]
fn tts_takes_a_url_encoded_form_like_the_reference() {
    let sb = Sandbox::new();
    let server = Setup::new(&sb).start(&sb);
    let (expected, speech) = sb.reference_audio();
    // requests.post(url + "/tts", data={"text": ...}).
    let r = post_urlencoded(&server.url("/tts"), &[("text", TEXT)]);
    assert_eq!(
        (r.status, r.content_type.as_str()),
        (200, "audio/wav"),
        "{}",
        r.text()
    );
    assert_eq!(i16s(&r.body[WAV_HEADER_LEN..]), expected);
    // voice_url by name, and speed: half as fast is twice as long (then the silence).
    let r = post_urlencoded(
        &server.url("/tts"),
        &[
            ("text", TEXT),
            ("voice_url", "voice_excerpt"),
            ("speed", "0.5"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let n = i16s(&r.body[WAV_HEADER_LEN..]).len();
    assert_eq!(n, speech.len() * 2 + TRAILING_SILENCE);
    // The same errors as the multipart form's.
    for (fields, needles) in [
        (&[("voice_url", "x")][..], &["text is missing"][..]),
        (&[("text", "  ")][..], &["text is empty"][..]),
        (
            &[("text", "Hi."), ("speed", "9")][..],
            &["speed", "0.25 to 4.0"][..],
        ),
        (
            &[("text", "Hi."), ("speed", "fast")][..],
            &["speed", "not a number"][..],
        ),
        (
            &[("text", "Hi."), ("voice_wav", "x")][..],
            &["voice_wav", "multipart"][..],
        ),
        (
            &[("text", "Hi."), ("voice_url", "nobody")][..],
            &["\"nobody\""][..],
        ),
    ] {
        let r = post_urlencoded(&server.url("/tts"), fields);
        assert_eq!(r.status, 400, "{fields:?}: {}", r.text());
        let detail = r.json()["detail"].as_str().unwrap_or_default().to_string();
        for n in needles {
            assert!(detail.contains(n), "{fields:?}: {detail}");
        }
    }
    // A body that is neither form.
    let r = post_json(&server.url("/tts"), "{\"text\": \"Hi.\"}");
    assert_eq!(r.status, 400);
    assert!(r.text().contains("url-encoded"), "{}", r.text());
    // Multipart takes speed too.
    let r = post_form(
        &server.url("/tts"),
        &[("text", None, TEXT.as_bytes()), ("speed", None, b"2")],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let n = i16s(&r.body[WAV_HEADER_LEN..]).len();
    assert_eq!(n, speech.len() / 2 + TRAILING_SILENCE);
}

#[test]
fn openai_formats_decode_to_the_wavs_length() {
    let sb = Sandbox::new();
    let server = Setup::new(&sb).start(&sb);
    let (_, speech) = sb.reference_audio();
    let url = server.url("/v1/audio/speech");
    let n = speech.len();

    // No response_format: mp3, as OpenAI. The decoder's output is longer by LAME's delay
    // and padding (no LAME tag in a stream), less than 3 MPEG-2 frames of 576 samples.
    let r = post_json(
        &url,
        &format!(r#"{{"model":"tts-1","input":"{TEXT}","voice":"alloy"}}"#),
    );
    assert_eq!(
        (r.status, r.content_type.as_str()),
        (200, "audio/mpeg"),
        "{}",
        r.text()
    );
    let (len, rate) = decoded_len(&r.body, "mp3");
    assert_eq!(rate, SAMPLE_RATE);
    assert!(
        (n..=n + 3 * 576).contains(&len),
        "mp3: {len} samples for {n}"
    );

    // opus: Ogg Opus, 24 kHz input signalled, exactly the speech's length at 48 kHz.
    let r = post_json(
        &url,
        &format!(r#"{{"model":"x","input":"{TEXT}","response_format":"opus"}}"#),
    );
    assert_eq!(
        (r.status, r.content_type.as_str()),
        (200, "audio/ogg; codecs=opus")
    );
    assert_eq!(opus_len(&r.body), (2 * n, SAMPLE_RATE));

    // aac: ADTS, longer by the encoder's delay and less than a frame of 1024.
    let r = post_json(
        &url,
        &format!(r#"{{"model":"x","input":"{TEXT}","response_format":"aac"}}"#),
    );
    assert_eq!((r.status, r.content_type.as_str()), (200, "audio/aac"));
    let (len, rate) = decoded_len(&r.body, "aac");
    assert_eq!(rate, SAMPLE_RATE);
    assert!(
        (n..=n + 3 * 1024).contains(&len),
        "aac: {len} samples for {n}"
    );

    // flac and wav: exactly.
    let r = post_json(
        &url,
        &format!(r#"{{"model":"x","input":"{TEXT}","response_format":"flac"}}"#),
    );
    assert_eq!(decoded_len(&r.body, "flac"), (n, SAMPLE_RATE));
    let r = post_json(
        &url,
        &format!(r#"{{"model":"x","input":"{TEXT}","response_format":"wav"}}"#),
    );
    assert_eq!(r.content_type, "audio/wav");
    assert_eq!(i16s(&r.body[WAV_HEADER_LEN..]).len(), n + TRAILING_SILENCE);

    // sse carries mp3 too: the deltas make one decodable stream.
    let r = post_json(
        &url,
        &format!(
            r#"{{"model":"x","input":"{TEXT}","response_format":"mp3","stream_format":"sse"}}"#
        ),
    );
    assert_eq!(r.content_type, "text/event-stream");
    let mut mp3 = Vec::new();
    for event in r.text().split("\n\n").filter(|e| !e.is_empty()) {
        let json: serde_json::Value =
            serde_json::from_str(event.strip_prefix("data: ").expect("data")).expect("JSON");
        if json["type"] == "speech.audio.delta" {
            let audio = json["audio"].as_str().expect("audio");
            assert!(!audio.is_empty(), "no empty delta");
            mp3.extend(
                base64::engine::general_purpose::STANDARD
                    .decode(audio)
                    .unwrap(),
            );
        }
    }
    let (len, _) = decoded_len(&mp3, "mp3");
    assert!(
        (n..=n + 3 * 576).contains(&len),
        "sse mp3: {len} samples for {n}"
    );

    // speed: 2.0 is half as long, 0.5 twice, in any format.
    for (speed, expected) in [(2.0, n / 2), (0.5, n * 2)] {
        let body =
            format!(r#"{{"model":"x","input":"{TEXT}","response_format":"pcm","speed":{speed}}}"#);
        let r = post_json(&url, &body);
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(i16s(&r.body).len(), expected, "speed {speed}");
    }
    let body = format!(r#"{{"model":"x","input":"{TEXT}","response_format":"opus","speed":0.5}}"#);
    assert_eq!(opus_len(&post_json(&url, &body).body).0, 4 * n);
}

#[test]
fn openai_voice_names_and_aliases_map_onto_voices() {
    let sb = Sandbox::new();
    let mut setup = Setup::new(&sb);
    setup.voice_options.aliases = vec![
        ("narrator".into(), "voice_excerpt".into()),
        ("nova".into(), "default".into()),
    ];
    let server = setup.start(&sb);
    let (_, speech) = sb.reference_audio();
    let url = server.url("/v1/audio/speech");
    // The tiny model has no predefined voices: OpenAI's names are the default voice.
    for voice in ["alloy", "shimmer", "narrator", "nova"] {
        let body = format!(
            r#"{{"model":"x","input":"{TEXT}","voice":"{voice}","response_format":"pcm","instructions":"Speak warmly."}}"#
        );
        let r = post_json(&url, &body);
        assert_eq!(r.status, 200, "{voice}: {}", r.text());
        assert_eq!(i16s(&r.body), speech, "{voice}");
    }
    // `instructions` is logged once, however many requests give it.
    server.wait_log("instructions");
    assert_eq!(
        server.log().matches("`instructions`").count(),
        1,
        "{}",
        server.log()
    );
    let voices = get_with(&server.url("/v1/audio/voices"), &[]).json();
    let list = voices["voices"].as_array().expect("voices");
    let alias = |name: &str| list.iter().find(|v| v["name"] == name).cloned();
    assert_eq!(
        alias("narrator").expect("narrator listed"),
        serde_json::json!({"name": "narrator", "source": "alias", "voice": "voice_excerpt"})
    );
    assert_eq!(alias("alloy").expect("alloy listed")["voice"], "default");
    assert_eq!(alias("echo").expect("echo listed")["source"], "alias");
    // An alias name cannot be taken by an upload.
    let r = post_form(
        &server.url("/v1/audio/voices"),
        &[
            ("name", None, b"alloy"),
            (
                "file",
                Some("v.wav"),
                &std::fs::read(tiny("voice_excerpt.wav")).unwrap(),
            ),
        ],
    );
    assert_eq!(r.status, 409, "{}", r.text());
}

#[test]
fn aliases_to_unknown_voices_refuse_to_start() {
    let sb = Sandbox::new();
    for (alias, needles) in [
        (
            ("alloy", "nobody"),
            &["alias \"alloy\"", "\"nobody\"", "voice_excerpt"][..],
        ),
        (("bad name", "default"), &["alias \"bad name\""][..]),
    ] {
        let mut setup = Setup::new(&sb);
        setup.voice_options.aliases = vec![(alias.0.into(), alias.1.into())];
        let e = setup.try_start(&sb).err().expect("refused").to_string();
        assert!(e.starts_with("voice_options.aliases: "), "{e}");
        for n in needles {
            assert!(e.contains(n), "{e}");
        }
    }
}
