"""Secrets stay out of every stored or displayed text (a leaf module: imports nothing of ours).

:func:`redact` removes the configured key values (the API-key environment variables) from error
text and judge output before it is stored, and from every console line: the command line writes
through :func:`redacted_console` (progress lines, ``error:`` lines, warnings, tables);
:func:`url_credentials` finds credentials inside a URL, which SPECs and base URLs must not carry
(keys come from the environment only), whether given as a flag or an environment variable.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO
from urllib.parse import parse_qsl, urlsplit

KEY_ENV = ("VOCALBENCH_JUDGE_API_KEY", "VOCALBENCH_SYSTEM_API_KEY", "OPENAI_API_KEY")
MASK = "[redacted]"
_MIN_SECRET = 6  # shorter values would mask ordinary words
_URL = re.compile(r"(?:https?|wss?)://[^\s,]+")
_SECRET_PARAM = re.compile(r"key|token|secret|password|passwd|signature|sig|auth", re.IGNORECASE)


def secrets() -> list[str]:
    """The configured key values: the known key variables and any other ``*_API_KEY`` variable."""
    names = set(KEY_ENV) | {k for k in os.environ if k.endswith("_API_KEY")}
    values = {os.environ[k] for k in names if len(os.environ.get(k) or "") >= _MIN_SECRET}
    return sorted(values, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with every configured key value (also as escaped inside JSON) replaced by ``[redacted]``."""
    for value in secrets():
        text = text.replace(value, MASK)
        escaped = json.dumps(value, ensure_ascii=False)[1:-1]
        if escaped != value:
            text = text.replace(escaped, MASK)
    return text


class RedactedStream:
    """A text stream that writes through :func:`redact` (everything else as the stream it wraps)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(redact(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextmanager
def redacted_console() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` written through :func:`redact` while the block runs."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactedStream(saved[0]), RedactedStream(saved[1])  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def url_credentials(url: str) -> str | None:
    """What in ``url`` is a credential (user info, or a key-like query parameter); None when clean."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        return "user name or password"
    secret = [name for name, _ in parse_qsl(parts.query, keep_blank_values=True) if _SECRET_PARAM.search(name)]
    return f"query parameter {secret[0]!r}" if secret else None


def spec_credentials(spec: str) -> str | None:
    """The first credential found in a URL inside ``spec`` (see :func:`url_credentials`)."""
    for url in _URL.findall(spec):
        found = url_credentials(url)
        if found:
            return found
    return None


def env_credentials() -> str | None:
    """A one-line refusal when a base URL from the environment (``OPENAI_BASE_URL``,
    ``VOCALBENCH_SYSTEM_BASE_URL``, any ``*_BASE_URL``) carries credentials; None when all are clean."""
    for name in sorted(k for k in os.environ if k.upper().endswith("BASE_URL")):
        found = url_credentials(os.environ[name])
        if found:
            return f"{name} must not carry credentials ({found}); pass the key in an *_API_KEY variable"
    return None


def system_credentials(spec: str, base_url: str | None) -> str | None:
    """A one-line refusal when a system SPEC or its base URL carries credentials; None when clean."""
    found = spec_credentials(spec)
    if found:
        return f"--system: the URL must not carry credentials ({found}); pass the key in VOCALBENCH_SYSTEM_API_KEY"
    found = url_credentials(base_url) if base_url else None
    if found:
        return f"--system-base-url must not carry credentials ({found}); pass the key in VOCALBENCH_SYSTEM_API_KEY"
    return None
