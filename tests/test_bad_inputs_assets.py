"""The bad-input corpus of issue 5 (see ``test_bad_inputs.py``): metadata, sprites and
bookmarks. A broken asset is refused with its file and line or field, and the embedding's
tensor (and the healthy run ``good``) stay served.
"""

from __future__ import annotations

import json

import pytest

from tests.bad_input_corpus import Corpus, Served, embedding_config, npy_bytes, png_bytes
from tests.builders import vectors

CORPUS = Corpus()
case = CORPUS.case
corpus = CORPUS.fixture()


# -- metadata ---------------------------------------------------------------------------------


def metadata_case(run: str, metadata: str | bytes) -> str:
    config = embedding_config(tensor_name="t", tensor_path="t.npy", metadata_path="m.tsv")
    return case(run, config, {"t.npy": npy_bytes(vectors(4, 2)), "m.tsv": metadata})


def metadata_refused_tensor_kept(corpus: Served, run: str, *words: str) -> str:
    error = corpus.refused(run, "metadata", f"{run}/m.tsv", *words)
    assert corpus.embedding(run)["shape"] == [4, 2]
    corpus.tensor(run)
    return error


META_SHORT = metadata_case("meta-short", "a\t1\nb\t2\nc\t3\nd\t4\n")


def test_metadata_one_row_short_explains_the_header_rule(corpus):
    """Four data rows, two columns, no header: the first row was read as the header."""
    run = META_SHORT
    error = metadata_refused_tensor_kept(corpus, run, "has 3 data rows but the tensor has 4")
    assert "first line contains a tab, so it was read as a header" in error


META_LONG = metadata_case("meta-long", "name\na\nb\nc\nd\n")


def test_metadata_one_row_long_explains_the_header_rule(corpus):
    """One column with a header line: a one-column file has no header."""
    run = META_LONG
    error = metadata_refused_tensor_kept(corpus, run, "has 5 data rows but the tensor has 4")
    assert "single-column metadata file has no header" in error


META_MORE = metadata_case("meta-more", "".join(f"p{i}\n" for i in range(9)))


def test_metadata_off_by_more(corpus):
    run = META_MORE
    error = metadata_refused_tensor_kept(corpus, run, "has 9 data rows but the tensor has 4")
    assert "each point needs exactly one metadata row" in error


META_UTF8 = metadata_case("meta-utf8", b"name\tkind\na\tx\nb\t\xff\xfe\nc\tz\nd\tw\n")


def test_metadata_invalid_utf8_names_the_line(corpus):
    run = META_UTF8
    error = metadata_refused_tensor_kept(corpus, run, f"{run}/m.tsv line 3")
    assert "not valid UTF-8" in error


META_RESERVED = metadata_case("meta-reserved",
                              "name\t__index__\n" + "".join(f"p{i}\t{i}\n" for i in range(4)))


def test_metadata_reserved_column_name(corpus):
    run = META_RESERVED
    error = metadata_refused_tensor_kept(corpus, run, f"{run}/m.tsv line 1")
    assert "'__index__' is reserved" in error


META_ALMOST_NUMERIC = metadata_case(
    "meta-almost-numeric", "name\tsize\np0\t0.0\np1\t1.5\np2\tn/a\np3\t4.5\n")


def test_metadata_column_numeric_but_one_cell_is_text_with_a_warning(corpus):
    run = META_ALMOST_NUMERIC
    embedding = corpus.embedding(run)
    assert embedding["error"] is None
    assert embedding["metadata_columns"] == ["name", "size"]
    assert (f"{run}/m.tsv line 4: column 'size' is numeric except for 'n/a', so it is treated "
            "as text") in embedding["warnings"]
    assert corpus.get("metadata", run).text.splitlines()[3] == "p2\tn/a"
    corpus.assert_good_run_works()


# -- sprites ----------------------------------------------------------------------------------


def sprite_case(run: str, image: bytes, n: int = 9, dim: tuple[int, ...] = (8, 8)) -> str:
    config = ('embeddings {\n  tensor_name: "t"\n  tensor_path: "t.npy"\n  sprite {\n'
              '    image_path: "s.png"\n'
              + "".join(f"    single_image_dim: {v}\n" for v in dim)
              + "  }\n}\n")
    return case(run, config, {"t.npy": npy_bytes(vectors(n, 2)), "s.png": image})


def sprite_refused_rest_kept(corpus: Served, run: str, *words: str) -> str:
    error = corpus.refused(run, "sprite", *words)
    assert corpus.embedding(run)["sprite"] is None
    corpus.tensor(run)
    return error


SPRITE_SMALL = sprite_case("sprite-small", png_bytes(16, 24))


def test_sprite_smaller_than_the_grid_needs(corpus):
    run = SPRITE_SMALL
    error = sprite_refused_rest_kept(corpus, run, f"{run}/s.png")
    assert "is 16x24 px but 9 thumbnails of 8x8 in a 3-column grid need at least 24x24" in error


@pytest.mark.parametrize("run", [
    sprite_case("sprite-garbage", b"not an image at all"),
    sprite_case("sprite-truncated", png_bytes(24, 24)[:60]),
])
def test_corrupt_sprite(corpus, run):
    error = sprite_refused_rest_kept(corpus, run, f"{run}/s.png")
    assert "not a readable image" in error


WIDE_SPRITE = png_bytes(8200, 2, mode="L")  # four 4100x1 thumbnails in a 2x2 grid, tiny on disk


SPRITE_WIDE = sprite_case("sprite-wide", WIDE_SPRITE, n=4, dim=(4100, 1))


def test_sprite_above_8192_px_is_served_with_a_warning(corpus):
    run = SPRITE_WIDE
    embedding = corpus.embedding(run)
    assert embedding["error"] is None
    assert embedding["sprite"] == {"single_image_dim": [4100, 1]}
    assert any(w.startswith(f"{run}/s.png: sprite is 8200x2 px, above TensorBoard's 8192 px")
               for w in embedding["warnings"])
    response = corpus.get("sprite", run)
    assert response.status_code == 200 and response.content == WIDE_SPRITE


@pytest.mark.parametrize("run", [
    sprite_case("sprite-no-dim", png_bytes(24, 24), dim=()),
    sprite_case("sprite-one-dim", png_bytes(24, 24), dim=(8,)),
])
def test_sprite_without_single_image_dim_names_the_config_field(corpus, run):
    error = sprite_refused_rest_kept(corpus, run, f"{run}/projector_config.pbtxt",
                                     "embeddings[0].sprite.single_image_dim")
    assert "needs single_image_dim [width, height]" in error


# -- bookmarks --------------------------------------------------------------------------------


def bookmarks_case(run: str, bookmarks: str) -> str:
    config = embedding_config(tensor_name="t", tensor_path="t.npy", bookmarks_path="b.json")
    return case(run, config, {"t.npy": npy_bytes(vectors(5, 2)), "b.json": bookmarks})


BOOKMARKS_JSON = bookmarks_case("bookmarks-json", '[\n  {"label": "a"},\n  {"label": }\n]\n')


def test_bookmarks_invalid_json_names_the_line(corpus):
    run = BOOKMARKS_JSON
    error = corpus.refused(run, "bookmarks", f"{run}/b.json line 3")
    assert "not valid JSON" in error
    corpus.tensor(run)


BOOKMARKS_SIZE = bookmarks_case("bookmarks-size", json.dumps([
    {"label": "fits", "dataSetDimensions": [5, 2]},
    {"label": "other", "dataSetDimensions": [1797, 64]}]))


def test_bookmarks_for_another_data_set_size_are_refused_with_the_reason(corpus):
    run = BOOKMARKS_SIZE
    error = corpus.refused(run, "bookmarks", f"{run}/b.json", "field '[1].dataSetDimensions'")
    assert "saved for a data set of [1797, 64], this embedding is [5, 2]" in error
    assert corpus.embedding(run)["has_bookmarks"] is True
    corpus.tensor(run)


BOOKMARKS_DEEP = bookmarks_case("bookmarks-deep", '[{"label": "a", "projections":\n'
                                + "[" * 5000 + "]" * 5000 + "}]")


def test_deep_nested_bookmarks_are_refused_and_the_embedding_still_serves(corpus):
    run = BOOKMARKS_DEEP
    error = corpus.refused(run, "bookmarks", f"{run}/b.json line 2")
    assert "nested 5,002 levels deep, over the budget of 64 levels of nesting" in error
    corpus.tensor(run)
