"""Readers for every input format (configs, tensors, metadata, bookmarks, checkpoints, sprite
images in ``sprites/``) and the writers that make a LOGDIR of them."""
