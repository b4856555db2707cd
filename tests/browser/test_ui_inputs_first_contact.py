"""What a first-time user meets on inputs without the usual extras (the audit from a user's seat)."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.browser


def test_search_without_metadata_says_there_is_nothing_to_search(serve, tmp_path, projector):
    """A plain .npy has no metadata: the search field says so and takes no typing, instead of
    an empty column box and a field where every query silently finds nothing."""
    np.save(tmp_path / "vectors.npy", np.random.default_rng(0).normal(size=(40, 5)).astype("f4"))
    projector.open(serve(tmp_path / "vectors.npy"))
    projector.wait_settled()
    search = projector.by("search-input")
    assert search.is_disabled() and projector.by("search-column").is_disabled()
    assert search.get_attribute("placeholder") == "No metadata to search"
    assert projector.drawn_pixels() > 50
