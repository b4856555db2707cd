"""``projector export``: a static site whose files answer what the page would ask /api/ for,
equal to the server's answers; sampled large sets stay within a size budget."""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from pathlib import Path

import httpx
import numpy as np
import pytest
from projector.server.cli import main as cli_main

QUERY = {"run": "digits", "embedding": "digits"}


def _export(logdir: Path, out: Path, *args: str) -> int:
    return cli_main(["export", str(logdir), str(out), "--cache-dir", str(out.parent / "cache"),
                     *args])


def _read(site: Path, name: str) -> bytes:
    data = (site / name).read_bytes()
    return gzip.decompress(data) if name.endswith(".gz") else data


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    from projector.server.app import SAMPLE_DATA

    out = tmp_path_factory.mktemp("export") / "site"
    assert _export(SAMPLE_DATA, out, "--run", "digits", "--neighbors", "12") == 0
    return out


def test_site_holds_the_app_and_its_manifest(site, capsys):
    page = (site / "index.html").read_text()
    assert '<meta name="projector-static" content="static.json">' in page
    assert 'src="static/js/app.js"' in page
    assert (site / "static" / "js" / "static_mode.js").is_file()
    assert not (site / "static" / "tests").exists()
    manifest = json.loads((site / "static.json").read_text())
    assert manifest["format"] == "projector-static-site" and manifest["gzip"] is False
    [entry] = manifest["embeddings"]
    assert entry["n"] == 1797 and entry["neighbors"]["k"] == 12
    assert set(entry["projections"]) == {"pca"}


def test_site_answers_equal_the_servers(site, serve, sample_logdir):
    url = serve(sample_logdir)
    manifest = json.loads((site / "static.json").read_text())
    [entry] = manifest["embeddings"]
    server_runs = {r["name"]: r for r in httpx.get(url + "/api/runs").json()}
    [info] = manifest["runs"][0]["embeddings"]
    expected = server_runs["digits"]["embeddings"][0]
    for key in ("name", "shape", "metadata_columns", "sprite", "has_bookmarks"):
        assert info[key] == expected[key], key
    assert info["limits"]["projections"] == expected["limits"]["projections"]
    assert info["limits"]["neighbors"]["k"]["maximum"] == 12
    # The projection: the server's own result for the app's default PCA request.
    pca = entry["projections"]["pca"]
    request = {**QUERY, "method": "pca", **pca["request"]}
    response = httpx.post(url + "/api/projections", params={"wait": True}, json=request,
                          headers={"Accept": "application/octet-stream"}, timeout=60)
    server = np.frombuffer(response.content, "<f4").reshape(1797, -1)
    ours = np.frombuffer(_read(site, pca["file"]), "<f4").reshape(1797, pca["cols"])
    np.testing.assert_array_equal(ours, server)
    order = np.frombuffer(_read(site, pca["lod"]["0,1"]), "<i4")
    assert sorted(order.tolist()) == list(range(1797))
    # Neighbours of a few points, from their chunk files.
    nb = entry["neighbors"]
    files = nb["metrics"]["cosine"]
    for index in (0, 1023, 1024, 1796):
        chunk, row = divmod(index, nb["chunk_rows"])
        rows = min(nb["chunk_rows"], 1797 - chunk * nb["chunk_rows"])
        body = _read(site, f"{files['folder']}/{chunk:05d}{files['suffix']}")
        found = np.frombuffer(body, "<i4", rows * 12).reshape(rows, 12)[row]
        dist = np.frombuffer(body, "<f4", rows * 12, rows * 12 * 4).reshape(rows, 12)[row]
        answer = httpx.get(url + "/api/neighbors", params={**QUERY, "index": index, "k": 12}).json()
        assert found.tolist() == [n["index"] for n in answer["neighbors"]]
        np.testing.assert_allclose(dist, [n["distance"] for n in answer["neighbors"]], rtol=1e-5,
                                   atol=1e-6)
    # A metadata column as the page decodes it.
    body = _read(site, entry["metadata"]["columns"]["label"])
    head = int.from_bytes(body[:4], "little")
    dictionary = json.loads(body[4:4 + head])
    codes = np.frombuffer(body, "<i4", offset=4 + head)
    labels = httpx.get(url + "/api/metadata", params=QUERY).text.splitlines()[1:]
    assert [dictionary[c] for c in codes] == [line.split("\t")[0] for line in labels]
    assert len(entry["sprite"]["pages"]) >= 1
    assert json.loads(_read(site, entry["bookmarks"])) == httpx.get(
        url + "/api/bookmarks", params=QUERY).json()


def test_a_declared_model_is_named_in_the_site_as_unavailable(tmp_path):
    """No model runs in a shared site: the page is told which one made the vectors, so its
    meaning mode can say phrases need a server; search by example works from the lists."""
    from projector_core.formats.writer import add_embedding

    logdir = tmp_path / "logs"
    vectors = np.random.default_rng(0).normal(size=(60, 8)).astype(np.float32)
    add_embedding(logdir, vectors, [f"w{i}" for i in range(60)], tag="own",
                  model="some/model-folder")
    out = tmp_path / "site"
    assert _export(logdir, out, "--neighbors", "5") == 0
    [info] = json.loads((out / "static.json").read_text())["runs"][0]["embeddings"]
    assert info["model"]["name"] == "some/model-folder"
    assert info["model"]["status"] == "unavailable" and "search by example" in info["model"]["error"]
    assert info["limits"]["neighbors"]["rows"] == {"minimum": 1, "maximum": 59}
    declared = tmp_path / "declared"
    assert _export(logdir, declared, "--neighbors", "5", "--model", "other-model") == 0
    [info] = json.loads((declared / "static.json").read_text())["runs"][0]["embeddings"]
    assert info["model"]["name"] == "other-model", "the command line's declaration wins"


def test_export_refuses_a_folder_of_other_files_and_replaces_an_earlier_export(
        sample_logdir, tmp_path, capsys):
    other = tmp_path / "notes"
    other.mkdir()
    (other / "thesis.tex").write_text("keep me")
    assert _export(sample_logdir, other, "--run", "iris") == 2
    assert "not empty" in capsys.readouterr().err
    assert (other / "thesis.tex").read_text() == "keep me"
    site = tmp_path / "site"
    assert _export(sample_logdir, site, "--run", "iris") == 0
    assert _export(sample_logdir, site, "--run", "iris", "--gzip") == 0
    out = capsys.readouterr().out
    assert "MiB in all" in out and "python -m http.server" in out
    manifest = json.loads((site / "static.json").read_text())
    assert manifest["gzip"] is True
    assert manifest["embeddings"][0]["projections"]["pca"]["file"].endswith(".f32.gz")
    assert _export(sample_logdir, tmp_path / "x", "--run", "nope") == 2
    assert "unknown run 'nope' (runs: digits, iris, training, words)" in capsys.readouterr().err
    assert _export(sample_logdir, tmp_path / "x", "--run", "training", "--embedding", "hidden") == 2
    err = capsys.readouterr().err  # the catalogue's one sentence, with the names to choose from
    assert "unknown embedding 'hidden' in run 'training' (embeddings: hidden:00001, " in err


@pytest.mark.slow
def test_a_million_points_sampled_to_a_size_budget(tmp_path, capsys):
    """1M x 2 points, PCA only, --max-points 50000 --gzip: the site stays under 8 MiB (the
    front end's files included); the sample is the head of the LOD order."""
    data = tmp_path / "points.npy"
    rng = np.random.default_rng(0)
    np.save(data, rng.normal(size=(1_000_000, 2)).astype(np.float32))
    site = tmp_path / "site"
    assert _export(data, site, "--max-points", "50000", "--neighbors", "10", "--gzip") == 0
    total = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    assert total < 8 * 2**20, total
    printed = capsys.readouterr().out
    assert f"{total / 2**20:.1f} MiB in all" in printed
    manifest = json.loads((site / "static.json").read_text())
    [entry] = manifest["embeddings"]
    assert entry["n"] == 50000 and entry["sampled_from"] == 1_000_000
    assert manifest["runs"][0]["embeddings"][0]["shape"] == [50000, 2]
    rows = json.loads(_read(site, entry["metadata"]["columns"]["original_row"])[4:].split(b"]")[0]
                      + b"]")
    assert len(rows) == 50000 and rows == sorted(rows, key=int)


def test_export_site_route_answers_a_zip_of_the_site(serve, sample_logdir):
    url = serve(sample_logdir)
    requests = {"pca": {"dims": 3, "params": {"spherize": True}}}
    response = httpx.get(url + "/api/export/site", params={
        "run": "iris", "embedding": "iris", "neighbors": 5, "view": "#s=eyJydW4iOiJpcmlzIn0",
        "requests": json.dumps(requests)}, timeout=120)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("static.json"))
        page = archive.read("index.html").decode()
    assert "history.replaceState(null, '', \"#s=eyJydW4iOiJpcmlzIn0\")" in page
    assert manifest["embeddings"][0]["projections"]["pca"]["request"] == requests["pca"]
    assert {"index.html", "static.json", "static/js/app.js", "static/js/static_mode.js"} <= names
    assert manifest["embeddings"][0]["neighbors"]["k"] == 5
    bad = httpx.get(url + "/api/export/site", params={"run": "iris", "embedding": "iris",
                                                      "projection": "pca,nope"})
    assert bad.status_code == 422 and "nope" in bad.json()["detail"]
    assert httpx.get(url + "/api/export/site", params={"run": "x", "embedding": "y"}).status_code == 404
    for bad_view in ("javascript:alert(1)", "#s=a'b"):
        answer = httpx.get(url + "/api/export/site", params={"run": "iris", "embedding": "iris",
                                                             "view": bad_view})
        assert answer.status_code == 422, bad_view


def test_a_sampled_export_keeps_its_rows_thumbnails(site, tmp_path, capsys):
    from PIL import Image
    from projector.server.app import SAMPLE_DATA

    sampled = tmp_path / "sampled"
    assert _export(SAMPLE_DATA, sampled, "--run", "digits", "--max-points", "500") == 0
    assert "bookmarks name rows of the whole set" in capsys.readouterr().out
    [entry] = json.loads((sampled / "static.json").read_text())["embeddings"]
    [whole] = json.loads((site / "static.json").read_text())["embeddings"]
    assert entry["n"] == 500 and entry["bookmarks"] is None
    body = _read(sampled, entry["metadata"]["columns"]["original_row"])
    head = int.from_bytes(body[:4], "little")
    rows = [int(v) for v in np.array(json.loads(body[4:4 + head]))[
        np.frombuffer(body, "<i4", offset=4 + head)]]
    layout = json.loads((sampled / entry["sprite"]["atlas"]).read_text())
    source = json.loads((site / whole["sprite"]["atlas"]).read_text())
    tw, th = layout["thumb_dim"]
    assert layout["thumb_dim"] == source["thumb_dim"]
    new = np.asarray(Image.open(sampled / entry["sprite"]["pages"][0]).convert("RGBA"))
    old = np.asarray(Image.open(site / whole["sprite"]["pages"][0]).convert("RGBA"))
    cols, old_cols = layout["pages"][0]["grid"][0], source["pages"][0]["grid"][0]
    for j in (0, 1, 250, 499):
        r, c = divmod(j, cols)
        sr, sc = divmod(rows[j], old_cols)
        np.testing.assert_array_equal(new[r * th:(r + 1) * th, c * tw:(c + 1) * tw],
                                      old[sr * th:(sr + 1) * th, sc * tw:(sc + 1) * tw])


def test_large_sets_get_neighbours_from_the_cells_graph(tmp_path, monkeypatch):
    """Above ALL_EXACT_ROWS the lists come from the k-means cells graph: nearly all the true
    neighbours, each with its exact distance, nearest first."""
    from projector.server.app import SAMPLE_DATA

    from projector_core.data.catalog import Catalog
    from projector_core.export import neighbors
    from projector_core.kernels.knn import ExactIndex

    monkeypatch.setattr(neighbors, "ALL_EXACT_ROWS", 100)
    catalog = Catalog(SAMPLE_DATA / "digits", cache_dir=tmp_path / "cache")
    catalog.refresh()
    embedding = catalog.runs()[0].embeddings[0]
    index = neighbors.index_over(embedding, None, "cosine", "cpu")
    files = neighbors.SiteFiles(tmp_path / "site", compress=False)
    names = neighbors.write_neighbors(files, "nb", index, 10, "cosine", lambda f: None)
    exact = ExactIndex(embedding.vectors())
    truth, _ = exact.neighbors_of(np.arange(1797), 10, "cosine")
    hits = 0
    for c, name in enumerate(names):
        rows = min(1024, 1797 - c * 1024)
        body = (tmp_path / "site" / name).read_bytes()
        found = np.frombuffer(body, "<i4", rows * 10).reshape(rows, 10)
        dist = np.frombuffer(body, "<f4", rows * 10, rows * 40).reshape(rows, 10)
        for r in range(rows):
            i = c * 1024 + r
            hits += len(set(found[r]) & set(truth[i]))
            expected = 1 - embedding.vectors()[found[r]] @ embedding.vectors()[i] / (
                np.linalg.norm(embedding.vectors()[found[r]], axis=1)
                * np.linalg.norm(embedding.vectors()[i]))
            np.testing.assert_allclose(dist[r], expected, atol=1e-5)
            assert np.all(np.diff(dist[r]) >= -1e-6)
    assert hits / truth.size > 0.95
