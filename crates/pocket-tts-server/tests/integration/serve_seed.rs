//! The per-request `seed` of `/v1/audio/speech` (a JSON integer) and `/tts` (a form
//! field), ours: the same seed gives the same audio at temperature > 0 (the reference's
//! noise after `torch.manual_seed(seed)`), another seed other audio, on both endpoints;
//! refusals name the field.

use crate::common;

use common::server::{post_form, post_json, Reply, Server, Setup};
use common::*;

fn speech(server: &Server, fields: &str) -> Reply {
    post_json(
        &server.url("/v1/audio/speech"),
        &format!(r#"{{"model":"x","response_format":"pcm","input":"Hello there.",{fields}}}"#),
    )
}

fn pcm(r: &Reply, what: &str) -> Vec<i16> {
    assert_eq!(r.status, 200, "{what}: {}", r.text());
    i16s(&r.body)
}

#[test]
fn a_request_seed_reproduces_its_audio_on_both_endpoints() {
    let sb = Sandbox::new();
    let mut setup = Setup::new(&sb);
    setup.options.params.temperature = 0.7;
    setup.options.params.seed = None;
    let server = setup.start(&sb);
    let a = pcm(&speech(&server, r#""seed":5"#), "seed 5");
    let again = pcm(&speech(&server, r#""seed":5"#), "seed 5 again");
    assert!(a == again, "the same seed gave other audio");
    let b = pcm(&speech(&server, r#""seed":6"#), "seed 6");
    assert!(a != b, "seeds 5 and 6 gave the same audio");
    let unseeded = pcm(&speech(&server, r#""seed":null"#), "no seed");
    assert!(a != unseeded, "no seed gave seed 5's audio");

    let r = post_form(
        &server.url("/tts"),
        &[("text", None, b"Hello there."), ("seed", None, b"5")],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let wav = i16s(&r.body[WAV_HEADER_LEN..]);
    assert!(
        wav.len() >= a.len() && wav[..a.len()] == a[..],
        "/tts seed 5 differs"
    );

    for (value, case) in [
        ("-1", "negative"),
        ("1.5", "fraction"),
        (r#""5""#, "string"),
    ] {
        let r = speech(&server, &format!(r#""seed":{value}"#));
        assert_eq!(r.status, 400, "{case}: {}", r.text());
        let json = r.json();
        assert_eq!(json["error"]["param"], "seed", "{case}: {json}");
        let message = json["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("seed must be an integer"),
            "{case}: {message}"
        );
    }
    let r = post_form(
        &server.url("/tts"),
        &[("text", None, b"Hi."), ("seed", None, b"five")],
    );
    assert_eq!(r.status, 400, "{}", r.text());
    let detail = r.json()["detail"].as_str().unwrap_or_default().to_string();
    assert!(
        detail.contains("seed") && detail.contains("integer"),
        "{detail}"
    );
}
