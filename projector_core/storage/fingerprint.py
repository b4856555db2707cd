"""The one recipe for cache keys and data versions: ``fingerprint(*parts)``.

Every cache (parsed tensors, finished projections, sprite atlases, embedded text, neighbour
indexes) is keyed by what its entry was made from. One recipe means a key never collides
across recipes by accident (parts are length-prefixed, so ``("ab", "c")`` and ``("a", "bc")``
differ) and a change of rule is made once.
"""

from __future__ import annotations

import hashlib

LENGTH = 32  # hex digits: 128 bits, far past any collision among a user's files


def fingerprint(*parts: object) -> str:
    """A short hex digest of ``parts``: raw bytes for bytes-like parts (a C-contiguous array's
    ``.data``), the text of any other part (str, numbers, tuples)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, (bytes, bytearray, memoryview)) else str(part).encode()
        size = data.nbytes if isinstance(data, memoryview) else len(data)
        digest.update(size.to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()[:LENGTH]
