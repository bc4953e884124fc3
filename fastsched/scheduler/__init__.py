"""The scheduler: queue, nominator, cache and the scheduling loop."""
