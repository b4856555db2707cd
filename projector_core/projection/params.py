"""What a projection request may ask for: one parameter model per method, with ranges.

These models are the one statement of every parameter's type, default and bounds: the
parameter table (:mod:`projector_core.projection.methods.table`, ``GET
/api/projections/methods``) publishes them, with the data's limits and defaults applied, and
the page, the client and the MCP tools read it instead of restating them.

The models reject unknown names and out-of-range values (a 422 through FastAPI) and serve as
the API's documented contract in /docs. Limits that depend on the data (perplexity against the
number of points, metadata columns that must exist) are declared in
:mod:`projector_core.projection.limits` and checked by each method's ``check``
(:mod:`projector_core.projection.methods`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

Seed = Annotated[int, Field(ge=0, le=2**32 - 1, description="Random seed; same seed, same result")]
InitFrom = Annotated[str | None, Field(
    max_length=64, description="A finished projection job over the same number of points: start "
                               "from its layout (t-SNE then skips early exaggeration), and turn "
                               "the result onto it (the comparison view)")]
AlignTo = Annotated[str | None, Field(
    max_length=64, description="A finished projection job over the same number of points: turn "
                               "the result onto its layout by orthogonal Procrustes")]


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _SampledParams(_Params):
    """When t-SNE and UMAP fit an even sample first and place the other points afterwards."""

    mode: Literal["auto", "full", "sample"] = Field(
        "auto", description='"full" fits every point; "sample" fits a random sample, streams it, '
                            'then places the rest; "auto" samples above sample_threshold points')
    sample_threshold: int = Field(
        100_000, ge=1000, le=10**9,
        description='"auto" fits a sample when there are more (finite) points than this')
    sample_size: int | None = Field(
        None, ge=100, le=10**8,
        description="Points in the sample; default min(sample_threshold, N / 2). "
                    "Must be below the number of points")


class TsneParams(_SampledParams):
    perplexity: float | None = Field(
        None, ge=2, le=1000,
        description="Effective number of neighbours; at most (N - 1) / 3. "
                    "Default: 30, lowered to fit small data sets.")
    learning_rate: Annotated[float, Field(gt=0, le=1e7)] | Literal["auto"] = Field(
        "auto", description='"auto" is N / exaggeration in each phase (Belkina et al. 2019)')
    n_iter: int = Field(
        750, ge=1, le=100_000,
        description="All iterations, early exaggeration included (the first "
                    "min(250, n_iter // 3) of them)")
    early_exaggeration: float = Field(
        12.0, ge=1, le=1000, description="How much the attraction between neighbours is "
                                         "multiplied during the early exaggeration")
    seed: Seed = 0
    init_from_job: InitFrom = None
    supervise_column: str | None = Field(
        None, max_length=256,
        description="Metadata column of labels that supervise the fit (TensorBoard's "
                    "\"supervise with\"); full mode only, a sampled fit ignores it")
    supervise_weight: float = Field(
        0.0, ge=0, le=1, description="0: labels ignored; 1: affinities between neighbours "
                                     "with different labels dropped, same-label ones doubled")


class UmapParams(_SampledParams):
    n_neighbors: int = Field(15, ge=2, le=200, description="Must be below the number of points")
    min_dist: float = Field(0.1, ge=0, le=0.99,
                            description="How closely points may be packed in the layout")
    n_epochs: int | None = Field(
        None, ge=1, le=10_000, description="Default as umap-learn: 500 up to 10,000 points, else 200")
    seed: Seed = 0
    init_from_job: InitFrom = None


class PcaParams(_Params):
    spherize: bool = Field(False, description="Centre, then scale each row to unit length first")
    components: int | None = Field(
        None, ge=1, le=100,
        description="Principal components returned (at most D); omitted: dims. More than "
                    "dims keeps the further ones beside them (the page asks 10 and picks "
                    "two or three of them as axes)")
    align_to_job: AlignTo = None


class CustomParams(_Params):
    column: str = Field(description="Metadata column the four queries search")
    left: str = Field("", description="Query of the points at the left end of the x axis")
    right: str = Field("", description="Query of the points at the right end of the x axis")
    up: str = Field("", description="Query of the points at the top of the y axis")
    down: str = Field("", description="Query of the points at the bottom of the y axis")
    regex: bool = Field(False, description="Queries are regular expressions, not substrings")
    align_to_job: AlignTo = None


class PrecomputedParams(_Params):
    columns: list[str] | None = Field(
        None, min_length=2, max_length=3,
        description="Two or three numeric metadata columns; omitted: the data itself "
                    "when it has at most 3 dimensions")
    align_to_job: AlignTo = None


Dims = Literal[2, 3]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")
    run: str
    embedding: str
    dims: Dims = Field(2, description="Output dimensions: the columns returned (PCA: "
                                      "params.components when given), custom is always 2-D")
    device: str | None = Field(
        None, description='"cpu", "cuda" (GPU kNN/PCA when available) or "torch"; default: '
                          "the server's --device")


class TsneRequest(_Request):
    method: Literal["tsne"]
    params: TsneParams = Field(default_factory=TsneParams)


class UmapRequest(_Request):
    method: Literal["umap"]
    params: UmapParams = Field(default_factory=UmapParams)


class PcaRequest(_Request):
    method: Literal["pca"]
    params: PcaParams = Field(default_factory=PcaParams)


class CustomRequest(_Request):
    method: Literal["custom"]
    params: CustomParams


class PrecomputedRequest(_Request):
    method: Literal["precomputed"]
    params: PrecomputedParams = Field(default_factory=PrecomputedParams)


ProjectionRequest = Annotated[
    TsneRequest | UmapRequest | PcaRequest | CustomRequest | PrecomputedRequest,
    Field(discriminator="method"),
]
"""A ``POST /api/projections`` body: the ``method`` field selects the parameter model."""
