"""Reports: leaderboards, plots, the per-sample viewer, paired comparisons, judge validation.

- ``site.write_report``: ``vocalbench report`` (leaderboard.md via ``leaderboard.write_markdown``,
  leaderboard.html, plots/, viewer.html, audio/)
- ``compare.compare_runs``: paired, clustered bootstrap of two runs (``vocalbench compare``)
- ``repeats``: the pooled figures of repeated runs (``run --repeats N``)
- ``agreement``: judge-human and judge-judge statistics (``vocalbench agreement``)
- ``runs``: the run folders a report reads (summary, config, store); every statistic comes from
  scoring's statistics graph (:mod:`vocalbench.scoring.graph`)
"""
