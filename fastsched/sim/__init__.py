"""Cluster generators, scheduler_perf workloads and simulation scenarios."""
