"""TensorFlow "V2" checkpoints (TF1 Saver and TF2 tf.train.Checkpoint) read without TensorFlow.

A checkpoint with prefix P is `P.index` (a table of where each tensor's bytes are:
``tf_bundle_index.py``) plus `P.data-00000-of-0000N`, the shards holding the bytes. Every
checksum TensorFlow stores is verified: each index block's there, each tensor's here.
"""

from __future__ import annotations

import codecs
import glob
import math
import re
from pathlib import Path

import google_crc32c
import numpy as np

from projector_core.errors import DataError
from projector_core.formats.tf_bundle_index import (
    BundleEntry,
    BundleIndex,
    index_path,
    load_index,
    unmask,
)

# tensorflow/core/framework/types.proto: DataType -> (name, numpy dtype or None if unreadable)
_DTYPES: dict[int, tuple[str, str | None]] = {
    1: ("float32", "f4"),
    2: ("float64", "f8"),
    3: ("int32", "i4"),
    4: ("uint8", "u1"),
    5: ("int16", "i2"),
    6: ("int8", "i1"),
    7: ("string", None),
    8: ("complex64", "c8"),
    9: ("int64", "i8"),
    10: ("bool", "?"),
    14: ("bfloat16", "u2"),  # upper half of a float32; widened by _to_float32
    17: ("uint16", "u2"),
    18: ("complex128", "c16"),
    19: ("float16", "f2"),
    20: ("resource", None),
    21: ("variant", None),
    22: ("uint32", "u4"),
    23: ("uint64", "u8"),
}
FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})

# Optimizer state that TF stores beside the variables. TensorBoard lists every 2-D variable,
# so its picker fills with Adam moments; these names are skipped instead:
# - TF2 slots of tf.compat.v1 / Keras 2 optimizers: `VAR/.OPTIMIZER_SLOT/OPT/m/...`;
# - TF2 objects under an attribute named like an optimizer (Keras 3 keeps its moments as
#   `optimizer/_variables/N/...`, with no slot marker);
# - TF1 slots, named after the optimizer below the variable: `VAR/Adam`, `VAR/Adam_1`, ...
_OPTIMIZER_NAMES = re.compile(
    r"(Adam|AdamW|Adamax|Nadam|LazyAdam|Adagrad|AdagradDA|Adadelta|Ftrl|RMSProp|RMSprop|"
    r"Momentum|ProximalAdagrad|ProximalGradientDescent|Lion|Adafactor)(_\d+)?",
)


def find_checkpoint(folder: Path, model_checkpoint_path: str | None = None) -> Path | None:
    """The prefix of the checkpoint to read in `folder`, or None when it holds none.

    With `model_checkpoint_path` (the config field) that path is used: relative to `folder`, or
    a folder holding a `checkpoint` file. Otherwise the `checkpoint` state file names it, and
    when that file is missing or stale (a moved folder, an absolute path from another machine)
    the newest `*.index` with its first data shard is taken. A path that leaves `folder` is
    never followed, but its file name is looked for inside `folder`. Raises DataError when the
    configured path cannot be used, so that discovery can say why.
    """
    folder = Path(folder)
    if model_checkpoint_path:
        prefix = _resolve_prefix(folder, model_checkpoint_path, allow_folder=True)
        if prefix is None:
            raise DataError(
                f"no checkpoint '{model_checkpoint_path}' inside {folder}",
                field="model_checkpoint_path",
            )
        return prefix
    state = folder / "checkpoint"
    if state.is_file():
        named = _state_file_prefix(state)
        prefix = _resolve_prefix(folder, named, allow_folder=False) if named else None
        if prefix is not None:
            return prefix
    return _newest_prefix(folder)


def list_variables(prefix: Path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Every variable in the checkpoint: name -> (dtype name, shape), as tf.train.list_variables."""
    index = load_index(Path(prefix))
    return {name: (_dtype_name(e.dtype), e.shape) for name, e in index.entries.items()}


def is_optimizer_state(name: str) -> bool:
    """Whether a variable name is optimizer state (slots, moments) rather than a model weight."""
    if "/.OPTIMIZER_SLOT/" in name:
        return True
    parts = name.split("/")
    if "/.ATTRIBUTES/" in name:
        path = parts[: parts.index(".ATTRIBUTES")]
        return any(part.lower().endswith("optimizer") for part in path)
    return any(_OPTIMIZER_NAMES.fullmatch(part) for part in parts[1:])


def embedding_variables(prefix: Path) -> dict[str, tuple[int, int]]:
    """The variables shown as embeddings: 2-D, float, non-empty, not optimizer state."""
    return {
        name: (shape[0], shape[1])
        for name, (dtype, shape) in list_variables(prefix).items()
        if dtype in FLOAT_DTYPES
        and len(shape) == 2
        and 0 not in shape
        and not is_optimizer_state(name)
    }


def read_variable(prefix: Path, name: str) -> np.ndarray:
    """A float variable as a float32 array of its shape, every stored checksum verified."""
    prefix = Path(prefix)
    index = load_index(prefix)
    index_file = str(index_path(prefix))
    entry = index.entries.get(name)
    if entry is None:
        raise DataError("no such variable in the checkpoint", file=index_file, field=name)
    dtype = _dtype_name(entry.dtype)
    if dtype not in FLOAT_DTYPES:
        raise DataError(f"variable is {dtype}, not a float tensor", file=index_file, field=name)
    if not entry.slices:
        return _to_float32(_read_tensor(prefix, index, name, entry), dtype)
    # A partitioned TF1 variable: the entry lists its slices, each stored under its own key.
    full = np.empty(entry.shape, dtype=np.float32)
    for extents in entry.slices:
        key = _slice_key(name, extents)
        part = index.slice_entries.get(key)
        if part is None:
            raise DataError(
                "a slice of this partitioned variable is missing", file=index_file, field=name
            )
        region = tuple(
            slice(None) if length < 0 else slice(start, start + length) for start, length in extents
        )
        values = _to_float32(_read_tensor(prefix, index, name, part), dtype)
        if full[region].shape != values.shape:
            raise DataError(
                f"slice shape {values.shape} does not fit its extents", file=index_file, field=name
            )
        full[region] = values
    return full


# -- files ------------------------------------------------------------------------------------


def _shard_path(prefix: Path, shard: int, num_shards: int) -> Path:
    return prefix.with_name(f"{prefix.name}.data-{shard:05d}-of-{num_shards:05d}")


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


def _resolve_prefix(folder: Path, named: str, *, allow_folder: bool) -> Path | None:
    """`named` as a prefix with an index inside `folder`, else its file name inside `folder`.

    With `allow_folder`, `named` may also be a folder (inside `folder`) holding checkpoints.
    """
    candidate = Path(named).expanduser()
    candidate = candidate if candidate.is_absolute() else folder / candidate
    candidates = [candidate]
    if not _inside(candidate, folder) or not index_path(candidate).is_file():
        candidates.append(folder / candidate.name)
    for prefix in candidates:
        if allow_folder and prefix.is_dir() and _inside(prefix, folder):
            found = find_checkpoint(prefix)
            if found is not None:
                return found
        index = index_path(prefix)
        if index.is_file() and _inside(index, folder):
            return prefix
    return None


def _state_file_prefix(state: Path) -> str | None:
    """`model_checkpoint_path` from the text-proto CheckpointState file TF keeps beside a run."""
    try:
        text = state.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(
        r"^\s*model_checkpoint_path\s*:\s*(?:\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)')",
        text,
        re.MULTILINE,
    )
    if match is None:
        return None
    quoted = match.group(1) if match.group(1) is not None else match.group(2)
    try:
        return codecs.escape_decode(quoted.encode("utf-8"))[0].decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None


def _newest_prefix(folder: Path) -> Path | None:
    """The most recently written checkpoint in `folder` that has an index and a first shard."""
    found = []
    for index in folder.glob("*.index"):
        prefix = index.with_name(index.name[: -len(".index")])
        if any(prefix.parent.glob(f"{glob.escape(prefix.name)}.data-00000-of-*")):
            try:
                found.append((index.stat().st_mtime_ns, prefix))
            except OSError:
                continue
    return max(found)[1] if found else None


# -- slice keys (tensorflow/core/util/saved_tensor_slice_util.cc, OrderedCode) ----------------


def _slice_key(name: str, extents: tuple[tuple[int, int], ...]) -> bytes:
    """The key under which TensorFlow stores one slice of a partitioned variable."""
    escaped = re.sub(rb"[\x00\xff]", lambda m: _ESCAPES[m.group()], name.encode("utf-8"))
    key = _ordered_unsigned(0) + escaped + b"\x00\x01" + _ordered_unsigned(len(extents))
    for start, length in extents:
        key += _ordered_signed(start) + _ordered_signed(length)
    return key


_ESCAPES = {b"\x00": b"\x00\xff", b"\xff": b"\xff\x00"}


def _ordered_unsigned(value: int) -> bytes:
    """OrderedCode::WriteNumIncreasing: a length byte, then big-endian bytes."""
    body = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return bytes([len(body)]) + body


def _ordered_signed(value: int) -> bytes:
    """OrderedCode::WriteSignedNumIncreasing: L leading header bits, then 7L-1 value bits."""
    magnitude = ~value if value < 0 else value
    length = (magnitude.bit_length() + 1 + 6) // 7
    body = bytearray((value % (1 << (8 * length))).to_bytes(length, "big"))
    header = (0xFFFF << (16 - length)) & 0xFFFF
    body[0] ^= header >> 8
    if length > 1:
        body[1] ^= header & 0xFF
    return bytes(body)


# -- tensor data ------------------------------------------------------------------------------


def _dtype_name(dtype: int) -> str:
    return _DTYPES.get(dtype, (f"dtype{dtype}", None))[0]


def _read_tensor(prefix: Path, index: BundleIndex, name: str, entry: BundleEntry) -> np.ndarray:
    """The entry's bytes from its shard as an array of the stored dtype, crc32c checked."""
    code = _DTYPES.get(entry.dtype, ("", None))[1]
    shard = _shard_path(prefix, entry.shard_id, index.num_shards)
    if code is None:
        raise DataError(
            f"cannot read a {_dtype_name(entry.dtype)} tensor", file=str(shard), field=name
        )
    dtype = np.dtype(code).newbyteorder(">" if index.big_endian else "<")
    expected = math.prod(entry.shape) * dtype.itemsize
    if entry.size != expected:
        raise DataError(
            f"stores {entry.size} bytes, shape {list(entry.shape)} needs {expected}",
            file=str(index_path(prefix)),
            field=name,
        )
    if not _inside(shard, prefix.parent):
        raise DataError(
            "data shard resolves outside the checkpoint folder", file=str(shard), field=name
        )
    try:
        with open(shard, "rb") as handle:
            handle.seek(entry.offset)
            data = handle.read(entry.size)
    except FileNotFoundError:
        raise DataError("data shard is missing", file=str(shard), field=name) from None
    except OSError as error:
        raise DataError(
            f"cannot read data shard: {error.strerror}", file=str(shard), field=name
        ) from None
    if len(data) != entry.size:
        raise DataError(
            f"truncated: the tensor needs bytes {entry.offset}..{entry.offset + entry.size} "
            f"but the file ends at byte {entry.offset + len(data)}",
            file=str(shard),
            field=name,
        )
    if entry.crc32c is not None and unmask(entry.crc32c) != google_crc32c.value(data):
        raise DataError(
            "crc32c checksum mismatch: the tensor's bytes are corrupt", file=str(shard), field=name
        )
    return np.frombuffer(data, dtype=dtype).reshape(entry.shape)


def _to_float32(values: np.ndarray, dtype: str) -> np.ndarray:
    """float16/float64 cast, bfloat16 widened (its bits are a float32's upper half)."""
    if dtype == "bfloat16":
        values = (values.astype(np.uint32) << 16).view(np.float32)
    return np.ascontiguousarray(values, dtype=np.float32)
