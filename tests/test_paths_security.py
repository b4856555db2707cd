"""Paths and exposure: nothing outside a config's folder is read, nothing is offered off-host.

An asset path that leaves its config's folder (``..``, absolute, a symlink pointing out) is
refused with TensorBoard's message "resolves outside the config directory" (its 2026 file-read
fix), and the file's bytes never reach a response. Run names in requests are looked up, never
joined to a path. The server binds 127.0.0.1, sends no CORS headers and bounds request bodies.
"""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from PIL import Image
from projector.server.app import create_app
from projector.server.body_limit import DEFAULT_MAX_BODY_BYTES
from projector.server.cli import build_parser

from tests.builders import vectors, write_pbtxt_run
from tests.conftest import LiveServer

SECRET_MARK = "TOP-SECRET-ROW"


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _png(width: int, height: int, color: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buffer, format="PNG")
    return buffer.getvalue()


SECRET_TENSOR = np.full((4, 2), 1234.5, np.float32)
SECRETS = {
    "tensor_path": ("secret.npy", _npy(SECRET_TENSOR)),
    "metadata_path": ("secret.tsv", f"{SECRET_MARK}\nb\nc\nd\n".encode()),
    "sprite.image_path": ("secret.png", _png(16, 16, (200, 10, 10))),
    "bookmarks_path": ("secret.json", json.dumps([{"label": SECRET_MARK}]).encode()),
}
ROUTES = {"tensor_path": "tensor", "metadata_path": "metadata", "sprite.image_path": "sprite",
          "bookmarks_path": "bookmarks"}


def _write_outside(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in SECRETS.values():
        (folder / name).write_bytes(content)


def _config(field: str, asset: str) -> str:
    """A run whose ``field`` names ``asset``; its other parts are healthy files inside."""
    paths = {"tensor_path": "t.npy", "metadata_path": "m.tsv", "bookmarks_path": "b.json",
             "sprite.image_path": "s.png", field: asset}
    return ('embeddings {\n  tensor_name: "t"\n'
            + "".join(f'  {name}: "{paths[name]}"\n'
                      for name in ("tensor_path", "metadata_path", "bookmarks_path"))
            + f'  sprite {{ image_path: "{paths["sprite.image_path"]}" single_image_dim: 8 '
              "single_image_dim: 8 }\n}\n")


INSIDE_FILES: dict[str, bytes | str] = {
    "t.npy": _npy(vectors(4, 2)),
    "m.tsv": "a\nb\nc\nd\n",
    "s.png": _png(16, 16, (0, 0, 200)),
    "b.json": "[]",
}


KINDS = ["dotdot", "absolute", "symlink-file", "symlink-folder", "dotdot-through-inside"]


def _make_escape(kind: str, run: Path, outside: Path, secret_name: str) -> str:
    """Build one way out of the run's folder to ``outside/secret_name``; return the asset path."""
    if kind == "dotdot":
        return f"../../outside/{secret_name}"
    if kind == "absolute":
        return str(outside / secret_name)
    if kind == "symlink-file":
        (run / f"link-{secret_name}").symlink_to(outside / secret_name)
        return f"link-{secret_name}"
    if kind == "symlink-folder":
        (run / "linked").symlink_to(outside, target_is_directory=True)
        return f"linked/{secret_name}"
    if kind == "dotdot-through-inside":
        return f"sub/../../../outside/{secret_name}"
    raise AssertionError(kind)


def _assert_no_secret(response: httpx.Response) -> None:
    for _, content in SECRETS.values():
        assert content not in response.content
    assert SECRET_MARK.encode() not in response.content
    assert SECRET_TENSOR.tobytes() not in response.content


class Escapes:
    """ROOT/outside holds secrets (and is a valid run itself); ROOT/logs is LOGDIR with one run
    per (field, way out), a run ``inside`` whose paths stay in, a healthy run ``real`` and a
    symlinked folder ``linked`` pointing at ROOT/outside."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.outside = root / "outside"
        self.logdir = root / "logs"
        _write_outside(self.outside)
        write_pbtxt_run(self.outside, 'embeddings { tensor_name: "t" tensor_path: "secret.npy" }')
        self.assets: dict[str, str] = {}
        for field in SECRETS:
            for kind in KINDS:
                run = self.logdir / f"{field}-{kind}"
                (run / "sub").mkdir(parents=True)
                asset = _make_escape(kind, run, self.outside, SECRETS[field][0])
                self.assets[run.name] = asset
                write_pbtxt_run(run, _config(field, asset), INSIDE_FILES)
        inside = self.logdir / "inside"
        write_pbtxt_run(inside, 'embeddings {\n  tensor_name: "t"\n'
                                '  tensor_path: "sub/../real/t.npy"\n  metadata_path: "alias.tsv"\n}\n',
                        {"real/t.npy": _npy(vectors(4, 2)), "real/m.tsv": "a\nb\nc\nd\n",
                         "sub/keep": ""})
        (inside / "alias.tsv").symlink_to(inside / "real" / "m.tsv")
        write_pbtxt_run(self.logdir / "real", 'embeddings { tensor_name: "t" tensor_path: "t.npy" }',
                        {"t.npy": _npy(vectors(3, 2))})
        (self.logdir / "linked").symlink_to(self.outside, target_is_directory=True)


@pytest.fixture(scope="module")
def escapes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Escapes, httpx.Client]]:
    """The escape corpus, served with the default settings (body limit included)."""
    corpus = Escapes(tmp_path_factory.mktemp("escapes"))
    server = LiveServer(create_app(corpus.logdir, cache_dir=corpus.root / "cache"))
    server.start()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield corpus, client
    server.stop()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("field", list(SECRETS))
def test_asset_paths_leaving_the_config_folder_are_refused(escapes, field, kind):
    corpus, client = escapes
    run = f"{field}-{kind}"
    runs = client.get("/api/runs")
    _assert_no_secret(runs)
    embedding = {r["name"]: r for r in runs.json()}[run]["embeddings"][0]
    expected = (f"{run}/projector_config.pbtxt field '{field}': path {corpus.assets[run]!r} "
                "resolves outside the config directory")
    assert expected in embedding["error"]
    params = {"run": run, "embedding": "t"}
    refused = client.get(f"/api/{ROUTES[field]}", params=params)
    assert refused.status_code == 422
    assert expected in refused.json()["detail"]
    for route in ROUTES.values():  # the other parts of the embedding are still served
        response = client.get(f"/api/{route}", params=params)
        _assert_no_secret(response)
        assert response.status_code == (422 if route == ROUTES[field] else 200)


def test_paths_and_symlinks_that_stay_inside_are_accepted(escapes):
    _, client = escapes
    embedding = {r["name"]: r for r in client.get("/api/runs").json()}["inside"]["embeddings"][0]
    assert embedding["error"] is None
    metadata = client.get("/api/metadata", params={"run": "inside", "embedding": "t"})
    assert metadata.text == "label\na\nb\nc\nd\n"


def test_a_symlinked_run_folder_pointing_out_of_logdir_is_not_served(escapes):
    _, client = escapes
    names = {run["name"] for run in client.get("/api/runs").json()}
    assert "real" in names and "inside" in names
    assert not [name for name in names if name.startswith("linked") or "outside" in name]
    response = client.get("/api/tensor", params={"run": "linked", "embedding": "t"})
    assert response.status_code == 404
    _assert_no_secret(response)


@pytest.mark.parametrize("route", ["tensor", "metadata", "sprite", "bookmarks"])
def test_run_names_cannot_reach_outside_logdir(escapes, route):
    """A valid run sits next to LOGDIR; every spelling of a way to it is an unknown run."""
    corpus, client = escapes
    for name in ["../outside", "..", "real/../../outside", str(corpus.outside), "/",
                 "%2e%2e/outside", "..%2foutside", "real/..", "./real", "real/",
                 "\\..\\outside", "outside", "linked", "linked/."]:
        response = client.get(f"/api/{route}", params={"run": name, "embedding": "t"})
        assert response.status_code == 404, name
        _assert_no_secret(response)
    # The run itself is served, exactly; it has no sprite, so that one route says so.
    ok = client.get(f"/api/{route}", params={"run": "real", "embedding": "t"})
    expected = {"tensor": vectors(3, 2).astype("<f4").tobytes(), "metadata": b"index\n0\n1\n2\n",
                "bookmarks": b"[]"}
    if route == "sprite":
        assert ok.status_code == 404 and ok.json()["detail"] == "embedding 't' has no sprite"
    else:
        assert ok.status_code == 200 and ok.content == expected[route], ok.content


def test_a_sprite_swapped_for_a_symlink_after_loading_is_not_followed(tmp_path, serve):
    """The sprite is the one file read at request time: it must still be the file checked."""
    outside = tmp_path / "outside"
    _write_outside(outside)
    run = tmp_path / "logs" / "run"
    write_pbtxt_run(run, _config("tensor_path", "t.npy"), INSIDE_FILES)
    url = serve(tmp_path / "logs", refresh_seconds=0)
    params = {"run": "run", "embedding": "t"}
    assert httpx.get(f"{url}/api/sprite", params=params).content == INSIDE_FILES["s.png"]
    (run / "s.png").unlink()
    (run / "s.png").symlink_to(outside / "secret.png")
    response = httpx.get(f"{url}/api/sprite", params=params)
    _assert_no_secret(response)
    assert response.status_code == 422
    assert "run/s.png" in response.json()["detail"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _listening_addresses(port: int) -> set[str]:
    """Local addresses of LISTEN sockets on ``port``, from /proc/net/tcp and tcp6."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if fields[3] == "0A" and int(port_hex, 16) == port:
                raw = bytes.fromhex(address)
                # /proc stores each 32-bit word in host (little-endian) order
                words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                family = socket.AF_INET if len(raw) == 4 else socket.AF_INET6
                found.add(socket.inet_ntop(family, words))
    return found


def _outward_address() -> str | None:
    """This machine's address on its default route (no packet is sent), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = sock.getsockname()[0]
    return None if address.startswith("127.") else address


def test_cli_binds_loopback_by_default():
    assert build_parser().parse_args(["serve"]).host == "127.0.0.1"


@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="reads Linux's /proc/net/tcp")
def test_projector_serve_listens_on_127_0_0_1_only(tmp_path, sample_logdir):
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "projector.server.cli", "serve", str(sample_logdir / "iris"),
         "--port", str(port), "--cache-dir", str(tmp_path / "cache")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not _listening_addresses(port):
            assert process.poll() is None, "projector serve exited"
            assert time.monotonic() < deadline, "projector serve did not listen"
            time.sleep(0.1)
        assert _listening_addresses(port) == {"127.0.0.1"}
        assert httpx.get(f"http://127.0.0.1:{port}/api/health").status_code == 200
        outward = _outward_address()
        if outward is not None:
            with pytest.raises(httpx.ConnectError):
                httpx.get(f"http://{outward}:{port}/api/health", timeout=5)
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_no_cors_headers_by_default(escapes):
    _, client = escapes
    origin = {"Origin": "http://evil.example"}
    simple = client.get("/api/runs", headers=origin)
    assert simple.status_code == 403  # another site's page (issue 38: test_resource_isolation.py)
    preflight = client.options("/api/tensor", headers={
        **origin, "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "content-type"})
    assert preflight.status_code >= 400
    for response in (simple, preflight):
        assert not [h for h in response.headers if h.lower().startswith("access-control-")]


def _raw_request(url: str, head: str) -> bytes:
    """Send only a request head (no body) and read the answer until the server closes or
    pauses: a server waiting for the declared body would answer nothing here."""
    host, port = url.removeprefix("http://").split(":")
    chunks = []
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(head.encode())
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
                sock.settimeout(0.5)
        except TimeoutError:
            pass
    return b"".join(chunks)


def test_request_bodies_are_bounded_by_default(escapes):
    _, client = escapes
    url = str(client.base_url).rstrip("/")
    too_big = DEFAULT_MAX_BODY_BYTES + 1
    answer = _raw_request(url, f"POST /api/neighbors HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                               f"Content-Type: application/json\r\nContent-Length: {too_big}"
                               "\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert f"larger than {DEFAULT_MAX_BODY_BYTES} bytes".encode() in answer
    assert client.get("/api/health").status_code == 200


def test_an_oversized_request_line_is_refused_not_a_crash(escapes):
    _, client = escapes
    url = str(client.base_url).rstrip("/")
    answer = _raw_request(url, f"GET /api/tensor?run={'x' * 200_000}&embedding=t HTTP/1.1\r\n"
                               "Host: 127.0.0.1\r\n\r\n")
    assert answer == b"" or answer.startswith(b"HTTP/1.1 4")
    assert client.get("/api/health").status_code == 200


def test_foreign_host_headers_are_refused_against_dns_rebinding(serve, sample_logdir):
    """A page on evil.example that rebinds its name to 127.0.0.1 must not read the data."""
    url = serve(sample_logdir)
    rebound = httpx.get(f"{url}/api/runs", headers={"Host": "evil.example:6006"})
    assert rebound.status_code == 400
    for host in ("127.0.0.1", "localhost"):
        assert httpx.get(f"{url}/api/runs", headers={"Host": f"{host}:6006"}).status_code == 200
