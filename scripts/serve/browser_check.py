#!/usr/bin/env python3
"""Checks the `serve` web page in headless Chromium (selenium + Debian's chromedriver).

    browser_check.py --url http://127.0.0.1:PORT/ --screenshot out.png

Opens the page, checks the voice picker is filled from the server, speaks a short
sentence and waits until the <audio> element holds the whole WAV (finite duration > 0,
sizes in its header right), checks the console has no errors, optionally speaks with a
voice file chosen in the upload field (--voice-file), then sends an empty text and checks
the page shows the server's own error message; then the text options: the checkboxes
start as the server's flags, "Pauses" sends `markup` (a malformed pause tag is refused
with the server's message naming it, and read as text with the box unticked), and
"numbers … as words" speaks with `normalize` (the server must run with --text-language). Prints each check; exits 0 when
all pass, else prints why and exits 1 (the screenshot is saved either way).
"""

import argparse
import json
import os
import sys
from pathlib import Path
import time
import urllib.error
import urllib.request

from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dev"))
from headless import CheckFailed, ok, start_chromium, wait_for  # noqa: E402

SENTENCE = "Hello from the browser check."
PAGE_IDS = ["text", "voice", "voice-file", "clear-file", "normalize", "markup", "api-key", "speak", "stop",
            "status", "error", "audio", "download"]
BAD_PAUSE = "Hello. [pause 2 weeks] Bye."


def server_detail_for_empty_text(url):
    """The server's own `detail` for POST /tts with an empty text (what the page must show)."""
    boundary = "----browsercheck"
    body = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\n\r\n--{boundary}--\r\n"
    ).encode()
    req = urllib.request.Request(
        url.rstrip("/") + "/tts",
        data=body,
        method="POST",
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            raise CheckFailed(f"POST /tts with an empty text answered {resp.status}, expected an error")
    except urllib.error.HTTPError as e:
        detail = json.loads(e.read().decode()).get("detail")
        if not isinstance(detail, str) or not detail:
            raise CheckFailed(f"POST /tts with an empty text: no detail in the {e.code} answer")
        return e.code, detail


def severe_logs(driver, allow=()):
    """SEVERE browser console entries, minus those containing every string of one `allow` tuple."""
    entries = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    return [e for e in entries if not any(all(s in e["message"] for s in a) for a in allow)]


def state(driver):
    return driver.execute_script(
        """const a = document.getElementById('audio'), d = document.getElementById('download'),
                 e = document.getElementById('error');
           return {duration: a.duration, finite: Number.isFinite(a.duration),
                   status: document.getElementById('status').textContent,
                   error: e.hidden ? '' : e.textContent,
                   download: d.hidden ? '' : d.getAttribute('href'),
                   speakDisabled: document.getElementById('speak').disabled};"""
    )


WAV_SIZES_JS = """
const done = arguments[arguments.length - 1];
fetch(document.getElementById('audio').src).then(r => r.arrayBuffer()).then(buf => {
  const v = new DataView(buf), tag = (at) => String.fromCharCode(...new Uint8Array(buf, at, 4));
  done({length: buf.byteLength, riff: tag(0), wave: tag(8), data: tag(36),
        riffSize: v.getUint32(4, true), dataSize: v.getUint32(40, true), rate: v.getUint32(24, true)});
}).catch(e => done({error: String(e)}));
"""


def run_checks(driver, url, screenshot, timeout, voice_file):
    driver.get(url)
    title = driver.title
    if "Pocket TTS" not in title:
        raise CheckFailed(f"the page title is {title!r}, expected Pocket TTS")
    missing = driver.execute_script(
        "return arguments[0].filter(id => !document.getElementById(id))", PAGE_IDS)
    if missing:
        raise CheckFailed(f"the page has no element with id {', '.join(missing)} (an old build of the page?)")
    ok(f"GET {url}: page {title!r} loaded, with all its controls")

    text = driver.find_element(By.ID, "text")
    prefilled = text.get_property("value")
    if not prefilled.strip() or "DEFAULT_TEXT_PROMPT" in prefilled:
        raise CheckFailed(f"the text box holds {prefilled!r}, expected the server's default text")
    ok(f"text box prefilled with the default text ({prefilled[:40]!r}…)")

    options = wait_for(
        "the voice list (an option marked '(default)')",
        lambda: (
            opts
            if (opts := driver.execute_script(
                "return [...document.getElementById('voice').options].map(o => o.textContent)"))
            and any("(default)" in o for o in opts)
            else None
        ),
        15,
    )
    ok(f"voice picker filled from /v1/audio/voices: {len(options)} option(s) {options[:5]}")

    text.clear()
    text.send_keys(SENTENCE)
    t0 = time.monotonic()
    driver.find_element(By.ID, "speak").click()
    s = wait_for(
        "the <audio> element to hold the generated WAV (finite duration > 0)",
        lambda: (st if (st := state(driver))["error"] or (st["finite"] and st["duration"] > 0) else None),
        timeout,
    )
    if s["error"]:
        raise CheckFailed(f"the page shows an error after Speak: {s['error']!r}")
    ok(f"Speak: <audio> duration {s['duration']:.2f} s after {time.monotonic() - t0:.1f} s; status {s['status']!r}")
    if not s["status"].startswith("Done") or "first audio after" not in s["status"]:
        raise CheckFailed(f"the status should report done and the time to first audio: {s['status']!r}")
    if not s["download"].startswith("blob:"):
        raise CheckFailed(f"the download link is not offered (href {s['download']!r})")
    if s["speakDisabled"]:
        raise CheckFailed("the Speak button is still disabled after the stream ended")
    ok(f"download link offered ({s['download'][:30]}…), Speak enabled again")

    w = driver.execute_async_script(WAV_SIZES_JS)
    if "error" in w:
        raise CheckFailed(f"cannot read the player's WAV: {w['error']}")
    if (w["riff"], w["wave"], w["data"]) != ("RIFF", "WAVE", "data") or w["riffSize"] != w["length"] - 8 \
            or w["dataSize"] != w["length"] - 44:
        raise CheckFailed(f"the player's WAV header is wrong: {w}")
    seconds = w["dataSize"] / 2 / w["rate"]
    if abs(seconds - s["duration"]) > 0.05:
        raise CheckFailed(f"the WAV holds {seconds:.3f} s but <audio> says {s['duration']:.3f} s")
    ok(f"player WAV: {w['length']} bytes, header sizes right, {w['rate']} Hz, {seconds:.2f} s")

    errors = severe_logs(driver)
    if errors:
        raise CheckFailed("console errors: " + "; ".join(e["message"] for e in errors))
    ok("no console errors")

    if voice_file:
        # A voice cloned from a file chosen in the page (sent as voice_wav).
        before = s["download"]
        driver.find_element(By.ID, "voice-file").send_keys(os.path.abspath(voice_file))
        if not driver.find_element(By.ID, "voice").get_property("disabled"):
            raise CheckFailed("the voice picker stays enabled while a voice file is chosen")
        driver.find_element(By.ID, "speak").click()
        s = wait_for(
            "the audio of the uploaded voice",
            lambda: (st if (st := state(driver))["error"] or (st["download"] not in ("", before)
                                                           and st["status"].startswith("Done")) else None),
            timeout,
        )
        if s["error"]:
            raise CheckFailed(f"the page shows an error after Speak with a voice file: {s['error']!r}")
        ok(f"voice file {os.path.basename(voice_file)}: status {s['status']!r}")
        driver.find_element(By.ID, "clear-file").click()
        errors = severe_logs(driver)
        if errors:
            raise CheckFailed("console errors: " + "; ".join(e["message"] for e in errors))

    driver.save_screenshot(screenshot)
    ok(f"screenshot saved to {screenshot}")

    # The error path: an empty text must show the server's own message.
    status, detail = server_detail_for_empty_text(url)
    text.clear()
    driver.find_element(By.ID, "speak").click()
    s = wait_for("an error message after Speak with an empty text", lambda: (st if (st := state(driver))["error"] else None), 30)
    if detail not in s["error"]:
        raise CheckFailed(f"empty text: the page shows {s['error']!r}, not the server's {detail!r}")
    ok(f"empty text: the page shows the server's {status} detail {detail!r}")
    # Chromium logs the failed request itself ("… status of 400"): that one is expected.
    errors = severe_logs(driver, allow=[("/tts", str(status))])
    if errors:
        raise CheckFailed("console errors on the error path: " + "; ".join(e["message"] for e in errors))
    ok("no other console errors")

    check_text_options(driver, timeout)


def speak_and_wait(driver, text_value, timeout):
    """Types `text_value`, clicks Speak and returns the state once it is done or failed."""
    before = state(driver)["download"]
    text = driver.find_element(By.ID, "text")
    text.clear()
    text.send_keys(text_value)
    driver.find_element(By.ID, "speak").click()
    return wait_for(
        f"the page to finish speaking {text_value!r}",
        lambda: (st if (st := state(driver))["error"] or (st["download"] not in ("", before)
                                                       and st["status"].startswith("Done")) else None),
        timeout,
    )


def check_text_options(driver, timeout):
    """The normalize and markup checkboxes: their start state and what they send."""
    box = {i: driver.find_element(By.ID, i) for i in ("normalize", "markup")}
    start = {i: (b.is_selected(), b.is_enabled()) for i, b in box.items()}
    if start != {"normalize": (False, True), "markup": (False, True)}:
        raise CheckFailed(f"the text options should start enabled and unticked (server flags), got {start}")
    ok("text options: both boxes enabled and unticked, as the server's flags")

    box["markup"].click()
    s = speak_and_wait(driver, BAD_PAUSE, timeout)
    if "pause markup" not in s["error"] or "[pause 2 weeks]" not in s["error"]:
        raise CheckFailed(f"with Pauses ticked, a malformed tag should be refused by name; the page shows {s}")
    ok(f"Pauses ticked: the malformed tag is refused ({s['error'][:60]!r}…)")
    box["markup"].click()
    s = speak_and_wait(driver, BAD_PAUSE, timeout)
    if s["error"]:
        raise CheckFailed(f"with Pauses unticked the tag is text, yet the page shows {s['error']!r}")
    ok(f"Pauses unticked: the same text is spoken ({s['status']!r})")

    box["normalize"].click()
    s = speak_and_wait(driver, "I have 3 cats and $5.", timeout)
    if s["error"]:
        raise CheckFailed(f"with numbers as words ticked, the page shows {s['error']!r}")
    ok(f"numbers as words ticked: spoken ({s['status']!r})")
    errors = severe_logs(driver, allow=[("/tts", "400")])
    if errors:
        raise CheckFailed("console errors in the text options: " + "; ".join(e["message"] for e in errors))
    ok("no other console errors")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True, help="the server's page, e.g. http://127.0.0.1:8000/")
    ap.add_argument("--screenshot", required=True, help="where to save a PNG of the page")
    ap.add_argument("--voice-file", help="also clone a voice from this audio file through the page's upload")
    ap.add_argument("--timeout", type=float, default=60, help="seconds to wait for the audio (default 60)")
    args = ap.parse_args()

    driver = start_chromium()
    if driver is None:
        return 1
    driver.set_page_load_timeout(30)
    try:
        run_checks(driver, args.url, args.screenshot, args.timeout, args.voice_file)
        print("PASS: the web page works in headless Chromium")
        return 0
    except Exception as e:  # noqa: BLE001 - any failure is reported, with a screenshot
        reason = e.msg if isinstance(e, WebDriverException) else f"{type(e).__name__}: {e}" \
            if not isinstance(e, CheckFailed) else str(e)
        print(f"FAIL: {reason}", file=sys.stderr)
        try:
            page = state(driver)
            print(f"page status {page['status']!r}, page error {page['error']!r}", file=sys.stderr)
        except WebDriverException:
            pass
        try:
            driver.save_screenshot(args.screenshot)
            print(f"screenshot of the failure saved to {args.screenshot}", file=sys.stderr)
        except WebDriverException:
            pass
        return 1
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
