"""What the headless-Chromium checks share (scripts/serve/browser_check.py,
scripts/wasm/browser_test.py): Debian's Chromium and chromedriver, the failure type, the
"ok" line and polling with a deadline."""

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
