"""The limits the data puts on request parameters, as ``GET /api/runs`` (each embedding's
``limits``) and ``GET /api/projections/methods`` send them; computed by
``projector_core.projection.methods.data_limits``."""

from __future__ import annotations

from typing import Any

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


class ParameterOut(BaseModel):
    """One parameter of a method, as the parameter table publishes it."""

    type: str = Field(description='"number", "integer", "boolean", "string" or "array"')
    default: Any = Field(description="What a request that leaves it out gets; for an "
                                     "embedding, the data's default (perplexity for its N)")
    minimum: int | float | None = Field(description="Smallest value accepted, data limits applied")
    maximum: int | float | None = Field(description="Largest value accepted, data limits applied")
    exclusive_minimum: bool = Field(description="The minimum itself is refused")
    choices: list[Any] | None = Field(description="Values allowed (a string parameter), or "
                                                  "besides a number (\"auto\")")
    nullable: bool = Field(description="null is accepted (the default then applies)")
    required: bool
    description: str
    items: str | None = Field(description="An array's item type")
    min_items: int | None
    max_items: int | None
    max_length: int | None = Field(description="A string's longest length")


class DefaultRequestOut(BaseModel):
    """What a fresh view of the method asks: the page's request, the default view's."""

    dims: int
    params: dict[str, Any] = Field(description="The parameters it sets, at this table's "
                                               "defaults for the data")


class MethodOut(BaseModel):
    """A projection method: its parameters and what it can do."""

    title: str
    quick: bool = Field(description="Answered by one blocking request; the others are "
                                    "followed frame by frame")
    starts_from_layout: bool = Field(description="init_from_job is a start layout (the others "
                                                 "turn their result onto one: align_to_job)")
    streams_frames: bool = Field(description="Live layouts stream while it runs")
    supports_3d: bool
    dims: list[int] = Field(description="The dims a request may ask")
    params: dict[str, ParameterOut]
    limits: dict[str, LimitOut] = Field(description="Data limits that bound no parameter "
                                                    "(t-SNE's points, precomputed dimensions)")
    default_request: DefaultRequestOut | None = Field(
        description="The request a fresh view of this method makes (null: none opens unasked, "
                    "its parameters are the user's)")


class DataShapeOut(BaseModel):
    n: int
    dim: int


class MethodTableOut(BaseModel):
    """``GET /api/projections/methods``: the one parameter table."""

    data: DataShapeOut | None = Field(description="The embedding the table was made for "
                                                  "(null: no data limits applied)")
    methods: dict[str, MethodOut]
    projections: dict[str, dict[str, LimitOut]] | None = Field(
        None, description="With an embedding: the data limits alone, as /api/runs' limits")
    neighbors: dict[str, LimitOut] | None = Field(
        None, description="With an embedding: \"k\" of GET /api/neighbors")
