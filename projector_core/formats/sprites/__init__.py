"""Sprite images: read as TensorBoard writes them, cut into browser-safe atlas pages, written."""
