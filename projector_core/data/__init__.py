"""The data model and where it comes from: runs and embeddings found, read, cached, uploaded or held in
memory."""
