"""Full-duplex interaction tests for realtime systems (docs/duplex.md).

scenarios: the project's scripts built into timed spoken inputs; replay: real-time streaming of a
scenario to a realtime endpoint with playback simulated on the input timeline; metrics: the
Full-Duplex-Bench v1 measures as pure functions; score: a replayed scenario's words, VAD segments
and metrics, and the intervals over scenarios; run: the ``--subsets duplex`` run.
"""
