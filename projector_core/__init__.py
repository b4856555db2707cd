"""Projector: embedding projector service. Data layer, formats and compute kernels (no web code)."""
