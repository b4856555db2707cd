"""What ``/openapi.json`` says beyond what FastAPI infers, so that every answer has a schema:

- errors as they are answered, ``{"detail": "..."}`` with a string (FastAPI describes a 422
  as its list of validation errors), and the 400 of a body that is not JSON;
- binary answers (float32 arrays, PNG pages, ZIP files) as binary strings, TSV as a string;
- the messages of the WebSocket ``/api/jobs/ID/stream`` (OpenAPI has no operations for a
  WebSocket): their schemas under ``components.schemas`` and, under ``x-websockets``, the
  order in which they come.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from projector.server.routes.jobs import STREAM_MESSAGES

ERROR_SCHEMA = {
    "title": "Error",
    "type": "object",
    "properties": {"detail": {"type": "string", "title": "Detail",
                              "description": "What is wrong, naming the file and line or the "
                                             "parameter"}},
    "required": ["detail"],
}
BINARY = {"type": "string", "format": "binary"}


def document(app: FastAPI) -> None:
    """Make ``app.openapi()`` answer the completed schema (built once, as FastAPI's is)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _completed(build())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _completed(schema: dict[str, Any]) -> dict[str, Any]:
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    if "HTTPValidationError" in schemas:
        schemas["HTTPValidationError"] = ERROR_SCHEMA
        schemas.pop("ValidationError", None)
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            if not isinstance(operation, dict):
                continue
            if "requestBody" in operation:
                operation["responses"].setdefault("400", {
                    "description": "The body cannot be decoded as JSON",
                    "content": {"application/json": {"schema": ERROR_SCHEMA}}})
            for response in operation.get("responses", {}).values():
                for media_type, body in response.get("content", {}).items():
                    if not body.get("schema"):
                        body["schema"] = {"type": "string"} if media_type.startswith("text/") \
                            else BINARY
    _add_stream_messages(schema, schemas)
    return schema


def _add_stream_messages(schema: dict[str, Any], schemas: dict[str, Any]) -> None:
    refs = []
    for model in STREAM_MESSAGES:
        model_schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(model_schema.pop("$defs", {}))
        schemas[model.__name__] = model_schema
        refs.append({"$ref": f"#/components/schemas/{model.__name__}"})
    schema["x-websockets"] = {"/api/jobs/{job_id}/stream": {
        "description": "Text messages (JSON, one of `messages`) while the job runs: progress "
                       "on every change and at least twice a second; a frame header followed "
                       "by one binary message of shape[0] x shape[1] little-endian float32 "
                       "(NaN: no coordinates); at the end the final frame when done, then a "
                       "status message and a normal close (1000). An unknown job is closed "
                       "with code 4404. With `?frames=false` the text messages alone (a page "
                       "showing the result from tiles).",
        "messages": {"oneOf": refs, "discriminator": {"propertyName": "type"}}}}
