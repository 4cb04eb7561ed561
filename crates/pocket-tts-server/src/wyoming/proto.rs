//! Wyoming's framing: one JSON header line, then optional JSON data, then an optional
//! binary payload. Reference: the `wyoming` Python package 1.10.2, `wyoming/event.py`
//! (`async_read_event`, `async_write_event`).
//!
//! ```text
//! {"type": "audio-chunk", "version": "1.10.2", "data_length": 44, "payload_length": 3840}\n
//! <44 bytes of JSON data><3840 bytes of PCM>
//! ```
//!
//! Data may also come inline as the header's `"data"`; `data_length` bytes are merged on
//! top of it (both are read). Events are written as the Python package writes them: the
//! data after the header line (only when it is not empty), the payload last.

use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncReadExt};

/// The protocol version written in every header: the `wyoming` package release whose
/// framing and events this server follows.
pub const VERSION: &str = "1.10.2";

/// Longest header line accepted, newline excluded.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// Bytes asked of the socket at a time.
const READ_CHUNK: usize = 64 * 1024;

/// One event: its type, its data (a JSON object, empty when there is none) and its
/// payload (empty when there is none).
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The `type` (`describe`, `synthesize`, `audio-chunk`, …).
    pub kind: String,
    /// The data.
    pub data: Map<String, Value>,
    /// The binary payload (PCM audio for `audio-chunk`).
    pub payload: Vec<u8>,
    /// Bytes the event took on the wire (0 for an event built here).
    pub wire_len: usize,
}

impl Event {
    /// An event of type `kind` with `data` (a JSON object; anything else counts as no
    /// data) and no payload.
    pub fn new(kind: &str, data: Value) -> Self {
        let data = match data {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Self {
            kind: kind.to_string(),
            data,
            payload: Vec::new(),
            wire_len: 0,
        }
    }

    /// The event with `payload`.
    pub fn with_payload(mut self, payload: Vec<u8>) -> Self {
        self.payload = payload;
        self
    }

    /// The bytes of the event as `async_write_event` writes them: the header line with
    /// `type`, `version`, and `data_length`/`payload_length` when there is data or a
    /// payload, then the data, then the payload.
    pub fn encode(&self) -> Vec<u8> {
        let data = if self.data.is_empty() {
            None
        } else {
            // Serializing a map of JSON values cannot fail.
            Some(serde_json::to_vec(&self.data).unwrap_or_else(|_| b"{}".to_vec()))
        };
        let kind = serde_json::to_string(&self.kind).unwrap_or_else(|_| "\"\"".into());
        let mut header = format!("{{\"type\": {kind}, \"version\": \"{VERSION}\"");
        if let Some(d) = &data {
            header += &format!(", \"data_length\": {}", d.len());
        }
        if !self.payload.is_empty() {
            header += &format!(", \"payload_length\": {}", self.payload.len());
        }
        header += "}\n";
        let mut out = header.into_bytes();
        out.reserve(data.as_ref().map_or(0, Vec::len) + self.payload.len());
        if let Some(d) = data {
            out.extend_from_slice(&d);
        }
        out.extend_from_slice(&self.payload);
        out
    }
}

/// Why an event could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The connection failed (reset by the peer, …).
    Io(std::io::Error),
    /// Bytes that are not a Wyoming event (bad JSON, a header without `type`, …).
    Malformed(String),
    /// A header line over [`MAX_HEADER_BYTES`].
    TooLarge(String),
    /// Data or a payload over the reader's body limit (the server's
    /// [`crate::Limits::max_body_bytes`]).
    OverLimit(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "cannot read from the connection: {e}"),
            ReadError::Malformed(m) | ReadError::TooLarge(m) | ReadError::OverLimit(m) => {
                f.write_str(m)
            }
        }
    }
}

/// A header line read, waiting for its data and payload.
#[derive(Debug)]
struct Header {
    kind: String,
    data: Map<String, Value>,
    /// Where the data starts (just past the newline).
    body_start: usize,
    data_length: usize,
    payload_length: usize,
}

/// Reads events from a byte stream, within limits. [`EventReader::next`] is cancel-safe:
/// bytes read stay in the reader's buffer until their event is complete, so it can be
/// raced against other futures in `tokio::select!`.
pub struct EventReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Bytes of `buf` already searched for a newline.
    scanned: usize,
    header: Option<Header>,
    max_body: usize,
}

impl<R: AsyncRead + Unpin> EventReader<R> {
    /// A reader over `inner` refusing data or payloads over `max_body` bytes each.
    pub fn new(inner: R, max_body: usize) -> Self {
        Self {
            inner,
            buf: Vec::new(),
            scanned: 0,
            header: None,
            max_body,
        }
    }

    /// The next event; `None` when the peer closed the connection (also in the middle of
    /// an event, which `async_read_event` treats the same way).
    ///
    /// # Errors
    /// [`ReadError`]; after one, the stream is out of step: read no more.
    pub async fn next(&mut self) -> Result<Option<Event>, ReadError> {
        loop {
            if let Some(event) = self.parse()? {
                return Ok(Some(event));
            }
            let want = match &self.header {
                Some(h) => (h.body_start + h.data_length + h.payload_length)
                    .saturating_sub(self.buf.len())
                    .clamp(1, READ_CHUNK),
                None => READ_CHUNK,
            };
            self.buf.reserve(want);
            let n = self
                .inner
                .read_buf(&mut self.buf)
                .await
                .map_err(ReadError::Io)?;
            if n == 0 {
                return Ok(None);
            }
        }
    }

    /// Reads and drops up to `max` bytes, until the peer closes its side or the
    /// connection fails.
    pub async fn discard(&mut self, max: usize) {
        let mut scratch = vec![0u8; 16 * 1024];
        let mut total = 0;
        while total < max {
            match self.inner.read(&mut scratch).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    }

    /// Takes one complete event off the buffer, if there is one.
    fn parse(&mut self) -> Result<Option<Event>, ReadError> {
        if self.header.is_none() {
            loop {
                let Some(pos) = self.buf[self.scanned..].iter().position(|&b| b == b'\n') else {
                    if self.buf.len() > MAX_HEADER_BYTES {
                        return Err(too_long_header());
                    }
                    self.scanned = self.buf.len();
                    return Ok(None);
                };
                let end = self.scanned + pos;
                if end > MAX_HEADER_BYTES {
                    return Err(too_long_header());
                }
                if self.buf[..end].iter().all(u8::is_ascii_whitespace) {
                    // A blank line between events (a client typed by hand): skip it.
                    self.buf.drain(..=end);
                    self.scanned = 0;
                    continue;
                }
                self.header = Some(parse_header(&self.buf[..end], end + 1, self.max_body)?);
                break;
            }
        }
        let Some(h) = &self.header else {
            return Ok(None);
        };
        let data_end = h.body_start + h.data_length;
        let total = data_end + h.payload_length;
        if self.buf.len() < total {
            return Ok(None);
        }
        let Some(h) = self.header.take() else {
            return Ok(None);
        };
        let mut data = h.data;
        if h.data_length > 0 {
            match serde_json::from_slice::<Value>(&self.buf[h.body_start..data_end]) {
                Ok(Value::Object(more)) => data.extend(more),
                Ok(_) => {
                    return Err(ReadError::Malformed(format!(
                        "the data of a {:?} event is not a JSON object",
                        h.kind
                    )))
                }
                Err(e) => {
                    return Err(ReadError::Malformed(format!(
                        "the data of a {:?} event is not valid JSON: {e}",
                        h.kind
                    )))
                }
            }
        }
        let payload = self.buf[data_end..total].to_vec();
        self.buf.drain(..total);
        self.scanned = 0;
        Ok(Some(Event {
            kind: h.kind,
            data,
            payload,
            wire_len: total,
        }))
    }
}

fn too_long_header() -> ReadError {
    ReadError::TooLarge(format!(
        "an event header line is longer than {} KiB (or has no newline)",
        MAX_HEADER_BYTES / 1024
    ))
}

/// Parses a header line (`body_start` is where its data starts).
fn parse_header(line: &[u8], body_start: usize, max_body: usize) -> Result<Header, ReadError> {
    let value: Value = serde_json::from_slice(line).map_err(|e| {
        ReadError::Malformed(format!(
            "an event header is not valid JSON ({e}): each event starts with one line \
             {{\"type\": …, \"data_length\": …, \"payload_length\": …}}"
        ))
    })?;
    let Value::Object(mut header) = value else {
        return Err(ReadError::Malformed(
            "an event header is not a JSON object".into(),
        ));
    };
    let kind = match header.remove("type") {
        Some(Value::String(s)) => s,
        _ => {
            return Err(ReadError::Malformed(
                "an event header has no \"type\" string".into(),
            ))
        }
    };
    let data = match header.remove("data") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(_) => {
            return Err(ReadError::Malformed(format!(
                "the \"data\" of a {kind:?} event header is not a JSON object"
            )))
        }
    };
    let length = |field: &str| -> Result<usize, ReadError> {
        let n = match header.get(field) {
            None | Some(Value::Null) => return Ok(0),
            Some(v) => v.as_u64().ok_or_else(|| {
                ReadError::Malformed(format!(
                    "the {field} of a {kind:?} event is not a non-negative integer"
                ))
            })?,
        };
        match usize::try_from(n) {
            Ok(n) if n <= max_body => Ok(n),
            _ => Err(ReadError::OverLimit(format!(
                "the {field} of a {kind:?} event, {n} bytes, is over this server's limit of \
                 {max_body} bytes"
            ))),
        }
    };
    let data_length = length("data_length")?;
    let payload_length = length("payload_length")?;
    Ok(Header {
        kind,
        data,
        body_start,
        data_length,
        payload_length,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn read_all(bytes: &[u8], max_body: usize) -> Vec<Result<Event, String>> {
        let mut reader = EventReader::new(bytes, max_body);
        let mut out = Vec::new();
        loop {
            match reader.next().await {
                Ok(Some(e)) => out.push(Ok(e)),
                Ok(None) => return out,
                Err(e) => {
                    out.push(Err(e.to_string()));
                    return out;
                }
            }
        }
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(f)
    }

    #[test]
    fn encodes_as_the_python_package() {
        let e = Event::new("audio-chunk", json!({"rate": 24000})).with_payload(vec![1, 2]);
        assert_eq!(
            e.encode(),
            b"{\"type\": \"audio-chunk\", \"version\": \"1.10.2\", \"data_length\": 14, \
              \"payload_length\": 2}\n{\"rate\":24000}\x01\x02"
                .to_vec()
        );
        let e = Event::new("describe", Value::Null);
        assert_eq!(
            e.encode(),
            b"{\"type\": \"describe\", \"version\": \"1.10.2\"}\n".to_vec()
        );
    }

    #[test]
    fn reads_its_own_events_inline_data_and_merges() {
        let mut bytes = Event::new("synthesize", json!({"text": "hé"})).encode();
        bytes.extend(
            b"\n{\"type\": \"x\", \"data\": {\"a\": 1, \"b\": 1}, \"data_length\": 8}\n{\"b\": 2}",
        );
        bytes.extend(
            Event::new("p", Value::Null)
                .with_payload(vec![9; 5])
                .encode(),
        );
        let events = block_on(read_all(&bytes, 100));
        let events: Vec<Event> = events.into_iter().map(|e| e.unwrap()).collect();
        assert_eq!(events.len(), 3);
        assert_eq!(events[0].kind, "synthesize");
        assert_eq!(events[0].data["text"], "hé");
        assert_eq!(
            events[1].data,
            json!({"a": 1, "b": 2}).as_object().unwrap().clone()
        );
        assert_eq!(events[2].payload, vec![9; 5]);
    }

    #[test]
    fn refuses_bad_input() {
        for (bytes, needle) in [
            (&b"not json\n"[..], "not valid JSON"),
            (b"[1]\n", "not a JSON object"),
            (b"{\"data\": {}}\n", "no \"type\""),
            (b"{\"type\": \"x\", \"data_length\": -1}\n", "non-negative"),
            (
                b"{\"type\": \"x\", \"payload_length\": 101}\n",
                "limit of 100",
            ),
            (
                b"{\"type\": \"x\", \"data_length\": 2}\n[]",
                "not a JSON object",
            ),
        ] {
            let events = block_on(read_all(bytes, 100));
            let last = events.last().unwrap().as_ref().unwrap_err();
            assert!(last.contains(needle), "{last}");
        }
        let long = vec![b' '; MAX_HEADER_BYTES + 2];
        let events = block_on(read_all(&long, 100));
        assert!(events[0].as_ref().unwrap_err().contains("longer than"));
        // A truncated event is the end of the stream.
        let events = block_on(read_all(
            b"{\"type\": \"x\", \"payload_length\": 5}\nab",
            100,
        ));
        assert!(events.is_empty());
    }
}
