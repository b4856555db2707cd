"""Waits in the page under the app's Content-Security-Policy, for every test that drives one.

Playwright polls a ``wait_for_function`` expression string with ``eval`` inside the page, which
the app's policy refuses (no 'unsafe-eval'); a function string is handed to the page whole. The
autouse fixture below turns every expression into a function string, so each test runs under
the policy a user's browser enforces. A conftest imports the fixture to apply it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Frame, Page


def as_function(expression: str) -> str:
    """A ``wait_for_function`` expression as a function string. Playwright polls an expression
    string with ``eval`` inside the page, which the app's Content-Security-Policy refuses (no
    'unsafe-eval'), and hands a function to the page whole; a function string stays one,
    called with ``arg``. So every test runs under the policy a user's browser enforces."""
    return (f"(arg) => {{ const found = ({expression}\n); "
            "return typeof found === 'function' ? found(arg) : found; }")


@pytest.fixture(scope="session", autouse=True)
def waits_under_the_page_policy() -> Iterator[None]:
    originals = {kind: kind.wait_for_function for kind in (Page, Frame)}
    for kind, original in originals.items():
        def wait_for_function(self, expression: str, *, original=original, **options: Any):
            return original(self, as_function(expression), **options)

        kind.wait_for_function = wait_for_function  # type: ignore[method-assign]
    yield
    for kind, original in originals.items():
        kind.wait_for_function = original  # type: ignore[method-assign]
