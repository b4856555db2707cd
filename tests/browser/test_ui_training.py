"""The main page follows a LOGDIR as it is written (issue 36): the run list from the event
stream without reload or polling, and a training run followed step by step, each step
projected from the one before, glided to, and coloured by how each point's neighbourhood
changed since the step before (the answers of GET /api/compare)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest
from scipy.stats import special_ortho_group

from projector_core.formats.writer import add_embedding
from tests.builders import vectors
from tests.cli_server import ROOT
from tests.event_stream import EventStream

pytestmark = pytest.mark.browser

# The page's own change colours for an answer's per-point overlaps (compare/linked.js),
# against the colours the plot holds: the colours are those of the server's answer.
COLOURS_OF_ANSWER = """async (perPoint) => {
  const { changeColors } = await import('./static/js/compare/linked.js');
  const expected = changeColors(perPoint, document.documentElement.dataset.theme === 'dark');
  const held = window.__projector.app.plot.coloring.colors;
  return held.length === expected.length && held.every((v, i) => v === expected[i]);
}"""


TRANSITION = "() => window.__projector.app.plot.transitionStart"  # when the last glide began
POSITIONS = "() => Array.from(window.__projector.app.plot.positions)"  # in the plot's unit cube


def _shown(projector) -> dict:
    return projector.page.evaluate("() => window.__training.shown()")


def _wait_step_drawn(projector, step: int, *, change: bool = True) -> dict:
    """Waits until the page shows `step` whole: its projection done and in the plot, and (with
    `change`) its change since the step before as the colours."""
    projector.page.wait_for_function(
        """([step, change]) => { const t = window.__training.shown();
            return t.step === step && t.projection && t.projection.status === 'done'
              && window.__projector.ready
              && (!change || (t.change && t.change.embedding === t.embedding)); }""",
        arg=[step, change], timeout=120000)
    return _shown(projector)


def _compare(url: str, run: str, a: str, b: str) -> dict:
    return httpx.get(f"{url}/api/compare", params={"run": run, "embedding": a, "other_run": run,
                                                    "other_embedding": b}, timeout=120).json()


def test_the_run_list_follows_the_logdir_without_reload_or_polling(tmp_path: Path, serve,
                                                                   projector):
    logdir = tmp_path / "logs"
    logdir.mkdir()
    url = serve(logdir)
    listed = []
    projector.page.on("request", lambda r: listed.append(r.url) if "/api/runs" in r.url else None)
    projector.page.goto(url + "/")
    projector.wait_text("plot-message", "No runs found yet", contains=True)
    projector.page.evaluate("() => { window.__sameDocument = true; }")
    add_embedding(logdir / "first", vectors(40, 5), metadata=[f"w{i}" for i in range(40)])
    projector.wait_ready()  # opened the first embedding written, as a first visit would
    assert projector.state()["run"] == "first"
    add_embedding(logdir / "second", vectors(30, 4, 1))
    projector.page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=\"run-select\"] option')]"
        ".some((o) => o.value === 'second')")
    add_embedding(logdir / "first", vectors(40, 5, 2), tag="other")
    projector.page.select_option('[data-testid="run-select"]', "first")
    projector.page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=\"embedding-select\"] option')]"
        ".some((o) => o.value === 'other:00000')")
    assert projector.page.evaluate("() => window.__sameDocument") is True  # never reloaded
    assert len(listed) == 1, listed  # listed once; every change since came as an event


@pytest.mark.slow
def test_following_a_pytorch_training_run_step_by_step(tmp_path: Path, serve, projector):
    """A real training loop (a small MLP on the digits, CPU torch, in a subprocess) writes its
    hidden layer with SummaryWriter every 20 iterations; the page, Follow on by itself, shows
    each new step without reload: the events and the drawn step, each step's PCA turned onto
    the one before, the colours those of GET /api/compare, the selection and camera kept."""
    pytest.importorskip("tensorboard")  # PyTorch's SummaryWriter needs it
    logdir = tmp_path / "logs"
    logdir.mkdir()
    url = serve(logdir)
    steps = 6
    training = subprocess.Popen(
        [sys.executable, "-m", "tests.training_loop", str(logdir / "mlp"), "--steps", str(steps),
         "--every", "20", "--paced"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True)
    try:
        with EventStream(url) as stream:
            assert training.stdout.readline().strip() == "wrote 0"
            stream.wait_for(lambda m: m.event == "step" and m.data["state"] == "ready")
            projector.open(url)
            projector.page.evaluate("() => { window.__sameDocument = true; }")
            projector.page.wait_for_function("() => window.__training.shown().follow")
            shown = _wait_step_drawn(projector, 0, change=False)
            assert shown["embedding"] == "default:00000"
            projector.page.evaluate("() => window.__projector.app.update({ selection: [3, 5, 8] })")
            camera = projector.state()["camera"]
            drawn = [0]
            for _ in range(steps - 1):
                glided = projector.page.evaluate(TRANSITION)
                training.stdin.write("next\n")
                training.stdin.flush()
                step = int(training.stdout.readline().split()[1])
                event = stream.wait_for(lambda m, s=step: m.event == "step"
                                        and m.data["step"] == s and m.data["state"] == "ready")
                assert event.data["run"] == "mlp" and event.data["rows"] == 300
                shown = _wait_step_drawn(projector, step)
                before = f"default:{drawn[-1]:05d}"
                assert shown["embedding"] == f"default:{step:05d}"
                assert shown["change"]["before"] == before
                assert shown["projection"]["params"]["align_to_job"]  # turned onto the step before
                assert projector.page.evaluate(TRANSITION) > glided  # glided from where they were
                answer = _compare(url, "mlp", before, shown["embedding"])
                assert shown["change"]["perPoint"] == answer["per_point"]
                assert projector.page.evaluate(COLOURS_OF_ANSWER, answer["per_point"])
                drawn.append(step)
        assert drawn == [20 * i for i in range(steps)]
        state = projector.state()
        assert state["selection"] == [3, 5, 8] and state["camera"] == camera
        assert state["embedding"] == f"default:{drawn[-1]:05d}"
        assert projector.page.evaluate("() => window.__sameDocument") is True
        chart = projector.page.locator('[data-testid="step-change-chart"] circle')
        projector.page.wait_for_function(
            "() => document.querySelectorAll('[data-testid=\"step-change-chart\"] circle')"
            f".length === {steps - 1}")
        assert chart.count() == steps - 1  # the change of every step but the first
    finally:
        training.stdin.close()
        training.wait(60)


@pytest.mark.slow
def test_a_step_turned_by_a_rotation_is_shown_with_it_undone(tmp_path: Path, serve, projector):
    """Step 1 is step 0 turned by a known rotation of its space: its PCA, turned onto the one
    on screen (Procrustes, align_to_job), puts every point back where it was (to 1e-3)."""
    logdir = tmp_path / "logs"
    points = vectors(200, 12, 3) * np.linspace(3, 0.5, 12)  # distinct principal axes
    labels = [f"p{i}" for i in range(200)]
    add_embedding(logdir / "turned", points, metadata=labels, global_step=0)
    url = serve(logdir)
    projector.open(url)
    projector.page.wait_for_function("() => window.__training.shown().follow")
    _wait_step_drawn(projector, 0, change=False)
    projector.wait_settled()
    first = np.array(projector.page.evaluate("() => Array.from(window.__projector.app.shown.data)"))
    placed = np.array(projector.page.evaluate(POSITIONS))
    rotation = special_ortho_group.rvs(12, random_state=7)
    add_embedding(logdir / "turned", points @ rotation, metadata=labels, global_step=1)
    _wait_step_drawn(projector, 1)
    second = np.array(projector.page.evaluate("() => Array.from(window.__projector.app.shown.data)"))
    scale = np.abs(first).max()
    assert np.abs(second - first).max() <= 1e-3 * scale
    projector.wait_settled()
    assert np.abs(np.array(projector.page.evaluate(POSITIONS)) - placed).max() <= 1e-3


@pytest.mark.slow
def test_a_run_pressed_once_goes_on_for_every_step_above_the_auto_start_size(tmp_path: Path,
                                                                            serve, projector):
    """Above 5,000 points a UMAP waits for Run (issue 33, item 8); once pressed, Follow runs
    it again for each new step by itself, from the layout before (it would sit at "press
    Run" on every step otherwise)."""
    logdir = tmp_path / "logs"
    points = vectors(6000, 8, 5)
    labels = [f"c{i % 6}" for i in range(6000)]
    add_embedding(logdir / "big", points, metadata=labels, global_step=0, format="npy")
    url = serve(logdir)
    projector.open(url)
    page = projector.page
    page.wait_for_function("() => window.__training.shown().follow")
    page.evaluate("() => window.__projector.app.update({ projection: 'umap' })")
    page.locator('[data-testid="umap-run"]').click()
    _wait_step_drawn(projector, 0, change=False)
    add_embedding(logdir / "big", points + 0.01, metadata=labels, global_step=1, format="npy")
    shown = _wait_step_drawn(projector, 1, change=False)
    assert shown["projection"]["method"] == "umap"
