"""Compare shows what it says: the A/B selects and the offered pair follow the step slider, a
page opened from an embedding in no offered pair never compares it with an unrelated step,
and "Moved most" lists each row's own values in a real ranking (issue 33, item 14)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser


def wait_shown(page, a: str, b: str) -> None:
    page.wait_for_function(
        """([a, b]) => { const s = window.__compare && window.__compare.shown;
            return s && s.a.embedding === a && s.b.embedding === b; }""",
        arg=[a, b], timeout=60000)


def test_selects_follow_the_slider_and_compare_reruns_the_shown_pair(serve, sample_logdir, projector) -> None:
    page = projector.page
    page.goto(serve(sample_logdir) + "/compare")
    wait_shown(page, "hidden:00001", "hidden:00005")
    slider = projector.by("step-slider")
    slider.evaluate("(s) => { s.value = String(Number(s.value) + 1); s.dispatchEvent(new Event('input')); }")
    wait_shown(page, "hidden:00005", "hidden:00020")
    assert projector.by("a-select").input_value() == '["training","hidden:00005"]'
    assert projector.by("b-select").input_value() == '["training","hidden:00020"]'
    assert "hidden:00005 -> training/hidden:00020" in projector.by("pair-select").evaluate(
        "(s) => s.selectedOptions[0].text")
    page.evaluate("window.__compare.shown = null")
    projector.by("compare-run").click()
    wait_shown(page, "hidden:00005", "hidden:00020")


def test_opened_from_an_embedding_in_no_pair_shows_an_offered_pair(serve, sample_logdir, projector) -> None:
    page = projector.page
    page.goto(serve(sample_logdir) + "/compare?run=digits&embedding=digits")
    wait_shown(page, "hidden:00001", "hidden:00005")  # not digits against an unrelated step
    assert "No offered pair holds digits / digits" in projector.by("compare-status").inner_text()


def test_moved_most_rows_carry_their_own_values_ranked(serve, sample_logdir, projector) -> None:
    page = projector.page
    page.goto(serve(sample_logdir) + "/compare")
    wait_shown(page, "hidden:00001", "hidden:00005")
    result = page.evaluate("window.__compare.result")
    items = projector.by("most-changed").locator("li")
    page.wait_for_function("document.querySelectorAll('[data-testid=most-changed] li').length >= 20")
    texts = [items.nth(i).inner_text() for i in range(20)]
    reach = []
    for place, (row, text) in enumerate(zip(result["most_changed"], texts, strict=False)):
        assert text.startswith(f"{place + 1}. ")
        assert f"{round(result['per_point'][row] * 100)}% of neighbours kept" in text
        assert f"shift {result['rank_displacement'][row]:.1f}" in text
        reach.append(int(re.search(r"now ~(\d+)th in B", text).group(1)))
    kept = [result["per_point"][row] for row in result["most_changed"][:20]]
    assert kept == sorted(kept)
    tied = [r for r, k in zip(reach, kept, strict=True) if k == kept[0]]
    assert len(set(tied)) > 1 and tied == sorted(tied, reverse=True)  # ties ranked by reach
