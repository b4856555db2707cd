"""The heavy kernels on a Dask cluster, over a chunked embedding's shards where they lie.

Only ``cluster.py`` imports Dask, and only ``projector serve --dask`` imports it: without a
cluster nothing here touches Dask. ``dispatch.py`` is the one place routes ask which kernel
answers; ``shard_tasks.py`` holds the numpy functions a worker runs on its shards (the same
functions run in-process over a chunked embedding when there is no cluster).
"""
