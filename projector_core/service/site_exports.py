"""A site export as a job (``GET /api/export/site``): the site built and zipped on one of the
job engine's requested workers, so the engine's worker count is how many exports build at
once (two by default) and the rest wait in its queue, whatever a client sends; the server's
memory is then bounded by that many exports, not by the number of requests (issue 38).

The projections an export needs are jobs too; a queued one runs on the export's own worker
(``JobManager.run_here``), so exports holding every worker never wait for a projection that
has no worker left. The job's phase is the export's progress line ("copying the front end",
a projection's name with its fraction), and a cancel stops it at its next line.

Its result is a :class:`SiteZip`, a zip in a temporary folder: removed by ``discard`` once
the one request waiting for it has sent it, else when the job is forgotten (or the process
ends).
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from projector_core.errors import UnknownName
from projector_core.export.embedding_data import Progress
from projector_core.export.site_zip import zip_site
from projector_core.jobs.engine import JobManager
from projector_core.jobs.job import Job, JobContext, JobStatus
from projector_core.projection.jobs import NotDone

Build = Callable[[Path, Progress], Any]  # writes the site into a folder, telling its progress


class SiteZip:
    """A finished export: the zip at ``path``, the name a download suggests."""

    def __init__(self, folder: Path, name: str) -> None:
        self.path = folder / "site.zip"
        self.name = name
        self._remove = weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)

    def discard(self) -> None:
        """Remove the zip now (it has been sent to the one request that wanted it)."""
        self._remove()


def site_export_job(jobs: JobManager, build: Build, about: dict[str, Any], name: str) -> Job:
    """``build`` and its zip as a queued job (one per request), its result a :class:`SiteZip`."""
    def work(ctx: JobContext) -> SiteZip:
        def progress(stage: str, fraction: float | None) -> None:
            ctx.check()  # a cancelled export stops at its next line
            ctx.job.set_phase(stage, fraction)

        folder = Path(tempfile.mkdtemp(prefix="projector-site-"))
        try:
            build(folder / "site", progress)
            progress("zipping", None)
            zip_site(folder / "site", folder / "site.zip")
            shutil.rmtree(folder / "site")
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return SiteZip(folder, name)

    job = jobs.submit(work)
    job.about = {"kind": "export", "method": "site", **about}
    return job


def site_zip(job: Job) -> SiteZip:
    """A done export job's zip: :class:`NotDone` before, ValueError for another kind of job,
    :class:`UnknownName` once its zip was sent to the request that waited for it."""
    if job.status is not JobStatus.DONE:
        raise NotDone(job)
    found = job.result
    if not isinstance(found, SiteZip):
        raise ValueError(f"job {job.id!r} is a {job.about.get('kind', 'other')} job, not a "
                         "site export")
    if not found.path.is_file():
        raise UnknownName(f"the site of job {job.id!r} was sent to the request that waited "
                          "for it, and removed")
    return found
