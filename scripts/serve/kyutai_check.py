#!/usr/bin/env python3
"""Checks a running `pocket-tts-cli serve` on Kyutai's streaming websocket
(`/api/tts_streaming`) with a client that behaves as Kyutai's own: unmute's
(`unmute/tts/text_to_speech.py`: strict message models that accept only Ready, Audio,
Text and Error with exactly their fields, words sent one by one with a leading space,
the `kyutai-api-key` header, unknown query keys such as `cfg_alpha`) and
delayed-streams-modeling's `scripts/tts_rust_server.py` (playback in blocks of 1920
samples). Needs `msgpack` and `websockets` (>= 14, for `additional_headers`).

    scripts/serve/kyutai_check.py --url http://127.0.0.1:8000 [--api-key KEY]
    scripts/serve/kyutai_check.py --url ... --measure 5    # first-audio latency only

Checks:
  1. a paragraph sent word by word at --wps words per second (20: a language model's
     pace), then Eos -> Ready first, Audio blocks of exactly 1920 samples in [-1, 1], the
     first Audio less than --max-first-audio-ms (250) after the first sentence's last
     word was sent, every word echoed once in order with increasing times within the
     audio, then close 1000;
  2. the legacy frames (a websocket text frame, then the binary frame 0) with
     format=Pcm -> raw little-endian f32 blocks only, close 1000;
  3. a client that closes mid-sentence (after its first Audio): its stream ends within a
     second (/metrics: cancelled, or completed when the model had finished the sentence
     before the close arrived), and the next session is served;
  4. a bad format -> HTTP 400 before the upgrade; an unknown message -> Error, close 1008.
With --measure N only check 1 runs, N times, and the first-audio latencies are printed
(min / median / max). Exits 1 on the first failure.
"""

import argparse
import asyncio
import statistics
import sys
import time
import urllib.parse
import urllib.request

import msgpack
import websockets

RATE = 24000
BLOCK = 1920
TIMEOUT = 120.0
PARAGRAPH = (
    "Hello there, and welcome to the streaming voice. This answer is written one word at "
    "a time, as a language model writes it. Each sentence should be spoken as soon as it "
    "is complete. The last words end with the end of input"
)

# The message models, as strict as unmute's: the type and exactly these fields.
MODELS = {
    "Ready": {},
    "Audio": {"pcm": list},
    "Text": {"text": str, "start_s": float, "stop_s": float},
    "Error": {"message": str},
}


class CheckFailed(Exception):
    pass


def check(condition, what):
    if not condition:
        raise CheckFailed(what)


def parse(data):
    check(isinstance(data, bytes), f"a text frame from the server: {data!r:.80}")
    message = msgpack.unpackb(data)
    check(isinstance(message, dict), f"not a MessagePack map: {message!r:.80}")
    kind = message.get("type")
    check(kind in MODELS, f"message type {kind!r} is not one of {sorted(MODELS)}")
    fields = {k: v for k, v in message.items() if k != "type"}
    model = MODELS[kind]
    check(set(fields) == set(model), f"{kind}: fields {sorted(fields)}, expected {sorted(model)}")
    for name, typ in model.items():
        value = fields[name]
        ok = isinstance(value, typ) or (typ is float and isinstance(value, int))
        check(ok, f"{kind}.{name} is a {type(value).__name__}, not a {typ.__name__}")
    return kind, fields


def ws_url(url, query):
    base = url.replace("http://", "ws://", 1).replace("https://", "wss://", 1).rstrip("/")
    return f"{base}/api/tts_streaming?{urllib.parse.urlencode(query)}"


def headers(api_key):
    return {"kyutai-api-key": api_key} if api_key else {}


async def connect(args, query):
    return await websockets.connect(
        ws_url(args.url, query), additional_headers=headers(args.api_key), max_size=None
    )


async def wait_ready(ws):
    """unmute: reads up to 10 messages for Ready; an Error means the server is full."""
    for _ in range(10):
        kind, fields = parse(await asyncio.wait_for(ws.recv(), TIMEOUT))
        if kind == "Ready":
            return
        check(kind != "Error", f"Error instead of Ready: {fields.get('message')}")
    raise CheckFailed("no Ready within 10 messages")


async def paragraph(args, text):
    """Check 1; returns the first-audio latency after the first sentence's last word (s)."""
    ws = await connect(args, {"format": "PcmMessagePack", "voice": args.voice, "cfg_alpha": 1.5})
    words = text.split()
    first_end = next(i for i, w in enumerate(words) if w.endswith((".", "!", "?")))
    sent_at = {}
    received = {"blocks": 0, "first_audio": None, "words": [], "samples": 0}

    ready = asyncio.Event()

    async def receive():
        await ready.wait()
        # Playback as tts_rust_server.py's: a block of 1920 samples at a time.
        async for data in ws:
            kind, fields = parse(data)
            if kind == "Audio":
                pcm = fields["pcm"]
                check(len(pcm) == BLOCK, f"an Audio of {len(pcm)} samples, not {BLOCK}")
                check(all(-1.0 <= s <= 1.0 for s in pcm), "samples outside [-1, 1]")
                if received["first_audio"] is None:
                    received["first_audio"] = time.monotonic()
                received["blocks"] += 1
                received["samples"] += len(pcm)
            elif kind == "Text":
                received["words"].append((fields["text"], fields["start_s"], fields["stop_s"]))
            elif kind == "Error":
                raise CheckFailed(f"Error: {fields['message']}")
            else:
                raise CheckFailed(f"a second {kind}")

    async def send_then_flag():
        await wait_ready(ws)
        ready.set()
        for i, word in enumerate(words):
            await ws.send(msgpack.packb({"type": "Text", "text": " " + word}))
            sent_at[i] = time.monotonic()
            await asyncio.sleep(1.0 / args.wps)
        await ws.send(msgpack.packb({"type": "Eos"}))

    try:
        await asyncio.wait_for(asyncio.gather(send_then_flag(), receive()), TIMEOUT)
    finally:
        await ws.close()
    check(ws.close_code == 1000, f"closed with {ws.close_code} {ws.close_reason!r}, not 1000")
    check(received["first_audio"] is not None, "no Audio")
    latency = received["first_audio"] - sent_at[first_end]
    echoed = [w for w, _, _ in received["words"]]
    check(echoed == words, f"the words echoed {echoed} are not the words sent {words}")
    audio_s = received["samples"] / RATE
    last_start, last_stop = -1.0, 0.0
    for word, start, stop in received["words"]:
        check(
            start > last_start and start >= last_stop - 1e-9 and stop > start,
            f"{word!r} at {start:.3f}-{stop:.3f} s after {last_start:.3f}-{last_stop:.3f} s",
        )
        check(stop <= audio_s + 1e-9, f"{word!r} ends at {stop:.3f} s, after the audio ({audio_s:.3f} s)")
        last_start, last_stop = start, stop
    return latency, received["blocks"], len(words)


async def legacy(args):
    ws = await connect(args, {"format": "Pcm"})
    await ws.send("Hello from the legacy frames.")
    await ws.send(b"\0")
    blocks = 0
    async for data in ws:
        check(isinstance(data, bytes) and len(data) == BLOCK * 4, f"a Pcm frame of {len(data)} bytes")
        blocks += 1
    check(ws.close_code == 1000, f"closed with {ws.close_code}, not 1000")
    check(blocks > 0, "no audio")
    return blocks


def ended_streams(args):
    """The server's kyutai streams ended so far, by outcome (/metrics)."""
    request = urllib.request.Request(args.url.rstrip("/") + "/metrics")
    if args.api_key:
        request.add_header("Authorization", f"Bearer {args.api_key}")
    with urllib.request.urlopen(request, timeout=10) as r:
        text = r.read().decode()
    ended = {}
    for line in text.splitlines():
        if line.startswith("pocket_tts_streams_total{") and 'protocol="kyutai"' in line:
            outcome = line.split('outcome="', 1)[1].split('"', 1)[0]
            ended[outcome] = float(line.rsplit(" ", 1)[1])
    return ended


async def leave_mid_sentence(args):
    before = ended_streams(args)
    ws = await connect(args, {"format": "PcmMessagePack"})
    await wait_ready(ws)
    long = "This sentence is long enough that the client leaves while it is being spoken, " \
        "well before its end, and the server must stop generating it at once."
    await ws.send(msgpack.packb({"type": "Text", "text": long}))
    while True:
        kind, _ = parse(await asyncio.wait_for(ws.recv(), TIMEOUT))
        if kind == "Audio":
            break
    await ws.close()
    t0 = time.monotonic()
    # Cancelled; or, on a model fast enough to finish the sentence before the close
    # reached the server (the tiny test model), completed.
    while True:
        after = ended_streams(args)
        ended = {k: after.get(k, 0) - before.get(k, 0) for k in after}
        if sum(ended.values()) >= 1:
            break
        check(time.monotonic() - t0 < 1.0, "the stream did not end within 1 s of the close")
        await asyncio.sleep(0.02)
    check(set(k for k, v in ended.items() if v) <= {"cancelled", "completed"}, f"streams ended: {ended}")
    outcome = "cancelled" if ended.get("cancelled") else "completed before the close"
    freed_ms = (time.monotonic() - t0) * 1000
    # The next session is served.
    ws = await connect(args, {"format": "PcmMessagePack"})
    await wait_ready(ws)
    await ws.send(msgpack.packb({"type": "Text", "text": "Served after the other left."}))
    kind, _ = parse(await asyncio.wait_for(ws.recv(), TIMEOUT))
    check(kind == "Audio", f"{kind} instead of Audio")
    await ws.close()
    return freed_ms, outcome


async def refusals(args):
    try:
        ws = await connect(args, {"format": "Mp3"})
        await ws.close()
        raise CheckFailed("format=Mp3 was accepted")
    except websockets.InvalidStatus as e:
        check(e.response.status_code == 400, f"format=Mp3: HTTP {e.response.status_code}, not 400")
    ws = await connect(args, {"format": "PcmMessagePack"})
    await wait_ready(ws)
    await ws.send(msgpack.packb({"type": "Shout", "text": "hi"}))
    kind, fields = parse(await asyncio.wait_for(ws.recv(), TIMEOUT))
    check(kind == "Error" and "Shout" in fields["message"], f"{kind} {fields}")
    try:
        await asyncio.wait_for(ws.recv(), TIMEOUT)
        raise CheckFailed("a message after the Error")
    except websockets.ConnectionClosed:
        pass
    check(ws.close_code == 1008, f"closed with {ws.close_code}, not 1008")


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the server, http://HOST:PORT")
    parser.add_argument("--api-key", default=None, help="sent as the kyutai-api-key header")
    parser.add_argument("--voice", default="default")
    parser.add_argument("--wps", type=float, default=20.0, help="words sent per second")
    parser.add_argument("--max-first-audio-ms", type=float, default=250.0)
    parser.add_argument("--measure", type=int, default=0, help="only measure, N runs")
    args = parser.parse_args()
    if args.measure:
        latencies = []
        for i in range(args.measure):
            latency, blocks, words = await paragraph(args, PARAGRAPH)
            latencies.append(latency * 1000)
            print(f"run {i + 1}: first Audio {latency * 1000:.0f} ms after the first sentence's "
                  f"last word; {words} words echoed, {blocks} blocks ({blocks * 0.08:.1f} s), close 1000")
        print(f"first Audio after the first sentence: min {min(latencies):.0f} ms, median "
              f"{statistics.median(latencies):.0f} ms, max {max(latencies):.0f} ms over {len(latencies)} runs")
        check(max(latencies) < args.max_first_audio_ms,
              f"first Audio {max(latencies):.0f} ms after the first sentence, over {args.max_first_audio_ms:.0f} ms")
        return
    latency, blocks, words = await paragraph(args, PARAGRAPH)
    print(f"ok: paragraph word by word at {args.wps:g} words/s: first Audio {latency * 1000:.0f} ms "
          f"after the first sentence's last word, {words} words echoed in order, {blocks} blocks of "
          f"{BLOCK}, close 1000")
    check(latency * 1000 < args.max_first_audio_ms,
          f"first Audio {latency * 1000:.0f} ms after the first sentence, over {args.max_first_audio_ms:.0f} ms")
    blocks = await legacy(args)
    print(f"ok: legacy text frame and \\0 with format=Pcm: {blocks} raw blocks, close 1000")
    freed, outcome = await leave_mid_sentence(args)
    print(f"ok: a client closing mid-sentence: its stream ended ({outcome}) {freed:.0f} ms after "
          f"its close, the next session served")
    await refusals(args)
    print("ok: format=Mp3 -> HTTP 400; an unknown message -> Error, close 1008")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except CheckFailed as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
