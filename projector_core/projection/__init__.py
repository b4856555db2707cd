"""Projections: the parameter table, the data's limits, one class per method, the jobs that run them
and the default view prepared ahead."""
