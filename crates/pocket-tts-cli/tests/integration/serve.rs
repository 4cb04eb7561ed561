//! `pocket-tts-cli serve` as a program: its flags reach the server, it prints the lines
//! scripts read (`wyoming listening on tcp://…`, then `listening on http://…`), exits 0 on
//! SIGTERM after letting streams finish, and refuses bad flags at start-up naming them,
//! without listening. The server itself is tested in process by `pocket-tts-server`'s
//! tests.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;

/// How long the server may take to start, answer or exit.
const WAIT: Duration = Duration::from_secs(60);

/// `serve` with the sandbox's tiny config and voice, ephemeral ports and deterministic
/// sampling (as [`Sandbox::speak`]).
fn serve_args(sb: &Sandbox) -> Args {
    Args::new("serve")
        .set("--config", utf8(&sb.config))
        .set("--voice", utf8(&tiny("voice_excerpt.wav")))
        .set("--port", "0")
        .set("--temperature", "0")
        .set("--eos-threshold", "-12.56")
        .set("--seed", "1")
}

/// A running `serve`, killed on drop.
struct Serve {
    child: Child,
    log: Arc<Mutex<String>>,
    /// The address lines, in the order printed: ("http" or "wyoming", address).
    lines: mpsc::Receiver<(&'static str, String)>,
}

impl Serve {
    fn start(sb: &Sandbox, args: &Args) -> Self {
        let mut child = sb.spawn(args, Stdio::null());
        let stderr = child.stderr.take().expect("stderr is piped");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, lines) = mpsc::channel();
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(a) = line.strip_prefix("listening on http://") {
                    let _ = tx.send(("http", a.trim().to_string()));
                }
                if let Some(a) = line.strip_prefix("wyoming listening on tcp://") {
                    let _ = tx.send(("wyoming", a.trim().to_string()));
                }
                let mut l = sink.lock().unwrap();
                l.push_str(&line);
                l.push('\n');
            }
        });
        Self { child, log, lines }
    }

    /// The next address line (panics with the log if none comes within [`WAIT`]).
    fn next_line(&self) -> (&'static str, String) {
        self.lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|e| panic!("no listening line ({e}):\n{}", self.log()))
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    fn wait_exit(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for serve") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "still running after SIGTERM:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `POST url` with a multipart form of one `text` field, returning once the response's
/// head is in (the server sends it with the first frame), its body unread.
fn open_text(url: &str, text: &str) -> ureq::Response {
    const BOUNDARY: &str = "pocket-tts-cli-test-boundary";
    let body = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\n{text}\r\n\
         --{BOUNDARY}--\r\n"
    );
    let response = ureq::post(url)
        .timeout(WAIT)
        .set(
            "Content-Type",
            &format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .send_bytes(body.as_bytes());
    match response {
        Ok(r) | Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("POST {url} failed: {e}"),
    }
}

/// A response's status and body.
fn read(response: ureq::Response) -> (u16, Vec<u8>) {
    let status = response.status();
    let mut bytes = Vec::new();
    response
        .into_reader()
        .read_to_end(&mut bytes)
        .expect("the body");
    (status, bytes)
}

/// `POST url` with a multipart form of one `text` field: status and body.
fn post_text(url: &str, text: &str) -> (u16, Vec<u8>) {
    read(open_text(url, text))
}

#[test]
fn serve_prints_its_addresses_speaks_with_its_flags_and_exits_0_on_sigterm() {
    let sb = Sandbox::new();
    let args = serve_args(&sb)
        .set("--wyoming-port", "0")
        .set("--max-text-chars", "50")
        .set("--shutdown-timeout", "30");
    let mut server = Serve::start(&sb, &args);
    // The Wyoming line first, then the HTTP one (scripts wait for the latter).
    let (kind, wyoming) = server.next_line();
    assert_eq!(kind, "wyoming", "{}", server.log());
    let (kind, http) = server.next_line();
    assert_eq!(kind, "http", "{}", server.log());
    let base = format!("http://{http}");

    // The web page's text is the language's greeting (the tiny config is English's).
    let page = ureq::get(&format!("{base}/"))
        .timeout(WAIT)
        .call()
        .expect("GET /")
        .into_string()
        .expect("the page");
    assert!(page.contains("Hello world. I am Kyutai"), "{page}");

    // /tts speaks with the sampling flags: the samples `generate` writes.
    let expected = sb.generate_samples(sb.generate());
    let (status, body) = post_text(&format!("{base}/tts"), TEXT);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(i16s(&body[WAV_HEADER_LEN..]), expected);

    // Messages to clients name the flags.
    let (status, body) = post_text(&format!("{base}/tts"), &"word ".repeat(20));
    let detail = String::from_utf8_lossy(&body);
    assert_eq!(status, 400, "{detail}");
    assert!(detail.contains("--max-text-chars"), "{detail}");

    // The Wyoming port answers.
    let mut wyoming = TcpStream::connect(&wyoming).expect("connect to the Wyoming port");
    wyoming.set_read_timeout(Some(WAIT)).unwrap();
    wyoming
        .write_all(b"{\"type\": \"describe\"}\n")
        .expect("send describe");
    let mut header = String::new();
    BufReader::new(&wyoming)
        .read_line(&mut header)
        .expect("an answer");
    let header: serde_json::Value = serde_json::from_str(&header).expect("a JSON header");
    assert_eq!(header["type"], "info");
    drop(wyoming);

    // SIGTERM: the stream in flight completes, then the server exits with 0.
    let response = open_text(&format!("{base}/tts"), TEXT);
    let pid = server.child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("run kill");
    assert!(killed.success());
    let (status, body) = read(response);
    assert_eq!(status, 200);
    check_speech_layout(&i16s(&body[WAV_HEADER_LEN..]), "response across SIGTERM");
    let status = server.wait_exit();
    assert!(status.success(), "exit {status}:\n{}", server.log());
    assert!(server.log().contains("SIGTERM"), "{}", server.log());
}

#[test]
fn start_up_failures_name_the_flag_and_never_listen() {
    let sb = Sandbox::new();
    let missing = sb.path("missing.wav");
    let dir = sb.folder("voices");
    std::fs::copy(tiny("voice_excerpt.wav"), dir.join("anna.wav")).unwrap();
    std::fs::copy(tiny("voice_excerpt.wav"), dir.join("anna.flac")).unwrap();
    let cases = [
        (
            serve_args(&sb).set("--voice", utf8(&missing)),
            vec!["--voice", "missing.wav"],
        ),
        (
            serve_args(&sb).set("--voices-dir", utf8(&sb.path("nodir"))),
            vec!["--voices-dir", "nodir"],
        ),
        (
            serve_args(&sb).set("--voices-dir", utf8(&dir)),
            vec!["--voices-dir", "both be the voice \"anna\""],
        ),
        (
            serve_args(&sb).set("--max-streams", "0"),
            vec!["max_streams"],
        ),
        (
            serve_args(&sb).set("--max-upload-mb", "0"),
            vec!["--max-upload-mb"],
        ),
        (
            serve_args(&sb).set("--cors-origin", "bad\norigin"),
            vec!["--cors-origin", "not a valid origin"],
        ),
        (
            serve_args(&sb).set("--host", "256.1.1.1"),
            vec!["--host 256.1.1.1"],
        ),
    ];
    for (args, needles) in cases {
        let out = sb.run(&args, b"");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} started");
        assert!(!stderr.contains("listening on"), "{stderr}");
        for n in needles {
            assert!(stderr.contains(n), "{args:?}: {stderr:?} lacks {n:?}");
        }
    }
    // The tiny config names no language: --normalize is refused.
    let out = sb.run(&serve_args(&sb).switch("--normalize"), b"");
    check_refusal("serve --normalize", &out, &["--text-language"], true);
}
