"""What we keep on disk outside LOGDIR: parsed tensors, finished projections, level-of-detail answers;
written atomically, keyed by one fingerprint."""
