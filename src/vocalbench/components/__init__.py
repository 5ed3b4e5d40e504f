"""components layer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def register_all(register: Callable[..., Any]) -> None:
    """Register this layer's parts (lazy: targets are import strings)."""
