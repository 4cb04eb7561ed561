#!/usr/bin/env python3
"""Checks `pocket-tts-cli serve` with the official `openai` Python client.

Plain and streamed speech (wav, pcm, sse), the model list, a custom voice given as an
object, and the client's error classes for a bad voice and a busy server are exercised
through the client's own API. The compressed formats (mp3 when no response_format is
given, as OpenAI; opus, aac) are decoded by PyAV (FFmpeg's decoders) to the WAV's
duration; the first mp3 bytes are timed against the first pcm bytes (the first audio
frame); `speed`, OpenAI's voice names and `instructions` are accepted; and the
reference's /tts takes `requests.post(url, data={"text": ...})`. Exits non-zero on the
first failure.

    python openai_check.py --url http://127.0.0.1:PORT --voice NAME
"""

import argparse
import base64
import io
import json
import statistics
import sys
import time

import av
import openai
import requests

TEXT = "Hello there. This is a check of the OpenAI client."


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}", file=sys.stderr)
        sys.exit(1)
    print(f"ok: {what}")


def decoded_seconds(data, fmt):
    """Duration of `data` decoded by FFmpeg's decoders (PyAV), and its sample rate."""
    with av.open(io.BytesIO(data), format=fmt) as container:
        stream = container.streams.audio[0]
        samples, rate = 0, None
        for frame in container.decode(stream):
            samples += frame.samples
            rate = frame.sample_rate
    return samples / rate, rate


def wav_speech_seconds(wav):
    """Duration of the speech in a streaming WAV (16-bit mono 24 kHz; the header's 44
    bytes and the trailing 200 ms of silence left out)."""
    return (len(wav) - 44) / 2 / 24000 - 0.2


def first_byte_ms(client, voice, fmt):
    """Milliseconds from the request to the first body bytes of a streamed response."""
    t0 = time.monotonic()
    with client.audio.speech.with_streaming_response.create(
        model="pocket-tts", voice=voice, input=TEXT, response_format=fmt
    ) as response:
        for _ in response.iter_bytes(chunk_size=1):
            return (time.monotonic() - t0) * 1000
    return float("inf")


def check_formats(client, voice, url, wav):
    """mp3 by default, opus and aac: decoded to the WAV's duration; mp3's first bytes
    with the first audio frame; speed; OpenAI's voice names; /tts url-encoded."""
    speech_s = wav_speech_seconds(wav)
    # Each codec's own framing: LAME's delay and padding (no LAME tag in a stream, under
    # 3 frames of 576 samples), Opus exact (granule positions), AAC's encoder delay and
    # padding (ADTS cannot signal them, under 3 frames of 1024).
    slack = {"mp3": 3 * 576 / 24000, "ogg": 0.001, "aac": 3 * 1024 / 24000}
    mp3 = client.audio.speech.create(model="tts-1", voice=voice, input=TEXT).content
    seconds, rate = decoded_seconds(mp3, "mp3")
    check(rate == 24000 and 0 <= seconds - speech_s <= slack["mp3"],
          f"no response_format: mp3 of {seconds:.3f} s at {rate} Hz (WAV: {speech_s:.3f} s)")
    for fmt, container in (("opus", "ogg"), ("aac", "aac")):
        data = client.audio.speech.create(
            model="tts-1", voice=voice, input=TEXT, response_format=fmt
        ).content
        seconds, rate = decoded_seconds(data, container)
        low = -slack[container] if container == "ogg" else 0
        check(low <= seconds - speech_s <= slack[container],
              f"{fmt}: decodes to {seconds:.3f} s at {rate} Hz (WAV: {speech_s:.3f} s)")

    # The first mp3 bytes leave with the first audio frame: time to first byte of mp3
    # against pcm (whose first bytes are the first frame), interleaved, 5 each.
    mp3_ms, pcm_ms = [], []
    for _ in range(5):
        mp3_ms.append(first_byte_ms(client, voice, "mp3"))
        pcm_ms.append(first_byte_ms(client, voice, "pcm"))
    gap = statistics.median(m - p for m, p in zip(mp3_ms, pcm_ms))
    check(gap < 100, f"first mp3 bytes {statistics.median(mp3_ms):.1f} ms, first pcm bytes "
          f"{statistics.median(pcm_ms):.1f} ms (median of 5): mp3 later by {gap:.1f} ms < 100 ms")

    # speed keeps the pitch and scales the duration.
    for speed in (0.5, 2.0):
        data = client.audio.speech.create(
            model="tts-1", voice=voice, input=TEXT, response_format="wav", speed=speed
        ).content
        ratio = wav_speech_seconds(data) / speech_s
        check(abs(ratio * speed - 1) < 0.01, f"speed {speed}: {ratio:.3f}x as long")
    try:
        client.audio.speech.create(model="tts-1", voice=voice, input=TEXT, speed=5.0)
        check(False, "speed 5.0 is refused")
    except openai.BadRequestError as e:
        body = e.body if isinstance(e.body, dict) else {}
        check(body.get("param") == "speed" and "0.25 to 4.0" in str(e.message),
              f"speed 5.0: {e.message}")

    # OpenAI's voice names (the test model has no predefined voices: the default voice),
    # with instructions (accepted, ignored).
    pcm = client.audio.speech.create(
        model="tts-1", voice=voice, input=TEXT, response_format="pcm"
    ).content
    alloy = client.audio.speech.create(
        model="gpt-4o-mini-tts", voice="alloy", input=TEXT, response_format="pcm",
        instructions="Speak in a cheerful tone.",
    ).content
    check(alloy == pcm, "voice alloy (with instructions) speaks with the mapped voice")
    voices = requests.get(url + "/v1/audio/voices", timeout=30).json()["voices"]
    aliases = {v["name"]: v.get("voice") for v in voices if v["source"] == "alias"}
    check("alloy" in aliases and "shimmer" in aliases, f"/v1/audio/voices lists the aliases {aliases}")

    # The reference's /tts, url-encoded, as `requests.post(url, data=...)` sends it.
    r = requests.post(url + "/tts", data={"text": "Hello."}, timeout=60)
    check(r.status_code == 200 and r.content[:4] == b"RIFF",
          f"requests.post(/tts, data={{'text': 'Hello.'}}): {r.status_code} {r.headers.get('content-type')}")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--url", required=True, help="the server, http://127.0.0.1:PORT")
    ap.add_argument("--voice", required=True, help="a voice name the server has")
    args = ap.parse_args()
    client = openai.OpenAI(base_url=args.url + "/v1", api_key="unused", max_retries=0)
    print(f"openai {openai.__version__} against {args.url}")

    models = [m.id for m in client.models.list()]
    check("pocket-tts" in models, f"models.list() lists pocket-tts ({models})")

    wav = client.audio.speech.create(
        model="pocket-tts", voice=args.voice, input=TEXT, response_format="wav"
    ).content
    check(wav[:4] == b"RIFF" and wav[8:12] == b"WAVE", "speech.create(wav) returns a WAV")
    check(len(wav) > 44 + 2 * 1920, f"the WAV holds audio ({len(wav)} bytes)")

    flac = client.audio.speech.create(
        model="pocket-tts", voice=args.voice, input=TEXT, response_format="flac"
    ).content
    check(flac[:4] == b"fLaC", f"speech.create(flac) returns a FLAC file ({len(flac)} bytes)")

    pcm = client.audio.speech.create(
        model="tts-1", voice={"id": args.voice}, input=TEXT, response_format="pcm"
    ).content
    check(len(pcm) > 0 and len(pcm) % 2 == 0, f"pcm with a voice object ({len(pcm)} bytes)")

    # Streaming: bytes arrive in several pieces, the first well before the last.
    chunks, t0, first = [], time.monotonic(), None
    with client.audio.speech.with_streaming_response.create(
        model="pocket-tts", voice=args.voice, input=TEXT, response_format="pcm"
    ) as response:
        check(response.headers.get("content-type") == "audio/pcm", "streamed pcm content type")
        for chunk in response.iter_bytes(chunk_size=3840):
            if first is None:
                first = time.monotonic() - t0
            chunks.append(chunk)
    streamed = b"".join(chunks)
    check(len(chunks) > 1, f"streamed in {len(chunks)} pieces, first after {first * 1000:.0f} ms")
    check(streamed == pcm, "streamed pcm equals the plain pcm (same seed, temperature 0)")

    # SSE: speech.audio.delta events then speech.audio.done.
    deltas, done = [], None
    with client.audio.speech.with_streaming_response.create(
        model="pocket-tts",
        voice=args.voice,
        input=TEXT,
        response_format="pcm",
        stream_format="sse",
    ) as response:
        for line in response.iter_lines():
            if not line.startswith("data: "):
                continue
            event = json.loads(line[len("data: "):])
            if event["type"] == "speech.audio.delta":
                deltas.append(base64.b64decode(event["audio"]))
            elif event["type"] == "speech.audio.done":
                done = event
    check(b"".join(deltas) == pcm, f"sse: {len(deltas)} deltas carry the same pcm")
    check(done is not None and done["usage"]["output_tokens"] > 0, f"sse: done event {done}")

    try:
        client.audio.speech.create(model="pocket-tts", voice="no-such-voice", input=TEXT)
        check(False, "an unknown voice is refused")
    except openai.BadRequestError as e:
        body = e.body if isinstance(e.body, dict) else {}
        check(e.status_code == 400 and body.get("param") == "voice",
              f"unknown voice: BadRequestError naming the voice ({e.message})")

    check_formats(client, args.voice, args.url, wav)
    print("all OpenAI client checks passed")


if __name__ == "__main__":
    main()
