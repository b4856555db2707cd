"""Data held in memory (show(), the widget): arrays, DataFrames and Arrow tables as input,
served by the real server in a background thread, and the view shared through the session."""

from __future__ import annotations

import io
import threading

import httpx
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from PIL import Image

import projector.script
from projector import Projector, memory_server, show
from projector_core.data.memory import memory_embedding
from projector_core.errors import DataError


@pytest.fixture
def cleanup():
    servers = []
    yield servers.append
    for server in servers:
        server.stop()


def _vectors(n: int = 30, d: int = 4) -> np.ndarray:
    return np.random.default_rng(0).normal(size=(n, d)).astype("f4")


def test_dataframe_with_a_vector_column_and_metadata_columns():
    frame = pd.DataFrame({"vec": list(_vectors(5, 3)), "word": list("abcde"), "n": [1, 2, None, 4, 5]})
    embedding = memory_embedding("r", "e", frame)
    assert embedding.shape == (5, 3)
    assert embedding.metadata_columns() == ["word", "n"]
    assert embedding.metadata().column("n")[2] == ""
    numbers_only = memory_embedding("r", "e", pd.DataFrame(_vectors(5, 3)))
    assert numbers_only.shape == (5, 3) and numbers_only.metadata() is None


def test_arrow_table_with_a_fixed_size_list_column():
    table = pa.table({"emb": pa.array(_vectors(4, 2).tolist(), pa.list_(pa.float32(), 2)),
                      "label": ["w", "x", "y", "z"]})
    embedding = memory_embedding("r", "e", table)
    assert embedding.shape == (4, 2) and embedding.metadata().column("label") == ["w", "x", "y", "z"]
    np.testing.assert_allclose(embedding.vectors(), np.asarray(table["emb"].to_pylist()))


def test_metadata_as_list_dict_or_frame_and_labels():
    vectors = _vectors(3, 2)
    assert memory_embedding("r", "e", vectors, ["a", "b\tc", None]).metadata().column("label") == \
        ["a", "b c", ""]
    assert memory_embedding("r", "e", vectors, {"k": [1, 2, 3]}).metadata_columns() == ["k"]
    both = memory_embedding("r", "e", vectors, pd.DataFrame({"k": [1, 2, 3]}), labels=["x", "y", "z"])
    assert both.metadata_columns() == ["label", "k"]


def test_bad_inputs_name_the_argument():
    with pytest.raises(DataError, match="column 'k' has 2 values for 3 points"):
        memory_embedding("r", "e", _vectors(3, 2), {"k": [1, 2]})
    with pytest.raises(DataError, match="list columns: a, b"):
        memory_embedding("r", "e", pd.DataFrame({"a": [[1.0], [2.0]], "b": [[1.0], [2.0]]}))
    with pytest.raises(DataError, match="same length"):
        memory_embedding("r", "e", pd.DataFrame({"a": [[1.0, 2.0], [2.0]]}))
    with pytest.raises(DataError, match="sprite_dim"):
        memory_embedding("r", "e", _vectors(3, 2), sprite="sprite.png")


def test_show_serves_arrays_from_memory_with_a_sprite(capsys, cleanup):
    images = np.random.default_rng(1).integers(0, 255, (30, 8, 8, 3), dtype=np.uint8)
    url = show(_vectors(), {"group": ["a", "b", "c"] * 10}, sprite=images)
    cleanup(projector.script._running[-1])
    assert url.startswith("http://127.0.0.1:") and f"Projector at {url}" in capsys.readouterr().out
    runs = httpx.get(f"{url}api/runs").json()
    assert [r["name"] for r in runs] == ["memory"]
    embedding = runs[0]["embeddings"][0]
    assert embedding["shape"] == [30, 4] and embedding["sprite"]["single_image_dim"] == [8, 8]
    query = {"run": "memory", "embedding": "embedding"}
    tensor = np.frombuffer(httpx.get(f"{url}api/tensor", params=query).content, "<f4")
    np.testing.assert_array_equal(tensor.reshape(30, 4), _vectors())
    sprite = Image.open(io.BytesIO(httpx.get(f"{url}api/sprite", params=query).content))
    assert sprite.size == (48, 48)  # 6 x 6 cells of 8 px
    assert httpx.get(f"{url}api/metadata", params=query).text.startswith("group\na\nb\nc\n")


def test_the_session_carries_the_view_both_ways(cleanup):
    widget = Projector(_vectors(), {"group": ["a", "b", "c"] * 10}, color_by="group")
    cleanup(widget._server)
    url = widget.url
    state = httpx.get(f"{url}api/session/state").json()
    assert state["color_by"] == "group" and state["origin"] == "python"
    # The page long-polls; Python's change answers it.
    answer: dict = {}
    poll = threading.Thread(target=lambda: answer.update(httpx.get(
        f"{url}api/session/state", params={"since": state["version"], "timeout": 10}, timeout=20).json()))
    poll.start()
    widget.selection = [4, 2]
    poll.join()
    assert answer["selection"] == [4, 2] and answer["origin"] == "python"
    # What the page posts (the user's selection) lands in the traits and the selected frame.
    posted = httpx.post(f"{url}api/session/state", json={"run": "memory", "embedding": "embedding",
                                                         "selection": [0, 3], "projection": "umap"})
    assert posted.status_code == 200
    assert widget.selection == [0, 3] and widget.projection == "umap"
    frame = widget.selected_frame()
    assert list(frame.index) == [0, 3] and list(frame["group"]) == ["a", "a"]
    bad = httpx.post(f"{url}api/session/state", json={"projection": "nope"})
    assert bad.status_code == 422
    with pytest.raises(Exception, match="projection must be one of"):
        widget.projection = "nope"


def test_the_widget_refuses_what_does_not_exist(cleanup):
    import traitlets

    widget = Projector(_vectors(), {"group": ["a", "b", "c"] * 10})
    cleanup(widget._server)
    with pytest.raises(traitlets.TraitError,
                       match=r"selection index 30 out of range: memory/embedding has 30 points"):
        widget.selection = [1, 30]
    with pytest.raises(traitlets.TraitError, match="unknown column 'colour' for color_by"):
        widget.color_by = "colour"
    assert widget.selection == [] and widget.color_by is None
    state = httpx.get(f"{widget.url}api/session/state").json()
    assert state["selection"] == [] and state["color_by"] is None, "nothing refused is shared"


def test_from_logdir_shows_its_runs(sample_logdir, cleanup):
    widget = Projector.from_logdir(sample_logdir)
    cleanup(widget._server)
    names = {r["name"] for r in httpx.get(f"{widget.url}api/runs").json()}
    assert {"digits", "iris", "words"} <= names
    httpx.post(f"{widget.url}api/session/state", json={"run": "iris", "embedding": "iris",
                                                       "selection": [0, 149]})
    assert list(widget.selected_frame()["species"]) == ["setosa", "virginica"]


def test_memory_server_without_data_or_logdir_has_no_runs(cleanup):
    server = memory_server()
    cleanup(server)
    assert httpx.get(f"{server.url}api/runs").json() == []
