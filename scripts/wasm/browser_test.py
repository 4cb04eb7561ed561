#!/usr/bin/env python3
"""The WebAssembly page in headless Chromium (selenium + Debian's chromedriver), against
native output of the same model.

    browser_test.py --dist DIR --model-dir DIR --voice FILE --reference REF.f32 [--text T]
    browser_test.py --dist DIR --model-dir DIR --voice FILE --measure [--quantize] [--text T]

Serves DIR (the page built by scripts/wasm/build.sh) and the model files (config.yaml,
model.safetensors, tokenizer.model of --model-dir, and the voice) from 127.0.0.1 on a free
port, opens the page with the files named in its URL, and:

* test mode: speaks --text at temperature 0 and compares the samples with REF.f32 (the
  native core's, little-endian f32, from the `native_reference` example) within 1e-3;
  checks that the first frame arrived before the end (streaming); speaks a long text and
  stops it after two frames (cancel); opens the page with a bad checkpoint and with a bad
  voice file and checks each shows a one-line error naming the file; then stops the
  server, reloads the page and speaks again (offline: the service worker's cache).
* --measure: loads the model (int8 with --quantize), makes the voice, speaks --text
  three times and prints one JSON line per run: load, voice and generation times, time to
  first audio, samples, RTF, and the .wasm's size raw and gzipped.

Prints each check; exits 0 when all pass, else prints why and exits 1.
"""

import argparse
import functools
import gzip
import http.server
import json
import os
import shutil
import struct
import sys
from pathlib import Path
import tempfile
import threading
import time
import urllib.parse

from selenium.webdriver.common.by import By

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dev"))
from headless import CheckFailed, ok, start_chromium  # noqa: E402
from headless import wait_for as _wait_for  # noqa: E402

TOLERANCE = 1e-3
LONG_TEXT = " ".join(["This sentence is long, so that the generation can be stopped midway."] * 4)


def wait_for(what, predicate, timeout):
    return _wait_for(what, predicate, timeout, poll=0.05)


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript"}

    def log_message(self, *args):
        pass


def serve(root):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=root))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/"


def state(driver):
    return driver.execute_script(
        "const s = window.pocketTts; return s ? {phase: s.phase, error: s.error, frames: s.frames, "
        "hasVoice: s.hasVoice, loadMs: s.loadMs, firstAudioMs: s.firstAudioMs, generateMs: s.generateMs, "
        "firstAudioParts: s.firstAudioParts, voiceMs: s.voiceMs, serviceWorker: s.serviceWorker, "
        "wasmMemory: s.wasmMemory, loadParts: s.loadParts, "
        "n: s.samples ? s.samples.length : null} : null")


def open_page(driver, base, **params):
    driver.get(base + "?" + urllib.parse.urlencode(params))


def wait_ready(driver, timeout):
    def ready():
        s = state(driver)
        if s and s["phase"] == "error":
            raise CheckFailed(f"the page shows an error: {s['error']}")
        return s if s and s["hasVoice"] and s["phase"] == "loaded" else None
    return wait_for("the model and the voice", ready, timeout)


def speak(driver, text, timeout):
    driver.execute_script("document.getElementById('text').value = arguments[0];", text)
    driver.find_element(By.ID, "speak").click()

    def done():
        s = state(driver)
        if s["phase"] == "error":
            raise CheckFailed(f"the page shows an error: {s['error']}")
        return s if s["phase"] in ("done", "cancelled") else None
    return wait_for("the generation", done, timeout)


def samples(driver):
    # Base64 of the Float32Array's bytes: a list of floats through WebDriver is slow.
    b64 = driver.execute_script(
        "const b = new Uint8Array(window.pocketTts.samples.buffer); let s = '';"
        "for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode.apply(null, b.subarray(i, i + 0x8000));"
        "return btoa(s);")
    import base64
    raw = base64.b64decode(b64)
    return struct.unpack(f"<{len(raw) // 4}f", raw)


def expect_error(driver, base, name, timeout, **params):
    open_page(driver, base, **params)
    s = wait_for(f"an error for {name}", lambda: (lambda s: s if s and s["phase"] == "error" else None)(state(driver)), timeout)
    shown = driver.find_element(By.ID, "error").text
    if "\n" in shown or not shown:
        raise CheckFailed(f"the error for {name} is not one line: {shown!r}")
    if name not in shown:
        raise CheckFailed(f"the error for {name} does not name it: {shown!r}")
    ok(f"{name}: one-line error: {shown[:160]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dist", required=True)
    ap.add_argument("--model-dir", required=True, help="config.yaml, model.safetensors, tokenizer.model")
    ap.add_argument("--tokenizer", help="the tokenizer file (default MODEL_DIR/tokenizer.model)")
    ap.add_argument("--voice", required=True)
    ap.add_argument("--reference", help="native samples (little-endian f32)")
    ap.add_argument("--int8-reference", help="test mode: native samples with int8 FlowLM weights (little-endian f32)")
    ap.add_argument("--audio-voice", help="test mode: an audio file to clone too (Mimi worker encodes, FlowLM worker prompts)")
    ap.add_argument("--audio-reference", help="native samples with --audio-voice (little-endian f32)")
    ap.add_argument("--text", default="Hello world. This is a test.")
    ap.add_argument("--measure", action="store_true")
    ap.add_argument("--quantize", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120)
    args = ap.parse_args()

    root = tempfile.mkdtemp(prefix="pocket-tts-wasm-")
    try:
        shutil.copytree(args.dist, root, dirs_exist_ok=True)
        files = os.path.join(root, "model")
        os.mkdir(files)
        for name in ("config.yaml", "model.safetensors"):
            os.symlink(os.path.abspath(os.path.join(args.model_dir, name)), os.path.join(files, name))
        os.symlink(os.path.abspath(args.tokenizer or os.path.join(args.model_dir, "tokenizer.model")),
                   os.path.join(files, "tokenizer.model"))
        voice_name = os.path.basename(args.voice)
        os.symlink(os.path.abspath(args.voice), os.path.join(files, voice_name))
        if args.audio_voice:
            os.symlink(os.path.abspath(args.audio_voice), os.path.join(files, os.path.basename(args.audio_voice)))
        with open(os.path.join(files, "bad.safetensors"), "wb") as f:
            f.write(b"this is not a checkpoint")
        with open(os.path.join(files, "bad_voice.wav"), "wb") as f:
            f.write(b"RIFF not really a wave file")
        httpd, base = serve(root)
        model = {"weights": "model/model.safetensors", "tokenizer": "model/tokenizer.model",
                 "config": "model/config.yaml", "voice": f"model/{voice_name}"}

        driver = start_chromium()
        if driver is None:
            return 1
        try:
            if args.measure:
                measure(driver, base, model, args)
            else:
                check(driver, base, model, args)
                check_offline(driver, base, model, args, httpd)
        except CheckFailed as e:
            for entry in driver.get_log("browser")[-10:]:
                print(f"     console: {entry['message'][:300]}", file=sys.stderr)
            print(f"FAIL: {e}", file=sys.stderr)
            return 1
        finally:
            driver.quit()
            httpd.shutdown()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def check(driver, base, model, args):
    with open(args.reference, "rb") as f:
        raw = f.read()
    ref = struct.unpack(f"<{len(raw) // 4}f", raw)
    open_page(driver, base, **model, temperature="0", seed="0", quantize="0")
    wait_ready(driver, args.timeout)
    ok("the page loaded the model and the voice state from this origin")
    s = speak(driver, args.text, args.timeout)
    got = samples(driver)
    if len(got) != len(ref):
        raise CheckFailed(f"{len(got)} samples in the browser, {len(ref)} native")
    err = max(abs(a - b) for a, b in zip(got, ref))
    if not err <= TOLERANCE:
        raise CheckFailed(f"max |browser - native| = {err:.3g} > {TOLERANCE}")
    ok(f"temperature 0: {len(got)} samples, max |browser - native| = {err:.3g} (<= {TOLERANCE})")
    if not (s["frames"] > 1 and s["firstAudioMs"] < s["generateMs"]):
        raise CheckFailed(f"no streaming: {s['frames']} frames, first after {s['firstAudioMs']} ms of {s['generateMs']} ms")
    ok(f"streamed: first of {s['frames']} frames after {s['firstAudioMs']:.0f} ms of {s['generateMs']:.0f} ms")
    href = driver.find_element(By.ID, "download").get_attribute("href")
    if not href or not href.startswith("blob:"):
        raise CheckFailed("no WAV download link after the generation")
    ok("the WAV download link is there")

    driver.execute_script("document.getElementById('text').value = arguments[0];", LONG_TEXT)
    driver.find_element(By.ID, "speak").click()
    wait_for("two frames of the long text", lambda: state(driver)["frames"] >= 2, args.timeout)
    driver.find_element(By.ID, "stop").click()
    s = wait_for("the cancel", lambda: (lambda s: s if s["phase"] in ("cancelled", "done") else None)(state(driver)), args.timeout)
    if s["phase"] != "cancelled":
        raise CheckFailed(f"the long text ended ({s['frames']} frames) instead of being stopped")
    max_frames = driver.execute_script("return window.pocketTts.frames")
    ok(f"stopped after {max_frames} frames of a long text")
    s = speak(driver, args.text, args.timeout)
    if s["phase"] != "done" or s["n"] != len(ref):
        raise CheckFailed(f"after the cancel, a new generation made {s['n']} samples, expected {len(ref)}")
    ok("a new generation after the cancel gives the same audio length")

    if args.int8_reference:
        with open(args.int8_reference, "rb") as f:
            raw = f.read()
        qref = struct.unpack(f"<{len(raw) // 4}f", raw)
        open_page(driver, base, **model, temperature="0", seed="0", quantize="1")
        wait_ready(driver, args.timeout)
        speak(driver, args.text, args.timeout)
        got = samples(driver)
        err = max((abs(a - b) for a, b in zip(got, qref)), default=float("inf"))
        if len(got) != len(qref) or not err <= TOLERANCE:
            raise CheckFailed(f"int8: {len(got)} samples (native {len(qref)}), max |browser - native| = {err:.3g}")
        ok(f"int8 FlowLM weights (SIMD128 int8 kernels): {len(got)} samples, max |browser - native| = {err:.3g}")

    if args.audio_voice:
        with open(args.audio_reference, "rb") as f:
            raw = f.read()
        aref = struct.unpack(f"<{len(raw) // 4}f", raw)
        open_page(driver, base, **{**model, "voice": "model/" + os.path.basename(args.audio_voice)},
                  temperature="0", seed="0", quantize="0")
        wait_ready(driver, args.timeout)
        speak(driver, args.text, args.timeout)
        got = samples(driver)
        err = max((abs(a - b) for a, b in zip(got, aref)), default=float("inf"))
        if len(got) != len(aref) or not err <= TOLERANCE:
            raise CheckFailed(f"cloned voice: {len(got)} samples (native {len(aref)}), max |browser - native| = {err:.3g}")
        ok(f"voice cloned from {os.path.basename(args.audio_voice)} (Mimi worker -> FlowLM worker): "
           f"{len(got)} samples, max |browser - native| = {err:.3g}")

    expect_error(driver, base, "bad.safetensors", args.timeout,
                 **{**model, "weights": "model/bad.safetensors"})
    expect_error(driver, base, "bad_voice.wav", args.timeout, **{**model, "voice": "model/bad_voice.wav"})


def check_offline(driver, base, model, args, httpd):
    """The page, loaded once, works with its server gone: the service worker serves the
    page, the .wasm and the model files it fetched."""
    url = base + "?" + urllib.parse.urlencode({**model, "temperature": "0", "seed": "0", "quantize": "0"})
    driver.get(url)
    s = wait_ready(driver, args.timeout)
    if s["serviceWorker"] != "controlled":
        raise CheckFailed(f"the service worker does not serve the page: {s['serviceWorker']}")
    ok("the service worker serves the page")
    # The model files must come back from the worker's cache, not from the browser's HTTP
    # cache (which keeps small files only, and let a broken worker pass this check once).
    cached = driver.execute_async_script(
        "const cb = arguments[arguments.length - 1];"
        "caches.open('pocket-tts-files-v1').then((c) => c.keys())"
        ".then((k) => cb(k.map((r) => new URL(r.url).pathname)), (e) => cb(['ERR ' + e]));")
    for name in ("weights", "tokenizer", "config"):
        if "/" + model[name] not in cached:
            raise CheckFailed(f"the service worker did not cache {model[name]}: {cached}")
    ok(f"the service worker cached the model files ({len(cached)} files)")
    httpd.shutdown()
    httpd.server_close()
    driver.get(url)
    wait_ready(driver, args.timeout)
    with open(args.reference, "rb") as f:
        raw = f.read()
    ref = struct.unpack(f"<{len(raw) // 4}f", raw)
    speak(driver, args.text, args.timeout)
    got = samples(driver)
    err = max((abs(a - b) for a, b in zip(got, ref)), default=float("inf"))
    if len(got) != len(ref) or not err <= TOLERANCE:
        raise CheckFailed(f"offline: {len(got)} samples (native {len(ref)}), max |browser - native| = {err:.3g}")
    ok(f"offline (server stopped): the page reloaded, loaded the model and spoke the same audio (max diff {err:.3g})")


def measure(driver, base, model, args):
    wasm = os.path.join(args.dist, "pkg", "pocket_tts_wasm_bg.wasm")
    with open(wasm, "rb") as f:
        data = f.read()
    size = {"wasm_bytes": len(data), "wasm_gzip_bytes": len(gzip.compress(data, 9))}
    t0 = time.monotonic()
    open_page(driver, base, **model, quantize="1" if args.quantize else "0", seed="0")
    s = wait_ready(driver, args.timeout)
    ready_s = time.monotonic() - t0
    print(json.dumps({"load_ms": s["loadMs"], "load_parts_ms": s["loadParts"], "voice_ms": s["voiceMs"], "page_to_voice_ready_s": round(ready_s, 2),
                      **size}), flush=True)
    for run in range(args.runs):
        s = speak(driver, args.text, args.timeout)
        seconds = s["n"] / 24000
        mem = driver.execute_script("return performance.memory ? performance.memory.usedJSHeapSize : null")
        print(json.dumps({"run": run, "first_audio_ms": round(s["firstAudioMs"], 1),
                          "generate_ms": round(s["generateMs"], 1), "samples": s["n"],
                          "rtf": round(s["generateMs"] / 1e3 / seconds, 4), "js_heap_bytes": mem,
                          "wasm_memory_bytes": s["wasmMemory"],
                          "first_audio_parts_ms": {k: round(v, 1) for k, v in (s["firstAudioParts"] or {}).items()}}),
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
