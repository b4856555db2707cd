"""The limits the data puts on request parameters, as ``GET /api/runs`` (each embedding's
``limits``) and ``GET /api/projections/methods`` send them; computed by
``projector_core.projection.methods.data_limits``."""

from __future__ import annotations

from pydantic import BaseModel, Field


class LimitOut(BaseModel):
    """An integer parameter's limits are integers (``int`` before ``float``: pydantic keeps
    an int an int)."""

    minimum: int | float | None = Field(description="Smallest value allowed (null: no data limit)")
    maximum: int | float | None = Field(description="Largest value allowed (null: no data limit)")


class DataLimitsOut(BaseModel):
    projections: dict[str, dict[str, LimitOut]] = Field(
        description="Per method, per parameter (t-SNE's \"points\": the points it needs), "
                    "under default sampling; the parameter model's own range included")
    neighbors: dict[str, LimitOut] = Field(description="\"k\" of GET /api/neighbors")
