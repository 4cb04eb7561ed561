#!/usr/bin/env python3
"""Time to first audio of a speech server under load: CONCURRENCY clients, each sending
requests one after the other until REQUESTS are done, each response read as it streams.

    python3 scripts/bench/serve_probe.py --url http://127.0.0.1:PORT/v1/audio/speech \
        --json '{"model":"pocket-tts","input":"Hello."}' --concurrency 4 --requests 8
    python3 scripts/bench/serve_probe.py --url http://127.0.0.1:PORT/tts \
        --form-text "Hello." --concurrency 1 --requests 4

Prints one JSON object: per request the time to the response head (what curl calls
time_starttransfer: pocket-tts-cli serve sends it with the first audio frame, the Python
reference's FastAPI before any audio), the time to the first audio byte (past the 44-byte
streaming WAV header: the same moment for both servers), the total time, the status and
the bytes; and their summary (p50/p95). Standard library only; loopback use.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import threading
import time
import urllib.parse
import uuid

WAV_HEADER_BYTES = 44


def percentile(values: list[float], q: float) -> float | None:
    """The q-quantile by linear interpolation between order statistics (numpy's default)."""
    if not values:
        return None
    v = sorted(values)
    pos = (len(v) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def one_request(url: urllib.parse.SplitResult, body: bytes, ctype: str, timeout: float,
                audio_offset: int) -> dict:
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
    t0 = time.perf_counter()
    out: dict = {"status": None, "bytes": 0, "ttfb_s": None, "ttfa_s": None, "total_s": None,
                 "error": None}
    try:
        conn.request("POST", url.path or "/", body=body,
                     headers={"Content-Type": ctype, "Content-Length": str(len(body))})
        resp = conn.getresponse()
        out["ttfb_s"] = time.perf_counter() - t0
        out["status"] = resp.status
        n = 0
        while True:
            chunk = resp.read1(65536)
            if not chunk:
                break
            n += len(chunk)
            if out["ttfa_s"] is None and n > audio_offset:
                out["ttfa_s"] = time.perf_counter() - t0
        out["bytes"] = n
        out["total_s"] = time.perf_counter() - t0
    except Exception as e:  # noqa: BLE001 - any failure is a failed request
        out["error"] = f"{type(e).__name__}: {e}"
        out["total_s"] = time.perf_counter() - t0
    finally:
        conn.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True)
    body = ap.add_mutually_exclusive_group(required=True)
    body.add_argument("--json", help="JSON body (POST /v1/audio/speech)")
    body.add_argument("--form-text", help="multipart field text (POST /tts)")
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--requests", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=120.0, help="per request, seconds")
    ap.add_argument("--pcm", action="store_true",
                    help="raw PCM responses: the first byte is audio (no WAV header)")
    args = ap.parse_args()
    if args.concurrency < 1 or args.requests < 1:
        ap.error("--concurrency and --requests must be at least 1")
    url = urllib.parse.urlsplit(args.url)
    if url.scheme != "http" or not url.hostname or not url.port:
        ap.error("--url must be http://HOST:PORT/PATH")
    if args.json is not None:
        payload, ctype = args.json.encode(), "application/json"
    else:
        boundary = uuid.uuid4().hex
        payload = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\n"
                   f"{args.form_text}\r\n--{boundary}--\r\n").encode()
        ctype = f"multipart/form-data; boundary={boundary}"
    audio_offset = 0 if args.pcm else WAV_HEADER_BYTES

    results: list[dict] = []
    lock = threading.Lock()
    next_index = [0]

    def worker() -> None:
        while True:
            with lock:
                if next_index[0] >= args.requests:
                    return
                next_index[0] += 1
            r = one_request(url, payload, ctype, args.timeout, audio_offset)
            with lock:
                results.append(r)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(args.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0

    ok = [r for r in results if r["status"] == 200 and r["error"] is None
          and r["bytes"] > audio_offset]

    def summary(key: str) -> dict:
        vals = [r[key] for r in ok if r[key] is not None]
        return {
            "p50_ms": None if not vals else 1000 * percentile(vals, 0.5),
            "p95_ms": None if not vals else 1000 * percentile(vals, 0.95),
            "max_ms": None if not vals else 1000 * max(vals),
            "mean_ms": None if not vals else 1000 * statistics.fmean(vals),
        }

    json.dump({
        "url": args.url,
        "concurrency": args.concurrency,
        "requests": args.requests,
        "ok": len(ok),
        "failed": len(results) - len(ok),
        "wall_s": wall,
        "ttfb": summary("ttfb_s"),
        "ttfa": summary("ttfa_s"),
        "total": summary("total_s"),
        "bytes_ok": sum(r["bytes"] for r in ok),
        "results": results,
    }, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
