"""What the headless-Chromium checks share (scripts/serve/browser_check.py,
scripts/wasm/browser_test.py): Debian's Chromium and chromedriver, the failure type, the
"ok" line, polling with a deadline, and starting the browser."""

from __future__ import annotations

import time

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


class CheckFailed(Exception):
    """A check did not hold: the message says which and why."""


def ok(msg: str) -> None:
    print(f"ok   {msg}", flush=True)


def wait_for(what, predicate, timeout, poll=0.2):
    """Polls `predicate` every `poll` s until it returns a truthy value (returned); raises
    CheckFailed naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise CheckFailed(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(poll)


def start_chromium():
    """Headless Chromium through chromedriver (explicit paths: selenium neither looks for
    nor downloads a driver), with autoplay allowed and the browser console logged.
    Returns the driver, or None after printing a FAIL line naming the driver."""
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--autoplay-policy=no-user-gesture-required",
                 "--disable-dev-shm-usage", "--window-size=900,1000"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    except WebDriverException as e:
        import sys

        print(f"FAIL: cannot start headless Chromium via {CHROMEDRIVER}: {e.msg}", file=sys.stderr)
        return None
