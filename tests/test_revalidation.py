"""What a second visit revalidates instead of downloading again: the colour column (its ETag)
and the page's modules (304 for an unchanged file)."""

from __future__ import annotations

import json
import time

import httpx

from tests.test_lod import write_points


def test_metadata_column_is_revalidated_by_its_etag(serve, tmp_path):
    """A second visit asks with the ETag it got and reads the column from its cache (304);
    another column or kind, or changed metadata, has another tag."""
    write_points(tmp_path / "logs" / "run", 100, ["a", "b"] * 50)
    url = serve(tmp_path / "logs", refresh_seconds=0.2)
    params = {"run": "run", "embedding": "points", "column": "label"}
    first = httpx.get(f"{url}/api/metadata/column", params=params)
    tag = first.headers["ETag"]
    assert first.headers["Cache-Control"] == "no-cache"
    again = httpx.get(f"{url}/api/metadata/column", params=params,
                      headers={"If-None-Match": tag})
    assert again.status_code == 304 and not again.content and again.headers["ETag"] == tag
    numeric = httpx.get(f"{url}/api/metadata/column", params={**params, "column": "score"},
                        headers={"If-None-Match": tag})
    assert numeric.status_code == 200 and numeric.headers["ETag"] != tag
    write_points(tmp_path / "logs" / "run", 100, ["c", "d"] * 50)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the catalog notices the new file
        changed = httpx.get(f"{url}/api/metadata/column", params=params,
                            headers={"If-None-Match": tag})
        if changed.status_code == 200:
            break
        time.sleep(0.2)
    assert changed.status_code == 200 and changed.headers["ETag"] != tag
    assert json.loads(changed.content[:int(changed.headers["X-Dictionary-Bytes"])]) == ["c", "d"]


def test_an_unchanged_module_is_revalidated_without_its_body(serve):
    """The page's modules are revalidated on each visit (no-cache): an unchanged one is a 304."""
    url = serve()
    first = httpx.get(f"{url}/static/js/app.js")
    assert first.status_code == 200 and first.headers["Cache-Control"] == "no-cache"
    again = httpx.get(f"{url}/static/js/app.js", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and not again.content
    other = httpx.get(f"{url}/static/js/plot.js", headers={"If-None-Match": first.headers["ETag"]})
    assert other.status_code == 200 and other.content
