"""The Compare page opens on something comparable and keeps its panels true to the shown
pair; the projector's Compare link carries the view there and back (issue 28)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from projector_core.formats.writer import add_embedding

pytestmark = pytest.mark.browser


def wait_shown(page, a: str, b: str) -> None:
    page.wait_for_function(
        """([a, b]) => { const s = window.__compare && window.__compare.shown;
            return s && s.a.embedding === a && s.b.embedding === b; }""",
        arg=[a, b], timeout=60000)


def b_choices(page) -> list[str]:
    return page.evaluate(
        "Array.from(document.querySelector('[data-testid=b-select]').options, (o) => o.text)")


def test_compare_opens_on_a_pair_with_the_same_rows(tmp_path: Path, serve, projector) -> None:
    """No pair is offered here (three tensor names), and the first two embeddings differ in rows."""
    rng = np.random.default_rng(0)
    add_embedding(tmp_path / "a", rng.normal(size=(60, 4)), tag="x")
    add_embedding(tmp_path / "b", rng.normal(size=(40, 4)), tag="y")
    add_embedding(tmp_path / "c", rng.normal(size=(40, 4)), tag="z")
    page = projector.page
    page.goto(serve(tmp_path) + "/compare")
    wait_shown(page, "y:00000", "z:00000")
    assert projector.by("compare-error").is_hidden()
    assert "40 points" in projector.by("compare-summary").inner_text()
    assert b_choices(page) == ["c / z:00000 (40 x 4)"]  # only embeddings with A's 40 rows
    # An A with no partner: B says so and Compare waits, with no red error.
    projector.by("a-select").select_option(label="a / x:00000 (60 x 4)")
    assert b_choices(page) == ["(no other embedding has 60 rows)"]
    assert projector.by("compare-run").is_disabled()
    assert projector.by("compare-error").is_hidden()


def test_steps_panel_shows_only_for_a_timeline_and_follows_the_pair(serve, sample_logdir, projector) -> None:
    page = projector.page
    page.goto(serve(sample_logdir) + "/compare")
    wait_shown(page, "hidden:00001", "hidden:00005")  # the sample's training steps come first
    assert projector.by("steps-panel").is_visible()
    assert "step 1 -> 5" in projector.by("step-label").inner_text()
    assert all("1797 x" in choice for choice in b_choices(page))  # iris and words do not fit digits' rows

    # digits against the last step's hidden layer: no timeline for A, so no steps panel.
    projector.by("a-select").select_option(label="digits / digits (1797 x 64)")
    projector.by("b-select").select_option(label="training / hidden:00020 (1797 x 16)")
    projector.by("compare-run").click()
    wait_shown(page, "digits", "hidden:00020")
    assert projector.by("steps-panel").is_hidden()
    assert projector.by("step-label").text_content() == ""

    # Choosing an offered pair shows it at once, with its own steps.
    projector.by("pair-select").select_option(label="steps: training/hidden:00005 -> training/hidden:00020")
    wait_shown(page, "hidden:00005", "hidden:00020")
    assert projector.by("steps-panel").is_visible()
    assert "step 5 -> 20" in projector.by("step-label").inner_text()
    assert projector.by("compare-error").is_hidden()


def test_compare_link_carries_the_run_and_back_restores_the_view(serve, sample_logdir, projector) -> None:
    state = {"run": "training", "embedding": "hidden:00005", "projection": "pca", "colorBy": "label",
             "pca": {"is3d": True}, "selection": [7], "focus": 7}
    projector.open(serve(sample_logdir), state)
    projector.page.wait_for_function(
        "document.querySelector('[data-testid=compare-link]').href.includes('embedding=hidden%3A00005')")
    before = projector.state()
    projector.by("compare-link").click()
    page = projector.page
    wait_shown(page, "hidden:00005", "hidden:00020")  # the offered pair that starts at the shown step
    assert projector.by("a-select").input_value() == '["training","hidden:00005"]'
    projector.by("back-link").click()
    projector.wait_ready()
    after = projector.state()
    for field in ("run", "embedding", "projection", "colorBy", "pca", "selection", "focus"):
        assert after[field] == before[field], field
