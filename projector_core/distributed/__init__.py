"""The heavy kernels on a Dask cluster, over a chunked embedding's shards where they lie: an
executor that runs what it is handed and knows no projection.

Only ``cluster.py`` imports Dask, and only ``projector serve --dask`` imports it: without a
cluster nothing here touches Dask. ``dispatch.py`` says where a computation runs (here, shard
by shard here, or on the workers) and chooses the index that answers neighbour queries;
``shard_tasks.py`` holds the numpy functions a worker runs on its shards (the same functions
run in-process over a chunked embedding when there is no cluster).
"""
