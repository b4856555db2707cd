"""A projection's quality as a job (``GET /api/jobs/ID/quality?background=true``), as a
comparison is one: 202 with the job at once, its progress and result at /api/jobs/QID, and
the same question asked plainly answered from it; ``Client.quality`` waits on that job
rather than on one long socket read (issue 33 item 7). Under uvicorn."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

from projector import Client

DIGITS = {"run": "digits", "embedding": "digits"}


@pytest.fixture
def base(serve, sample_logdir) -> str:
    return serve(sample_logdir)


def test_background_quality_is_a_job_whose_answer_the_plain_request_reads(base: str) -> None:
    client = Client(base)
    with httpx.Client(base_url=base, timeout=120) as http:
        projected = http.post("/api/projections?wait=true", json={**DIGITS, "method": "pca"})
        job = projected.headers["x-job"]
        asked = http.get(f"/api/jobs/{job}/quality",
                         params={"k": 10, "metric": "cosine", "background": "true"})
        assert asked.status_code == 202 and set(asked.json()) == {"job"}, "as /api/compare's 202"
        measuring = asked.json()["job"]
        again = http.get(f"/api/jobs/{job}/quality", params={"k": 10, "background": "true"})
        assert again.json()["job"] == measuring, "one job per question"
        listed = {j["id"]: j for j in http.get("/api/jobs").json()["jobs"]}[measuring]
        assert (listed["kind"], listed["method"], listed["of"]) == ("quality", "quality", job)
        assert (listed["run"], listed["embedding"]) == ("digits", "digits")
        status = client.wait(measuring, timeout=300)
        assert status["progress"] == 1.0
        plain = http.get(f"/api/jobs/{job}/quality", params={"k": 10, "metric": "cosine"})
        assert plain.status_code == 200
        answer = plain.json()
        result = http.get(f"/api/jobs/{measuring}/result").json()
        per_point = np.array([np.nan if v is None else v for v in answer["per_point"]])
        assert np.array(result["coordinates"]).shape == (1797, 1)
        np.testing.assert_allclose(np.array(result["coordinates"])[:, 0], per_point, rtol=1e-6)
        assert result["info"]["trustworthiness"] == answer["trustworthiness"]
        assert result["info"]["mean"] == answer["mean"]
        # Its values are no layout: refused as a comparison's are.
        clusters = http.get(f"/api/jobs/{measuring}/clusters")
        assert clusters.status_code == 422
        assert f"job {measuring} is a quality measure, not a projection" in clusters.json()["detail"]


def test_client_quality_waits_on_the_job_with_progress(base: str) -> None:
    client = Client(base)
    job = client.projection("iris", "iris", "tsne", timeout=300, n_iter=250, perplexity=10).job
    heard: list[dict] = []
    found = client.quality(job, k=5, on_progress=heard.append)
    assert heard and heard[-1]["status"] == "done", "the quality job's status, as it went"
    with httpx.Client(base_url=base, timeout=120) as http:
        assert found == http.get(f"/api/jobs/{job}/quality", params={"k": 5}).json()
        listed = [j for j in http.get("/api/jobs").json()["jobs"] if j["kind"] == "quality"]
    assert [j["of"] for j in listed] == [job]
    assert len(found["per_point"]) == 150 and 0 < found["trustworthiness"] <= 1


def test_a_projection_not_done_is_refused_before_any_job(base: str) -> None:
    with httpx.Client(base_url=base, timeout=60) as http:
        running = http.post("/api/projections", json={
            **DIGITS, "method": "tsne", "params": {"n_iter": 20000, "seed": 9}}).json()["job"]
        answer = http.get(f"/api/jobs/{running}/quality", params={"background": "true"})
        assert answer.status_code == 409 and f"job {running} is" in answer.json()["detail"]
        assert not [j for j in http.get("/api/jobs").json()["jobs"] if j["kind"] == "quality"]
        http.delete(f"/api/jobs/{running}")
