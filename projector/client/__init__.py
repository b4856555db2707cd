"""A Python client for a running server (``from projector import Client``): every route as a method."""
