"""Scoring layer: subset scorers, the engine, aggregation, the overall score and summary.json.

What each subset measures is part of its declaration (:mod:`vocalbench.catalog`), next to its
scorer in :mod:`vocalbench.scoring.subsets`; ``vocalbench list subsets`` reads it there.
"""
