"""The duplex report in a real headless Chromium: the table with intervals and a playable timeline.

A run against the scripted realtime double (tones, energy turn detection) is scored and reported;
the page is opened from file://, its timelines must be drawn, and "play" must play input and
output together. The screenshot goes to $VOCALBENCH_SCREENSHOTS (default: the temp folder).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

from vocalbench.audio import to_wav_bytes
from vocalbench.components.vad import TurnSettings
from vocalbench.duplex.run import replay_all, score_all, write_result
from vocalbench.duplex.scenarios import MANIFEST, Part, Scenario, write_manifest
from vocalbench.report.duplex import write_duplex_report
from vocalbench.run_config import RunConfig
from vocalbench.systems import resolve
from vocalbench.systems.options import SystemOptions
from vocalbench.systems.scripted import ScriptedSystem
from vocalbench.systems.serve import SystemServer

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--autoplay-policy=no-user-gesture-required"]
SCREENSHOTS = Path(os.environ.get("VOCALBENCH_SCREENSHOTS", tempfile.gettempdir()))
RATE = 24000

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason="Debian chromium is not installed (apt-get install -y chromium)")


def _scenario(tmp: Path, sid: str, kind: str, bursts: list[tuple[float, float]], seconds: float) -> Scenario:
    x = np.zeros(int(seconds * RATE), dtype=np.float32)
    for a, b in bursts:
        t = np.arange(int((b - a) * RATE)) / RATE
        x[int(a * RATE):int(a * RATE) + t.size] = 0.3 * np.sin(2 * np.pi * 300 * t)
    path = tmp / f"{sid}.wav"
    path.write_bytes(to_wav_bytes(x, RATE))
    parts = [Part(f"part {i}", a, b, "tone", 0.0, True) for i, (a, b) in enumerate(bursts)]
    span = bursts[1] if kind == "interruption" else None
    return Scenario(sid, kind, "en", str(path), seconds, parts, bursts[0][1], span)  # type: ignore[arg-type]


async def test_duplex_report_timeline_plays(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.async_api", reason="playwright is not installed")
    script = tmp_path / "double.jsonl"
    script.write_text(json.dumps({"id": "*", "text": "a reply", "audio": {"tone": 520, "seconds": 2.0},
                                  "first_chunk_delay": 0.2, "chunk_seconds": 0.1, "chunk_interval": 0.1}) + "\n")
    server = SystemServer(ScriptedSystem(script), turn_detection="energy")
    port = await server.start(0)
    scenarios = [_scenario(tmp_path, "smooth-001", "smooth", [(0.48, 1.44)], 5.0),
                 _scenario(tmp_path, "interruption-001", "interruption", [(0.48, 1.44), (2.88, 3.36)], 6.0)]
    run = tmp_path / "run"
    (run / "duplex").mkdir(parents=True)
    write_manifest(run / "duplex" / MANIFEST, scenarios)
    system = resolve(f"realtime:double@http://127.0.0.1:{port}/v1", SystemOptions(max_reply_tokens=64))
    cfg = RunConfig(system="realtime:double", lang="en", concurrency=2, quiet=True)
    try:
        await replay_all(system, scenarios, run, TurnSettings(vad="energy", silence_duration_ms=480), 40, 1, cfg)
    finally:
        await server.stop()
    result = score_all(scenarios, run, 1, "en", quiet=True)
    write_result(run, {"system": "realtime:double", "lang": "en", "set": "test", "repeats": 1,
                       "turn_detection": {"type": "server_vad"}, "kinds": result})
    page_path = write_duplex_report([run], tmp_path / "report")

    async with sync_api.async_playwright() as p:
        ctx = await p.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM,
                                                         args=ARGS, headless=True, viewport={"width": 1300, "height": 900})
        page = await ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        await page.goto(page_path.as_uri())
        rows = await page.eval_on_selector_all(".duplex-table tbody tr", "rs => rs.map(r => r.innerText)")
        assert any("Smooth turn-taking" in r and "take-over rate" in r for r in rows)
        assert any("User interruption" in r and "time to stop" in r for r in rows)
        assert await page.locator(".tl").count() == 2
        # the interruption timeline is drawn: output (orange) pixels where the reply played, a barge-in marker
        drawn = await page.evaluate("""() => {
            const cv = document.querySelector(".tl[data-id='interruption-001'] canvas");
            const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
            let orange = 0, red = 0;
            for (let i = 0; i < d.length; i += 4) {
                if (d[i] === 0xc2 && d[i + 1] === 0x57) orange++;
                if (d[i] === 0xb3 && d[i + 1] === 0x26) red++;
            }
            return {orange, red};
        }""")
        assert drawn["orange"] > 100 and drawn["red"] > 10
        tl = page.locator(".tl[data-id='interruption-001']")
        await tl.locator("button.play").click()
        await page.wait_for_timeout(800)
        times = await tl.evaluate("el => [el.querySelector('audio.in').currentTime, el.querySelector('audio.out').currentTime]")
        assert times[0] > 0.2 and abs(times[0] - times[1]) < 0.1  # both play, in step
        await page.screenshot(path=str(SCREENSHOTS / "duplex_report.png"), full_page=True)
        assert not errors, errors
        await ctx.close()
