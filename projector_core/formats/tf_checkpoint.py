"""TensorFlow "V2" checkpoints (TF1 Saver and TF2 tf.train.Checkpoint) read without TensorFlow.

A checkpoint with prefix P is `P.index` plus `P.data-00000-of-0000N`. The index is a
LevelDB-style table whose keys are variable names and whose values are `BundleEntryProto`
messages (dtype, shape, shard, offset, size, masked crc32c, slices); the empty key holds the
`BundleHeaderProto` (shard count, endianness). TensorFlow's BundleWriter always writes the
index uncompressed ("the default use of Snappy compression may not be supported on all
platforms"), so a snappy block is reported as unsupported rather than pulling in a
decompressor. The few protobuf fields needed are decoded by a small wire-format reader: the
`protobuf` package would need TensorFlow's generated classes, which is more code to carry than
the reader itself. Every checksum TensorFlow stores is verified: each index block's and each
tensor's.
"""

from __future__ import annotations

import codecs
import functools
import glob
import math
import re
import struct
from dataclasses import dataclass
from pathlib import Path

import google_crc32c
import numpy as np

from projector_core.errors import DataError

_TABLE_MAGIC = 0xDB4775248B80FB57
_FOOTER_SIZE = 48
_BLOCK_TRAILER_SIZE = 5  # compression type byte + masked crc32c
_CRC_MASK_DELTA = 0xA282EAD8

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


@dataclass(frozen=True)
class _Entry:
    """One BundleEntryProto: where a tensor's bytes are and how to check them."""

    dtype: int
    shape: tuple[int, ...]
    shard_id: int
    offset: int
    size: int
    crc32c: int | None
    slices: tuple[tuple[tuple[int, int], ...], ...]  # per slice, per dim: (start, length or -1)


@dataclass(frozen=True)
class _Index:
    num_shards: int
    big_endian: bool
    entries: dict[str, _Entry]
    slice_entries: dict[bytes, _Entry]  # keyed by TensorFlow's encoded "name + slice" key


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
    index = _load_index(Path(prefix))
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
    index = _load_index(prefix)
    index_file = str(_index_path(prefix))
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


def _index_path(prefix: Path) -> Path:
    return prefix.with_name(prefix.name + ".index")


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
    if not _inside(candidate, folder) or not _index_path(candidate).is_file():
        candidates.append(folder / candidate.name)
    for prefix in candidates:
        if allow_folder and prefix.is_dir() and _inside(prefix, folder):
            found = find_checkpoint(prefix)
            if found is not None:
                return found
        index = _index_path(prefix)
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


# -- the index table --------------------------------------------------------------------------


def _load_index(prefix: Path) -> _Index:
    path = _index_path(prefix)
    try:
        stat = path.stat()
    except OSError as error:
        raise DataError(f"cannot read checkpoint index: {error.strerror}", file=str(path)) from None
    return _parse_index_cached(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=32)
def _parse_index_cached(path: str, _mtime_ns: int, _size: int) -> _Index:
    """Parsed once per version of the file: a rewritten index has a new mtime or size."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise DataError(f"cannot read checkpoint index: {error.strerror}", file=path) from None
    return _parse_index(data, path)


def _parse_index(data: bytes, path: str) -> _Index:
    if len(data) < _FOOTER_SIZE:
        raise DataError("too short to be a checkpoint index (truncated?)", file=path)
    footer = data[-_FOOTER_SIZE:]
    if struct.unpack("<Q", footer[-8:])[0] != _TABLE_MAGIC:
        raise DataError("not a TensorFlow checkpoint index (bad magic number)", file=path)
    try:
        _metaindex_offset, pos = _varint(footer, 0)
        _metaindex_size, pos = _varint(footer, pos)
        index_offset, pos = _varint(footer, pos)
        index_size, pos = _varint(footer, pos)
    except IndexError:
        raise DataError("corrupt table footer", file=path) from None
    header: bytes | None = None
    entries: dict[str, _Entry] = {}
    slice_entries: dict[bytes, _Entry] = {}
    for _, handle in _block_entries(_block(data, index_offset, index_size, path), path):
        try:
            offset, pos = _varint(handle, 0)
            size, _ = _varint(handle, pos)
        except IndexError:
            raise DataError("corrupt block handle in the table index", file=path) from None
        for key, value in _block_entries(_block(data, offset, size, path), path):
            if key == b"":
                header = value
            elif key[:1] == b"\x00":
                slice_entries[key] = _parse_entry(value, path, repr(key))
            else:
                name = key.decode("utf-8", errors="replace")
                entries[name] = _parse_entry(value, path, name)
    if header is None:
        raise DataError("checkpoint index has no header entry", file=path)
    fields = _fields(header, path, "header")
    try:
        num_shards = _int(fields.get(1, [1])[-1])
        big_endian = _int(fields.get(2, [0])[-1]) == 1
    except IndexError:
        raise DataError("corrupt header entry", file=path) from None
    if num_shards < 1:
        raise DataError(f"header says {num_shards} shards", file=path, field="num_shards")
    for name, entry in entries.items():
        if entry.shard_id >= num_shards and not entry.slices:
            raise DataError(
                f"shard {entry.shard_id} of {num_shards} does not exist", file=path, field=name
            )
    return _Index(num_shards, big_endian, entries, slice_entries)


def _block(data: bytes, offset: int, size: int, path: str) -> bytes:
    """A table block's contents after checking its trailer's type and masked crc32c."""
    end = offset + size
    if end + _BLOCK_TRAILER_SIZE > len(data) - _FOOTER_SIZE:
        raise DataError(
            f"block at byte {offset} runs past the end of the file (truncated?)", file=path
        )
    contents = data[offset:end]
    compression = data[end]
    (stored,) = struct.unpack("<I", data[end + 1 : end + 5])
    if _unmask(stored) != google_crc32c.value(data[offset : end + 1]):
        raise DataError(
            f"checksum mismatch in the index block at byte {offset} (corrupt file)", file=path
        )
    if compression == 1:
        raise DataError(
            "snappy-compressed index blocks are not supported (TensorFlow writes "
            "checkpoint indexes uncompressed)",
            file=path,
        )
    if compression != 0:
        raise DataError(f"unknown block compression type {compression}", file=path)
    return contents


def _block_entries(block: bytes, path: str) -> list[tuple[bytes, bytes]]:
    """Key/value pairs of a table block: prefix-shared keys, then the restart-point array."""
    try:
        (num_restarts,) = struct.unpack("<I", block[-4:])
        limit = len(block) - 4 - 4 * num_restarts
        if limit < 0:
            raise IndexError
        pairs = []
        key = b""
        pos = 0
        while pos < limit:
            shared, pos = _varint(block, pos)
            unshared, pos = _varint(block, pos)
            value_size, pos = _varint(block, pos)
            if shared > len(key) or pos + unshared + value_size > limit:
                raise IndexError
            key = key[:shared] + block[pos : pos + unshared]
            pos += unshared
            pairs.append((key, block[pos : pos + value_size]))
            pos += value_size
        return pairs
    except (IndexError, struct.error):
        raise DataError("corrupt block in the checkpoint index", file=path) from None


# -- protobuf wire format ---------------------------------------------------------------------


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise IndexError("varint too long")


def _fields(message: bytes, path: str, what: str) -> dict[int, list[int | bytes]]:
    """Field number -> values of a protobuf message (varints as ints, fixed32/64 as ints)."""
    fields: dict[int, list[int | bytes]] = {}
    pos = 0
    try:
        while pos < len(message):
            tag, pos = _varint(message, pos)
            number, wire_type = tag >> 3, tag & 7
            value: int | bytes
            if wire_type == 0:
                value, pos = _varint(message, pos)
            elif wire_type == 1:
                (value,) = struct.unpack_from("<Q", message, pos)
                pos += 8
            elif wire_type == 2:
                size, pos = _varint(message, pos)
                if pos + size > len(message):
                    raise IndexError
                value = message[pos : pos + size]
                pos += size
            elif wire_type == 5:
                (value,) = struct.unpack_from("<I", message, pos)
                pos += 4
            else:
                raise IndexError
            fields.setdefault(number, []).append(value)
    except (IndexError, struct.error):
        raise DataError("corrupt protobuf in the checkpoint index", file=path, field=what) from None
    return fields


def _int(value: int | bytes) -> int:
    """A varint as the signed int64 protobuf stores."""
    if isinstance(value, bytes):
        raise IndexError("expected a number")
    return value - (1 << 64) if value >= 1 << 63 else value


def _parse_entry(value: bytes, path: str, name: str) -> _Entry:
    """BundleEntryProto: 1 dtype, 2 shape, 3 shard_id, 4 offset, 5 size, 6 crc32c, 7 slices."""
    fields = _fields(value, path, name)
    try:
        shape_fields = _fields(_bytes(fields.get(2, [b""])[-1]), path, name)
        shape = tuple(
            _int(_fields(_bytes(dim), path, name).get(1, [0])[-1])
            for dim in shape_fields.get(2, [])
        )
        slices = tuple(
            tuple(
                _extent(_fields(_bytes(extent), path, name))
                for extent in _fields(_bytes(tensor_slice), path, name).get(1, [])
            )
            for tensor_slice in fields.get(7, [])
        )
        crc = fields.get(6)
        return _Entry(
            dtype=_int(fields.get(1, [0])[-1]),
            shape=shape,
            shard_id=_int(fields.get(3, [0])[-1]),
            offset=_int(fields.get(4, [0])[-1]),
            size=_int(fields.get(5, [0])[-1]),
            crc32c=_int(crc[-1]) if crc else None,
            slices=slices,
        )
    except IndexError:
        raise DataError(
            "corrupt tensor entry in the checkpoint index", file=path, field=name
        ) from None


def _bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise IndexError("expected a message")
    return value


def _extent(fields: dict[int, list[int | bytes]]) -> tuple[int, int]:
    """TensorSliceProto.Extent: (start, length); length -1 means the whole dimension."""
    start = _int(fields.get(1, [0])[-1])
    length = _int(fields[2][-1]) if 2 in fields else -1
    return start, length


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


def _read_tensor(prefix: Path, index: _Index, name: str, entry: _Entry) -> np.ndarray:
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
            file=str(_index_path(prefix)),
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
    if entry.crc32c is not None and _unmask(entry.crc32c) != google_crc32c.value(data):
        raise DataError(
            "crc32c checksum mismatch: the tensor's bytes are corrupt", file=str(shard), field=name
        )
    return np.frombuffer(data, dtype=dtype).reshape(entry.shape)


def _to_float32(values: np.ndarray, dtype: str) -> np.ndarray:
    """float16/float64 cast, bfloat16 widened (its bits are a float32's upper half)."""
    if dtype == "bfloat16":
        values = (values.astype(np.uint32) << 16).view(np.float32)
    return np.ascontiguousarray(values, dtype=np.float32)


def _unmask(masked: int) -> int:
    """Undo TF's crc mask: masked = rotate_right(crc, 15) + 0xa282ead8."""
    rotated = (masked - _CRC_MASK_DELTA) & 0xFFFFFFFF
    return ((rotated >> 17) | (rotated << 15)) & 0xFFFFFFFF
