"""The FastAPI web layer and CLI, thin over projector_core."""
