"""The nominator's former module, kept for its importers: the nominator is
:mod:`fastsched.scheduler.backend.queue.nominator` (upstream ``backend/queue/nominator.go``)."""
from .backend.queue.nominator import Nominator, PodLister, nominating_mode

__all__ = ["Nominator", "PodLister", "nominating_mode"]
