"""The numba kernel plugin classes (see the package docstring for the kernel contract)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Sequence

import numpy as np

from ..framework.columns import (NODES, NORMALIZE_DEFAULT, NORMALIZE_DEFAULT_REVERSE, NORMALIZE_NONE,
                                 ColumnForm)
from ..framework.interface import FilterPlugin, ScoreExtensions, ScorePlugin
from ..framework.status import MAX_NODE_SCORE, Code, Status
from ..framework.vectorized import SUCCESS, FilterVerdicts
from ..plugins.helper.normalize_score import default_normalize_score

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod
    from ..framework import protocols as fwk
    from ..framework.cycle_state import CycleState
    from ..framework.types import NodeScore


@dataclass(frozen=True)
class ColumnSpec:
    """One node-table column a kernel may read (``C`` = table row capacity, ``R`` = resources)."""

    shape: str
    dtype: type
    meaning: str
    #: True when the column changes only with the nodes, never with the pods placed on them
    node_only: bool


#: The columns a kernel may name in ``columns``, with their shapes and dtypes. Resource columns of
#: ``alloc`` / ``requested`` are numbered by ``table.resource_index`` (cpu = 0 in millicores,
#: memory = 1 and ephemeral-storage = 2 in bytes, then extended resources such as
#: ``nvidia.com/gpu`` in order of first appearance; ``table.resource_index.get(name, -1)`` is -1
#: when no node lists the resource). ``label:<key>`` reads a node label as a dictionary code:
#: ``table.label_code(key, value)`` gives the code of a value (-1: no node has it), -1 marks an
#: absent label.
TABLE_COLUMNS: Mapping[str, ColumnSpec] = {
    "live": ColumnSpec("(C,)", np.bool_, "the row holds a node", True),
    "alloc": ColumnSpec("(C, R)", np.int64, "allocatable per resource", True),
    "requested": ColumnSpec("(C, R)", np.int64, "sum of the pods' requests (with overhead) per resource", False),
    "nonzero_requested": ColumnSpec("(C, 2)", np.int64,
                                    "cpu, memory requested with upstream's non-zero defaults", False),
    "allowed_pods": ColumnSpec("(C,)", np.int64, "allocatable pods", True),
    "pod_count": ColumnSpec("(C,)", np.int64, "pods on the node (assumed pods included)", False),
    "unschedulable": ColumnSpec("(C,)", np.bool_, "spec.unschedulable", True),
    "has_host_ports": ColumnSpec("(C,)", np.bool_, "some pod on the node uses a host port", False),
    "pods_with_affinity": ColumnSpec("(C,)", np.int32, "pods with pod (anti-)affinity terms", False),
    "pods_with_req_anti": ColumnSpec("(C,)", np.int32, "pods with required pod anti-affinity terms", False),
    "terminating_pods": ColumnSpec("(C,)", np.int32, "pods with a metadata.deletionTimestamp", False),
    "label:<key>": ColumnSpec("(C,)", np.int32, "dictionary code of the node's value of label <key>; -1 absent",
                              True),
}
#: Columns that depend on the nodes only (not on the pods on them).
NODE_ONLY_COLUMNS = frozenset(name for name, spec in TABLE_COLUMNS.items() if spec.node_only)

_LABEL_PREFIX = "label:"


def _table_column(table: "fwk.NodeTable", name: str) -> np.ndarray:
    if name.startswith(_LABEL_PREFIX):
        # read, never created: a plugin does not write the table (a key no node has is all -1)
        col = table.label_column(name[len(_LABEL_PREFIX):])
        return np.full(table.capacity, -1, dtype=np.int32) if col is None else col
    return getattr(table, name)


def one_row_columns(node_info: "fwk.NodeInfo", table: "fwk.NodeTable", names: Sequence[str]) -> list[np.ndarray]:
    """The named columns of a one-row table holding ``node_info`` (a detached NodeInfo, e.g. a
    preemption dry run's), laid out as ``table``'s: the same resource columns and label codes."""
    out = []
    for name in names:
        if name == "live":
            col = np.ones(1, dtype=np.bool_)
        elif name in ("alloc", "requested"):
            res = node_info.allocatable if name == "alloc" else node_info.requested
            col = np.array([[res.get(r) for r in table.resource_names]], dtype=np.int64)
        elif name == "nonzero_requested":
            nz = node_info.non_zero_requested
            col = np.array([[nz.milli_cpu, nz.memory]], dtype=np.int64)
        elif name == "allowed_pods":
            col = np.array([node_info.allocatable.allowed_pod_number], dtype=np.int64)
        elif name == "pod_count":
            col = np.array([len(node_info.pods)], dtype=np.int64)
        elif name == "unschedulable":
            col = np.array([bool(node_info.node().unschedulable)], dtype=np.bool_)
        elif name == "has_host_ports":
            col = np.array([len(node_info.used_ports) > 0], dtype=np.bool_)
        elif name == "pods_with_affinity":
            col = np.array([len(node_info.pods_with_affinity)], dtype=np.int32)
        elif name == "pods_with_req_anti":
            col = np.array([len(node_info.pods_with_required_anti_affinity)], dtype=np.int32)
        elif name == "terminating_pods":
            col = np.array([sum(p.pod.deletion_timestamp is not None for p in node_info.pods)], dtype=np.int32)
        elif name.startswith(_LABEL_PREFIX):
            key = name[len(_LABEL_PREFIX):]
            value = node_info.node().labels.get(key)
            col = np.array([-1 if value is None else table.label_code(key, value)], dtype=np.int32)
        else:
            raise ValueError(f"unknown node-table column {name!r}")
        out.append(col)
    return out


_ROW0 = np.zeros(1, dtype=np.int64)
_NORMALIZE_MODES = {None: NORMALIZE_NONE, "default": NORMALIZE_DEFAULT, "reverse": NORMALIZE_DEFAULT_REVERSE}


class NumbaKernelPlugin:
    """What Filter and Score kernel plugins share: the kernel call on a batch or on one node.

    Subclasses set ``NAME``, ``kernel`` (a numba dispatcher) and ``columns`` (names from
    :data:`TABLE_COLUMNS`), and may override :meth:`pod_scalars`. ``self.args`` is the plugin's
    args mapping from the configuration, ``self.handle`` the framework handle.
    """

    NAME: ClassVar[str] = ""
    kernel: ClassVar[Any] = None
    columns: ClassVar[tuple[str, ...]] = ()
    #: Whether :meth:`pod_scalars` depends only on the pod's spec (requests, labels, affinity, ...)
    #: and the plugin's args, not on its name, uid or the time. With columns that depend on the
    #: nodes only (:data:`NODE_ONLY_COLUMNS`, ``label:<key>``), the plugin then joins the
    #: compiled scheduling cycle (``column_form``): its kernel runs once per pod spec and node
    #: set, not once per cycle. Set False when the scalars depend on more.
    spec_only_scalars: ClassVar[bool] = True

    def __init__(self, args: Any = None, handle: Any = None):
        self.args = dict(args) if isinstance(args, Mapping) else (args if args is not None else {})
        self.handle = handle
        for name in self.columns:
            if name not in TABLE_COLUMNS and not name.startswith(_LABEL_PREFIX):
                raise ValueError(f"{self.name()}: unknown node-table column {name!r} "
                                 f"(known: {', '.join(TABLE_COLUMNS)})")
        # read from the class: a numba dispatcher is a descriptor, and on an instance it would be
        # bound as a method (the plugin passed as the kernel's first argument)
        self._kernel = type(self).kernel
        if self._kernel is None:
            raise TypeError(f"{type(self).__name__} has no kernel")
        self._node_only = self.spec_only_scalars and all(
            name in NODE_ONLY_COLUMNS or name.startswith(_LABEL_PREFIX) for name in self.columns)

    def name(self) -> str:
        return self.NAME or type(self).__name__

    def pod_scalars(self, pod: "Pod", table: "fwk.NodeTable") -> tuple:
        """The kernel's arguments after the columns: the pod's fields (and args) as scalars or arrays.
        ``table`` gives column numbers (``table.resource_index``) and label codes."""
        return ()

    # -- calling the kernel ----------------------------------------------------------------------
    def _run(self, pod: "Pod", table: "fwk.NodeTable", rows: np.ndarray) -> np.ndarray:
        out = np.zeros(len(rows), dtype=np.int64)
        if len(rows):
            cols = [_table_column(table, name) for name in self.columns]
            self._kernel(np.ascontiguousarray(rows, dtype=np.int64), *cols, *self.pod_scalars(pod, table), out)
        return out

    def _run_one(self, pod: "Pod", node_info: "fwk.NodeInfo") -> int:
        """The kernel on one node: its own row of the live table, or a one-row table of a detached
        NodeInfo (laid out as the scheduler's table)."""
        table = getattr(node_info, "table", None)
        row = getattr(node_info, "row", None)
        out = np.zeros(1, dtype=np.int64)
        if table is not None and row is not None:
            rows = np.array([row], dtype=np.int64)
            cols = [_table_column(table, name) for name in self.columns]
        else:
            table = self._handle_table()
            rows = _ROW0
            cols = one_row_columns(node_info, table, self.columns)
        self._kernel(rows, *cols, *self.pod_scalars(pod, table), out)
        return int(out[0])

    def _handle_table(self) -> "fwk.NodeTable":
        lister = self.handle.snapshot_shared_lister() if self.handle is not None else None
        table = getattr(lister, "table", None)
        if table is None:
            raise RuntimeError(f"{self.name()}: a detached NodeInfo needs the handle's snapshot for the "
                               "table layout")
        return table

    def _form(self) -> ColumnForm:  # pragma: no cover - each kind defines its own
        raise NotImplementedError

    def column_form(self, pod: "Pod", table: "fwk.NodeTable") -> ColumnForm | None:
        """Joins the compiled cycle when the kernel reads node-only columns (see
        ``spec_only_scalars``); None (the plugin-call path) when it reads what pods change."""
        return self._form() if self._node_only else None


class NumbaFilterPlugin(NumbaKernelPlugin, FilterPlugin):
    """A Filter plugin from a kernel writing 0 (pass) or ``k`` (fails with ``reasons[k - 1]``).

    ``failure_code`` is the Code of a failing node (Unschedulable unless set, e.g. to
    ``Code.UNSCHEDULABLE_AND_UNRESOLVABLE`` when preemption cannot help).
    """

    reasons: ClassVar[tuple[str, ...]] = ()
    failure_code: ClassVar[Code] = Code.UNSCHEDULABLE

    def _reason(self, k: int) -> str:
        if not 1 <= k <= len(self.reasons):
            raise ValueError(f"{self.name()}: the kernel wrote {k}, not 0 or a reason number 1..{len(self.reasons)}")
        return self.reasons[k - 1]

    def _form(self) -> ColumnForm:
        return ColumnForm(filter=NODES)

    def filter(self, state: "CycleState", pod: "Pod", node_info: "fwk.NodeInfo") -> Status | None:
        k = self._run_one(pod, node_info)
        if k == 0:
            return None
        return Status(self.failure_code, self._reason(k))

    def filter_vectorized(self, state: "CycleState", pod: "Pod", nodes: "fwk.NodeBatch") -> FilterVerdicts:
        out = self._run(pod, nodes.table, nodes.rows)
        fails = out != 0
        if not fails.any():
            return FilterVerdicts.all_pass(len(out))
        bad = out[fails]
        if bad.min() < 1 or bad.max() > len(self.reasons):
            self._reason(int(bad.max() if bad.max() > len(self.reasons) else bad.min()))  # raises
        codes = np.where(fails, np.int8(self.failure_code), SUCCESS).astype(np.int8)
        reason_ids = (out - 1).astype(np.int32)
        return FilterVerdicts(codes, reason_ids, [(r,) for r in self.reasons])


class NumbaScorePlugin(NumbaKernelPlugin, ScorePlugin):
    """A Score plugin from a kernel writing each node's raw score.

    ``normalize``: None (the kernel's scores are final, in [0, 100]), ``"default"`` (upstream's
    DefaultNormalizeScore: scaled so the best node gets 100) or ``"reverse"`` (the same, reversed:
    the lowest raw score gets 100).
    """

    normalize: ClassVar[str | None] = None

    def __init__(self, args: Any = None, handle: Any = None):
        super().__init__(args, handle)
        if self.normalize not in (None, "default", "reverse"):
            raise ValueError(f"{self.name()}: normalize must be None, 'default' or 'reverse', got {self.normalize!r}")
        self._extensions = _DefaultNormalize(self.normalize == "reverse") if self.normalize else None

    def _form(self) -> ColumnForm:
        return ColumnForm(score=NODES, normalize=_NORMALIZE_MODES[self.normalize])

    def score(self, state: "CycleState", pod: "Pod", node_info: "fwk.NodeInfo") -> tuple[int, Status | None]:
        return self._run_one(pod, node_info), None

    def score_vectorized(self, state: "CycleState", pod: "Pod", nodes: "fwk.NodeBatch"
                         ) -> tuple[np.ndarray, Status | None]:
        return self._run(pod, nodes.table, nodes.rows), None

    def score_extensions(self) -> ScoreExtensions | None:
        return self._extensions


class _DefaultNormalize(ScoreExtensions):
    """Upstream's DefaultNormalizeScore on both paths."""

    def __init__(self, reverse: bool):
        self.reverse = reverse

    def normalize_score(self, state: "CycleState", pod: "Pod", scores: "list[NodeScore]") -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, self.reverse, scores)

    def normalize_score_vectorized(self, state: "CycleState", pod: "Pod", scores: np.ndarray,
                                   nodes: "fwk.NodeBatch") -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, self.reverse, scores)
