"""Readers for every input format: configs, tensors, metadata, sprites, bookmarks."""
