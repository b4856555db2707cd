"""Metadata search: case-insensitive substring or regex, as TensorBoard's inspector."""

from __future__ import annotations

import pytest

from projector_core.kernels.search import search

VALUES = ["Cat", "concatenate", "dog", "CATALOG", "", "straße", "bird 3"]


def test_substring_is_case_insensitive():
    assert search(VALUES, "cat", regex=False) == [0, 1, 3]
    assert search(VALUES, "CAT", regex=False) == [0, 1, 3]
    assert search(VALUES, "STRASSE", regex=False) == [5]  # Unicode case folding


def test_regex_searches_anywhere_ignoring_case():
    assert search(VALUES, "^cat", regex=True) == [0, 3]
    assert search(VALUES, "g$", regex=True) == [2, 3]
    assert search(VALUES, r"\d", regex=True) == [6]
    assert search(VALUES, "a.*e", regex=True) == [1, 5]


def test_regex_metacharacters_are_literal_in_substring_mode():
    assert search(["a.b", "axb"], "a.b", regex=False) == [0]


def test_blank_query_matches_nothing():
    assert search(VALUES, "", regex=False) == []
    assert search(VALUES, "  ", regex=True) == []


def test_bad_regex_is_a_value_error_naming_the_problem():
    with pytest.raises(ValueError, match=r"invalid regular expression '\(cat'"):
        search(VALUES, "(cat", regex=True)
