"""The contract /openapi.json shows is complete: every answer has a schema, the data's integer
limits are integers, and the WebSocket stream sends exactly the messages it documents."""

from __future__ import annotations

import json

import httpx
import pytest
from projector.server.routes.jobs import StreamFrame, StreamProgress, StreamStatus
from pydantic import TypeAdapter
from websockets.sync.client import connect


@pytest.fixture
def client(serve, sample_logdir):
    with httpx.Client(base_url=serve(sample_logdir), timeout=60) as http:
        yield http


def test_every_answer_of_every_operation_has_a_schema(client: httpx.Client) -> None:
    schema = client.get("/openapi.json").json()
    missing = [f"{method.upper()} {path} {status} {media}"
               for path, operations in schema["paths"].items()
               for method, operation in operations.items()
               for status, response in operation["responses"].items()
               for media, body in response.get("content", {}).items()
               if not body.get("schema")]
    assert missing == []
    answers = {path: operations["get"]["responses"]["200"]["content"]
               for path, operations in schema["paths"].items() if "get" in operations}
    assert answers["/api/tensor"]["application/octet-stream"]["schema"] == {
        "type": "string", "format": "binary"}
    assert answers["/api/metadata"]["text/tab-separated-values"]["schema"] == {"type": "string"}
    assert "ClustersOut" in json.dumps(answers["/api/jobs/{job_id}/clusters"])
    assert "QualityOut" in json.dumps(answers["/api/jobs/{job_id}/quality"])
    stream = schema["x-websockets"]["/api/jobs/{job_id}/stream"]["messages"]["oneOf"]
    names = [ref["$ref"].rsplit("/", 1)[1] for ref in stream]
    assert names == ["StreamProgress", "StreamFrame", "StreamStatus"]
    assert all(name in schema["components"]["schemas"] for name in names)


def test_the_data_limits_of_integer_parameters_are_integers(client: httpx.Client) -> None:
    digits = next(e for r in client.get("/api/runs").json() for e in r["embeddings"]
                  if r["name"] == "digits")
    limits = digits["limits"]
    assert limits["neighbors"]["k"] == {"minimum": 1, "maximum": 1796}
    assert isinstance(limits["neighbors"]["k"]["maximum"], int)
    assert isinstance(limits["projections"]["umap"]["n_neighbors"]["maximum"], int)
    assert isinstance(limits["projections"]["tsne"]["points"]["minimum"], int)
    assert isinstance(limits["projections"]["tsne"]["perplexity"]["maximum"], float)


def test_the_stream_sends_the_documented_messages(client: httpx.Client) -> None:
    started = client.post("/api/projections", json={"run": "digits", "embedding": "digits",
                                                     "method": "umap",
                                                     "params": {"n_epochs": 30}})
    assert started.status_code == 202, started.text
    message = TypeAdapter(StreamProgress | StreamFrame | StreamStatus)
    url = str(client.base_url).replace("http", "ws", 1)
    kinds: list[str] = []
    frame: StreamFrame | None = None
    with connect(f"{url}/api/jobs/{started.json()['job']}/stream", max_size=None) as socket:
        for received in socket:
            if isinstance(received, bytes):
                assert frame is not None  # every binary message follows its header
                assert len(received) == 4 * frame.shape[0] * frame.shape[1]
                frame = None
                continue
            assert frame is None
            body = json.loads(received)
            parsed = message.validate_python(body)
            assert set(body) <= set(type(parsed).model_fields), body  # nothing undocumented
            kinds.append(parsed.type)
            frame = parsed if isinstance(parsed, StreamFrame) else None
    assert kinds[-1] == "status" and kinds[-2] == "frame", kinds
    assert parsed.status == "done" and parsed.info is not None
