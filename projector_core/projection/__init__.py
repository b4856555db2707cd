"""Projections: the parameter table, the data's limits, one class per method, the page's default
request, the computation (here or on the cluster) and the jobs that run it."""
