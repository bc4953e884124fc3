"""The framework contract: statuses, cycle state, node info, plugin interfaces, parallelizer.

The typed contract plugins are written against (NodeInfo, NodeBatch, Handle, the listers) is in
:mod:`fastsched.framework.protocols`, imported as upstream imports its staging package:
``from fastsched.framework import protocols as fwk``. ``Handle``, ``NodeBatch``, ``SharedLister`` and
``NodeInfoLister`` are also exported here; ``NodeInfo`` here is the concrete, mutable class (which
satisfies ``protocols.NodeInfo``).
"""
from . import protocols
from .cycle_state import CycleState, NotFoundError, StateData
from .interface import (FILTER_ADDITIVE, FILTER_NODE_ONLY, ActionType, BindPlugin, ClusterEvent,
                        ClusterEventWithHint, EnqueueExtensions, EventResource, FilterPlugin, Handle, NodeInfoLister, PermitPlugin, Plugin,
                        GeneratePlacementsResult, Placement, PlacementGeneratePlugin, PlacementPluginScores,
                        PlacementScore, PlacementScoreExtensions, PlacementScorePlugin, PodActivator,
                        PodGroupAssignments, ProposedAssignment, PodGroupPostFilterPlugin,
                        PodNominator, PostBindPlugin, PostFilterPlugin, PreBindPlugin,
                        PreEnqueuePlugin, PreFilterExtensions, PreFilterPlugin, PreScorePlugin,
                        QueueingHint, QueueSortPlugin, ReservePlugin, ScoreExtensions, ScorePlugin,
                        SharedLister)
from .listers import NodeInfoSnapshot, new_snapshot
from .protocols import NodeBatch, PluginFactory, is_node_batch
from .parallelize import DEFAULT_PARALLELISM, ParallelError, Parallelizer, chunk_size_for
from .status import (MAX_NODE_SCORE, MAX_TOTAL_SCORE, MIN_NODE_SCORE, Code, Status, StatusError,
                     as_status, code_of, is_rejected, is_skip, is_success, is_wait, new_status)
from .types import (Diagnosis, FitError, HostPortInfo, ImageStateSummary, NodeInfo, NodePluginScores, NodeScore,
                    NodeToStatus, NominatingInfo, NominatingMode, PluginScore, PodInfo,
                    PostFilterResult, PreFilterResult, QueuedPodInfo, Resource, WaitingPod)

MIN_SCORE = MIN_NODE_SCORE
MAX_SCORE = MAX_NODE_SCORE

__all__ = [name for name in dir() if not name.startswith("_")]
