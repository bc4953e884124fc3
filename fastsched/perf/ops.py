"""The scheduler_perf ops: one handler per opcode (``_op_createNodes``, ``_op_createPods``, ...).

:class:`WorkloadOps` is mixed into the executor (:class:`fastsched.perf.runner._Executor`), which
dispatches each op of a workload to ``_op_<opcode>``; the handlers use the executor's scheduler,
clock, templates and waits (``self.sched``, ``self.clock``, ``self._render``, ``self._wait``, ...),
set up by the executor. They are apart from it because they are most of its code, and each
mirrors one of upstream's ops (scheduler_perf.go): read one to compare it with upstream without
the executor's clock and set-up in the way. The executor itself is unchanged by the move: the
methods are the same, on the same object.
"""
from __future__ import annotations

import copy
import functools
import gc
import re
import uuid
from typing import TYPE_CHECKING, Any, Callable, Mapping, cast

import yaml

from ..api import ManifestError, Namespace, Node, Pod
from ..api.validation import ValidationError, validate_labels
from ..clock import PRIORITY_CLUSTER
from ..util.collector import collector_paused
from ..util.field import FieldPath
from ..util.goyaml import go_resolve
from .config import Op
from .errors import WorkloadError
from .gotemplate import TemplateError
from .metrics import Collection, WorkloadResult, apply_threshold, labels_match

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..api.names import NameGenerator
    from ..scheduler import Scheduler
    from .config import PerfConfig, TestCase, Workload
    from .gotemplate import Template
    from .runner import _Executor

__all__ = ["WorkloadOps", "CLUSTER_SCOPED_KINDS"]

_HOSTNAME = "kubernetes.io/hostname"

CLUSTER_SCOPED_KINDS = frozenset({"Node", "Namespace", "PriorityClass", "PersistentVolume", "StorageClass",
                                  "CSINode", "CSIDriver", "ResourceSlice", "DeviceClass", "DeviceTaintRule", "VolumeAttachment",
                                  "RuntimeClass", "ClusterRole", "ClusterRoleBinding"})

# scheduler_perf's makeBaseNode / makeBasePod (util.go, testutils.MakePodSpec)
_BASE_NODE: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {}, "status": {
    "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
    "allocatable": {"pods": "110", "cpu": "4", "memory": "32Gi"},
    "phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
_BASE_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-"}, "spec": {"containers": [{
    "name": "pause", "image": "registry.k8s.io/pause:3.10.1", "ports": [{"containerPort": 80}],
    "resources": {"limits": {"cpu": "100m", "memory": "500Mi"}, "requests": {"cpu": "100m", "memory": "500Mi"}}}]}}



#: a name that reads the same in any YAML context it can take on a ``name:`` line: a DNS-1123
#: subdomain (the API server's rule for pod names) that YAML does not resolve to a number, a
#: boolean or null (checked with go-yaml's resolver: ``y``, ``1e3`` and ``0o17`` are no strings
#: there, and the typed decoding turns them into "true", "1000" and "15")
_PLAIN_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR_TAG = "tag:yaml.org,2002:str"
_NO_PLAN = object()  # (no index plan looked for yet)
#: whether createPods makes the later pods of a template's residue by name (``_residue_factory``);
#: the tests turn it off to compare with rendering every pod
_RESIDUE_FACTORIES = True
_LOWERCASE = frozenset("abcdefghijklmnopqrstuvwxyz")


def _name_line(text: str) -> tuple[int, str] | None:
    """(line number, the line up to the value) of the document's ``metadata.name`` when it is a
    plain scalar alone on its line (nothing after it but spaces), else None."""
    try:
        root = yaml.compose(text, Loader=_YAML_LOADER)
    except yaml.YAMLError:
        return None
    node = _mapping_value(root, "metadata")
    node = _mapping_value(node, "name")
    if not isinstance(node, yaml.ScalarNode) or node.style:  # (plain: None, or "" from libyaml)
        return None
    start, end = node.start_mark, node.end_mark
    if start.line != end.line:
        return None
    line = text.splitlines()[start.line]
    if line[start.column:end.column] != node.value or line[end.column:].strip():
        return None
    return start.line, line[:start.column]


def _mapping_value(node: Any, key: str) -> Any:
    if not isinstance(node, yaml.MappingNode):
        return None
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return v
    return None


def _masked_name(text: str, layout: tuple[int, str]) -> tuple[str, str] | None:
    """(``text`` with the name on ``layout``'s line masked, the name) when that line is
    ``layout``'s prefix and a plain name (:data:`_PLAIN_NAME`, a YAML string), else None. Two
    texts with one masked text parse to one document but for ``metadata.name``."""
    line_no, prefix = layout
    # (the line found by offsets: called for every rendered pod, where splitting and joining
    # the whole text was most of its cost)
    start = 0
    for _ in range(line_no):
        start = text.find("\n", start) + 1
        if not start:  # fewer than line_no + 1 lines
            return None
    end = text.find("\n", start)
    if end < 0:
        end = len(text)
    line = text[start:end]
    if not line.startswith(prefix):
        return None
    name = line[len(prefix):].rstrip(" ")
    if _PLAIN_NAME.fullmatch(name) is None or go_resolve(name)[0] != _STR_TAG:
        return None
    return text[:start] + prefix + "\x00" + text[end:], name


def _execute(template: Any, env: dict, what: str) -> str:
    """``template`` rendered with ``env``; an execution error (a missing parameter a function
    reads) is the workload's error naming the op's field, as upstream fails the test with it."""
    try:
        return template.execute(env)
    except TemplateError as exc:
        raise WorkloadError(f"{what}: {exc}") from None


def _at_least(count: Callable[[], int], want: int) -> bool:
    return count() >= want


class WorkloadOps:
    """The op handlers of :class:`fastsched.perf.runner._Executor` (a mixin: see the module docstring)."""

    # -- what _Executor provides (its __init__ and methods: fastsched/perf/runner.py) -------------
    config: PerfConfig
    tc: TestCase
    w: Workload
    sched: Scheduler
    clock: Any
    work_clock: Callable[[], float]
    seed: int
    rng: np.random.Generator
    names: NameGenerator
    prebind_init: Any
    result: WorkloadResult
    parsed: dict[tuple, Any]  # (kind or what, path, text or params) -> object
    volume_index: dict[str, int]
    pods_per_namespace: dict[str, int]
    scheduled: dict[str, int]
    created_at: dict[str, float]
    finalizer_uids: set[str]
    collection: Collection | None
    background: list[Any]
    pending_steady: list[Pod]
    steady: dict[str, Callable[[], Any]]
    steady_counts: dict[str, int]
    next_node_index: int
    pods_created: int

    if TYPE_CHECKING:
        def warn(self, message: str) -> None: ...
        def _elapse(self, wall_start: float) -> None: ...
        def _wait(self, done: Callable[[], bool], what: str, pending: Callable[[], str] | None = None,
                  timeout: float | None = ..., poll: bool = ...) -> None: ...
        def _run_for(self, seconds: float) -> None: ...
        def _template(self, path: str, what: str) -> Template: ...
        def _render(self, path: str, what: str, env: dict) -> str: ...
        def _document(self, text: str, path: str, what: str, kind: str | None = None) -> dict: ...
        def _object(self, doc: dict, path: str, what: str, kind: str | None = None) -> Any: ...
        def _decoded(self, doc: dict, path: str, what: str, kind: str | None = None) -> dict: ...
        def _plain(self, path: str, what: str, kind: str | None = None) -> Any: ...
        def _ensure_namespace(self, ns: str) -> None: ...
        def _generated(self, obj: Any) -> str: ...

    # createNodes -------------------------------------------------------------------------------
    def _op_createNodes(self, op: Op, index: int) -> None:
        f = op.fields
        count = int(f.get("count") or 0)
        what = f"{op.path}.nodeTemplatePath"
        path: str = f.get("nodeTemplatePath") or ""
        allocatable = (f.get("nodeAllocatableStrategy") or {}).get("nodeAllocatable") or {}
        params = f.get("templateParams") or {}
        wall = self.work_clock()
        nodes: list[Node] = []
        template = self._template(path, what) if path else None
        static: Node | None = None
        taken = set(self.sched.cache.node_names())
        for i in range(count):
            if template is None or (static is not None):
                node = static
            else:
                text = _execute(template, {**params, "Index": i, "Count": count} if not template.is_static
                                else {}, what)
                node = self._node_from_text(text, path, what, allocatable)
                if template.is_static:
                    static = node
            if node is None:  # makeBaseNode("node-<opIndex>-")
                base = copy.deepcopy(_BASE_NODE)
                base["metadata"]["generateName"] = f"node-{index}-"
                if allocatable:
                    base["status"]["allocatable"].update(allocatable)
                node = static = self._object(base, "makeBaseNode", what, "Node")
            # IntegrationTestNodePreparer: name = generateName + rand.String(5) (a taken name is
            # retried, as upstream's create retries), hostname label = name
            name = node.name
            while not name or (name in taken and not node.name):
                name = node.generate_name + self.names.random_string(5)
            taken.add(name)
            labels = {**node.labels, _HOSTNAME: name}
            new = node.replace(name=name, uid="", labels=labels)
            new.admitted = bool(nodes)  # the first one of the op is validated in full
            nodes.append(new)
        nodes = self._prepare_nodes(op, nodes)
        try:
            self.sched.add_nodes(nodes)
            strategy = f.get("nodeAllocatableStrategy") or {}
            if strategy.get("csiNodeAllocatable") or strategy.get("migratedPlugins"):  # PrepareDependentObjects
                from ..sim.storage import perf_csi_node
                self.sched.add([perf_csi_node(n.name, strategy.get("csiNodeAllocatable") or {},
                                              strategy.get("migratedPlugins") or ()) for n in nodes])
        except (ManifestError, ValueError) as exc:
            raise WorkloadError(str(exc)) from None
        self._elapse(wall)

    def _node_from_text(self, text: str, path: str, what: str, allocatable: Mapping[str, str]) -> Node:
        key = (path, text + repr(sorted(allocatable.items())))
        node = self.parsed.get(key)
        if node is None:
            doc = self._document(text, path, what, "Node")
            if allocatable:  # NodeAllocatableStrategy: allocatable = (defaulted) capacity + overrides
                status = dict(doc.get("status") or {})
                alloc = dict(status.get("allocatable") or status.get("capacity") or {})
                alloc.update(allocatable)
                status["allocatable"] = alloc
                doc = {**doc, "status": status}
            node = self.parsed[key] = self._object(doc, path, what, "Node")
        return node

    def _prepare_nodes(self, op: Op, new_nodes: list[Node]) -> list[Node]:
        """The op's node strategy, applied as upstream's PrepareNodes applies it: to the nodes at
        positions [nextNodeIndex, nextNodeIndex + count) of *all* nodes listed by name."""
        f = op.fields
        count = len(new_nodes)
        start = self.next_node_index
        self.next_node_index += count
        label = f.get("labelNodePrepareStrategy")
        unique: dict = f.get("uniqueNodeLabelStrategy") or {}
        if not label and not unique:
            return new_nodes
        by_name = {n.name: n for n in new_nodes}
        existing = {n.name: n for n in self.sched.nodes()}
        window = sorted([*existing, *by_name])[start:start + count]
        for i, name in enumerate(window):
            # a labelKey left out is Go's zero value, "": the API server refuses that patch
            if label:
                key, value = label.get("labelKey") or "", label["labelValues"][i % len(label["labelValues"])]
            else:
                key, value = unique.get("labelKey") or "", str(uuid.UUID(int=int(self.rng.integers(0, 2**63)) << 64
                                                                         | int(self.rng.integers(0, 2**63)), version=4))
            errors = validate_labels({key: value}, FieldPath("metadata").child("labels"))
            if errors:
                raise ValidationError("Node", name, errors)
            if name in by_name:
                node = by_name[name]
                admitted = node.admitted
                node = node.replace(labels={**node.labels, key: value})
                node.admitted = admitted
                by_name[name] = node
            else:  # a node of an earlier op: patched in place, as upstream's PATCH does
                old = existing[name]
                self.sched.update_node(old.replace(labels={**old.labels, key: value}))
        return [by_name[n.name] for n in new_nodes]

    # createNamespaces ----------------------------------------------------------------------------
    def _op_createNamespaces(self, op: Op, index: int) -> None:
        f = op.fields
        base = None
        count = int(f.get("count") or 0)
        if f.get("namespaceTemplatePath") and count:
            # upstream names each copy <prefix>-<i> before creating it: the template needs no name
            path, what = f["namespaceTemplatePath"], f"{op.path}.namespaceTemplatePath"
            doc = self._document(self.config.read_template(path, what), path, what, "Namespace")
            doc = {**doc, "metadata": {**(doc.get("metadata") or {}), "name": f"{f.get('prefix', '')}-0"}}
            base = self._object(doc, path, what, "Namespace")
        for i in range(count):
            name = f"{f.get('prefix', '')}-{i}"
            ns = base.replace(name=name, uid="", generate_name="") if base is not None else Namespace(name=name)
            self.sched.add_namespace(ns)
            self.pods_per_namespace.setdefault(name, 0)

    # createPods ----------------------------------------------------------------------------------
    def _pod_factory(self, path: str | None, what: str, env: dict) -> tuple[Any, bool, str | None]:
        """(PodFactory, whether the pod has finalizers, the pod's name when it is not the
        factory's) for the rendered template.

        Rendered texts that differ only in ``metadata.name`` share one parse (templates that name
        each pod by its index, as ``gang-pod.yaml``: decoding a manifest costs ~0.4 ms, the
        factory's pod ~5 us). Only a name that cannot change anything else qualifies: see
        :func:`_name_line`."""
        if path is None:
            text, key_path = yaml.safe_dump(_BASE_POD), "makeBasePod"
        else:
            template = self._template(path, what)
            text = _execute(template, {} if template.is_static else env, what)
            key_path = path
        key = ("pod", key_path, text)
        entry = self.parsed.get(key)
        if entry is not None:
            return entry
        layouts = self.parsed.setdefault(("pod-name-lines", key_path), [])
        candidates = []  # (masked text, name) of this text, one per known layout that fits it
        for layout in layouts:
            named = _masked_name(text, layout)
            if named is not None:
                shared = self.parsed.get(("pod-named", key_path, named[0]))
                if shared is not None:
                    return shared[0], shared[1], named[1]
                candidates.append(named)
        doc = self._indexed_document(path, what, env) if path is not None else None
        if doc is None:
            doc = self._document(text, key_path, what, "Pod")
        pod = self._object(doc, key_path, what, "Pod")
        finalizers = bool((doc.get("metadata") or {}).get("finalizers"))
        # (imported here, on a parse only: an import statement run for every pod made was ~1% of a
        # gang phase's CPU)
        from ..sim.generators import PodFactory
        entry = self.parsed[key] = (PodFactory(pod), finalizers, None)
        # where the name is: looked for in the template's first renderings only (a second parse
        # of each text would double the cost of templates whose pods differ beyond their names)
        tries = self.parsed.get(("pod-name-tries", key_path), 0)
        if not layouts and tries < 3:
            self.parsed[("pod-name-tries", key_path)] = tries + 1
            layout = _name_line(text)
            named = None if layout is None else _masked_name(text, layout)
            if named is not None and named[1] == pod.name:
                layouts.append(layout)
                candidates.append(named)
        for masked, name in candidates:
            if name == pod.name:
                self.parsed[("pod-named", key_path, masked)] = entry
                break
        return entry

    def _indexed_document(self, path: str, what: str, env: dict) -> Any | None:
        """The parsed document of ``path`` rendered with ``env``, made from one parse of the
        template for every ``Index`` (:mod:`fastsched.perf.indexed`: templates that only print
        ``{{.Index}}`` into scalars, as ``pod-with-extended-resource.yaml``), or None: the caller
        renders and parses."""
        from ..api.schema import typed_yaml
        from .indexed import SENTINEL, index_plan, prints_index_only

        index = env.get("Index")
        if type(index) is not int or index < 0:
            return None
        key = ("index-plan", path, repr(sorted((k, v) for k, v in env.items() if k != "Index")))
        plan = self.parsed.get(key, _NO_PLAN)
        if plan is _NO_PLAN:
            plan = None
            template = self._template(path, what)
            if prints_index_only(template):
                try:
                    plan = index_plan(template.execute({**env, "Index": SENTINEL}),
                                      convert=functools.partial(typed_yaml, kind="Pod"))
                except TemplateError:
                    plan = None  # rendering reports it
                if plan is not None and type(plan.doc) is not dict:
                    plan = None  # not one object: the parse path's error
            self.parsed[key] = plan
        return None if plan is None else plan.document(index)

    def _residue_plan(self, path: str | None, what: str, params: dict, count: int) -> Any:
        """The :class:`~fastsched.perf.indexed.ResiduePlan` of the template at ``path`` with
        ``params`` (and ``Count``: ``count``), kept per those values (a createPods op asks once),
        or None."""
        if path is None or not _RESIDUE_FACTORIES:
            return None
        key = ("residue-plan", path, repr(sorted({**params, "Count": count}.items())))
        plan = self.parsed.get(key, _NO_PLAN)
        if plan is _NO_PLAN:
            from .indexed import residue_plan

            plan = self.parsed[key] = residue_plan(self._template(path, what))
        return plan

    def _residue_factory(self, plan: Any, path: str, what: str, env: dict) -> tuple[Any, bool, str | None] | None:
        """What :meth:`_pod_factory` answers for ``env``, without rendering the template, for a
        template whose pods of one residue of the index differ by their names alone (``plan``,
        :meth:`_residue_plan`'s: the ExtendedResource cases' pods, issue 27); None: the caller
        renders. The first pod of each residue is rendered and made as before, and its name must
        be the one the kept parts give it; the later ones take its factory with their own names
        (as the texts that differ only by ``metadata.name`` share one parse there)."""
        index = env.get("Index")
        if type(index) is not int or index < 0:
            return None
        try:
            residues = plan.residues(env)
            entry = plan.entries.get(residues)
        except Exception:  # noqa: BLE001 - rendering reports it
            return None
        if entry is None:
            made = self._pod_factory(path, what, env)
            factory, fin, name = made
            parts = plan.name_parts(self._template(path, what), env, residues)
            if parts is not None and str(index).join(parts[0]) == (name or factory.template.name):
                plan.entries[residues] = (factory, fin, parts[0], parts[1], {})
            else:
                plan.entries[residues] = False
            return made
        if entry is False:
            return None
        factory, fin, parts, plain, verdicts = entry
        digits = str(index)
        name = digits.join(parts)
        # the names _masked_name lets pods share a parse by (a plain DNS-like string): any other
        # (too long, a YAML int, quoted) is rendered and parsed. With a first part that starts
        # with a lowercase letter the verdict depends on the digits' count only: _PLAIN_NAME's
        # classes hold every digit, and go-yaml v2's implicit types for such a first character
        # (booleans, null) are words without digits (``verdicts``: this entry's, by that count)
        by_length = parts[0][:1] in _LOWERCASE
        ok = verdicts.get(len(digits)) if by_length else None
        if ok is None:
            ok = (plain and _PLAIN_NAME.fullmatch(name) is not None
                  and go_resolve(name)[0] == _STR_TAG)
            if by_length:
                verdicts[len(digits)] = ok
        if not ok:
            return None
        return factory, fin, name

    def _make_pods(self, op: Op, ns: str, count: int, start: int = 0) -> tuple[list[Pod], list[bool]]:
        f = op.fields
        path = f.get("podTemplatePath") or self.tc.default_pod_template_path
        what = f"{op.path}.podTemplatePath"
        params = f.get("templateParams") or {}
        pods, finalizers = [], []
        batch: set[str] = set()
        last_env_static = None
        # upstream's podTemplateWithParams.GetPodTemplate: every pod made from a template file gets
        # the label signature: signature-label-<index / signatureBatchSize> (default 1), so that
        # opportunistic batching sees batches of that size (pods of one batch share the mapping).
        # No selector of upstream's templates names that key, so the label decides nothing but the
        # signatures: it is stamped when some profile signs pods (fw.batch), and left out otherwise,
        # where a label per pod would only defeat the compiled cycle's plan sharing.
        signature_batch = (max(int(f.get("signatureBatchSize") or 1), 1)
                           if path is not None and self._profiles_sign_pods() else 0)
        signature_value, signature_labels = None, None
        residue_plan = self._residue_plan(path, what, params, count)
        for i in range(start, start + count):
            if last_env_static is None:
                env = {**params, "Index": i, "Count": count}
                made = None if residue_plan is None else self._residue_factory(residue_plan, cast(str, path), what, env)
                if made is not None:
                    factory, fin, name = made
                else:
                    factory, fin, name = self._pod_factory(path, what, env)
                    if path is None or self._template(path, what).is_static:
                        last_env_static = (factory, fin, name)
            else:
                factory, fin, name = last_env_static
            tpl = factory.template
            name = name or tpl.name
            if not name:  # generateName, as the API server names the pod (seeded)
                if not tpl.generate_name:
                    raise WorkloadError(f"{what}: the pod template has neither metadata.name nor "
                                        "metadata.generateName")
                name = self.names.generate(tpl.generate_name)
                while name in batch or self.sched.name_taken("Pod", ns, name):
                    name = self.names.generate(tpl.generate_name)
                batch.add(name)
            if signature_batch:
                value = f"signature-label-{i // signature_batch}"
                if value != signature_value:
                    signature_value, signature_labels = value, {**tpl.labels, "signature": value}
                pods.append(factory.make(name, ns, labels=signature_labels))
            else:
                pods.append(factory.make(name, ns))
            finalizers.append(fin)
        return pods, finalizers

    def _profiles_sign_pods(self) -> bool:
        """Whether a profile keeps opportunistic batching state (it signs pods)."""
        return any(getattr(fw, "batch", None) is not None for fw in self.sched.profiles.values())

    def _add_pods(self, pods: list[Pod], finalizers: list[bool], ns: str) -> list[Pod]:
        before = len(self.sched.pods_in_namespace(ns))
        try:
            self.sched.add_pods(pods)
        except (ManifestError, ValueError) as exc:
            raise WorkloadError(str(exc)) from None
        added = self.sched.pods_in_namespace(ns)[before:]
        now = self.clock.now()
        for pod, fin in zip(added, finalizers):
            self.created_at[pod.uid] = now
            if fin:
                self.finalizer_uids.add(pod.uid)
            if pod.node_name:  # created bound: counted as scheduled, as the informer handler does
                self.scheduled[ns] = self.scheduled.get(ns, 0) + 1
                if self.collection is not None:
                    self.collection.on_bound(pod, None, now)
        self.pods_created += len(added)
        return added

    def _prebound(self, pods: list[Pod]) -> list[Pod]:
        from ..sim.workloads import prebind_pods

        try:
            return prebind_pods(pods, self.sched.nodes(), occupied=self.sched.pods.values(), seed=self.seed)
        except ValueError as exc:
            raise WorkloadError(str(exc)) from None

    def _op_createPods(self, op: Op, index: int) -> None:
        f = op.fields
        ns = f.get("namespace") or f"namespace-{index}"
        self._ensure_namespace(ns)
        count = int(f.get("count") or 0)
        if f.get("collectMetrics"):
            self._start_collecting(ns, [ns], None)
        if f.get("steadyState"):
            self._steady_state(op, ns, count, float(f.get("duration") or 0))
        else:
            wall = self.work_clock()
            pods, fins = self._make_pods(op, ns, count)
            if f.get("persistentVolumeTemplatePath"):
                pods = self._with_volumes(op, ns, pods)
            if self.prebind_init and not f.get("collectMetrics") and not f.get("skipWaitToCompletion") \
                    and self.collection is None:
                pods = self._prebound(pods)
            self._add_pods(pods, fins, ns)
            self._elapse(wall)
            if f.get("skipWaitToCompletion"):
                self.pods_per_namespace[ns] = self.pods_per_namespace.get(ns, 0) + count
            else:
                self._wait(lambda: self.scheduled.get(ns, 0) >= count,
                           f"{count} pods to be scheduled in namespace {ns}",
                           lambda: self._pending_detail(ns, count), poll=True)
        if f.get("collectMetrics"):
            self._stop_collecting()

    def _with_volumes(self, op: Op, ns: str, pods: list[Pod]) -> list[Pod]:
        """scheduler_perf's CreatePodWithPersistentVolume: a bound PV and claim per pod, the pod
        mounting the claim (:func:`fastsched.sim.storage.perf_volume_pair`)."""
        from ..sim.storage import perf_volume_objects, perf_volume_pair

        f = op.fields
        docs, named = [], []
        for key, kind in (("persistentVolumeTemplatePath", "PersistentVolume"),
                          ("persistentVolumeClaimTemplatePath", "PersistentVolumeClaim")):
            path = f.get(key)
            if not path:
                raise WorkloadError(f"{op.path}.{key}: required with persistentVolumeTemplatePath")
            what = f"{op.path}.{key}"
            # decoded into its type first, as upstream's getSpecFromFile (strict): a wrong type
            # is the op's error naming the template, not a failure deriving the objects from it
            docs.append(self._decoded(self._document(self.config.read_template(path, what), path, what, kind),
                                      path, what, kind))
            named.append((path, what, kind))
        start = self.volume_index.get(ns, 0)
        if pods:  # the first pair as created, each object checked on its own (errors name the template)
            for doc, (path, what, kind) in zip(perf_volume_pair(docs[0], docs[1], ns, start)[:2], named):
                self._object(doc, path, what, kind)
        # The collector paused while the objects are made and added and the pods cloned: a PV, a
        # claim, their manifests and the pod's clone per pod (~20 tracked objects, none in a
        # reference cycle), 20,000 pods in the rescaled SchedulingInTreePVs, count toward its
        # passes, and the passes over the old generation that the heap's growth starts (4 there,
        # ~0.65 s of the phase's ~4 s of CPU) found nothing to free. Upstream's Go makes them
        # without such a cost; the runner's full collection before a phase (_start_collecting) and
        # the waits' own (FULL_COLLECTION_EVERY) still run. collector_paused restores the
        # collector's state on the way out, errors too.
        with collector_paused():
            try:
                pvs, pvcs, volumes = perf_volume_objects(docs[0], docs[1], ns, start, len(pods))
                for pv, pvc in zip(pvs, pvcs):   # the claim first, as upstream creates it
                    self.sched.add_object(pvc)
                    self.sched.add_object(pv)
            except (ManifestError, ValueError) as exc:
                raise WorkloadError(str(exc)) from None
            self.volume_index[ns] = start + len(pods)
            from ..api.objects import _field_copier

            copy_pod = _field_copier(Pod)
            out = []
            for pod, volume in zip(pods, volumes):
                clone = copy_pod(pod)  # a field copy (no __init__): only the volumes differ
                clone.volumes = (volume,)
                manifest = pod.manifest
                if manifest:  # so objects("Pod") shows the volume too
                    clone.manifest = {**manifest, "spec": {**(manifest.get("spec") or {}), "volumes": [volume]}}
                out.append(clone)
        return out

    def _pending_detail(self, ns: str, want: int) -> str:
        got = self.scheduled.get(ns, 0)
        for pod in self.sched.pods_in_namespace(ns):
            if not pod.node_name:
                res = self.sched.results.get(pod.uid)
                msg = f": {res.status}: {res.message}" if res is not None and res.message else ""
                return f" ({got} of {want} scheduled; at least pod {pod.key} is not scheduled{msg})"
        return f" ({got} of {want} scheduled)"

    def _steady_state(self, op: Op, ns: str, count: int, duration: float) -> None:
        """createPodsSteadily: ``count`` pods, and each one seen bound is deleted and replaced by
        a new one (template Index 0, Count 1, as upstream creates it), for ``duration`` seconds."""
        self.steady[ns] = lambda: self._add_pods(*self._make_pods(op, ns, 1), ns)
        self.steady_counts[ns] = 0
        wall = self.work_clock()
        pods, fins = self._make_pods(op, ns, count)
        self._add_pods(pods, fins, ns)
        self._elapse(wall)
        try:
            self._run_for(duration)
        finally:
            del self.steady[ns]
            self.pending_steady.clear()
        if not self.steady_counts[ns]:
            raise WorkloadError("no pod at all got scheduled, either because of a problem or because the test "
                                "interval was too small")

    def _steady_replace(self) -> None:
        pods, self.pending_steady = self.pending_steady, []
        for pod in pods:
            replace = self.steady.get(pod.namespace)
            if replace is None:
                continue
            self.steady_counts[pod.namespace] += 1
            self._delete(pod)
            replace()

    # deletePods ----------------------------------------------------------------------------------
    def _delete(self, pod: Pod) -> None:
        """Delete a pod as the API server does: one with finalizers gets a deletionTimestamp."""
        current = self.sched.pods.get(pod.uid)
        if current is None:
            return  # already gone (preempted, deleted): upstream logs the NotFound error
        if pod.uid in self.finalizer_uids:
            if current.deletion_timestamp is None:
                self.sched.update_pod(current.replace(deletion_timestamp=self.clock.now()))
            return
        if current.node_name:
            self.scheduled[current.namespace] = self.scheduled.get(current.namespace, 0) - 1
        self.sched.delete_pod(current.uid, reason="deleted by the workload")

    def _op_deletePods(self, op: Op, index: int) -> None:
        f = op.fields
        ns = f.get("namespace", "")
        selector = f.get("labelSelector") or {}
        victims = [p for p in self.sched.pods_in_namespace(ns) if labels_match(p.labels, selector)]
        rate = int(f.get("deletePodsPerSecond") or 0)
        if rate <= 0:
            for pod in victims:
                self._delete(pod)
            return
        left = [len(victims)]
        interval = 1.0 / rate

        def tick(i: int = 0) -> None:
            if i >= len(victims):
                return
            self._delete(victims[i])
            left[0] -= 1
            if i + 1 < len(victims):
                self.background.append(self.clock.schedule(self.clock.now() + interval,
                                                           lambda: tick(i + 1), PRIORITY_CLUSTER))

        if victims:
            self.background.append(self.clock.schedule(self.clock.now() + interval, tick, PRIORITY_CLUSTER))
        if not f.get("skipWaitToCompletion"):
            self._wait(lambda: left[0] <= 0, f"{len(victims)} pods to be deleted in namespace {ns}")

    # churn ---------------------------------------------------------------------------------------
    def _op_churn(self, op: Op, index: int) -> None:
        f = op.fields
        ns = f.get("namespace") or f"namespace-{index}"
        if ns not in self.sched.namespaces:
            self.sched.add_namespace(Namespace(name=ns))
        objs = [self._plain(p, f"{op.path}.templatePaths[{i}]") for i, p in enumerate(f["templatePaths"])]
        interval = (f.get("intervalMilliseconds") or 500) / 1000.0
        number = int(f.get("number") or 0)
        mode = f["mode"]
        slots: list[list[str]] = [[""] * max(number, 1) for _ in objs]
        count = [0]

        def churn_fn(i: int, name: str) -> str:
            obj = objs[i]
            if name:
                self._churn_delete(obj, name, ns)
                return ""
            return self._churn_create(obj, ns)

        def tick() -> None:
            if mode == "create":
                if number and count[0] >= number:
                    return
                for i in range(len(objs)):
                    churn_fn(i, "")
            else:
                slot = count[0] % number
                for i in range(len(objs)):
                    slots[i][slot] = churn_fn(i, slots[i][slot])
            count[0] += 1
            self.background.append(self.clock.schedule(self.clock.now() + interval, tick, PRIORITY_CLUSTER))

        self.background.append(self.clock.schedule(self.clock.now() + interval, tick, PRIORITY_CLUSTER))

    def _churn_create(self, obj: Any, ns: str) -> str:
        scoped = obj.KIND not in CLUSTER_SCOPED_KINDS
        base = obj.replace(namespace=ns) if scoped else obj
        name = self._generated(base)
        new = base.replace(name=name, uid="")
        try:
            if isinstance(new, Pod):
                self._add_pods([new], [False], ns)
            elif isinstance(new, Node):
                self.sched.add_node(new)
            elif isinstance(new, Namespace):
                self.sched.add_namespace(new)
            else:
                self.sched.add(new)
        except (ManifestError, ValueError) as exc:
            self.warn(f"churn: cannot create {new.KIND} {new.key}: {exc}")
            return ""
        return name

    def _churn_delete(self, obj: Any, name: str, ns: str) -> None:
        try:
            if isinstance(obj, Pod):
                pod = self.sched.get_pod(ns, name)
                if pod is not None:
                    self._delete(pod)
            elif isinstance(obj, Node):
                self.sched.delete_node(name)
            elif not isinstance(obj, Namespace):
                self.sched.delete_object(obj.KIND, name, ns)
        except KeyError:
            pass

    # barrier / sleep -----------------------------------------------------------------------------
    def _is_attempted(self, pod: Pod) -> bool:
        """Bound, or carrying a PodScheduled condition: tried at least once, or gated
        (upstream's scheduler reports SchedulingGated in that condition)."""
        from ..scheduler.scheduler import ERROR, GATED, SCHEDULED, UNSCHEDULABLE

        if pod.node_name:
            return True
        res = self.sched.results.get(pod.uid)
        return res is not None and (res.attempts > 0 or res.status in (SCHEDULED, UNSCHEDULABLE, ERROR, GATED))

    def _counter(self, ns: str, selector: Mapping[str, str] | None, attempted: bool) -> Callable[[], int]:
        """How many pods of ``ns`` (matching ``selector``) are scheduled (or attempted), counted
        incrementally: each look only re-examines the pods not counted yet."""
        if not selector and not attempted:
            return lambda: self.scheduled.get(ns, 0)
        ok = self._is_attempted if attempted else (lambda p: bool(p.node_name))
        counted = [0]
        pending = [p.uid for p in self.sched.pods_in_namespace(ns) if labels_match(p.labels, selector)]

        def count() -> int:
            still = []
            pods = self.sched.pods
            for uid in pending:
                pod = pods.get(uid)
                if pod is None:
                    continue
                if ok(pod):
                    counted[0] += 1
                else:
                    still.append(uid)
            pending[:] = still
            return counted[0]

        return count

    def _op_barrier(self, op: Op, index: int) -> None:
        f = op.fields
        namespaces = list(f.get("namespaces") or [])
        for ns in namespaces:
            if ns not in self.pods_per_namespace:
                raise WorkloadError(f"unknown namespace {ns}")
        if not namespaces:
            namespaces = list(self.pods_per_namespace)
        selector = f.get("labelSelector") or {}
        stage = f.get("stageRequirement") or "Scheduled"
        for ns in namespaces:
            want = self.pods_per_namespace[ns]
            count = self._counter(ns, selector, stage == "Attempted")
            self._wait(functools.partial(_at_least, count, want),
                       f"{want} pods to be {stage.lower()} in namespace {ns}",
                       functools.partial(self._pending_detail, ns, want), poll=True)
        if stage != "Attempted":
            if not f.get("namespaces"):
                self.pods_per_namespace = {}
            else:
                for ns in namespaces:
                    self.pods_per_namespace.pop(ns, None)

    def _op_sleep(self, op: Op, index: int) -> None:
        self._run_for(float(op.fields.get("duration") or 0.0))

    # metrics -------------------------------------------------------------------------------------
    def _start_collecting(self, name: str, namespaces: list[str], selector: Mapping[str, str] | None) -> None:
        if self.collection is not None:
            raise WorkloadError("metrics collection is overlapping. Probably second collector was started before "
                                "stopping a previous one")
        gc.collect()  # upstream: runtime.GC() before collecting; a full collection here, not mid-phase
        self.collection = Collection(cast("_Executor", self), name, namespaces, selector)

    def _stop_collecting(self) -> None:
        if self.collection is None:
            raise WorkloadError("missing startCollectingMetrics operation before stopping")
        items, phase = self.collection.stop()
        self.collection = None
        r = self.result
        r.threshold_errors.extend(apply_threshold(items, r.threshold, r.selector))
        for item in items:
            if r.measured is None and item.data is not None and item.labels.get("Metric") == r.selector.name \
                    and labels_match(item.labels, r.selector.labels):
                r.measured = item.data.get(r.selector.data_bucket)
        r.data_items.extend(items)
        r.phases.append(phase)
        # A SchedulingThroughput phase without a kept sample (it ended before the second tick
        # after its first bind) has no SchedulingThroughput item: upstream warns ("Failed to
        # measure SchedulingThroughput") and applyThreshold finds no item to check, so
        # ``measured`` stays None and no threshold error is added (the warning says so).

    def _op_startCollectingMetrics(self, op: Op, index: int) -> None:
        f = op.fields
        self._start_collecting(f.get("name", ""), list(f.get("namespaces") or []), f.get("labelSelector"))

    def _op_stopCollectingMetrics(self, op: Op, index: int) -> None:
        self._stop_collecting()

    # createPodGroups -----------------------------------------------------------------------------
    def _op_createPodGroups(self, op: Op, index: int) -> None:
        """runCreatePodGroupsOp: ``count`` PodGroups from the template (``templateParams`` and
        ``Index``) in ``namespace`` (created if absent), decoded strictly. Upstream then waits for
        the scheduler's informer to list them; fastsched's cache has them once added."""
        f = op.fields
        ns = f["namespace"]
        self._ensure_namespace(ns)
        path, what = f["templatePath"], f"{op.path}.templatePath"
        params = f.get("templateParams") or {}
        wall = self.work_clock()
        for i in range(int(f.get("count") or 0)):
            doc = self._document(self._render(path, what, {**params, "Index": i}), path, what, "PodGroup")
            # decoded into a v1beta1 PodGroup and created with the typed v1beta1 client whatever
            # the template's apiVersion (default_preemption's podgroup.yaml says v1alpha3)
            doc = {**doc, "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                   "metadata": {**(doc.get("metadata") or {}), "namespace": ns}}
            obj = self._object(doc, path, what, "PodGroup")
            try:
                self.sched.add_object(obj)
            except (ManifestError, ValueError) as exc:
                raise WorkloadError(f"{path}: {exc}") from None
        self._elapse(wall)

    # createAny / updateAny -----------------------------------------------------------------------
    def _any_object(self, op: Op, i: int, count: int) -> Any:
        f = op.fields
        what = f"{op.path}.templatePath"
        path = f["templatePath"]
        env = {**(f.get("templateParams") or {}), "Index": i, "Count": count}
        text = self._render(path, what, env)
        doc = self._document(text, path, what)
        kind = doc.get("kind")
        ns = f.get("namespace") or ""
        if ns and kind in CLUSTER_SCOPED_KINDS:
            raise WorkloadError(f'namespace "{ns}" set for "{path}", but {kind} has scope "root"')
        if not ns and kind not in CLUSTER_SCOPED_KINDS:
            raise WorkloadError(f'namespace not set for "{path}", but {kind} has scope "namespace"')
        if ns:
            doc = {**doc, "metadata": {**(doc.get("metadata") or {}), "namespace": ns}}
        return self._object(doc, path, what)

    def _op_createAny(self, op: Op, index: int) -> None:
        f = op.fields
        if f.get("namespace"):
            self._ensure_namespace(f["namespace"])
        count = int(f["count"]) if f.get("count") is not None else 1
        wall = self.work_clock()
        for i in range(count):
            obj = self._any_object(op, i, count)
            try:
                if isinstance(obj, Pod):
                    self._add_pods([obj], [False], obj.namespace)
                elif isinstance(obj, Namespace):
                    self.sched.add_namespace(obj)
                    self.pods_per_namespace.setdefault(obj.name, 0)
                else:
                    self.sched.add(obj)
            except (ManifestError, ValueError) as exc:
                raise WorkloadError(str(exc)) from None
        self._elapse(wall)

    # DRA ops (fastsched.dra.perf_ops) ----------------------------------------------------------
    def _op_createResourceDriver(self, op: Op, index: int) -> None:
        from ..dra.perf_ops import create_resource_driver
        wall = self.work_clock()
        create_resource_driver(self.sched, op.fields["driverName"], op.fields["nodes"],
                               int(op.fields.get("maxClaimsPerNode") or 0))
        self._elapse(wall)

    def _op_createResourceClaims(self, op: Op, index: int) -> None:
        from ..dra.perf_ops import create_resource_claims
        self._ensure_namespace(op.fields["namespace"])
        wall = self.work_clock()
        path, what = op.fields["templatePath"], f"{op.path}.templatePath"
        # getSpecFromFile: decoded strictly into a typed ResourceClaim (an empty or non-object
        # file is the op's error, not a traceback creating the claims)
        doc = self._document(self.config.read_template(path, what), path, what, "ResourceClaim")
        create_resource_claims(self.sched, self._decoded(doc, path, what, "ResourceClaim"),
                               int(op.fields.get("count") or 0), op.fields["namespace"])
        self._elapse(wall)

    def _op_allocResourceClaims(self, op: Op, index: int) -> None:
        from ..dra.perf_ops import alloc_resource_claims
        wall = self.work_clock()
        try:
            alloc_resource_claims(self.sched, op.fields.get("namespace") or None, self.seed)
        except RuntimeError as exc:
            raise WorkloadError(str(exc)) from None
        self._elapse(wall)

    def _op_updateAny(self, op: Op, index: int) -> None:
        f = op.fields
        if f.get("namespace"):
            self._ensure_namespace(f["namespace"])
        count = int(f["count"]) if f.get("count") is not None else 1
        rate = int(f.get("updatePerSecond") or 0)
        done = [0]

        def update(i: int) -> None:
            obj = self._any_object(op, i, count)
            self._update(obj, op)
            done[0] += 1

        if rate <= 0:
            for i in range(count):
                update(i)
            return
        interval = 1.0 / rate

        def tick(i: int = 0) -> None:
            update(i)
            if i + 1 < count:
                self.background.append(self.clock.schedule(self.clock.now() + interval, lambda: tick(i + 1),
                                                           PRIORITY_CLUSTER))

        errors: list[WorkloadError] = []

        def safe_tick() -> None:
            try:
                tick(0)
            except WorkloadError as exc:
                errors.append(exc)

        if count:
            self.background.append(self.clock.schedule(self.clock.now() + interval, safe_tick, PRIORITY_CLUSTER))
        self._wait(lambda: done[0] >= count or bool(errors), f"{count} objects to be updated")
        if errors:
            raise errors[0]

    def _update(self, obj: Any, op: Op) -> None:
        sched = self.sched
        try:
            if isinstance(obj, Pod):
                old = sched.get_pod(obj.namespace, obj.name)
                if old is None:
                    raise WorkloadError(f'pods "{obj.name}" not found')
                new = obj.replace(uid=old.uid, node_name=obj.node_name or old.node_name)
                sched.update_pod(new)
            elif isinstance(obj, Node):
                if sched.cache.get_node(obj.name) is None:
                    raise WorkloadError(f'nodes "{obj.name}" not found')
                sched.update_node(obj)
            elif isinstance(obj, Namespace):
                sched.add_namespace(obj)
            else:
                sched.update_object(obj)
        except KeyError as exc:
            raise WorkloadError(f"{op.path}: {exc.args[0] if exc.args else exc}") from None
        except (ManifestError, ValueError) as exc:
            raise WorkloadError(str(exc)) from None
