"""The index of a TensorFlow "V2" checkpoint (`P.index`), read without TensorFlow.

It is a LevelDB-style table whose keys are variable names and whose values are
`BundleEntryProto` messages (dtype, shape, shard, offset, size, masked crc32c, slices); the
empty key holds the `BundleHeaderProto` (shard count, endianness). TensorFlow's BundleWriter
always writes the index uncompressed, so a snappy block is reported as unsupported rather than
pulling in a decompressor. The few protobuf fields needed are decoded by a small wire-format
reader (the `protobuf` package would need TensorFlow's generated classes). Every block's
checksum is verified. ``tf_checkpoint.py`` finds checkpoints and reads their tensors.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass
from pathlib import Path

import google_crc32c

from projector_core.errors import DataError

_TABLE_MAGIC = 0xDB4775248B80FB57
_FOOTER_SIZE = 48
_BLOCK_TRAILER_SIZE = 5  # compression type byte + masked crc32c
_CRC_MASK_DELTA = 0xA282EAD8


@dataclass(frozen=True)
class BundleEntry:
    """One BundleEntryProto: where a tensor's bytes are and how to check them."""

    dtype: int
    shape: tuple[int, ...]
    shard_id: int
    offset: int
    size: int
    crc32c: int | None
    slices: tuple[tuple[tuple[int, int], ...], ...]  # per slice, per dim: (start, length or -1)


@dataclass(frozen=True)
class BundleIndex:
    num_shards: int
    big_endian: bool
    entries: dict[str, BundleEntry]
    slice_entries: dict[bytes, BundleEntry]  # keyed by TensorFlow's encoded "name + slice" key


def index_path(prefix: Path) -> Path:
    return prefix.with_name(prefix.name + ".index")


# -- the index table --------------------------------------------------------------------------


def load_index(prefix: Path) -> BundleIndex:
    path = index_path(prefix)
    try:
        stat = path.stat()
    except OSError as error:
        raise DataError(f"cannot read checkpoint index: {error.strerror}", file=str(path)) from None
    return _parse_index_cached(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=32)
def _parse_index_cached(path: str, _mtime_ns: int, _size: int) -> BundleIndex:
    """Parsed once per version of the file: a rewritten index has a new mtime or size."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise DataError(f"cannot read checkpoint index: {error.strerror}", file=path) from None
    return _parse_index(data, path)


def _parse_index(data: bytes, path: str) -> BundleIndex:
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
    entries: dict[str, BundleEntry] = {}
    slice_entries: dict[bytes, BundleEntry] = {}
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
    return BundleIndex(num_shards, big_endian, entries, slice_entries)


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
    if unmask(stored) != google_crc32c.value(data[offset : end + 1]):
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


def _parse_entry(value: bytes, path: str, name: str) -> BundleEntry:
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
        return BundleEntry(
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


def unmask(masked: int) -> int:
    """Undo TF's crc mask: masked = rotate_right(crc, 15) + 0xa282ead8."""
    rotated = (masked - _CRC_MASK_DELTA) & 0xFFFFFFFF
    return ((rotated >> 17) | (rotated << 15)) & 0xFFFFFFFF
