"""Controls that do what they look like (issue 28, item 16): the toolbar's 2D/3D badge is a
button that switches dimensions, and the neighbours field shows the number used, refusing 0
where it can be seen."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

IRIS_3D = {"run": "iris", "embedding": "iris", "pca": {"is3d": True}}


def test_the_mode_badge_switches_2d_and_3d(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), IRIS_3D)
    badge = projector.by("mode-badge")
    assert badge.evaluate("b => b.tagName") == "BUTTON"
    assert badge.inner_text() == "3D" and badge.get_attribute("aria-pressed") == "true"
    badge.click()
    projector.page.wait_for_function("window.__projector.state().pca.is3d === false")
    projector.page.wait_for_function("!window.__projector.app.plot.threeD")
    assert badge.inner_text() == "2D" and badge.get_attribute("aria-pressed") == "false"
    assert not projector.by("pca-3d").is_checked()
    badge.click()
    projector.page.wait_for_function("window.__projector.state().pca.is3d === true")
    # A custom projection is always 2D: the badge says so and is not a live button.
    projector.by("tab-custom").click()
    projector.page.wait_for_function("window.__projector.state().projection === 'custom'")
    assert badge.inner_text() == "2D" and badge.is_disabled()


def test_the_neighbours_field_shows_what_is_used_and_refuses_zero(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), IRIS_3D)
    field = projector.by("neighbors-k")
    assert field.input_value() == "100"
    field.fill("0")
    field.press("Enter")
    note = projector.by("neighbors-k-note")
    assert note.is_visible() and "from 1 to" in note.inner_text()
    assert field.input_value() == "100"
    assert field.get_attribute("aria-invalid") == "true"
    assert projector.state()["neighbors"]["k"] == 100
    # More than the data allows: the field shows the k used, and says why.
    field.fill("5000")
    field.press("Enter")
    projector.page.wait_for_function("window.__projector.state().neighbors.k !== 100")
    used = projector.state()["neighbors"]["k"]
    assert used < 150  # iris has 150 points: at most the 149 others
    assert field.input_value() == str(used)
    assert f"at most {used}" in note.inner_text()
    assert field.get_attribute("aria-invalid") == "false"
    projector.by("plot").click()  # focus leaves the field: it still shows the k used
    assert field.input_value() == str(used)


def test_a_k_from_the_url_shows_as_used(serve, sample_logdir, projector):
    """A shared link asking for 5000 neighbours of a 150-point set shows the 149 used."""
    projector.open(serve(sample_logdir), {**IRIS_3D, "neighbors": {"k": 5000, "metric": "cosine"}})
    assert projector.by("neighbors-k").input_value() == "149"
    projector.page.evaluate("window.__projector.app.highlight.selectPoint(3)")
    projector.page.wait_for_function("window.__projector.app.highlight.neighbors.length > 0")
    assert projector.page.evaluate("window.__projector.app.highlight.neighbors.length") == 149
