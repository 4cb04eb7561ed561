//! A `serve` process for the server tests: started on an ephemeral loopback port with the
//! tiny model, its address read from its `listening on http://…` line (and, with
//! `--wyoming-port`, its `wyoming listening on tcp://…` line), killed on drop.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{tiny, utf8, Args, Sandbox};

/// How long a server may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running `pocket-tts-cli serve`.
pub struct Server {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// `127.0.0.1:PORT` of the Wyoming listener, if started.
    pub wyoming: Option<String>,
    log: Arc<Mutex<String>>,
}

/// `serve` with the sandbox's tiny config and voice, an ephemeral port and deterministic
/// sampling (as [`Sandbox::speak`]).
pub fn serve_args(sb: &Sandbox) -> Args {
    Args::new("serve")
        .set("--config", utf8(&sb.config))
        .set("--voice", utf8(&tiny("voice_excerpt.wav")))
        .set("--port", "0")
        .set("--temperature", "0")
        .set("--eos-threshold", "-12.56")
        .set("--seed", "1")
}

impl Server {
    /// Starts the server and waits for its listening line, and for its Wyoming one if
    /// `args` has `--wyoming-port` (panics with its log if it exits or takes longer than a
    /// minute).
    pub fn start(sb: &Sandbox, args: &Args) -> Self {
        let wants_wyoming = args.flags.iter().any(|(f, _)| f == "--wyoming-port");
        let mut child = sb.spawn(args, Stdio::null());
        let stderr = child.stderr.take().expect("stderr is piped");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    if let Some(a) = line.strip_prefix("listening on http://") {
                        let _ = tx.send(("http", a.trim().to_string()));
                    }
                    if let Some(a) = line.strip_prefix("wyoming listening on tcp://") {
                        let _ = tx.send(("wyoming", a.trim().to_string()));
                    }
                    let mut l = log.lock().unwrap();
                    l.push_str(&line);
                    l.push('\n');
                }
            });
        }
        let mut server = Server {
            child: Some(child),
            base: String::new(),
            wyoming: None,
            log,
        };
        let deadline = Instant::now() + START_TIMEOUT;
        while server.base.is_empty() || (wants_wyoming && server.wyoming.is_none()) {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left.min(Duration::from_millis(200))) {
                Ok(("http", a)) => server.base = format!("http://{a}"),
                Ok((_, a)) => server.wyoming = Some(a),
                Err(_) => {
                    if let Some(status) = server.try_exit() {
                        panic!(
                            "serve exited with {status} before listening:\n{}",
                            server.log()
                        );
                    }
                    assert!(
                        Instant::now() < deadline,
                        "serve did not listen within {START_TIMEOUT:?}:\n{}",
                        server.log()
                    );
                }
            }
        }
        server
    }

    /// The address of the Wyoming listener (panics if it was not started).
    pub fn wyoming_addr(&self) -> SocketAddr {
        let addr = self
            .wyoming
            .as_deref()
            .expect("serve runs without --wyoming-port");
        addr.parse()
            .unwrap_or_else(|e| panic!("a Wyoming address that does not parse ({e}): {addr}"))
    }

    /// The URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Everything the server wrote on stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Waits (up to 10 s) until the server's stderr contains `needle`: a line written by
    /// another thread than the one that updated a metric may come a little later.
    pub fn wait_log(&self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.log().contains(needle) {
            assert!(
                Instant::now() < deadline,
                "the log never said {needle:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn try_exit(&mut self) -> Option<ExitStatus> {
        self.child.as_mut()?.try_wait().ok().flatten()
    }

    /// Sends `signal` (e.g. "TERM") to the server.
    pub fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("running").id();
        let ok = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()
            .expect("run kill");
        assert!(ok.success(), "kill -{signal} {pid} failed");
    }

    /// Waits up to `timeout` for the server to exit; its status, or `None` if it still runs.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.try_exit() {
                return Some(s);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A metric's value from `/metrics` (the sum over its label sets whose line contains
    /// `labels`).
    pub fn metric(&self, name: &str, labels: &str) -> f64 {
        let text = get(&self.url("/metrics")).1;
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .filter(|l| l.split([' ', '{']).next() == Some(name) && l.contains(labels))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    /// Waits (up to 10 s) until `/metrics` shows `n` active streams.
    pub fn wait_active(&self, n: f64) {
        self.wait_metric("pocket_tts_active_streams", "", n);
    }

    /// Waits (up to 10 s) until [`Self::metric`] gives `value`: a stream's counters are
    /// updated by its pump thread, just after the client has seen the stream end.
    pub fn wait_metric(&self, name: &str, labels: &str, value: f64) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = self.metric(name, labels);
            if got == value {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{name}{{{labels}}} stayed at {got}, expected {value}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A response: status, headers we check, and the body.
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub retry_after: Option<String>,
    pub body: Vec<u8>,
}

impl Reply {
    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
}

fn reply(r: Result<ureq::Response, ureq::Error>) -> Reply {
    let r = match r {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("request failed: {e}"),
    };
    let status = r.status();
    let content_type = r.header("content-type").unwrap_or_default().to_string();
    let retry_after = r.header("retry-after").map(str::to_string);
    let mut body = Vec::new();
    r.into_reader()
        .read_to_end(&mut body)
        .expect("read the body");
    Reply {
        status,
        content_type,
        retry_after,
        body,
    }
}

/// `GET url`: status and body text.
pub fn get(url: &str) -> (u16, String) {
    let r = reply(ureq::get(url).timeout(Duration::from_secs(30)).call());
    (r.status, r.text())
}

/// `GET url` with headers.
pub fn get_with(url: &str, headers: &[(&str, &str)]) -> Reply {
    let mut req = ureq::get(url).timeout(Duration::from_secs(30));
    for (k, v) in headers {
        req = req.set(k, v);
    }
    reply(req.call())
}

/// `POST url` with a JSON (or any) body.
pub fn post_json(url: &str, body: &str) -> Reply {
    reply(
        ureq::post(url)
            .timeout(Duration::from_secs(60))
            .set("Content-Type", "application/json")
            .send_bytes(body.as_bytes()),
    )
}

/// One multipart field: name, optional file name, content.
pub type Part<'a> = (&'a str, Option<&'a str>, &'a [u8]);

const BOUNDARY: &str = "pocket-tts-test-boundary-7d41";

/// A `multipart/form-data` body.
pub fn multipart(parts: &[Part]) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, file, content) in parts {
        body.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
        match file {
            Some(f) => body.extend_from_slice(
                format!(
                    "Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\n\
                     Content-Type: application/octet-stream\r\n\r\n"
                )
                .as_bytes(),
            ),
            None => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
            ),
        }
        body.extend_from_slice(content);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

/// A multipart request, not yet sent.
pub fn multipart_request(url: &str) -> ureq::Request {
    ureq::post(url).timeout(Duration::from_secs(60)).set(
        "Content-Type",
        &format!("multipart/form-data; boundary={BOUNDARY}"),
    )
}

/// `POST url` with a multipart form.
pub fn post_form(url: &str, parts: &[Part]) -> Reply {
    reply(multipart_request(url).send_bytes(&multipart(parts)))
}

/// `POST url` with a multipart form, returning the response unread (to read it slowly
/// or drop it midway).
pub fn open_form(url: &str, parts: &[Part]) -> ureq::Response {
    multipart_request(url)
        .send_bytes(&multipart(parts))
        .unwrap_or_else(|e| panic!("POST {url} failed: {e}"))
}
