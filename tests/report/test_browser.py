"""The generated HTML in a real headless Chromium (Debian package), opened from file://.

Needs ``apt-get install chromium`` and the playwright Python package; never downloads a browser.
Screenshots go to $VOCALBENCH_SCREENSHOTS (default: the temp folder).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vocalbench.report.site import write_report

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
SCREENSHOTS = Path(os.environ.get("VOCALBENCH_SCREENSHOTS", tempfile.gettempdir()))
EVIL_SYSTEM = 'evil<script>window.__pwned=2</script><img src=x onerror="window.__pwned=3">'

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason="Debian chromium is not installed (apt-get install -y chromium)")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory, two_runs: tuple[Path, Path], run_factory: Any) -> Path:
    base = tmp_path_factory.mktemp("browser")
    evil = run_factory(base / "evil", system=EVIL_SYSTEM, acc=0.3, seed=9, subsets=("knowledge",))
    out = base / "report"
    write_report([*two_runs, evil], out)
    return out


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    profile = tmp_path_factory.mktemp("chromium-profile")  # a fresh user-data-dir
    with sync_api.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, args=ARGS, headless=True,
                                                   viewport={"width": 1400, "height": 950})
        pg = ctx.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.js_errors = errors  # type: ignore[attr-defined]
        yield pg
        ctx.close()


def _column(page: Any, table: str, dim: str) -> list[str]:
    return page.eval_on_selector_all(f"{table} tbody tr td[data-dim='{dim}']", "tds => tds.map(t => t.dataset.sort)")


def test_leaderboard_renders_sorts_and_escapes(page: Any, report: Path) -> None:
    page.goto((report / "leaderboard.html").as_uri())
    rows = page.eval_on_selector_all("#board-en tbody tr", "rs => rs.map(r => r.cells[0].innerText)")
    assert len(rows) == 3 and any("scripted:alpha" in r for r in rows)
    assert any("<script>window.__pwned=2</script>" in r for r in rows)  # the name shown as text
    assert page.evaluate("window.__pwned") is None
    alpha = page.locator("#board-en tbody tr", has_text="scripted:alpha")
    assert alpha.locator("td[data-dim='knowledge'] .val").inner_text() == "77.50"
    assert alpha.locator(".badge").count() == 1
    header = page.locator("#board-en thead th[data-dim='knowledge']")
    header.click()
    asc = [float(x) for x in _column(page, "#board-en", "knowledge")]
    assert asc == sorted(asc) and header.get_attribute("aria-sort") == "ascending"
    header.click()
    desc = [float(x) for x in _column(page, "#board-en", "knowledge")]
    assert desc == sorted(desc, reverse=True)
    first = page.eval_on_selector("#board-en tbody tr", "r => r.cells[0].innerText")
    assert "scripted:alpha" in first
    widths = page.eval_on_selector_all("img.plot", "imgs => imgs.map(i => i.naturalWidth)")
    assert widths and all(w > 0 for w in widths)
    page.screenshot(path=str(SCREENSHOTS / "vocalbench_leaderboard.png"), full_page=True)
    assert not page.js_errors


def test_leaderboard_shows_judge_validity(page: Any, report: Path) -> None:
    page.goto((report / "leaderboard.html").as_uri())
    section = page.locator("#section-en .judge-validity")
    assert section.count() >= 2
    alpha = section.filter(has_text="scripted:alpha")
    assert alpha.locator("ul.warn li").first.inner_text().startswith("creativity: not measured by this judge")
    assert alpha.locator("tr.bad td").first.inner_text() == "creativity_en"
    assert alpha.locator("tr.ok td").first.inner_text() == "safety_en"
    cells = alpha.locator("tr.ok td").all_inner_texts()
    assert cells[2] == "κ 0.71 [0.60, 0.80], bias 3.0 pt" and cells[4] == "llama-omni 0.65 (n 60), authored 0.75 (n 80)"
    assert cells[3] == "passed: padding -1.40 [-4.00, 1.20], off_topic +6.40 [2.90, 10.00]"
    assert alpha.locator("tr.bad td").all_inner_texts()[3] == "not run"
    assert alpha.locator(".badge.warn").count() == 0
    cascade = section.filter(has_text="offline-cascade")
    assert "same model as the system under test" in cascade.locator(".badge.warn").inner_text()
    section.first.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "vocalbench_judge_validity.png"), full_page=True)


def test_viewer_filters_audio_and_untrusted_text(page: Any, report: Path) -> None:
    page.goto((report / "viewer.html").as_uri())
    total = page.locator("#samples tbody tr").count()
    assert total > 100
    page.select_option("#f-subset", "single_round")
    assert page.locator("#samples tbody tr").count() == 20
    page.fill("#f-min", "5")
    fives = page.locator("#samples tbody tr").count()
    assert 0 < fives < 20
    page.fill("#f-min", "")
    page.select_option("#f-subset", "")
    page.select_option("#f-status", "system_error")
    ids = page.eval_on_selector_all("#samples tbody tr", "rs => rs.map(r => r.cells[1].textContent)")
    assert ids == ["safety-000"]
    assert "timeout" in page.locator("#detail").inner_text()
    page.select_option("#f-status", "")
    page.select_option("#f-subset", "single_round")
    page.locator("#samples tbody tr", has_text="single_round-000").click()
    detail = page.locator("#detail")
    text = detail.inner_text()
    assert '<script>window.__pwned=1</script>' in text and '<img src=x onerror="window.__pwned=1">' in text
    assert detail.locator("img").count() == 0 and detail.locator("script").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert detail.locator(".runcol").count() == 2  # the two English runs side by side
    page.wait_for_function("() => [...document.querySelectorAll('#detail audio')].every(a => a.readyState >= 1)",
                           timeout=15000)
    states = page.eval_on_selector_all("#detail audio", "as => as.map(a => [a.readyState, a.duration])")
    assert len(states) == 3 and all(s >= 1 and d > 0.5 for s, d in states)  # query + two replies
    page.screenshot(path=str(SCREENSHOTS / "vocalbench_viewer.png"))
    assert not page.js_errors


def test_viewer_ab_pair_and_disagreements(page: Any, report: Path) -> None:
    import json
    import re

    html = (report / "viewer.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="vb-data">(.*?)</script>', html, re.S).group(1))

    def outcome(r: dict) -> str:
        if r["system_error"]:
            return "error"
        return ("unscored" if r["unscored"] else "none") if r["main"] is None else f"{r['main']:.6f}"

    both = [s for s in data["samples"] if s["runs"][0] and s["runs"][1]]
    differ = [s for s in both if outcome(s["runs"][0]) != outcome(s["runs"][1])]
    assert 0 < len(differ) < len(both)
    page.goto((report / "viewer.html").as_uri())
    page.select_option("#f-a", "0")
    page.select_option("#f-b", "1")
    assert page.locator("#samples tbody tr").count() == min(300, len(both))
    page.check("#f-disagree")
    assert page.locator("#samples tbody tr").count() == min(300, len(differ))
    assert page.locator("#ab-count").inner_text() == f"{len(differ)} items with both replies that disagree"
    page.select_option("#f-subset", "single_round")  # judged, with reply audio: both sides show both
    target = next(s for s in differ if s["subset"] == "single_round")
    page.locator("#samples tbody tr", has_text=target["id"]).click()
    cols = page.locator("#detail .runcol")
    assert cols.count() == 2
    assert cols.nth(0).get_attribute("data-ab") == "A" and cols.nth(1).get_attribute("data-ab") == "B"
    assert cols.nth(0).locator("h4").inner_text().startswith("A: scripted:alpha")
    assert cols.nth(0).locator(".judge-raw").count() >= 1 and cols.nth(1).locator(".judge-raw").count() >= 1
    assert cols.nth(0).locator("audio").count() == 1 and cols.nth(1).locator("audio").count() == 1
    page.screenshot(path=str(SCREENSHOTS / "vocalbench_viewer_ab.png"))
    page.goto((report / "leaderboard.html").as_uri())
    chart = page.locator("img[alt^='Quality vs latency']")
    assert chart.count() == 1 and chart.first.evaluate("i => i.complete && i.naturalWidth > 0")
    page.screenshot(path=str(SCREENSHOTS / "vocalbench_quality_latency.png"), full_page=True)
    assert not page.js_errors


def test_published_rows_and_the_dimension_plot(page: Any, two_runs: tuple[Path, Path],
                                               tmp_path_factory: pytest.TempPathFactory) -> None:
    """One run among the published leaderboard: its row marked (‡: not comparable), the plot drawn."""
    out = tmp_path_factory.mktemp("published") / "report"
    write_report([two_runs[0]], out)
    page.goto((out / "leaderboard.html").as_uri())
    block = page.locator("#published-en")
    assert block.is_visible()
    rows = block.locator("table.published tbody tr")
    assert rows.count() == 26
    mine = block.locator("tr.mine")
    assert mine.count() == 1 and "scripted:alpha" in mine.inner_text() and "‡" in mine.inner_text()
    assert "VocalNet2-8B" in block.inner_text() and "no interval" in block.inner_text()
    plot = block.locator("figure.published-plot img")
    assert plot.evaluate("i => i.complete && i.naturalWidth > 0")
    block.screenshot(path=str(SCREENSHOTS / "vocalbench_published.png"))
    assert not page.js_errors
