"""The scheduler (upstream ``pkg/scheduler``): queue, cache, scheduling and binding cycles."""
from .cache import Cache, CacheError
from .backend.queue.nominator import Nominator
from .backend.queue import PriorityQueue
from .scheduler import PodResult, Scheduler, SchedulerMetrics

__all__ = ["Cache", "CacheError", "Nominator", "PodResult", "PriorityQueue", "Scheduler", "SchedulerMetrics"]
