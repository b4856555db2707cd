"""The bad-input corpus of issue 5: broken runs in one LOGDIR beside a healthy ``good``, served by
one live server per test module, and the lookups the tests make of what it lists."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
import pytest
from PIL import Image
from projector.server.app import create_app

from tests.builders import write_standalone_logdir
from tests.conftest import LiveServer

FileContent = bytes | str | Callable[[Path], bytes]  # a callable gets the corpus root
# Each corpus is served twice: open, and with a token (issue 26), which must change no answer.
TOKENS = [None, "corpus-token"]


# -- helpers ----------------------------------------------------------------------------------


def npy_bytes(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def png_bytes(width: int, height: int, mode: str = "RGB") -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, (width, height)).save(buffer, format="PNG")
    return buffer.getvalue()


def tsv_text(matrix: np.ndarray) -> str:
    return "".join("\t".join(repr(float(v)) for v in row) + "\n" for row in matrix)


def embedding_config(**fields: str | list[int]) -> str:
    """One pbtxt ``embeddings`` block; list values become repeated fields."""
    lines = []
    for name, value in fields.items():
        if isinstance(value, list):
            lines.extend(f"  {name}: {v}" for v in value)
        else:
            lines.append(f'  {name}: "{value}"')
    return "embeddings {\n" + "\n".join(lines) + "\n}\n"


@dataclass
class Case:
    config: str
    files: dict[str, FileContent] = field(default_factory=dict)
    config_name: str = "projector_config.pbtxt"


class Corpus:
    """The broken runs one test module registers, served together beside ``good``."""

    def __init__(self) -> None:
        self.cases: dict[str, Case] = {}

    def case(self, run: str, config: str, files: dict[str, FileContent] | None = None,
             config_name: str = "projector_config.pbtxt") -> str:
        """Register a broken run for the corpus LOGDIR; returns its run name."""
        assert run not in self.cases, run
        self.cases[run] = Case(config, files or {}, config_name)
        return run

    def fixture(self) -> Callable[..., Iterator[Served]]:
        """The module's ``corpus`` fixture: one live server over every registered run."""

        @pytest.fixture(scope="module", params=TOKENS, ids=["open", "token"])
        def corpus(tmp_path_factory: pytest.TempPathFactory,
                   request: pytest.FixtureRequest) -> Iterator[Served]:
            root = tmp_path_factory.mktemp("corpus")
            server = serve_corpus(root, self.cases, token=request.param)
            served = Served(server.url, root, token=request.param)
            yield served
            served.http.close()
            server.stop()

        return corpus


def write_case(folder: Path, found: Case, root: Path) -> None:
    folder.mkdir(parents=True)
    for name, content in found.files.items():
        data = content(root) if callable(content) else content
        if isinstance(data, str):
            (folder / name).write_text(data)
        else:
            (folder / name).write_bytes(data)
    (folder / found.config_name).write_text(found.config)


class Served:
    """The live server over a LOGDIR, with lookups of what it lists."""

    def __init__(self, url: str, root: Path, token: str | None = None) -> None:
        self.url = url
        self.root = root
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=url, timeout=30, headers=headers)  # one connection

    def run(self, run: str) -> dict:
        return {listed["name"]: listed for listed in self.http.get("/api/runs").json()}[run]

    def embedding(self, run: str, name: str = "t") -> dict:
        return {e["name"]: e for e in self.run(run)["embeddings"]}[name]

    def get(self, route: str, run: str, embedding: str = "t") -> httpx.Response:
        return self.http.get(f"/api/{route}", params={"run": run, "embedding": embedding})

    def tensor(self, run: str, embedding: str = "t") -> np.ndarray:
        response = self.get("tensor", run, embedding)
        assert response.status_code == 200, response.text
        n, d = map(int, response.headers["x-shape"].split(","))
        return np.frombuffer(response.content, dtype="<f4").reshape(n, d)

    def assert_good_run_works(self) -> None:
        """The healthy run is listed without errors and serves its data."""
        good = self.run("good")
        assert good["error"] is None
        for embedding in good["embeddings"]:
            assert embedding["error"] is None
            response = self.get("tensor", "good", embedding["name"])
            assert response.status_code == 200
            assert len(response.content) == 4 * np.prod(embedding["shape"])
        assert self.get("metadata", "good", "bytes one").status_code == 200

    def refused(self, run: str, route: str, *words: str, embedding: str = "t") -> str:
        """The embedding's error holds ``words``; its route answers 422 with the same."""
        self.assert_good_run_works()
        error = self.embedding(run, embedding)["error"]
        assert error is not None
        for word in words:
            assert word in error, (word, error)
        response = self.get(route, run, embedding)
        assert response.status_code == 422
        detail = response.json()["detail"]
        assert isinstance(detail, str)
        assert all(word in detail for word in words), (words, detail)
        return error


def serve_corpus(root: Path, runs: dict[str, Case], token: str | None = None) -> LiveServer:
    write_standalone_logdir(root / "logs" / "good")
    for run, found in runs.items():
        write_case(root / "logs" / run, found, root)
    server = LiveServer(create_app(root / "logs", cache_dir=root / "cache", refresh_seconds=0,
                                   token=token))
    server.start()
    return server

