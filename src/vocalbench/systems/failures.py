"""How a system fails: :class:`SystemFailure` and the classification of any adapter exception into
(error type, retryable, retry-after), which the retry policy (:mod:`vocalbench.retry`) and the serve
endpoint read."""

from __future__ import annotations

from vocalbench import retry
from vocalbench.retry import Failure


class SystemFailure(Exception):
    """An adapter-level failure with a stable error type (e.g. ``http_500``, ``broken_stream``)."""

    def __init__(self, type: str, message: str = "", retryable: bool = False, retry_after: float | None = None) -> None:
        super().__init__(f"{type}: {message}" if message else type)
        self.type = type
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after


def classify(exc: BaseException) -> Failure:
    """(error type, retryable, retry-after seconds) of an exception raised by an adapter: its own
    :class:`SystemFailure`, unusable query audio (permanent), else :func:`vocalbench.retry.classify`."""
    if isinstance(exc, SystemFailure):
        return Failure(exc.type, exc.retryable, exc.retry_after)
    from vocalbench.audio import AudioError

    if isinstance(exc, AudioError):  # the query audio itself is unusable: retrying cannot help
        return Failure("bad_query_audio", False)
    return retry.classify(exc)
