"""How every MCP tool of the projector speaks to an assistant (``mcp_server.py``,
``mcp_annotations.py``): the arguments' schema it reads (typed per method, rows bounded), a
server that refuses an argument it does not know in one sentence, and each answer as compact
JSON, each failure as its message."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import numpy as np
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError, WithJsonSchema

from projector.mcp_answers import ServerRefused
from projector_core.projection.methods import METHODS
from projector_core.service import NotDone

MAX_ROWS = 5000  # rows one answer may carry; more would swamp the assistant's context
F = TypeVar("F", bound=Callable[..., Any])

Run = Annotated[str, Field(description="Run name, as list_runs gives it")]
EmbeddingName = Annotated[str, Field(description="Embedding name within the run")]
Method = Literal["pca", "tsne", "umap", "custom", "precomputed"]
# Typed per method in the schema the assistant reads: each method's parameter model from the
# registry, the models the parameter table (GET /api/projections/methods) is made from. Checked
# with the method's own model (``ProjectionRequest``), so a mistake is named once, not once per
# method it is not.
Params = Annotated[dict[str, Any] | None, WithJsonSchema({
    "anyOf": [*({**method.params_model.model_json_schema(), "title": f"method {name}"}
                for name, method in METHODS.items()), {"type": "null"}],
    "default": None,
    "description": "The parameters of `method` (one schema per method, titled by it); omitted: "
                   "its defaults. GET /api/projections/methods?run=&embedding= gives each "
                   "embedding's own bounds and defaults (perplexity at most (N - 1) / 3)"})]
Rows = Annotated[int, Field(ge=0, le=MAX_ROWS, description=f"Rows returned, at most {MAX_ROWS}")]
# Checked by the request model (ProjectionRequest), so a wrong value is refused with the
# sentence every door says ("pca.dims: Input should be 2 or 3"); the schema still says 2 or 3.
Dims = Annotated[int, WithJsonSchema({
    "type": "integer", "enum": [2, 3], "default": 2,
    "description": "Output dimensions: the columns returned (PCA: params.components when "
                   "given)"})]
OptionalRun = Annotated[str | None, Field(description="Run name; default: the job's")]
OptionalEmbedding = Annotated[str | None, Field(description="Embedding name; default: the job's")]
JobId = Annotated[str | None, Field(description="A finished projection job (from project); "
                                                "run and embedding are then its own")]
Metric = Literal["cosine", "euclidean"]


def _message(error: BaseException) -> str:
    """One readable sentence for any failure (the SDK would hide all but its own)."""
    if isinstance(error, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}"
                         for e in error.errors(include_url=False))
    if isinstance(error, ValueError | LookupError | NotDone | ServerRefused):
        return str(error)
    return f"internal error ({type(error).__name__}): {error}"


def answers(fn: F) -> F:
    """The tool's value as compact JSON text (once: no indented copy, no structured twin);
    any exception as its message."""
    @functools.wraps(fn)
    async def run(*args: Any, **kwargs: Any) -> str:
        try:
            if asyncio.iscoroutinefunction(fn):
                value = await fn(*args, **kwargs)
            else:  # a neighbour scan or a file read: off the protocol's event loop
                value = await asyncio.to_thread(fn, *args, **kwargs)
        except ToolError:
            raise
        except Exception as error:
            raise ToolError(_message(error)) from None
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_plain)
    return run  # type: ignore[return-value]


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON")


class ToolServer(MCPServer):
    """An MCP server whose tools refuse what they cannot take in one sentence: an argument
    they do not have is named (the SDK would drop it and answer something else), a value
    of the wrong type is said as ``field: message``, not as pydantic's dump."""

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None) -> Any:
        tool = next((t for t in await self.list_tools() if t.name == name), None)
        if tool is not None:
            known = tool.input_schema.get("properties", {})
            unknown = [key for key in arguments if key not in known]
            if unknown:
                raise ToolError(f"Error executing tool {name}: unknown argument "
                                f"{', '.join(map(repr, unknown))}; {name} takes "
                                f"{', '.join(known)}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            if isinstance(error.__cause__, ValidationError):
                raise ToolError(f"Error executing tool {name}: "
                                f"{_message(error.__cause__)}") from None
            raise

