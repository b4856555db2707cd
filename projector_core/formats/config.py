"""Projector configs: TensorBoard's ``projector_config.pbtxt`` and the standalone ``.json``.

Both are read into the same dataclasses. Asset paths are resolved here, once, with the rule
TensorBoard adopted after its 2026 file-read vulnerability: a path must resolve (symlinks
followed) inside the folder that holds the config.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from projector_core.errors import DataError
from projector_core.formats import json_text
from projector_core.formats.budgets import CONFIG_BYTES, read_bounded
from projector_core.formats.pbtxt import parse_pbtxt

PBTXT_NAME = "projector_config.pbtxt"
JSON_NAME = "projector_config.json"
CONFIG_NAMES = (PBTXT_NAME, JSON_NAME)
# A config here belongs to the run of the folder above it (TensorBoard's plugin data folder).
PLUGIN_DIR = ("plugins", "org_tensorflow_tensorboard_projector")

_SPRITE_SCHEMA = {"image_path": "string", "single_image_dim": "uint"}
_EMBEDDING_SCHEMA = {
    "tensor_name": "string",
    "metadata_path": "string",
    "bookmarks_path": "string",
    "tensor_shape": "uint",
    "sprite": {"name": "SpriteMetadata", "fields": _SPRITE_SCHEMA},
    "tensor_path": "string",
}
_CONFIG_SCHEMA = {
    "model_checkpoint_path": "string",
    "embeddings": {"name": "EmbeddingInfo", "fields": _EMBEDDING_SCHEMA},
    "model_checkpoint_dir": "string",
}


@dataclass(frozen=True)
class SpriteInfo:
    image_path: str
    single_image_dim: tuple[int, ...]


@dataclass(frozen=True)
class EmbeddingInfo:
    """One ``embeddings`` entry; ``line`` is where it starts (pbtxt) or its list index (json)."""

    tensor_name: str
    tensor_path: str | None = None
    tensor_shape: tuple[int, ...] = ()
    metadata_path: str | None = None
    bookmarks_path: str | None = None
    sprite: SpriteInfo | None = None
    where: str = ""


@dataclass(frozen=True)
class ProjectorConfig:
    path: Path
    embeddings: list[EmbeddingInfo] = field(default_factory=list)
    model_checkpoint_path: str | None = None

    @property
    def folder(self) -> Path:
        return self.path.parent


def _single(fields: dict[str, list[Any]], name: str) -> Any:
    values = fields.get(name)
    return values[-1] if values else None  # protobuf semantics: the last value of a singular field wins


def _embedding_from_pbtxt(fields: dict[str, list[Any]], index: int) -> EmbeddingInfo:
    sprite_fields = _single(fields, "sprite")
    sprite = None
    if sprite_fields is not None:
        sprite = SpriteInfo(
            image_path=_single(sprite_fields, "image_path") or "",
            single_image_dim=tuple(sprite_fields.get("single_image_dim", [])),
        )
    return EmbeddingInfo(
        tensor_name=_single(fields, "tensor_name") or "",
        tensor_path=_single(fields, "tensor_path") or None,
        tensor_shape=tuple(fields.get("tensor_shape", [])),
        metadata_path=_single(fields, "metadata_path") or None,
        bookmarks_path=_single(fields, "bookmarks_path") or None,
        sprite=sprite,
        where=f"embeddings[{index}]",
    )


def _read_text(path: Path, display: str) -> str:
    raw = read_bounded(path, display, CONFIG_BYTES)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError("not valid UTF-8", file=display,
                        line=raw[: exc.start].count(b"\n") + 1) from None


def parse_pbtxt_config(path: Path, display: str) -> ProjectorConfig:
    fields = parse_pbtxt(_read_text(path, display), _CONFIG_SCHEMA, "ProjectorConfig", display)
    return ProjectorConfig(
        path=path,
        embeddings=[_embedding_from_pbtxt(e, i) for i, e in enumerate(fields.get("embeddings", []))],
        model_checkpoint_path=_single(fields, "model_checkpoint_path") or None,
    )


def _json_get(entry: dict[str, Any], camel: str, snake: str) -> Any:
    return entry.get(camel, entry.get(snake))


def _json_string(entry: dict[str, Any], camel: str, snake: str, display: str, where: str) -> str | None:
    value = _json_get(entry, camel, snake)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise DataError("must be a string", file=display, field=f"{where}.{camel}")
    return value


def _json_dims(value: Any, display: str, where: str) -> tuple[int, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, int) and v >= 0 for v in value):
        raise DataError("must be a list of non-negative integers", file=display, field=where)
    return tuple(value)


def parse_json_config(path: Path, display: str) -> ProjectorConfig:
    """The standalone projector's config: camelCase names (snake_case accepted too)."""
    text = _read_text(path, display)
    try:
        data = json_text.loads(text, display)
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON: {exc.msg}", file=display, line=exc.lineno) from None
    if not isinstance(data, dict):
        raise DataError("must be a JSON object with an 'embeddings' list", file=display)
    entries = data.get("embeddings", [])
    if not isinstance(entries, list):
        raise DataError("must be a list", file=display, field="embeddings")
    embeddings = []
    for i, entry in enumerate(entries):
        where = f"embeddings[{i}]"
        if not isinstance(entry, dict):
            raise DataError("must be an object", file=display, field=where)
        sprite = None
        sprite_entry = entry.get("sprite")
        if sprite_entry is not None:
            if not isinstance(sprite_entry, dict):
                raise DataError("must be an object", file=display, field=f"{where}.sprite")
            sprite = SpriteInfo(
                image_path=_json_string(sprite_entry, "imagePath", "image_path", display,
                                        f"{where}.sprite") or "",
                single_image_dim=_json_dims(
                    _json_get(sprite_entry, "singleImageDim", "single_image_dim"),
                    display, f"{where}.sprite.singleImageDim"),
            )
        embeddings.append(EmbeddingInfo(
            tensor_name=_json_string(entry, "tensorName", "tensor_name", display, where) or "",
            tensor_path=_json_string(entry, "tensorPath", "tensor_path", display, where),
            tensor_shape=_json_dims(_json_get(entry, "tensorShape", "tensor_shape"), display,
                                    f"{where}.tensorShape"),
            metadata_path=_json_string(entry, "metadataPath", "metadata_path", display, where),
            bookmarks_path=_json_string(entry, "bookmarksPath", "bookmarks_path", display, where),
            sprite=sprite,
            where=where,
        ))
    checkpoint = data.get("modelCheckpointPath", data.get("model_checkpoint_path"))
    return ProjectorConfig(path=path, embeddings=embeddings,
                           model_checkpoint_path=checkpoint if isinstance(checkpoint, str) else None)


def parse_config(path: Path, display: str) -> ProjectorConfig:
    """Read either config flavour; ``display`` is the path shown in messages (relative to LOGDIR)."""
    if path.name.endswith(".json"):
        return parse_json_config(path, display)
    return parse_pbtxt_config(path, display)


def resolve_asset(folder: Path, asset: str, display: str, field_name: str) -> Path:
    """Resolve an asset path from a config, refusing anything that leaves the config's folder.

    Symlinks are followed before the check, so a link pointing out is refused too.
    """
    root = folder.resolve()
    candidate = (root / asset).resolve()
    if not candidate.is_relative_to(root):
        raise DataError(f"path {asset!r} resolves outside the config directory", file=display,
                        field=field_name)
    return candidate
