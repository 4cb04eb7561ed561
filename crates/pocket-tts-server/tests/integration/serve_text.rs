//! The server's text options: `markup` / `normalize` / `text_language` of its generation
//! parameters as the default of every request, and the per-request `markup` and
//! `normalize` fields of `/v1/audio/speech` (JSON booleans) and `/tts` (form fields); their
//! refusals name the field; Wyoming follows the server's options; the web page's
//! checkboxes start as the server's options.
//!
//! `a_request_normalizes_digits_into_words` expects the real English rules of
//! `pocket_tts_text::normalize` (it fails while `normalize` is the identity).

use crate::common;

use common::server::{get, post_form, post_json, Reply, Server, Setup};
use common::*;

/// Two sentences that are two chunks at `max_tokens` 4, as on each side of a pause.
const PLAIN: &str = "Hello there. Well done.";
const WITH_PAUSE: &str = "Hello there. [pause 500ms] Well done.";
/// 500 ms at 24 kHz.
const PAUSE: usize = 12_000;

fn speech(server: &Server, fields: &str) -> Reply {
    post_json(
        &server.url("/v1/audio/speech"),
        &format!(r#"{{"model":"x","response_format":"pcm",{fields}}}"#),
    )
}

fn pcm(r: &Reply, what: &str) -> Vec<i16> {
    assert_eq!(r.status, 200, "{what}: {}", r.text());
    i16s(&r.body)
}

/// `with` is `plain` with `pause` zeros inserted at a frame boundary.
fn assert_pause_inserted(plain: &[i16], with: &[i16], pause: usize, what: &str) {
    assert_eq!(with.len(), plain.len() + pause, "{what}: length");
    let found = (FRAME_SAMPLES..plain.len())
        .step_by(FRAME_SAMPLES)
        .any(|k| {
            with[..k] == plain[..k]
                && with[k..k + pause].iter().all(|&x| x == 0)
                && with[k + pause..] == plain[k..]
        });
    assert!(
        found,
        "{what}: not the plain audio with {pause} zeros inserted"
    );
}

fn assert_openai_error(r: &Reply, param: &str, needles: &[&str], case: &str) {
    assert_eq!(r.status, 400, "{case}: {}", r.text());
    let json = r.json();
    assert_eq!(json["error"]["param"], param, "{case}: {json}");
    let message = json["error"]["message"].as_str().unwrap_or_default();
    for n in needles {
        assert!(message.contains(n), "{case}: {message:?} lacks {n:?}");
    }
}

#[test]
fn per_request_markup_and_the_server_default() {
    let sb = Sandbox::new();
    let mut setup = Setup::new(&sb);
    setup.options.params.max_tokens = 4;
    let server = setup.start(&sb);
    let plain = pcm(&speech(&server, &format!(r#""input":"{PLAIN}""#)), "plain");
    // Off by default: the tag is text (other audio, no error).
    let as_text = pcm(
        &speech(&server, &format!(r#""input":"{WITH_PAUSE}""#)),
        "as text",
    );
    assert_ne!(as_text.len(), plain.len() + PAUSE);
    let with = pcm(
        &speech(&server, &format!(r#""input":"{WITH_PAUSE}","markup":true"#)),
        "markup",
    );
    assert_pause_inserted(&plain, &with, PAUSE, "/v1/audio/speech markup");

    // /tts: a form field (an HTML checkbox sends "on").
    let r = post_form(
        &server.url("/tts"),
        &[
            ("text", None, WITH_PAUSE.as_bytes()),
            ("markup", None, b"on"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let wav = i16s(&r.body[WAV_HEADER_LEN..]);
    let plain_wav = {
        let r = post_form(&server.url("/tts"), &[("text", None, PLAIN.as_bytes())]);
        i16s(&r.body[WAV_HEADER_LEN..])
    };
    assert_pause_inserted(&plain_wav, &wav, PAUSE, "/tts markup");

    // Refusals name the field.
    let r = speech(&server, &format!(r#""input":"{PLAIN}","markup":"yes""#));
    assert_openai_error(
        &r,
        "markup",
        &["markup must be true or false"],
        "string markup",
    );
    let r = speech(&server, r#""input":"Hi [pause 5x].","markup":true"#);
    assert_openai_error(&r, "input", &["`[pause 5x]`", "unit"], "bad tag");
    let r = post_form(
        &server.url("/tts"),
        &[("text", None, b"Hi."), ("markup", None, b"maybe")],
    );
    assert_eq!(r.status, 400, "{}", r.text());
    let detail = r.json()["detail"].as_str().unwrap_or_default().to_string();
    assert!(
        detail.contains("markup") && detail.contains("true or false"),
        "{detail}"
    );
    drop(server);

    // markup: the default of every request, which may turn it off.
    let mut setup = Setup::new(&sb);
    setup.options.params.max_tokens = 4;
    setup.options.params.markup = true;
    let server = setup.start(&sb);
    let with = pcm(
        &speech(&server, &format!(r#""input":"{WITH_PAUSE}""#)),
        "markup",
    );
    assert_pause_inserted(&plain, &with, PAUSE, "the server's markup");
    let off = pcm(
        &speech(
            &server,
            &format!(r#""input":"{WITH_PAUSE}","markup":false"#),
        ),
        "markup false",
    );
    assert!(off == as_text, "off and as_text differ");
}

#[test]
fn normalize_needs_a_language_and_is_refused_naming_the_field() {
    let sb = Sandbox::new();
    // The tiny config names no language: a request's normalize is refused (and so is
    // `serve --normalize` at start-up: the CLI's tests).
    let server = Setup::new(&sb).start(&sb);
    let r = speech(&server, r#""input":"Hi.","normalize":true"#);
    assert_openai_error(
        &r,
        "normalize",
        &["text_language", "`language"],
        "no language",
    );
    let r = speech(&server, r#""input":"Hi.","normalize":1"#);
    assert_openai_error(&r, "normalize", &["true or false", "a number"], "number");
    let r = post_form(
        &server.url("/tts"),
        &[("text", None, b"Hi."), ("normalize", None, b"true")],
    );
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.text().contains("normalize"), "{}", r.text());
    // normalize false is the default: fine.
    let r = speech(&server, r#""input":"Hi.","normalize":false"#);
    assert_eq!(r.status, 200, "{}", r.text());
    drop(server);

    // With a text language, a request may normalize (words stay words).
    let server = Setup::new(&sb).text_language("english").start(&sb);
    let words = pcm(&speech(&server, r#""input":"I have three cats.""#), "words");
    let normalized = pcm(
        &speech(&server, r#""input":"I have three cats.","normalize":true"#),
        "normalized",
    );
    assert!(words == normalized, "words and normalized differ");
}

/// Expects the English rules of `pocket_tts_text::normalize` (fails while `normalize` is
/// the identity).
#[test]
fn a_request_normalizes_digits_into_words() {
    let sb = Sandbox::new();
    let server = Setup::new(&sb).text_language("english").start(&sb);
    let words = pcm(&speech(&server, r#""input":"I have three cats.""#), "words");
    let digits = pcm(
        &speech(&server, r#""input":"I have 3 cats.","normalize":true"#),
        "digits",
    );
    // (Not assert_eq: the samples would fill the log.)
    assert!(
        digits == words,
        "normalize did not read 3 as three ({} and {} samples)",
        digits.len(),
        words.len()
    );
}

/// The `<input …>` tag of the web page whose id is `id`.
fn input_tag(page: &str, id: &str) -> String {
    let at = page
        .find(&format!(r#"id="{id}""#))
        .unwrap_or_else(|| panic!("the page has no #{id}"));
    let start = page[..at].rfind('<').expect("a tag start");
    let end = at + page[at..].find('>').expect("a tag end");
    page[start..=end].to_string()
}

#[test]
fn the_web_page_checkboxes_start_as_the_server_options() {
    let sb = Sandbox::new();
    // (text language, normalize and markup on, the normalize box's attribute, the markup
    // box's)
    let cases: [(Option<&str>, bool, &str, &str); 3] = [
        // No language: normalize cannot be asked for.
        (None, false, "disabled", ""),
        (Some("english"), false, "", ""),
        (Some("english"), true, "checked", "checked"),
    ];
    for (language, on, normalize, markup) in cases {
        let flags = (language, on);
        let mut setup = Setup::new(&sb);
        if let Some(language) = language {
            setup = setup.text_language(language);
        }
        setup.options.params.normalize = on;
        setup.options.params.markup = on;
        let server = setup.start(&sb);
        let (status, page) = get(&server.url("/"));
        assert_eq!(status, 200, "{flags:?}");
        for (id, want) in [("normalize", normalize), ("markup", markup)] {
            let tag = input_tag(&page, id);
            for attr in ["checked", "disabled"] {
                assert_eq!(
                    tag.contains(attr),
                    attr == want,
                    "{flags:?}: #{id} is {tag}, expected {want:?}"
                );
            }
        }
        assert!(
            !page.contains("_ATTRS") && !page.contains("NORMALIZE_HINT"),
            "{flags:?}: a placeholder is left in the page"
        );
    }
}
