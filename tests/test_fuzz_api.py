"""Schema-driven fuzzing of the whole API from its own OpenAPI document (schemathesis).

Every operation the live app documents gets generated requests, valid and invalid, against a
real uvicorn server; run and embedding names and job ids are swapped for real ones in half the
cases, so the routes behind the lookups are reached too. Every response must be below 500 and match
the document (status code, content type, body schema). Bounded and deterministic: a fixed
number of examples per operation, derandomised, no shrinking, iteration counts capped, so CI
spends seconds.

Schemathesis's ``positive_data_acceptance`` check is left out: validity that depends on the data
(k below N, a vector of length D, a metadata column that exists) cannot be written in a schema,
so a schema-valid request may rightly be refused with 404 or 422.

(``schemathesis.pytest.from_fixture`` reads a pytest-private attribute that pytest 9 removed,
so each operation's Hypothesis strategy is driven here directly.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx
import numpy as np
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from PIL import Image
from schemathesis.core.failures import FailureGroup
from schemathesis.generation import GenerationMode

from tests.builders import vectors, write_pbtxt_run

RUN, EMBEDDING = "r", "e"
EXAMPLES_PER_MODE = 10
MAX_ITERATIONS = 200


def _fuzz_logdir(root: Path) -> Path:
    """One small, complete embedding (metadata with a numeric column, a sprite, bookmarks) and
    one broken one, so both the success and the 422 paths are reachable."""
    run = root / RUN
    matrix = vectors(20, 5)
    matrix[4] = np.nan
    run.mkdir(parents=True)
    np.save(run / "e.npy", matrix)
    (run / "m.tsv").write_text("name\tsize\n" + "".join(f"p{i}\t{i}\n" for i in range(20)))
    Image.new("RGB", (20, 20)).save(run / "s.png")
    (run / "b.json").write_text('[{"label": "a", "dataSetDimensions": [20, 5]}]')
    write_pbtxt_run(run, f'''
        embeddings {{
          tensor_name: "{EMBEDDING}" tensor_path: "e.npy" metadata_path: "m.tsv"
          bookmarks_path: "b.json"
          sprite {{ image_path: "s.png" single_image_dim: 4 single_image_dim: 4 }}
        }}
        embeddings {{ tensor_name: "broken" tensor_path: "missing.npy" }}
    ''')
    return root


def _real_names_half_the_time(values: Any) -> Any:
    """Deterministic (no extra randomness): generated run names of even length become real."""
    if isinstance(values, dict) and isinstance(values.get("run"), str) \
            and len(values["run"]) % 2 == 0:
        values["run"] = RUN
        if isinstance(values.get("embedding"), str):
            values["embedding"] = EMBEDDING
    return values


def _bounded_work(body: Any) -> Any:
    """Cap iteration counts so a projection asked to wait finishes in a moment."""
    params = body.get("params") if isinstance(body, dict) else None
    if isinstance(params, dict):
        for name in ("n_iter", "n_epochs"):
            if isinstance(params.get(name), int) and params[name] > MAX_ITERATIONS:
                params[name] = MAX_ITERATIONS
    return body


def _finished_job(url: str, headers: dict[str, str]) -> str:
    """A done PCA job, so that the job routes are fuzzed with a real id too."""
    body = {"run": RUN, "embedding": EMBEDDING, "method": "pca", "dims": 2, "params": {}}
    response = httpx.post(f"{url}/api/projections", params={"wait": "true"}, json=body,
                          timeout=60, headers=headers)
    assert response.status_code == 200, response.text
    job = response.headers["x-job"]
    assert httpx.get(f"{url}/api/jobs/{job}", headers=headers).json()["status"] == "done"
    return job


@pytest.fixture(params=[None, "fuzz-token"], ids=["open", "token"])
def auth(request: pytest.FixtureRequest) -> dict[str, str]:
    """Fuzzed open, and with a token set (issue 26), which must change no answer."""
    return {"Authorization": f"Bearer {request.param}"} if request.param else {}


@pytest.fixture
def api_schema(tmp_path, serve, auth) -> tuple[schemathesis.BaseSchema, list[str]]:
    """The schema with its hooks, and the operations that were called with the done job's id."""
    token = auth["Authorization"].removeprefix("Bearer ") if auth else None
    url = serve(_fuzz_logdir(tmp_path / "logs"), refresh_seconds=0, token=token)
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json", headers=auth)
    schema.config.max_stream_events = 1  # GET /api/events never ends: its first event is read
    job = _finished_job(url, auth)
    with_real_job: list[str] = []

    @schema.hook
    def map_path_parameters(context, path_parameters):
        value = (path_parameters or {}).get("job_id")
        if isinstance(value, str) and len(value) % 2 == 0:
            path_parameters["job_id"] = job
            with_real_job.append(context.operation.label)
        return path_parameters

    @schema.hook
    def map_query(context, query):
        if isinstance(query, dict) and isinstance(query.get("timeout"), (int, float)):
            query["timeout"] = 0  # a long poll (GET /api/session/state) would only wait
        return _real_names_half_the_time(query)

    @schema.hook
    def map_body(context, body):
        return _bounded_work(_real_names_half_the_time(body))

    return schema, with_real_job


def _fuzz(operation: schemathesis.APIOperation, session: requests.Session) -> None:
    strategy = st.one_of(operation.as_strategy(GenerationMode.POSITIVE),
                         operation.as_strategy(GenerationMode.NEGATIVE))

    @given(case=strategy)
    @settings(max_examples=2 * EXAMPLES_PER_MODE, deadline=None, derandomize=True,
              database=None, phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))
    def call(case: schemathesis.Case) -> None:
        response = case.call_and_validate(
            session=session, timeout=60,
            excluded_checks=[schemathesis.checks.positive_data_acceptance])
        if response.status_code == 202:  # a started job is not needed: free the CPU at once
            session.delete(urljoin(response.request.url, f"/api/jobs/{response.json()['job']}"))

    call()


def test_every_operation_answers_below_500_and_as_documented(api_schema, auth):
    api_schema, with_real_job = api_schema
    operations = [result.ok() for result in api_schema.get_all_operations()]
    labels = {operation.label for operation in operations}
    assert {"GET /api/runs", "GET /api/tensor", "GET /api/metadata"} <= labels
    failures = []
    session = requests.Session()  # one kept-alive connection for all the calls
    session.headers.update(auth)
    for operation in operations:
        try:
            _fuzz(operation, session)
        except (Exception, FailureGroup) as failure:  # collected: every operation is fuzzed
            failures.append(f"{operation.label}:\n{failure}")
    assert not failures, "\n\n".join(failures)
    # Every job route was fuzzed with the id of a real, finished job too, not only made-up ones.
    job_routes = {label for label in labels if "{job_id}" in label}
    assert job_routes and set(with_real_job) == job_routes, (job_routes, set(with_real_job))
