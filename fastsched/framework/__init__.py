"""The framework contract: statuses, cycle state, node info, plugin interfaces, parallelizer."""
from .cycle_state import CycleState, NotFoundError, StateData
from .interface import (ActionType, BindPlugin, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                        EventResource, FilterPlugin, Handle, NodeInfoLister, PermitPlugin, Plugin,
                        PodActivator, PodNominator, PostBindPlugin, PostFilterPlugin, PreBindPlugin,
                        PreEnqueuePlugin, PreFilterExtensions, PreFilterPlugin, PreScorePlugin,
                        QueueingHint, QueueSortPlugin, ReservePlugin, ScoreExtensions, ScorePlugin,
                        SharedLister)
from .listers import NodeInfoSnapshot, new_snapshot
from .parallelize import DEFAULT_PARALLELISM, ParallelError, Parallelizer, chunk_size_for
from .status import (MAX_NODE_SCORE, MAX_TOTAL_SCORE, MIN_NODE_SCORE, Code, Status, StatusError,
                     as_status, code_of, is_rejected, is_skip, is_success, is_wait, new_status)
from .types import (Diagnosis, FitError, HostPortInfo, ImageStateSummary, NodeInfo, NodePluginScores, NodeScore,
                    NodeToStatus, NominatingInfo, NominatingMode, PluginScore, PodInfo,
                    PostFilterResult, PreFilterResult, QueuedPodInfo, Resource, WaitingPod)

MIN_SCORE = MIN_NODE_SCORE
MAX_SCORE = MAX_NODE_SCORE

__all__ = [name for name in dir() if not name.startswith("_")]
