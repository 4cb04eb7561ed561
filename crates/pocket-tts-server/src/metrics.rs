//! `GET /metrics` in Prometheus' text format: requests by route and status, streams and
//! queue depth, time to first audio and real-time factor.

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, Opts, Registry, TextEncoder,
};

/// The server's metrics.
pub struct Metrics {
    registry: Registry,
    /// Requests answered, by route, method and status.
    pub requests: IntCounterVec,
    /// Engine streams ended, by protocol and outcome (completed, cancelled, failed,
    /// timeout).
    pub streams: IntCounterVec,
    /// Streams generating now (set when scraped).
    pub active: IntGauge,
    /// Requests waiting for a stream slot (set when scraped).
    pub queued: IntGauge,
    /// Time from submission to the first audio frame, by protocol (seconds).
    pub ttfa: HistogramVec,
    /// Real-time factor of each completed stream (wall time / audio duration), by protocol.
    pub rtf: HistogramVec,
}

impl Metrics {
    /// Registers every metric under the `pocket_tts_` prefix.
    ///
    /// # Panics
    /// Never with these fixed, distinct names (registration only fails on duplicates or
    /// malformed names).
    pub fn new() -> Self {
        let registry =
            Registry::new_custom(Some("pocket_tts".into()), None).expect("a valid metrics prefix");
        let requests = IntCounterVec::new(
            Opts::new("http_requests_total", "HTTP requests answered"),
            &["route", "method", "status"],
        )
        .expect("valid metric");
        let streams = IntCounterVec::new(
            Opts::new("streams_total", "Generation streams ended, by outcome"),
            &["protocol", "outcome"],
        )
        .expect("valid metric");
        let active = IntGauge::new("active_streams", "Streams generating now").expect("valid");
        let queued =
            IntGauge::new("queued_requests", "Requests waiting for a stream slot").expect("valid");
        let ttfa = HistogramVec::new(
            HistogramOpts::new(
                "time_to_first_audio_seconds",
                "Time from request to the first audio frame",
            )
            .buckets(vec![
                0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0,
            ]),
            &["protocol"],
        )
        .expect("valid metric");
        let rtf = HistogramVec::new(
            HistogramOpts::new(
                "real_time_factor",
                "Wall time of a stream divided by its audio duration",
            )
            .buckets(vec![0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0]),
            &["protocol"],
        )
        .expect("valid metric");
        for c in [
            Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(streams.clone()),
            Box::new(active.clone()),
            Box::new(queued.clone()),
            Box::new(ttfa.clone()),
            Box::new(rtf.clone()),
        ] {
            registry.register(c).expect("distinct metric names");
        }
        Self {
            registry,
            requests,
            streams,
            active,
            queued,
            ttfa,
            rtf,
        }
    }

    /// Every metric in the text exposition format.
    pub fn render(&self) -> String {
        let mut buf = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut buf) {
            tracing::error!("cannot encode the metrics: {e}");
        }
        String::from_utf8_lossy(&buf).into_owned()
    }
}
