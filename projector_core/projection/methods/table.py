"""The parameter table: every parameter of a method, its capabilities, as one JSON entry.

Read from the method's parameter model (its JSON schema: type, default, bounds, description)
and class (capabilities), then, for an embedding's shape, narrowed by the limits the data puts
on the parameters and given the defaults that depend on the data. ``GET
/api/projections/methods`` publishes it; the page validates, clamps and fills its panels from
it, the client and the MCP tools describe parameters with it, so no door restates a range.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel

from projector_core.projection.limits import field_bounds
from projector_core.projection.methods.base import ProjectionMethod


def method_entry(method: type[ProjectionMethod[Any]], shape: tuple[int, int] | None) -> dict[str, Any]:
    """``method``'s table entry; with ``shape`` (N, D) its data limits and defaults applied,
    and the request a fresh view makes (``default_request``: ``view_dims`` and
    ``view_params`` at those defaults, or at the method's ``view_values``).

    ``limits`` keeps the data limits that bound no parameter (t-SNE's ``points``, the
    precomputed method's ``dimensions``).
    """
    params = {name: dict(entry) for name, entry in _model_parameters(method.params_model).items()}
    limits = method.limits(*shape) if shape is not None else {}
    for name, limit in limits.items():
        if name in params:
            params[name].update(limit.to_json())
    if shape is not None:
        for name, value in method.data_defaults(*shape).items():
            params[name]["default"] = value
    return {
        "title": method.title,
        "quick": method.quick,
        "starts_from_layout": method.starts_from_layout,
        "streams_frames": method.streams_frames,
        "supports_3d": 3 in method.output_dims,
        "dims": list(method.output_dims),
        "params": params,
        "limits": {name: limit.to_json() for name, limit in limits.items() if name not in params},
        "default_request": None if method.view_dims is None else {
            "dims": method.view_dims,
            "params": {name: _within_bounds(params[name], method.view_values.get(
                name, params[name]["default"])) for name in method.view_params}},
    }


def _within_bounds(param: dict[str, Any], value: Any) -> Any:
    """A view's value of a parameter moved inside its bounds (the data's: a perplexity
    default of 30 is 16 for 50 points)."""
    for bound, pick in (("maximum", min), ("minimum", max)):
        if param[bound] is not None and type(value) in (int, float):
            value = pick(value, param[bound])
    return value


@functools.cache
def _model_parameters(model: type[BaseModel]) -> dict[str, dict[str, Any]]:
    """Every parameter of a model as the table shows it without data (read once: building a
    JSON schema takes milliseconds, and the page asks for a table with each data set)."""
    schema = model.model_json_schema()
    required = set(schema.get("required", []))
    return {name: _parameter(prop, name in required) for name, prop in schema["properties"].items()}


def _parameter(prop: dict[str, Any], required: bool) -> dict[str, Any]:
    """One parameter from its JSON-schema property: an optional value (``anyOf`` with null)
    is ``nullable``, a constant beside a number (learning rate's ``"auto"``) a ``choice``."""
    alternatives = [a for a in prop.get("anyOf", [prop]) if a.get("type") != "null"]
    main = next((a for a in alternatives if "const" not in a), alternatives[0])
    choices = [a["const"] for a in alternatives if "const" in a] + list(main.get("enum", []))
    entry: dict[str, Any] = {
        "type": main.get("type", "string"),
        "default": prop.get("default"),
        "minimum": main.get("minimum", main.get("exclusiveMinimum")),
        "maximum": main.get("maximum"),
        "exclusive_minimum": "exclusiveMinimum" in main,
        "choices": choices or None,
        "nullable": len(alternatives) < len(prop.get("anyOf", [prop])),
        "required": required,
        "description": prop.get("description", ""),
        "items": main.get("items", {}).get("type"),  # an array's (precomputed columns)
        "min_items": main.get("minItems"),
        "max_items": main.get("maxItems"),
        "max_length": main.get("maxLength"),  # a string's
    }
    return entry


def data_range_problems(method: type[ProjectionMethod[Any]], params: Any,
                        shape: tuple[int, int]) -> dict[str, str]:
    """What ``params`` (a request's raw, unvalidated ``params``) breaks of the data's limits
    on ``method``'s parameters, by name: only where the data bound is tighter than the
    model's own, so a request with a fixed-bound error and a data-limit error hears of both in
    one 422 rather than one after the other (the model's refusals are pydantic's)."""
    if not isinstance(params, dict):
        return {}
    problems = {}
    for name, limit in method.limits(*shape).items():
        value = params.get(name)
        if name not in method.params_model.model_fields or isinstance(value, bool) or not (
                isinstance(value, int | float)):
            continue
        low, high = field_bounds(method.params_model, name)
        over = limit.maximum is not None and value > limit.maximum and (
            high is None or limit.maximum < high)
        under = limit.minimum is not None and value < limit.minimum and (
            low is None or limit.minimum > low)
        if over or under:
            try:
                limit.check(value)
            except ValueError as error:
                problems[name] = str(error)
    return problems
