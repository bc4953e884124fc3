"""The NodeAffinity plugin: PreFilter, Filter, PreScore, Score and NormalizeScore, per node and batched."""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from ...api import Node, NodeSelector, Pod, PreferredSchedulingTerm, preferred_node_affinity_score
from ...api.labels import IN
from ...config.args import NodeAffinityArgs
from ...framework.interface import FILTER_NODE_ONLY
from ...framework import protocols as fwk
from ...framework.vectorized import (VectorizedFilterPlugin, VectorizedScoreExtensions, VectorizedScorePlugin,
                                FilterVerdicts)
from ...framework.columns import NODES, NORMALIZE_DEFAULT, ColumnForm
from ...framework.cycle_state import CycleState, NotFoundError
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PreFilterPlugin, PreScorePlugin, QueueingHint)
from ...framework import signers
from ...framework.status import MAX_NODE_SCORE, Code, Status, StatusError
from ...framework.types import NodeScore, PreFilterResult
from ..helper.args import validated_args
from ..helper.typed import as_typed
from ..helper.node_selector import match_labels_mask, node_selector_mask, preferred_terms_score
from ..helper.normalize_score import default_normalize_score

if TYPE_CHECKING:  # pragma: no cover
    from ...framework.protocols import NodeTable

NAME = "NodeAffinity"
#: Filter and Score read only the nodes' labels and names; Score is DefaultNormalizeScore.
_COLUMN_FORM = ColumnForm(filter=NODES, score=NODES, normalize=NORMALIZE_DEFAULT)
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

#: Filter reason when the pod's nodeSelector or required node affinity does not match.
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
#: Filter reason when the plugin's addedAffinity (required part) does not match.
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
#: PreFilter reason when the pod's matchFields on metadata.name select no node at all.
ERR_REASON_CONFLICT = "pod affinity terms conflict"

#: The node field matchFields may name (upstream ``metav1.ObjectNameField``).
_OBJECT_NAME_FIELD = "metadata.name"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _aggregate(errors: Sequence[str]) -> str:
    """Go's ``errors.NewAggregate(errs).Error()``: one message as is, several as ``[a, b]``."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def _match_with_error(affinity: "RequiredNodeAffinity", node: Node) -> tuple[bool, Exception | None]:
    """Upstream ``RequiredNodeAffinity.Match`` with its error: the nodeSelector map first, then the
    required terms; a term that does not parse is passed over, and when no valid term matches, the
    parse errors are the error (``LazyErrorNodeSelector.Match``)."""
    labels = node.labels
    for key, value in (affinity.node_selector or {}).items():
        if labels.get(key) != value:
            return False, None
    if affinity.required is None:
        return True, None
    errors: list[str] = []
    for term in affinity.required.terms:
        if term.parse_errors:
            errors.extend(term.parse_errors)
            continue
        if term.matches(node):
            return True, None
    if not errors:
        return False, None
    return False, ValueError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")


class RequiredNodeAffinity:
    """A pod's ``spec.nodeSelector`` and required node affinity (upstream ``RequiredNodeAffinity``).

    Parse errors in the affinity terms are ignored for backward compatibility: such a term matches
    no node.
    """

    __slots__ = ("node_selector", "required")

    def __init__(self, node_selector: Mapping[str, str] | None, required: NodeSelector | None):
        #: None or an empty map means "no constraint" (upstream builds no label selector for it)
        self.node_selector = node_selector
        self.required = required

    @classmethod
    def of(cls, pod: Pod) -> "RequiredNodeAffinity":
        """Upstream ``GetRequiredNodeAffinity(pod)``."""
        return cls(pod.node_selector, _required_selector(pod))

    def clone(self) -> "RequiredNodeAffinity":
        return self  # immutable: not affected by pod additions or removals

    def matches(self, node: Node) -> bool:
        """Whether the node satisfies the nodeSelector map and, when set, the required selector."""
        labels = node.labels
        for key, value in (self.node_selector or {}).items():
            if labels.get(key) != value:
                return False
        return self.required is None or self.required.matches(node)

    def mask(self, nodes: fwk.TableRows) -> np.ndarray:
        """(n,) bool: :meth:`matches` for every node of a NodeBatch."""
        matched = match_labels_mask(self.node_selector, nodes)
        if self.required is not None:
            matched &= node_selector_mask(self.required, nodes)
        return matched


class _PreScoreState:
    """The pod's kept preferred terms (None when the pod has none); shared on clone."""

    __slots__ = ("preferred",)

    def __init__(self, preferred: tuple[PreferredSchedulingTerm, ...] | None):
        self.preferred = preferred

    def clone(self) -> "_PreScoreState":
        return self


def _required_selector(pod: Pod) -> NodeSelector | None:
    affinity = pod.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    return affinity.node_affinity.required


def _kept_terms(terms: Sequence[PreferredSchedulingTerm]) -> tuple[tuple[PreferredSchedulingTerm, ...], list[str]]:
    """Upstream ``NewPreferredSchedulingTerms``: drop weight-0 and empty terms; collect parse errors."""
    kept = tuple(term for term in terms if term.counts)
    errors = [error for term in kept for error in term.preference.parse_errors]
    return kept, errors


def _pod_preferred_terms(pod: Pod) -> tuple[PreferredSchedulingTerm, ...] | None | StatusError:
    """The pod's kept preferred terms; None when it has none; a StatusError on parse errors.

    fastsched.api does not tell an empty preferred list from an absent one; both read as absent.
    """
    affinity = pod.affinity
    if affinity is None or affinity.node_affinity is None or not affinity.node_affinity.preferred:
        return None
    kept, errors = _kept_terms(affinity.node_affinity.preferred)
    if errors:
        return StatusError(_aggregate(_upstream_parse_errors(pod) or errors))
    return kept


def _upstream_parse_errors(pod: Pod) -> list[str]:
    """The parse errors of the pod's preferred terms in upstream's words and field paths.

    Upstream's ``NewPreferredSchedulingTerms`` (component-helpers nodeaffinity) reports
    ``[i].matchExpressions[j].values[k][key]: Invalid value: "v": a valid label must be ...``, with
    ``i`` the term's index in the pod's list; the config's addedAffinity validation words its errors
    the same way, so its term check is reused on the pod's manifest. [] when the manifest does not
    hold the terms (a pod built without one). Found by the differential oracle (tests/oracle).
    """
    from ...config.args import _is_empty_term, _validate_term, as_path  # noqa: PLC2701 - shared wording

    manifest = pod.manifest or {}
    affinity = ((manifest.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    errors: list[str] = []
    for i, term in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        if not isinstance(term, dict) or not term.get("weight") or _is_empty_term(term.get("preference")):
            continue
        errors.extend(str(e) for e in _validate_term(term["preference"], as_path("").index(i)))
    return errors


def _matching_node_names(required: NodeSelector) -> set[str] | None:
    """The PreFilter node-name set from ``matchFields metadata.name In`` requirements.

    Within a term the value sets are intersected; across terms (ORed) they are united. None (all
    nodes) as soon as one term has no such requirement, or there are no terms.
    """
    names: set[str] | None = None
    for term in required.terms:
        term_names: set[str] | None = None
        for requirement in term.match_fields:
            if requirement.key == _OBJECT_NAME_FIELD and requirement.operator == IN:
                values = set(requirement.values)
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        names = term_names if names is None else names | term_names
    return names


class NodeAffinity(PreFilterPlugin, VectorizedFilterPlugin, PreScorePlugin, VectorizedScorePlugin, VectorizedScoreExtensions,
                   EnqueueExtensions):
    """Required node affinity and nodeSelector as a Filter; preferred node affinity as a Score."""

    #: the verdict reads the node's labels and fields only
    #: (fastsched.framework.interface.FilterPlugin.filter_pod_dependence)
    filter_pod_dependence = FILTER_NODE_ONLY

    def __init__(self, args: NodeAffinityArgs | None = None, handle: fwk.Handle | None = None, *,
                 enable_scheduling_queue_hint: bool = True):
        """Validate ``args`` like upstream's ``New`` and parse its addedAffinity.

        Raises ValueError (a ConfigError for validation failures) with upstream's message.
        """
        args = validated_args(args, NodeAffinityArgs, "args are not of type NodeAffinityArgs, got {got}")
        self._handle = handle
        self._queue_hints = enable_scheduling_queue_hint
        #: the required part of addedAffinity; None when not configured
        self.added_node_selector: NodeSelector | None = None
        #: the kept preferred terms of addedAffinity; None when it lists none
        self.added_preferred_terms: tuple[PreferredSchedulingTerm, ...] | None = None
        added = args.added_affinity
        if added is not None:
            required = added.get(_REQUIRED)
            if required is not None:
                selector = NodeSelector.from_dict(required, f"addedAffinity.{_REQUIRED}")
                if selector.parse_errors:
                    raise ValueError(f"parsing addedAffinity.{_REQUIRED}: {_aggregate(selector.parse_errors)}")
                self.added_node_selector = selector
            preferred = added.get(_PREFERRED) or []
            if preferred:
                terms = [PreferredSchedulingTerm.from_dict(item, f"[{index}]") for index, item in enumerate(preferred)]
                kept, parse_errors = _kept_terms(terms)
                if parse_errors:
                    raise ValueError(f"parsing addedAffinity.{_PREFERRED}: {_aggregate(parse_errors)}")
                self.added_preferred_terms = kept

    def name(self) -> str:
        return NAME

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``SignPod``: the node affinity (canonical) and the nodeSelector map."""
        return ((signers.NODE_AFFINITY_SIGNER, signers.node_affinity_signer(pod)),
                (signers.NODE_SELECTOR_SIGNER, signers.node_selector_signer(pod))), None

    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    column_reads = ("node_selector", "affinity")

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm:
        """The fused cycle's form: Filter and Score read only the node's labels and name (a
        PreFilterResult narrowing the nodes sends the pod to the plugin-call path)."""
        return _COLUMN_FORM

    def events_to_register(self) -> list[ClusterEventWithHint]:
        action = ActionType.ADD | ActionType.UPDATE_NODE_LABEL
        if not self._queue_hints:
            # Without queueing hints the preCheck may swallow Node/Add, so taint updates count too.
            action |= ActionType.UPDATE_NODE_TAINT
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, action), self.is_schedulable_after_node_change)]

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: object,
                                         new_obj: object) -> tuple[QueueingHint, Exception | None]:
        """Upstream ``isSchedulableAfterNodeChange``: QueueSkip unless the added or updated node
        matches the scheduler-enforced affinity and the pod's required affinity (nodeSelector
        included); for an update, also unless the old node did not match the pod's. A term that
        does not parse makes the match an error (Queue with it), as upstream's lazy selector does."""
        original, modified, err = as_typed(Node, "*v1.Node", old_obj, new_obj)
        if err is not None:
            return QueueingHint.QUEUE, err
        assert modified is not None  # an add or an update
        if self.added_node_selector is not None and not self.added_node_selector.matches(modified):
            return QueueingHint.QUEUE_SKIP, None
        required = RequiredNodeAffinity.of(pod)
        matched, err = _match_with_error(required, modified)
        if err is not None:
            return QueueingHint.QUEUE, err
        if not matched:
            return QueueingHint.QUEUE_SKIP, None
        if original is None:
            return QueueingHint.QUEUE, None  # an added node the pod's affinity matches
        was_matched, err = _match_with_error(required, original)
        if err is not None:
            return QueueingHint.QUEUE, err
        if was_matched:
            return QueueingHint.QUEUE_SKIP, None  # it matched before the update too
        return QueueingHint.QUEUE, None

    # -- PreFilter --------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        required = _required_selector(pod)
        if required is None and self.added_node_selector is None and pod.node_selector is None:
            return None, Status(Code.SKIP)  # Filter has nothing to check
        state.write(PRE_FILTER_STATE_KEY, RequiredNodeAffinity(pod.node_selector, required))
        if required is None or not required.terms:
            return None, None
        names = _matching_node_names(required)
        if names is None:
            return None, None
        if not names:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return PreFilterResult(names), None

    def pre_filter_extensions(self) -> None:
        return None

    # -- Filter -----------------------------------------------------------------------------------
    def _required_affinity(self, state: CycleState, pod: Pod) -> RequiredNodeAffinity:
        try:
            return state.read(PRE_FILTER_STATE_KEY)
        except NotFoundError:
            return RequiredNodeAffinity.of(pod)  # PreFilter disabled: compute it here, as upstream does

    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        node = node_info.node()
        if self.added_node_selector is not None and not self.added_node_selector.matches(node):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
        if not self._required_affinity(state, pod).matches(node):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts:
        n = len(nodes)
        if self.added_node_selector is not None:
            enforced_fail = ~node_selector_mask(self.added_node_selector, nodes)  # (n,) bool
        else:
            enforced_fail = np.zeros(n, dtype=bool)
        pod_fail = ~self._required_affinity(state, pod).mask(nodes)  # (n,) bool
        # reason 0: enforced affinity (checked first, as in filter); reason 1: the pod's own
        reason_ids = np.where(enforced_fail, 0, np.where(pod_fail, 1, -1)).astype(np.int32)
        codes = np.where(reason_ids >= 0, np.int8(Code.UNSCHEDULABLE_AND_UNRESOLVABLE), np.int8(Code.SUCCESS))
        return FilterVerdicts(codes, reason_ids, [(ERR_REASON_ENFORCED,), (ERR_REASON_POD,)])

    # -- PreScore / Score ---------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]) -> Status | None:
        preferred = _pod_preferred_terms(pod)
        if isinstance(preferred, StatusError):
            return Status.from_error(preferred)
        if preferred is None and self.added_preferred_terms is None:
            return Status(Code.SKIP)  # Score has nothing to count
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(preferred))
        return None

    def _pod_preferred(self, state: CycleState, pod: Pod) -> tuple[PreferredSchedulingTerm, ...] | None | Status:
        try:
            return state.read(PRE_SCORE_STATE_KEY).preferred
        except NotFoundError:
            # PreScore disabled: compute the terms here, as upstream does.
            preferred = _pod_preferred_terms(pod)
            return Status.from_error(preferred) if isinstance(preferred, StatusError) else preferred

    def score(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> tuple[int, Status | None]:
        node = node_info.node()
        count = 0
        if self.added_preferred_terms is not None:
            count += preferred_node_affinity_score(self.added_preferred_terms, node)
        preferred = self._pod_preferred(state, pod)
        if isinstance(preferred, Status):
            return 0, preferred
        if preferred is not None:
            count += preferred_node_affinity_score(preferred, node)
        return count, None

    def score_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> tuple[np.ndarray, Status | None]:
        preferred = self._pod_preferred(state, pod)
        if isinstance(preferred, Status):
            return np.zeros(len(nodes), dtype=np.int64), preferred
        scores = np.zeros(len(nodes), dtype=np.int64)  # (n,) summed weights
        if self.added_preferred_terms is not None:
            scores += preferred_terms_score(self.added_preferred_terms, nodes)
        if preferred is not None:
            scores += preferred_terms_score(preferred, nodes)
        return scores, None

    # -- NormalizeScore -----------------------------------------------------------------------------
    def score_extensions(self) -> "NodeAffinity":
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    def normalize_score_vectorized(self, state: CycleState, pod: Pod, scores: np.ndarray, nodes: fwk.NodeBatch
                                   ) -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)


def new(args: NodeAffinityArgs | None, handle: fwk.Handle) -> NodeAffinity:
    """The plugin factory: ``args`` is a NodeAffinityArgs (None for the defaults)."""
    return NodeAffinity(args, handle)
