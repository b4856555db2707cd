"""What can go wrong with the annotation store, each naming the store's file.

None of these is the request's fault, so none is a ValueError (a 422): the doors map them
to their own statuses. A store that cannot be opened leaves the server serving the LOGDIR
read-only (:class:`AnnotationsOff`); a write that cannot be made is refused whole.
"""

from __future__ import annotations


class StoreError(RuntimeError):
    """A problem with the store file itself; the message names the file."""

    def __str__(self) -> str:
        return str(self.args[0])


class StoreUnavailable(StoreError):
    """The store file cannot be used: damaged, not a database, locked by another program,
    written by a newer version, or in a folder we cannot write."""


class AnnotationsOff(StoreError):
    """Annotations are off (``--annotations off``, or a store that could not be opened):
    reads answer with nothing saved, writes are refused with the reason."""


class StoreBusy(StoreError):
    """Another process held the store's write lock longer than we wait: nothing was written,
    the same request may simply be sent again."""


class StoreWriteFailed(StoreError):
    """The disk (or the file system's size limit) refused the write: nothing of the edit was
    written, the store is as it was before."""


def busy(path: object) -> StoreBusy:
    return StoreBusy(f"annotation store {path}: is locked by another program (it held the "
                     "write lock too long); nothing was written, try again")
