"""Reports: leaderboards, plots, the per-sample viewer, paired comparisons, judge validation.

- ``build.write_report``: ``vocalbench report`` (leaderboard.md via ``leaderboard.write_markdown``,
  leaderboard.html, plots/, viewer.html, audio/)
- ``compare.compare_runs``: paired, clustered bootstrap of two runs (``vocalbench compare``)
- ``agreement``: judge-human and judge-judge statistics (``vocalbench agreement``)
- ``stats`` / ``measures``: clustered bootstrap and the metrics recomputed from item scores
"""
