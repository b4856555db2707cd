"""The job engine: bounded concurrency, progress and phases, streamed frames, pause, cancel, and
stopping jobs nobody follows; what a computation reports to it (``reporter.py``)."""
