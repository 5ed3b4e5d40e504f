"""The generated HTML in a real headless Chromium (Debian package), opened from file://.

Needs ``apt-get install chromium`` and the playwright Python package; never downloads a browser.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vocalbench.report.build import write_report

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
SCREENSHOTS = Path(os.environ.get("VOCALBENCH_SCREENSHOTS", tempfile.gettempdir()))

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason="Debian chromium is not installed (apt-get install -y chromium)")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory, two_runs: tuple[Path, Path]) -> Path:
    from tests_report_helpers import make_evil_run  # noqa: F401  (placeholder never imported)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, args=ARGS, headless=True,
                                                   viewport={"width": 1400, "height": 950})
        pg = ctx.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.errors = errors  # type: ignore[attr-defined]
        yield pg
        ctx.close()
