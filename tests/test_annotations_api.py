"""The annotation routes under uvicorn: labels written through the API are metadata columns
of every read route, tiles and exports; undo/redo per author; every change on the event
stream; saved bookmarks after the LOGDIR's; a read-only server says why."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import httpx
import numpy as np
import pyarrow.parquet as pq
import pytest

from projector_core.formats.writer import add_embedding
from tests.event_stream import EventStream

IRIS = {"run": "iris", "embedding": "iris"}
N = 150


def annotate(url: str, user: str | None = None, **body) -> httpx.Response:
    headers = {"X-Projector-User": user} if user else {}
    return httpx.post(f"{url}/api/annotations", json={**IRIS, **body}, headers=headers,
                      timeout=60)


def column_values(url: str, column: str, route: str = "/api/metadata/column",
                  **names) -> list[str]:
    """The column as ``GET /api/metadata/column`` answers any column (or another ``route``
    on its wire, with more parameters in ``names``): dictionary + codes."""
    answer = httpx.get(f"{url}{route}", params={**IRIS, **names, "column": column,
                                                "kind": "categorical"})
    answer.raise_for_status()
    head = int(answer.headers["x-dictionary-bytes"])
    import json

    dictionary = json.loads(answer.content[:head])
    return [dictionary[c] for c in np.frombuffer(answer.content, "<i4", offset=head).tolist()]


def test_a_label_is_a_metadata_column_of_every_read_route_at_once(serve, sample_logdir):
    url = serve(sample_logdir, refresh_seconds=0)
    done = annotate(url, "ann", column="label_fixed", value="cat", rows=[3, 1, 3, 7])
    assert done.status_code == 200, done.text
    answer = done.json()
    assert (answer["changed"], answer["code"], answer["edit"]["author"]) == (3, 1, "ann")
    assert "later committed edit wins" in answer["rule"]
    iris = next(e for r in httpx.get(f"{url}/api/runs").json() for e in r["embeddings"]
                if r["name"] == "iris")
    assert iris["metadata_columns"][-1] == "label_fixed"
    tsv = httpx.get(f"{url}/api/metadata", params=IRIS).text.splitlines()
    assert tsv[0].endswith("\tlabel_fixed") and tsv[2].endswith("\tcat") and tsv[1].endswith("\t")
    values = column_values(url, "label_fixed")
    assert [i for i, v in enumerate(values) if v == "cat"] == [1, 3, 7]
    counts = httpx.get(f"{url}/api/metadata/column/counts",
                       params={**IRIS, "column": "label_fixed"}).json()
    assert (counts["dictionary"], counts["counts"]) == (["", "cat"], [N - 3, 3])
    found = httpx.get(f"{url}/api/search", params={**IRIS, "column": "label_fixed",
                                                    "query": "cat"}).json()
    assert found["indices"] == [1, 3, 7]
    listed = httpx.get(f"{url}/api/annotations", params=IRIS).json()
    assert listed["enabled"] and [c["name"] for c in listed["columns"]] == ["label_fixed"]
    assert listed["columns"][0] | {"created_at": 0} == {
        "name": "label_fixed", "kind": "label", "rows": N, "shown": True, "reason": None,
        "edits": 1, "last_edit": answer["edit"]["id"], "created_by": "ann", "created_at": 0}


def test_a_column_read_again_after_an_edit_is_not_the_cached_one(serve, sample_logdir):
    url = serve(sample_logdir, refresh_seconds=0)
    annotate(url, column="seen", value=True, rows=[0])
    first = httpx.get(f"{url}/api/metadata/column", params={**IRIS, "column": "seen"})
    tag = first.headers["etag"]
    same = httpx.get(f"{url}/api/metadata/column", params={**IRIS, "column": "seen"},
                     headers={"If-None-Match": tag})
    assert same.status_code == 304
    annotate(url, column="seen", value=True, rows=[5])
    again = httpx.get(f"{url}/api/metadata/column", params={**IRIS, "column": "seen"},
                      headers={"If-None-Match": tag})
    assert again.status_code == 200 and again.headers["etag"] != tag
    assert [i for i, v in enumerate(column_values(url, "seen")) if v] == [0, 5]


def test_names_values_and_rows_are_checked_before_anything_is_written(serve, sample_logdir):
    url = serve(sample_logdir, refresh_seconds=0)
    taken = annotate(url, column="species", value="x", rows=[0])
    assert taken.status_code == 422 and "'species' is already a metadata column" in taken.text
    assert annotate(url, column="c", value="x", rows=[N]).status_code == 422
    assert annotate(url, column="c", value="a\tb", rows=[0]).status_code == 422
    both = annotate(url, column="c", value="x", rows=[0], selection={"job": "j", "box": [0] * 4})
    assert both.status_code == 422 and "exactly one" in both.text
    unknown = httpx.post(f"{url}/api/annotations", json={
        "run": "iris", "embedding": "nope", "column": "c", "value": "x", "rows": [0]})
    assert unknown.status_code == 404 and "nope" in unknown.text
    assert httpx.get(f"{url}/api/annotations", params=IRIS).json()["columns"] == []


def test_undo_and_redo_act_on_the_callers_own_edit_and_the_history_lists_everyones(
        serve, sample_logdir):
    url = serve(sample_logdir, refresh_seconds=0)
    annotate(url, "ann", column="fixed", value="a", rows=[0, 1])
    annotate(url, "bob", column="fixed", value="b", rows=[1, 2])
    assert httpx.post(f"{url}/api/annotations/undo", json=IRIS).status_code == 422  # "local"
    undone = httpx.post(f"{url}/api/annotations/undo", json=IRIS,
                        headers={"X-Projector-User": "ann"}).json()
    assert undone["edit"]["action"] == "undo" and undone["edit"]["author"] == "ann"
    assert column_values(url, "fixed")[:3] == ["", "b", "b"]  # bob's later edit stays
    redone = httpx.post(f"{url}/api/annotations/redo", json=IRIS,
                        headers={"X-Projector-User": "ann"})
    assert redone.status_code == 200 and column_values(url, "fixed")[:3] == ["a", "b", "b"]
    history = httpx.get(f"{url}/api/annotations/history", params=IRIS).json()
    assert [(e["action"], e["author"]) for e in history] == [
        ("redo", "ann"), ("undo", "ann"), ("set", "bob"), ("set", "ann")]
    assert httpx.get(f"{url}/api/annotations/history",
                     params={**IRIS, "limit": 1, "before": history[1]["id"]}).json()[0][
        "author"] == "bob"


def test_a_column_is_shown_as_of_any_edit_of_its_history(serve, sample_logdir):
    url = serve(sample_logdir, refresh_seconds=0)
    first = annotate(url, "ann", column="kind", value="a", rows=[0, 1, 2]).json()["edit"]["id"]
    second = annotate(url, "bo", column="kind", value="b", rows=[2, 3]).json()["edit"]["id"]
    undone = httpx.post(f"{url}/api/annotations/undo", json=IRIS,
                        headers={"X-Projector-User": "ann"}).json()["edit"]["id"]
    route = "/api/annotations/column"
    seen = {edit: column_values(url, "kind", route, as_of=edit)[:5]
            for edit in (first, second, undone)}
    assert seen == {first: ["a", "a", "a", "", ""], second: ["a", "a", "b", "b", ""],
                    undone: ["", "", "b", "b", ""]}  # the later edit won; ann's undo left bo's
    assert column_values(url, "kind", route)[:5] == seen[undone]  # no as_of: now
    answer = httpx.get(f"{url}{route}", params={**IRIS, "column": "kind", "as_of": first})
    assert answer.headers["x-as-of"] == str(first)
    unknown = httpx.get(f"{url}{route}", params={**IRIS, "column": "nope"})
    assert unknown.status_code == 404 and "nope" in unknown.json()["detail"]


def test_a_region_of_a_map_labels_the_rows_the_server_counts_and_its_tiles_carry_them(
        serve, sample_logdir):
    url = serve(sample_logdir, refresh_seconds=0)
    job = httpx.post(f"{url}/api/projections", params={"wait": "true"}, timeout=60, json={
        **IRIS, "method": "pca", "dims": 2}).headers["x-job"]
    index = httpx.get(f"{url}/api/jobs/{job}/tiles", timeout=60).json()
    lo, hi = index["box"]["lo"], index["box"]["hi"]
    box = [lo[0], lo[1], (lo[0] + hi[0]) / 2, hi[1]]
    counted = httpx.post(f"{url}/api/jobs/{job}/select", json={"box": box, "limit": N}).json()
    done = annotate(url, column="left", value="yes", selection={"job": job, "box": box})
    assert done.status_code == 200, done.text
    assert done.json()["edit"]["rows"] == counted["count"] > 0
    values = column_values(url, "left")
    assert [i for i, v in enumerate(values) if v == "yes"] == counted["rows"]
    tile = httpx.get(f"{url}/api/jobs/{job}/tiles/0/0/0", params={"column": "left"})
    count = int(tile.headers["x-count"])
    rows = np.frombuffer(tile.content[:4 * count], "<u4")
    codes = np.frombuffer(tile.content[-4 * count:], "<i4")
    assert set(rows[codes == 1].tolist()) == set(counted["rows"]) & set(rows.tolist())
    assert "immutable" not in tile.headers["cache-control"]  # it changes with the next edit
    other = annotate(url, column="left", value="yes", run="words", embedding="words",
                     selection={"job": job, "box": box})
    assert other.status_code == 422 and "not a projection of words/words" in other.text


def test_every_committed_change_goes_out_on_the_event_stream(serve, sample_logdir):
    url = serve(sample_logdir, refresh_seconds=0, heartbeat_seconds=0.2)
    with EventStream(url) as stream:
        edit = annotate(url, "ann", column="fixed", value="a", rows=[0, 1]).json()["edit"]
        event = stream.wait_for(lambda m: m.event == "annotation")
        assert event.data | {"time": 0} == {
            "action": "changed", "run": "iris", "tag": "iris", "column": "fixed",
            "edit": edit["id"], "author": "ann", "change": "set", "rows": 2, "code": 1,
            "values": 2, "time": 0}
        saved = httpx.post(f"{url}/api/bookmarks", json={**IRIS, "state": {"label": "x"}})
        added = stream.wait_for(lambda m: m.event == "bookmark")
        assert added.data["action"] == "added" and added.data["id"] == saved.json()["saved"]["id"]


def test_saved_bookmarks_follow_the_logdir_files_and_outlive_the_server(
        serve, tmp_path):
    logdir = tmp_path / "logdir"
    add_embedding(logdir, np.eye(4, 3), metadata=["a", "b", "c", "d"], tag="v")
    (logdir / "bookmarks.json").write_text('[{"label": "from the file"}]')
    config = (logdir / "projector_config.pbtxt").read_text()
    (logdir / "projector_config.pbtxt").write_text(
        config.replace('tensor_name: "v:00000"',
                       'tensor_name: "v:00000"\n  bookmarks_path: "bookmarks.json"'))
    names = {"run": ".", "embedding": "v:00000"}
    url = serve(logdir, refresh_seconds=0)
    saved = httpx.post(f"{url}/api/bookmarks", headers={"X-Projector-User": "ann"}, json={
        **names, "state": {"label": "mine", "dataSetDimensions": [4, 3]}})
    assert saved.status_code == 201 and saved.json()["saved"]["author"] == "ann"
    wrong = httpx.post(f"{url}/api/bookmarks", json={
        **names, "state": {"label": "other", "dataSetDimensions": [9, 3]}})
    assert wrong.status_code == 422 and "[9, 3]" in wrong.text
    again = serve(logdir, refresh_seconds=0)  # a second server on the same store
    listed = httpx.get(f"{again}/api/bookmarks", params=names).json()
    assert [b["label"] for b in listed] == ["from the file", "mine"] and "saved" not in listed[0]
    gone = httpx.delete(f"{again}/api/bookmarks", params={**names, "id": listed[1]["saved"]["id"]})
    assert gone.json() == {"deleted": listed[1]["saved"]["id"]}
    assert httpx.delete(f"{again}/api/bookmarks", params={**names, "id": 99}).status_code == 404
    assert [b["label"] for b in httpx.get(f"{url}/api/bookmarks", params=names).json()] == [
        "from the file"]


def test_export_and_import_round_trip_through_the_routes(serve, sample_logdir):
    url = serve(sample_logdir, refresh_seconds=0)
    annotate(url, column="fixed", value="cat", rows=[2])
    tsv = httpx.get(f"{url}/api/annotations/export", params={**IRIS, "format": "tsv"})
    assert tsv.headers["content-disposition"] == 'attachment; filename="iris-iris-annotations.tsv"'
    lines = tsv.text.splitlines()
    assert lines[0].split("\t")[0] == "species" and lines[0].endswith("\tfixed")
    assert lines[3].endswith("\tcat") and len(lines) == N + 1
    table = pq.read_table(io.BytesIO(httpx.get(f"{url}/api/annotations/export", params={
        **IRIS, "format": "parquet"}).content))
    assert table.column("fixed").to_pylist()[:3] == [None, None, "cat"]
    body = "".join("odd\n" if i % 2 else "even\n" for i in range(N)).encode()
    imported = httpx.post(f"{url}/api/annotations/import", content=body, params={
        **IRIS, "column": "parity_fixed", "name": "parity.tsv"})
    assert imported.status_code == 200 and imported.json()["edit"]["action"] == "import"
    assert column_values(url, "parity_fixed")[:3] == ["even", "odd", "even"]
    bad = httpx.post(f"{url}/api/annotations/import", content=b"x\n", params={
        **IRIS, "column": "p2", "name": "short.tsv"})
    assert bad.status_code == 422 and "short.tsv" in bad.text


def test_a_read_only_server_serves_the_data_and_refuses_edits_saying_why(
        serve, sample_logdir, tmp_path):
    url = serve(sample_logdir, refresh_seconds=0, annotations="off")
    listed = httpx.get(f"{url}/api/annotations", params=IRIS).json()
    assert not listed["enabled"] and "--annotations off" in listed["reason"]
    refused = annotate(url, column="c", value="x", rows=[0])
    assert refused.status_code == 409 and "writes nothing" in refused.text
    assert httpx.post(f"{url}/api/bookmarks", json={**IRIS, "state": {}}).status_code == 409
    assert httpx.get(f"{url}/api/metadata", params=IRIS).status_code == 200
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(b"not a database" * 100)
    url = serve(sample_logdir, refresh_seconds=0, annotations=damaged)
    listed = httpx.get(f"{url}/api/annotations", params=IRIS).json()
    assert not listed["enabled"] and str(damaged) in listed["reason"]
    assert annotate(url, column="c", value="x", rows=[0]).status_code == 409
    assert httpx.get(f"{url}/api/bookmarks", params=IRIS).status_code == 200


@pytest.mark.parametrize("steps", [(0, 5)])
def test_every_step_of_a_timeline_shows_the_same_labels(serve, tmp_path, steps):
    logdir = tmp_path / "logdir"
    for step in steps:
        add_embedding(logdir, np.random.default_rng(step).random((6, 2)), tag="enc",
                      global_step=step, metadata=[f"p{i}" for i in range(6)])
    url = serve(logdir, refresh_seconds=0)
    httpx.post(f"{url}/api/annotations", json={"run": ".", "embedding": "enc:00000",
                                               "column": "ok", "value": True, "rows": [4]})
    assert column_values(url, "ok", run=".", embedding="enc:00005") == ["", "", "", "", "true", ""]


def test_the_store_is_a_sqlite_file_outside_the_logdir(serve, sample_logdir, tmp_path):
    store = tmp_path / "kept.sqlite"
    before = sorted(p.name for p in Path(sample_logdir).rglob("*"))
    url = serve(sample_logdir, refresh_seconds=0, annotations=store)
    annotate(url, column="fixed", value="a", rows=[0])
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT name FROM columns").fetchall() == [("fixed",)]
    assert sorted(p.name for p in Path(sample_logdir).rglob("*")) == before


def test_an_edit_committed_by_another_process_reaches_this_servers_stream(
        serve, sample_logdir, tmp_path):
    """A second server on the same store stands for any other writer (an assistant over MCP,
    ``projector annotations import``): its edits are told here too, each once."""
    store = tmp_path / "shared.sqlite"
    url = serve(sample_logdir, refresh_seconds=0, heartbeat_seconds=0.2, annotations=store)
    other = serve(sample_logdir, refresh_seconds=0, annotations=store)
    with EventStream(url) as stream:
        mine = annotate(url, "ann", column="fixed", value="a", rows=[0]).json()["edit"]["id"]
        theirs = annotate(other, "bob", column="fixed", value="b", rows=[1]).json()["edit"]["id"]
        told = stream.wait_for(lambda m: m.event == "annotation" and m.data["edit"] == theirs)
        assert (told.data["author"], told.data["column"], told.data["change"]) == (
            "bob", "fixed", "set")
        saved = httpx.post(f"{other}/api/bookmarks", json={**IRIS, "state": {"label": "x"}})
        stream.wait_for(lambda m: m.event == "bookmark"
                        and m.data["id"] == saved.json()["saved"]["id"])
        edits = [m.data["edit"] for m in stream.messages if m.event == "annotation"]
        assert edits == [mine, theirs]  # each once, in order
    assert column_values(url, "fixed")[:2] == ["a", "b"]


def test_a_tsne_supervised_with_a_label_is_computed_again_after_an_edit(serve, sample_logdir):
    url = serve(sample_logdir, refresh_seconds=0)
    annotate(url, column="fixed", value="a", rows=list(range(75)))
    request = {**IRIS, "method": "tsne", "dims": 2, "params": {
        "perplexity": 10, "n_iter": 250, "supervise_column": "fixed", "supervise_weight": 0.5}}

    def job() -> str:
        done = httpx.post(f"{url}/api/projections", params={"wait": "true"}, json=request,
                          timeout=300)
        assert done.status_code == 200, done.text
        return done.headers["x-job"]

    first = job()
    assert job() == first  # the same labels: the same result
    annotate(url, column="fixed", value="b", rows=[0])
    assert job() != first  # another version of the column: computed again
    custom = httpx.post(f"{url}/api/projections", params={"wait": "true"}, timeout=120, json={
        **IRIS, "method": "custom", "params": {"column": "fixed", "left": "a", "right": "b"}})
    assert custom.status_code == 200, custom.text
