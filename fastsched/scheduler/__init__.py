"""The scheduler (upstream ``pkg/scheduler``): queue, cache, scheduling and binding cycles."""
from .cache import Cache, CacheError
from .nominator import Nominator
from .queue import PriorityQueue
from .scheduler import PodResult, Scheduler, SchedulerMetrics

__all__ = ["Cache", "CacheError", "Nominator", "PodResult", "PriorityQueue", "Scheduler", "SchedulerMetrics"]
