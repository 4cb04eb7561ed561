#!/usr/bin/env python3
"""Checks a running `pocket-tts-cli serve --wyoming-port PORT` with the real `wyoming`
client package (Home Assistant's; tested with wyoming==1.10.2).

    python3 -m venv /tmp/wyo-venv && /tmp/wyo-venv/bin/pip install wyoming==1.10.2
    /tmp/wyo-venv/bin/python scripts/serve/wyoming_check.py --host 127.0.0.1 --port 10200

Checks, each on its own connection as Home Assistant makes them:
  1. describe -> info: one installed tts program "pocket-tts" with at least one voice,
     streaming supported;
  2. synthesize (default voice, then the first listed voice by name) -> audio-start
     (24000 Hz, 16-bit, mono), non-empty audio-chunks of whole samples in that format,
     audio-stop;
  3. an unknown voice -> error, then the server closes the connection (Home Assistant's
     non-streaming path waits for audio-stop until the connection closes); describe
     works on a new connection;
  4. streaming as Home Assistant sends it: synthesize-start, synthesize-chunk..., the
     whole text as a plain synthesize (for compatibility), synthesize-stop -> audio
     (start/chunks/stop blocks) then synthesize-stopped, and nothing for the plain
     synthesize.
Prints each check; exits 1 on the first failure.
"""

import argparse
import asyncio
import sys

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.info import Describe, Info
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeStopped,
    SynthesizeVoice,
)

RATE, WIDTH, CHANNELS = 24000, 2, 1
TIMEOUT = 60.0


class CheckFailed(Exception):
    pass


def check(condition, what):
    if not condition:
        raise CheckFailed(what)


async def read(client):
    event = await asyncio.wait_for(client.read_event(), TIMEOUT)
    check(event is not None, "the server closed the connection unexpectedly")
    return event


async def describe(client):
    await client.write_event(Describe().event())
    event = await read(client)
    check(Info.is_type(event.type), f"describe answered {event.type!r}, not info")
    return Info.from_event(event)


async def read_audio_block(client, first=None):
    """Reads audio-start, audio-chunk..., audio-stop; returns (chunks, samples)."""
    event = first or await read(client)
    if Error.is_type(event.type):
        raise CheckFailed(f"error instead of audio: {Error.from_event(event)}")
    check(AudioStart.is_type(event.type), f"expected audio-start, got {event.type!r}")
    start = AudioStart.from_event(event)
    check(
        (start.rate, start.width, start.channels) == (RATE, WIDTH, CHANNELS),
        f"audio-start format {start.rate}/{start.width}/{start.channels}",
    )
    chunks = samples = 0
    while True:
        event = await read(client)
        if AudioStop.is_type(event.type):
            break
        check(AudioChunk.is_type(event.type), f"expected audio-chunk, got {event.type!r}")
        chunk = AudioChunk.from_event(event)
        check(
            (chunk.rate, chunk.width, chunk.channels) == (RATE, WIDTH, CHANNELS),
            "audio-chunk format",
        )
        check(len(chunk.audio) > 0, "an empty audio-chunk")
        check(len(chunk.audio) % (WIDTH * CHANNELS) == 0, "a chunk of partial samples")
        chunks += 1
        samples += chunk.samples
    check(chunks >= 1, "no audio-chunk between audio-start and audio-stop")
    return chunks, samples


async def run(host, port, text):
    # 1. describe
    async with AsyncTcpClient(host, port) as client:
        info = await describe(client)
    check(len(info.tts) == 1, f"{len(info.tts)} tts programs")
    program = info.tts[0]
    check(program.name == "pocket-tts" and program.installed, f"program {program.name}")
    check(program.supports_synthesize_streaming, "streaming not advertised")
    voices = [v.name for v in program.voices]
    check(voices, "no voices listed")
    check(all(v.installed for v in program.voices), "a voice not installed")
    print(f"ok describe: program {program.name} {program.version}, voices {voices}")

    # 2. synthesize, default voice then the first voice by name
    for voice in (None, SynthesizeVoice(name=voices[0])):
        async with AsyncTcpClient(host, port) as client:
            await client.write_event(Synthesize(text=text, voice=voice).event())
            chunks, samples = await read_audio_block(client)
        name = voice.name if voice else "(default)"
        print(f"ok synthesize voice {name}: {chunks} chunks, {samples / RATE:.2f} s")

    # 3. unknown voice: error, then the connection is closed; a new one works
    async with AsyncTcpClient(host, port) as client:
        bad = SynthesizeVoice(name="no-such-voice-here")
        await client.write_event(Synthesize(text=text, voice=bad).event())
        event = await read(client)
        check(Error.is_type(event.type), f"unknown voice answered {event.type!r}")
        error = Error.from_event(event)
        check(error.code == "bad-request", f"error code {error.code!r}")
        after = await asyncio.wait_for(client.read_event(), TIMEOUT)
        check(after is None, f"the connection stays open after the error: {after!r}")
    async with AsyncTcpClient(host, port) as client:
        await describe(client)
    print(
        f"ok unknown voice: error {error.code}: {error.text!r}, then the connection "
        "closed; describe works on a new one"
    )

    # 4. streaming, as Home Assistant sends it
    async with AsyncTcpClient(host, port) as client:
        pieces = ["Hello there, ", "my friend. How are ", "you today?"]
        voice = SynthesizeVoice(name=voices[0])
        await client.write_event(SynthesizeStart(voice=voice).event())
        for piece in pieces:
            await client.write_event(SynthesizeChunk(text=piece).event())
        await client.write_event(Synthesize(text="".join(pieces), voice=voice).event())
        await client.write_event(SynthesizeStop().event())
        blocks = chunks = 0
        while True:
            event = await read(client)
            if SynthesizeStopped.is_type(event.type):
                break
            n, _ = await read_audio_block(client, first=event)
            blocks += 1
            chunks += n
        check(blocks >= 1, "no audio before synthesize-stopped")
        # The plain synthesize must have been ignored: nothing more comes before the
        # answer to this describe.
        await describe(client)
    print(f"ok streaming: {blocks} audio blocks, {chunks} chunks, then synthesize-stopped")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--text", default="Hello there.")
    args = parser.parse_args()
    try:
        asyncio.run(run(args.host, args.port, args.text))
    except CheckFailed as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    except (OSError, asyncio.TimeoutError) as e:
        print(f"FAIL: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print("PASS: the Wyoming server answers the real wyoming client as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
