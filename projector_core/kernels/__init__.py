"""Compute kernels: projections and neighbours over numpy or a GPU array namespace."""
