"""Construction pipeline: text items -> verified spoken test set in the official layout.

Public API::

    from vocalbench.construct import BuildOptions, build, read_items, perturb_robust
    items = read_items("items.jsonl", lang="en")
    manifest = build(items, "out/en", BuildOptions(seed=0))
    perturb_robust("out/en", seed=0)

See docs/build.md for the item schema, the gates and the review queue.
"""

from __future__ import annotations

from typing import Any

from vocalbench import parts

__all__ = ["BuildError", "BuildOptions", "Item", "build", "finalize", "perturb_robust", "read_items"]


# the built-in data set: the data layer finds it by name and it is built here on first use
parts.register("dataset", "mini", "vocalbench.construct.mini:ensure",
               "the built-in bilingual mini set (synthesised and verified offline on first use)")


def __getattr__(name: str) -> Any:  # lazy: importing the package stays cheap
    if name in ("BuildError", "BuildOptions", "build", "finalize"):
        from vocalbench.construct import pipeline

        return getattr(pipeline, name)
    if name in ("Item", "read_items"):
        from vocalbench.construct import items

        return getattr(items, name)
    if name == "perturb_robust":
        from vocalbench.construct.perturb import perturb_robust

        return perturb_robust
    raise AttributeError(name)
