"""How a system fails: :class:`SystemFailure` and the classification of any adapter exception into
(error type, retryable, retry-after), which the runner's retry loop and the serve endpoint read."""

from __future__ import annotations


class SystemFailure(Exception):
    """An adapter-level failure with a stable error type (e.g. ``http_500``, ``broken_stream``)."""

    def __init__(self, type: str, message: str = "", retryable: bool = False, retry_after: float | None = None) -> None:
        super().__init__(f"{type}: {message}" if message else type)
        self.type = type
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after


def classify(exc: BaseException) -> tuple[str, bool, float | None]:
    """(error type, retryable, retry-after seconds) of an exception raised by an adapter."""
    if isinstance(exc, SystemFailure):
        return exc.type, exc.retryable, exc.retry_after
    if isinstance(exc, TimeoutError):
        return "timeout", True, None
    from vocalbench.audio import AudioError

    if isinstance(exc, AudioError):  # the query audio itself is unusable: retrying cannot help
        return "bad_query_audio", False, None
    try:
        import openai
    except ImportError:  # the openai SDK is a core dependency; guard only for odd installs
        openai = None  # type: ignore[assignment]
    if openai is not None:
        if isinstance(exc, openai.APITimeoutError):
            return "timeout", True, None
        if isinstance(exc, openai.APIConnectionError):
            return "connection", True, None
        if isinstance(exc, openai.APIStatusError):
            code = exc.status_code
            ra = retry_after(exc.response.headers.get("retry-after") if exc.response is not None else None)
            return f"http_{code}", code == 429 or code >= 500 or code == 408, ra
        if isinstance(exc, openai.APIError):  # an error event inside an SSE stream
            return "stream_error", True, None
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return "timeout", True, None
    if isinstance(exc, httpx.HTTPStatusError):
        code = exc.response.status_code
        return f"http_{code}", code == 429 or code >= 500, retry_after(exc.response.headers.get("retry-after"))
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        return "broken_stream", True, None
    if isinstance(exc, httpx.TransportError):
        return "connection", True, None
    import aiohttp

    if isinstance(exc, aiohttp.ClientResponseError):
        return f"http_{exc.status}", exc.status == 429 or exc.status >= 500, None
    if isinstance(exc, (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError)):
        return "broken_stream", True, None
    if isinstance(exc, aiohttp.ClientConnectionError):
        return "connection", True, None
    from websockets import exceptions as wsx

    if isinstance(exc, wsx.ConnectionClosed):
        return "broken_stream", True, None
    if isinstance(exc, wsx.InvalidStatus):
        code = exc.response.status_code
        return f"http_{code}", code == 429 or code >= 500, None
    if isinstance(exc, wsx.WebSocketException):
        return "websocket", True, None
    if isinstance(exc, (ConnectionError, OSError)):
        return "connection", True, None
    return type(exc).__name__, False, None


def retry_after(value: str | None) -> float | None:
    """Seconds of a ``Retry-After`` header value (None when absent or not a number)."""
    try:
        return None if value is None else max(0.0, float(value))
    except ValueError:
        return None
