"""The comparison page in real Chromium: linked plots of two training steps written by
PyTorch's SummaryWriter, the most-changed list, search, and the step slider with play."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.test_compare import sklearn_change

pytestmark = pytest.mark.slow

MOVED = [4, 40, 90, 130]  # rows whose vectors rotate among themselves from step 0 to step 1


def _steps() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    base = rng.normal(size=(150, 8)).astype(np.float32)
    steps = [base, base.copy()]
    steps[1][MOVED] = base[np.roll(MOVED, 1)]
    steps.append(steps[1] + 0.3 * rng.normal(size=base.shape).astype(np.float32))
    return steps


STEPS = _steps()  # the vectors at steps 0, 10 and 20


def write_steps(logdir: Path) -> None:
    import torch
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(logdir / "train"))
    for step, matrix in enumerate(STEPS):
        writer.add_embedding(torch.from_numpy(matrix), metadata=[f"p{i}" for i in range(150)],
                             global_step=step * 10)
    writer.close()


def screen_position(page, side: str, index: int) -> tuple[float, float]:
    """Page coordinates of point `index` in plot A or B, from that plot's own matrix."""
    x, y = page.evaluate(
        """([side, i]) => { const p = window.__compare.plots[side]; const m = p.matrix();
          const [x, y, z] = [p.positions[i*3], p.positions[i*3+1], p.positions[i*3+2]];
          const w = m[3]*x + m[7]*y + m[11]*z + m[15];
          const cx = (m[0]*x + m[4]*y + m[8]*z + m[12]) / w;
          const cy = (m[1]*x + m[5]*y + m[9]*z + m[13]) / w;
          return [(cx + 1) / 2 * p.canvas.clientWidth, (1 - cy) / 2 * p.canvas.clientHeight]; }""",
        [side, index])
    box = page.locator(f'[data-testid="compare-{side}"] [data-testid="plot"]').bounding_box()
    return box["x"] + x, box["y"] + y


def loneliest(page, side: str) -> int:
    """The point of a plot farthest from its nearest other point: nothing covers it."""
    xy = np.array(page.evaluate(f"Array.from(window.__compare.plots.{side}.positions)")).reshape(-1, 3)
    gaps = np.linalg.norm(xy[:, None, :2] - xy[None, :, :2], axis=2)
    np.fill_diagonal(gaps, np.inf)
    return int(gaps.min(axis=1).argmax())


def wait_shown(page, embedding_b: str) -> None:
    page.wait_for_function(
        "(b) => { const s = window.__compare.shown; return s && s.b.embedding === b; }",
        arg=embedding_b, timeout=60000)


def settle(page) -> None:
    page.wait_for_function("() => window.__compare.plots.plots().every((p) => !p.fromPositions)")


def test_linked_plots_and_step_slider(tmp_path: Path, serve, projector) -> None:
    write_steps(tmp_path)
    base = serve(tmp_path)
    page = projector.page
    page.goto(base + "/compare")
    wait_shown(page, "default:00010")  # the first offered pair: steps 0 -> 10
    settle(page)
    assert projector.by("steps-panel").is_visible()
    assert projector.by("step-slider").get_attribute("max") == "2"
    assert "step 0 -> 10" in projector.by("step-label").text_content()

    items = projector.by("most-changed").locator("li")
    listed = [int(items.nth(i).get_attribute("data-index")) for i in range(len(MOVED))]
    assert sorted(listed) == MOVED

    # Hover in A highlights the same point in B, and the status names it.
    lone = loneliest(page, "a")
    page.mouse.move(*screen_position(page, "a", lone))
    page.wait_for_function(f"() => window.__compare.plots.b.hover === {lone}")
    assert f"p{lone} " in projector.by("compare-hover").text_content()

    # A click in B selects the point in both plots.
    lone = loneliest(page, "b")
    page.mouse.move(*screen_position(page, "b", lone))
    page.wait_for_function(f"() => window.__compare.plots.a.hover === {lone}")
    page.mouse.click(*screen_position(page, "b", lone))
    page.wait_for_function(f"() => window.__compare.plots.a.flags[{lone}] & 1")
    assert page.evaluate("window.__compare.plots.selection") == [lone]
    assert page.evaluate(f"window.__compare.plots.b.flags[{lone}] & 1")

    # Picking a moved point in the list and searching select in both plots too.
    items.nth(1).click()
    assert page.evaluate("window.__compare.plots.selection") == [listed[1]]
    projector.by("compare-search").fill("p13")
    page.wait_for_function("() => window.__compare.plots.selection.length === 11")  # p13, p130-139
    assert page.evaluate("window.__compare.plots.a.flags[130] & 1")

    # Zooming A moves B's camera the same way (2-D).
    box = page.locator('[data-testid="compare-a"] [data-testid="plot"]').bounding_box()
    page.mouse.move(box["x"] + 100, box["y"] + 100)
    page.mouse.wheel(0, -400)
    page.wait_for_function("() => window.__compare.plots.a.camera.zoom > 1")
    assert page.evaluate("window.__compare.plots.b.camera.zoom") > 1
    assert page.evaluate("JSON.stringify(window.__compare.plots.a.camera) === "
                         "JSON.stringify(window.__compare.plots.b.camera)")

    # The slider shows the next pair of steps, gliding from the last layout.
    before = page.evaluate("Array.from(window.__compare.plots.b.positions.slice(0, 6))")
    slider = projector.by("step-slider")
    slider.evaluate("(s) => { s.value = '2'; s.dispatchEvent(new Event('input')); }")
    wait_shown(page, "default:00020")
    assert page.evaluate("window.__compare.shown.a.embedding") == "default:00010"
    assert "step 10 -> 20" in projector.by("step-label").text_content()
    settle(page)
    assert page.evaluate("Array.from(window.__compare.plots.b.positions.slice(0, 6))") != before
    # The change shown is scikit-learn's, from the vectors written at steps 10 and 20.
    k, metric = int(projector.by("compare-k").input_value()), projector.by("compare-metric").input_value()
    expected = sklearn_change(STEPS[1], STEPS[2], k, metric)
    assert page.evaluate("window.__compare.result.mean") == pytest.approx(expected.mean())
    np.testing.assert_allclose(page.evaluate("window.__compare.result.per_point"), expected)

    # Play walks the timeline from the first step to the last, then stops.
    slider.evaluate("(s) => { s.value = '1'; s.dispatchEvent(new Event('input')); }")
    wait_shown(page, "default:00010")
    projector.by("step-play").click()
    page.wait_for_function("() => document.querySelector('[data-testid=step-play]').textContent === 'Play'"
                           " && window.__compare.shown.b.embedding === 'default:00020'",
                           timeout=60000)
    assert projector.by("compare-error").is_hidden()
