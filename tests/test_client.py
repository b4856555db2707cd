"""The Python client against the real server: blocking calls and the streamed async form."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.neighbors import NearestNeighbors

from projector.client.answers import Projection, ProjectorError
from projector.client.api import ProjectorClient


@pytest.fixture
def client(serve, sample_logdir) -> ProjectorClient:
    return ProjectorClient(serve(sample_logdir))


def test_blocking_project_returns_the_array(client):
    coordinates = client.project("digits", "digits", "tsne", n_iter=100, seed=1)
    assert coordinates.shape == (1797, 2) and coordinates.dtype == np.float32
    pca = client.projection("digits", "digits", "pca", spherize=True, components=10)
    assert pca.coordinates.shape == (1797, 10), "components asked: the width"
    assert len(pca.info["explained_variance_ratio"]) == 10
    assert client.result(pca.job).info == pca.info


def test_async_project_calls_back_for_frames_and_the_end(client):
    frames: list[tuple[np.ndarray, int | None]] = []
    done: list[Projection] = []

    async def run() -> Projection:
        return await client.project_async(
            "digits", "digits", "tsne", dims=3, n_iter=300, seed=2,
            on_frame=lambda coords, iteration: frames.append((coords.copy(), iteration)),
            on_done=done.append)

    projection = asyncio.run(run())
    assert done == [projection]
    assert projection.coordinates.shape == (1797, 3)
    assert projection.info["gradient_method"] == "bh"
    assert len(frames) >= 2 and all(f.shape == (1797, 3) for f, _ in frames)
    assert not np.allclose(frames[0][0], projection.coordinates)
    np.testing.assert_array_equal(client.result(projection.job).coordinates,
                                  projection.coordinates)


def test_cancelling_the_async_call_cancels_the_job(client):
    jobs: list[str] = []
    frames: list[int | None] = []

    async def run() -> None:
        task = asyncio.create_task(client.project_async(
            "digits", "digits", "tsne", n_iter=20000, seed=3, on_start=jobs.append,
            on_frame=lambda coords, iteration: frames.append(iteration)))
        while not frames:
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    assert client.job(jobs[0])["status"] == "cancelled"


def test_neighbors_search_and_errors(client):
    data = client.tensor("digits", "digits")
    assert data.shape == (1797, 64)
    indices, distances = client.neighbors("digits", "digits", index=0, k=5, metric="euclidean")
    reference = NearestNeighbors(n_neighbors=6).fit(load_digits().data)
    ref_dist, ref_idx = reference.kneighbors(load_digits().data[:1])
    np.testing.assert_array_equal(indices, ref_idx[0, 1:])
    np.testing.assert_allclose(distances, ref_dist[0, 1:], rtol=1e-5)
    by_vector, _ = client.neighbors("digits", "digits", vector=data[0], k=1, metric="euclidean")
    assert by_vector[0] == 0
    assert len(client.search("digits", "digits", "label", "^3$", regex=True)) == 183
    with pytest.raises(ProjectorError) as error:
        client.project("digits", "digits", "tsne", perplexity=5000)
    assert error.value.status == 422 and "perplexity" in error.value.detail
    with pytest.raises(ProjectorError) as error:
        client.project("nope", "digits", "pca")
    assert error.value.status == 404


def test_a_refused_call_raises_the_error_exported_beside_client(serve, sample_logdir):
    """The README's ``from projector import Client`` user catches ``ProjectorError`` from the
    same place, with the status and the server's detail."""
    from projector import Client
    from projector import ProjectorError as Exported

    client = Client(serve(sample_logdir))
    with pytest.raises(Exported) as refused:
        client.project("digits", "digits", "tsne", perplexity=5000)
    assert refused.value.status == 422 and "perplexity" in refused.value.detail
    with pytest.raises(Exported) as unknown:
        client.metadata("no-such-run", "digits")
    assert unknown.value.status == 404 and "no-such-run" in unknown.value.detail
