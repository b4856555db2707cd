"""``Client.upload`` takes what ``Projector(...)`` and ``show()`` take (one normaliser,
``projector_core.formats.inputs``), against a real server under uvicorn (issue 33, item 2)."""

from __future__ import annotations

import io

import httpx
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import torch

from projector import Client
from projector.client.answers import ProjectorError
from tests.builders import vectors

pytestmark = pytest.mark.quiet_server

N = 12


@pytest.fixture
def client(serve) -> Client:
    return Client(serve())


def _table(client: Client, uploaded: dict) -> pd.DataFrame:
    return client.metadata(uploaded["run"], uploaded["embedding"])


def test_a_one_column_frame_keeps_its_name(client: Client) -> None:
    frame = pd.DataFrame({"group": [f"g{i % 3}" for i in range(N)], "x": range(N)})
    uploaded = client.upload(vectors(N, 4), metadata=frame[["group"]])
    assert uploaded["shape"] == [N, 4]
    assert _table(client, uploaded)["group"].tolist() == frame["group"].tolist()


def test_quotes_come_back_unchanged_and_a_tab_is_accepted(client: Client) -> None:
    said = ['he said "hi"', "'single'", '"', "a\tb"] * 3
    uploaded = client.upload(vectors(N, 4), metadata=pd.DataFrame({"said": said, "n": range(N)}))
    table = _table(client, uploaded)
    assert table["said"].tolist()[:3] == ['he said "hi"', "'single'", '"']
    assert table["said"].iloc[3] == "a b"  # as the widget shows it: a TSV cell holds no tab
    assert table["n"].dtype == np.int64


def test_a_frame_with_a_vector_column(client: Client) -> None:
    data = vectors(N, 5)
    frame = pd.DataFrame({"embedding": list(data), "kind": ["a", "b"] * (N // 2)})
    uploaded = client.upload(frame)
    assert uploaded["shape"] == [N, 5]
    np.testing.assert_allclose(client.tensor(uploaded["run"], uploaded["embedding"]), data)
    assert _table(client, uploaded)["kind"].tolist() == frame["kind"].tolist()


@pytest.mark.parametrize("metadata", [
    [f"p{i}" for i in range(N)],
    {"label": [f"p{i}" for i in range(N)]},
    pd.Series([f"p{i}" for i in range(N)], name="label"),
])
def test_list_dict_and_series_metadata(client: Client, metadata) -> None:
    uploaded = client.upload(vectors(N, 3), metadata=metadata)
    assert _table(client, uploaded)["label"].tolist() == [f"p{i}" for i in range(N)]


def test_torch_tensors_and_arrow_tables(client: Client) -> None:
    data = vectors(N, 4)
    from_torch = client.upload(torch.from_numpy(data))
    np.testing.assert_allclose(client.tensor(from_torch["run"], from_torch["embedding"]), data)
    table = pa.table({"v": pa.array(list(data.astype(np.float64))), "tag": [str(i) for i in range(N)]})
    from_arrow = client.upload(table)
    assert from_arrow["shape"] == [N, 4]
    assert _table(client, from_arrow)["tag"].tolist() == list(range(N))


def test_a_wrong_length_is_the_normalisers_sentence(client: Client) -> None:
    with pytest.raises(ValueError, match=r"column 'label' has 3 values for 12 points"):
        client.upload(vectors(N, 3), metadata=["a", "b", "c"])


def test_json_metadata_that_is_not_columns_is_refused_naming_the_file(serve) -> None:
    base = serve()
    tensor = io.BytesIO()
    np.save(tensor, vectors(3, 2))
    answer = httpx.post(f"{base}/api/uploads", files={
        "tensor": ("t.npy", tensor.getvalue()), "metadata": ("m.json", b'{"a": [1, 2, 3]}')})
    assert answer.status_code == 422 and "m.json" in answer.json()["detail"]
    assert "JSON object of columns" in answer.json()["detail"]


def test_a_tensor_file_with_metadata_in_memory(client: Client, tmp_path) -> None:
    path = tmp_path / "points.npy"
    np.save(path, vectors(N, 3))
    uploaded = client.upload(path, metadata={"group": [f"g{i}" for i in range(N)]})
    assert uploaded["embedding"] == "points.npy"
    assert _table(client, uploaded)["group"].iloc[-1] == f"g{N - 1}"
    with pytest.raises(ProjectorError, match=r"metadata\.json.*'group' has 2 values for 12 points"):
        client.upload(path, metadata={"group": ["a", "b"]})
