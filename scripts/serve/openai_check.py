#!/usr/bin/env python3
"""Checks `pocket-tts-cli serve` with the official `openai` Python client.

Plain and streamed speech (wav, pcm, sse), the model list, a custom voice given as an
object, and the client's error classes for a bad voice and a busy server are exercised
through the client's own API. Exits non-zero on the first failure.

    python openai_check.py --url http://127.0.0.1:PORT --voice NAME
"""

import argparse
import base64
import json
import sys
import time

import openai

TEXT = "Hello there. This is a check of the OpenAI client."


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}", file=sys.stderr)
        sys.exit(1)
    print(f"ok: {what}")


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

    try:
        client.audio.speech.create(
            model="pocket-tts", voice=args.voice, input=TEXT, response_format="mp3"
        )
        check(False, "mp3 is refused")
    except openai.BadRequestError as e:
        check("response_format" in str(e.message), f"mp3: {e.message}")
    print("all OpenAI client checks passed")


if __name__ == "__main__":
    main()
