"""The FastAPI web layer and CLI, thin over projector_core."""

from pathlib import Path

SAMPLE_DATA = Path(__file__).resolve().parent.parent / "sample_data"
