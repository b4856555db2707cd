"""The job engine: bounded concurrency, progress and phases, streamed frames, pause, cancel, and
stopping jobs nobody follows."""
