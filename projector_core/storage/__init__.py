"""What we keep outside LOGDIR: parsed tensors and finished projections on disk; every file
written whole (``atomic_write``), every in-memory cache bounded (``recent``), every key from
one fingerprint."""
