"""Projector's core: formats, data, kernels, projections, tiles and the service every door asks
(no web code; the layers are import-linter contracts in pyproject.toml)."""
