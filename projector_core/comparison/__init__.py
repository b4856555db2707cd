"""Comparing two embeddings of the same rows: the pairs a LOGDIR offers and the neighbour answers."""
