"""Secrets kept out of what toolproof prints and stores, by one function: `redacted`."""

from __future__ import annotations

import re

REDACTED = "<redacted>"

_CREDENTIALS = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^\s/?#]*@")
"""`scheme://user:password@`: greedy up to the host's @, so an @ in the password is inside."""


def redacted(text: str) -> str:
    """`text` with the credentials of every URL in it (`user:password@`) replaced by
    REDACTED: a store's or a base URL's password reaches no printed line, no report and no
    stored record. A URL itself is text too: `redacted(url)`."""
    return _CREDENTIALS.sub(lambda found: f"{found['scheme']}{REDACTED}@", text)
