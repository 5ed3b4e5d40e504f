"""The example plug-in package (examples/vocalbench-echo) as an installed distribution, and a broken one.

CI installs the example (``.ci/run``: ``pip install -e examples/vocalbench-echo``); where it is not
installed, it is installed here into a temporary folder (``pip --target``) that the command lines
under test get on their ``PYTHONPATH``, so the shared environment is never changed.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys

import pytest
from plugin_env import EXAMPLE


@pytest.fixture(scope="session")
def echo_site(tmp_path_factory: pytest.TempPathFactory) -> str | None:
    """A folder holding the installed example (None: it is installed in this environment already)."""
    try:
        importlib.metadata.distribution("vocalbench-echo")
        return None
    except importlib.metadata.PackageNotFoundError:
        pass
    target = tmp_path_factory.mktemp("echo-site")
    build = tmp_path_factory.mktemp("echo-build")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(EXAMPLE)], check=True, capture_output=True, text=True,
                   cwd=build, env={**os.environ, "PIP_NO_INDEX": "1"})
    return str(target)


@pytest.fixture(scope="session")
def broken_site(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An installed distribution ``broken-plugin`` whose entry points name a missing module, a module
    that raises on import and a component name without its kind; beside it ``good-subsets``, whose
    subset module declares ``recall_extra``."""
    site = tmp_path_factory.mktemp("broken-site")
    (site / "exploding_plugin.py").write_text('raise RuntimeError("plug-in bug")\n', encoding="utf-8")
    info = site / "broken_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[vocalbench.systems]\nghost = no_such_module_xyz:factory\nexplodes = exploding_plugin:factory\n\n"
        "[vocalbench.components]\nbad-name = exploding_plugin:factory\n\n"
        "[vocalbench.subsets]\nboom = exploding_plugin\n", encoding="utf-8")
    (site / "extra_subsets.py").write_text(
        "from vocalbench.catalog import SubsetSpec, declare\n"
        "declare(SubsetSpec('recall_extra', {'en': 12}, 'accuracy', 'a subset from a plug-in', "
        "lambda subset, lang, protocol: None, order=190))\n", encoding="utf-8")
    good = site / "good_subsets-0.2.dist-info"
    good.mkdir()
    (good / "METADATA").write_text("Metadata-Version: 2.1\nName: good-subsets\nVersion: 0.2\n", encoding="utf-8")
    (good / "entry_points.txt").write_text("[vocalbench.subsets]\nrecall = extra_subsets\n", encoding="utf-8")
    return str(site)

