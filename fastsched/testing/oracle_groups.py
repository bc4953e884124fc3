"""The differential oracle's pod group cycles (GenericWorkload; docs/dev/gang-scheduling.md, step 6).

The oracle (``oracle/main.go``, run with ``--feature-gates GenericWorkload=true``) takes the members
of one PodGroup that stand next to each other in ``incoming`` as one group attempt: upstream's
``scheduleOnePodGroup`` retold on the captured plugins (validatePodGroup, the default algorithm with
GangScheduling's PlacementFeasible before and after each member, PodGroupPostFilter, the member
statuses and bindings of submitPodGroupAlgorithmResult, the ``PodGroupInitiallyScheduled``
condition). Its answer lists each group's outcome in ``groups``::

    {"group": "ns/name", "gated": status | absent, "status": status (after PodGroupPostFilter),
     "messages": {member: failure message}, "bound": {member: node},
     "condition": [status, reason, message], "victims": [ns/name] | absent,
     "nominated": {member: node} | absent}

and each member's attempt in ``attempts`` as for any pod. This module gives fastsched's side of the
same (:func:`run_fastsched_groups`: the members of each group added together, one cycle each), the
comparison (:func:`compare_groups`, :func:`check_groups`) and the scenario class ``gangs``
(:func:`generate_gangs`). What is compared is the group-level outcome above, then every attempt
field by field as :func:`fastsched.testing.oracle.compare` compares them (a member's in its
group's cycle, from its decision record; its FitError is its own, not the group's verdict), then
each attempt's node.

The profiles are the default ones: DefaultPreemption's and DynamicResources' PodGroupPostFilter
(workload-aware preemption) run on both sides. Its rerun of the group's algorithm chooses among
tied nodes too: fastsched's choices there go to the oracle as ``replay_rerun`` (per incoming pod,
as ``replay``), and the node a plain pod's preemption nominated as ``replay_nominated`` (upstream
leaves a tie between equal candidates to map order, and a victim unit spanning nodes, a group with
``disruptionMode: all``, is the same victim on each: the oracle breaks that last tie with
fastsched's node). Members left waiting on preemption stay nominated (later pods see them), as a pod
nominated by PostFilter does; a group's victims leave at once (every generated pod has
``terminationGracePeriodSeconds: 0``). Members bound in one cycle start together.
"""
from __future__ import annotations

from typing import Any, Iterator

from .oracle import (NOW_EPOCH, START_STEP, Oracle, _claim_allocation, _node_allocatable_texts, informer_order,
                     _replay_scheduler_class, compare)
from .oracle_scenarios import CONFIG_V1, DRA_DRIVER, ZONES, _clean, _Gen

__all__ = ["GANG_CLAIMS_CLASS", "GANG_CLASS", "GANG_COMPOSITE_CLASS", "GANG_COMPOSITE_POLICY_CLASS", "GANG_CONFIG",
           "GANG_NAR_CLASS", "GANG_POLICY_CLASS", "GANG_TAS_CLASS", "ORACLE_CLAIMS_GATES",
           "ORACLE_COMPOSITE_GATES", "ORACLE_GATES", "ORACLE_NAR_GATES", "ORACLE_POLICY_GATES",
           "ORACLE_TAS_GATES", "check_groups", "compare_groups", "check_recorded",
           "compare_answer", "differential_groups", "generate_gangs", "oracle_selected", "run_fastsched_groups",
           "workload_gates"]

#: the oracle's --feature-gates for these scenarios
ORACLE_GATES = "GenericWorkload=true"
#: the profile of the gang scenarios (see the module docstring)
GANG_CONFIG = {**CONFIG_V1, "profiles": [{"schedulerName": name}
                                         for name in ("default-scheduler", "other-scheduler")]}


#: the oracle's --feature-gates for the TopologyAwareWorkloadScheduling scenarios (class ``gangs-tas``)
ORACLE_TAS_GATES = "GenericWorkload=true,TopologyAwareWorkloadScheduling=true"
#: the node label the TAS scenarios' racks are told by (zones: topology.kubernetes.io/zone)
RACK_LABEL = "example.com/rack"


#: the oracle's --feature-gates for the PodGroupPreemptionPolicy scenarios (class ``gangs-policy``)
ORACLE_POLICY_GATES = "GenericWorkload=true,PodGroupPreemptionPolicy=true"


#: the oracle's --feature-gates for the DRAWorkloadResourceClaims scenarios (class ``gangs-claims``)
ORACLE_CLAIMS_GATES = "GenericWorkload=true,DRAWorkloadResourceClaims=true"
#: ... and with DRANodeAllocatableResources too (class ``gangs-nar``)
ORACLE_NAR_GATES = ORACLE_CLAIMS_GATES + ",DRANodeAllocatableResources=true"


#: the oracle's --feature-gates for the CompositePodGroup scenarios (class ``gangs-composite``):
#: upstream's dependency check wants GenericWorkload and TopologyAwareWorkloadScheduling with it
#: (kube_features.go: ``CompositePodGroup: {GenericWorkload, TopologyAwareWorkloadScheduling}``)
ORACLE_COMPOSITE_GATES = "GenericWorkload=true,TopologyAwareWorkloadScheduling=true,CompositePodGroup=true"


def workload_gates(tas: bool = False, policy: bool = False, claims: bool = False, composite: bool = False,
                   nar: bool = False) -> Any:
    """fastsched's gates for the gang scenarios: GenericWorkload on (and TopologyAwareWorkloadScheduling
    with ``tas``, PodGroupPreemptionPolicy with ``policy``, DRAWorkloadResourceClaims with ``claims``,
    CompositePodGroup and TopologyAwareWorkloadScheduling with ``composite``,
    DRANodeAllocatableResources with ``nar``), as the oracle's."""
    from ..features import FeatureGates

    return FeatureGates({"GenericWorkload": True,
                         **({"TopologyAwareWorkloadScheduling": True} if tas or composite else {}),
                         **({"PodGroupPreemptionPolicy": True} if policy else {}),
                         **({"DRAWorkloadResourceClaims": True} if claims else {}),
                         **({"CompositePodGroup": True} if composite else {}),
                         **({"DRANodeAllocatableResources": True} if nar else {})})


# ------------------------------------------------------------------------------------------------
# scenarios
# ------------------------------------------------------------------------------------------------
def _pod_group(g: _Gen, name: str, ns: str, min_count: int | None, priority: int | None,
               disruption: str | None = None, preemption_policy: str | None = None,
               parent: str | None = None, workload: str | None = None) -> dict:
    """A PodGroup manifest as the API server stores it: ``priority`` (and ``preemptionPolicy``,
    with PodGroupPreemptionPolicy) as Priority admission writes them from the class named
    (``prio-<p>``, ``prio-<p>-never`` for ``Never``)."""
    policy: dict = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    spec: dict = {"schedulingPolicy": policy}
    if priority is not None:  # as the Priority admission plugin writes it
        never = "-never" if preemption_policy == "Never" else ""
        spec["priorityClassName"], spec["priority"] = f"prio-{priority}{never}", priority
    if preemption_policy is not None:
        spec["preemptionPolicy"] = preemption_policy
    if disruption is not None:
        spec["disruptionMode"] = {disruption: {}}
    if parent is not None:  # (validation wants a workloadRef with a parent: the template is the name)
        spec["parentCompositePodGroupName"] = parent
        spec["workloadRef"] = {"workloadName": workload or f"wl-{parent}", "templateName": name}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-pg-{ns}-{name}"}, "spec": spec}


#: the priorities of the gang scenarios' classes (prio-<p>, and prio-<p>-never besides prio-0-never)
PRIORITIES = (5, 7, 10, 20)


def generate_gangs(seed: int, tas: bool = False, policy: bool = False, claims: bool = False,
                   composite: bool = False, nar: bool = False) -> dict:
    """A scenario of pod groups: a few nodes (some already busy: plain pods, and now and then whole
    running groups of a low priority, ``disruptionMode`` single or all, some under a PDB), then
    groups whose members follow each other in ``incoming``: gangs (``minCount`` at, below or above
    the members given, members already running), basic groups, groups of the second profile or on
    one zone, of a priority that may preempt, now and then a member of another priority, scheduler
    or preemption policy, or a group without its PodGroup object, and a plain pod or two between
    groups (sometimes of the highest priority: it may preempt running groups). About half the
    groups are a Job's pods: 2 to 6 members of one template (one spec, labels included, so that
    their spec objects are shared and the compiled gang runs, the Permit run and ``commit_run``
    serve them in the fast-path comparison); the others 1 to 4 members whose labels differ. Every pod goes at
    once when preempted (``terminationGracePeriodSeconds: 0``, as in the preemption class).

    ``tas`` (class ``gangs-tas``, TopologyAwareWorkloadScheduling on): 3 to 6 nodes, each in a zone
    and most in a rack (``example.com/rack``); most incoming PodGroups carry a topology constraint
    (the zone, the rack, now and then a key no node has).

    ``policy`` (class ``gangs-policy``, PodGroupPreemptionPolicy on): every incoming PodGroup has a
    ``preemptionPolicy`` (``Never`` for about a third, then of a ``prio-<p>-never`` class, or
    PreemptLowerPriority, written or left to the defaulting), its members and running members of
    the same class as a rule; now and then the whole group of the other policy (with the gate,
    a validation error; without it, a group that may preempt).

    ``claims`` (class ``gangs-claims``, DRAWorkloadResourceClaims on): the DRA part of
    :func:`_gang_claims` in every scenario, the claims its groups share named by their PodGroups.

    ``composite`` (class ``gangs-composite``, CompositePodGroup and TopologyAwareWorkloadScheduling
    on): trees of CompositePodGroups over PodGroups instead (:func:`_generate_composite`).

    ``nar`` (class ``gangs-nar``, DRAWorkloadResourceClaims and DRANodeAllocatableResources on):
    ``claims``' scenario (its own draws), then :func:`_gang_node_allocatable`."""
    if composite:  # (before any draw: the other classes' scenarios stay as they were)
        return _generate_composite(seed, policy)
    claims = claims or nar
    g = _Gen("gangs-nar" if nar else "gangs-claims" if claims else "gangs-policy" if policy else "gangs-tas" if tas
             else "gangs", seed)
    g.config = GANG_CONFIG
    for p in PRIORITIES:
        g.objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": f"prio-{p}"}, "value": p})
    for p in (0, *PRIORITIES):  # the Priority admission plugin gives their pods preemptionPolicy Never
        g.objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": f"prio-{p}-never"}, "value": p, "preemptionPolicy": "Never"})
    if tas:
        racks = [f"rack-{i}" for i in range(g.rng.randint(1, 3))]
        for _ in range(g.rng.randint(3, 6)):
            labels = {RACK_LABEL: g.rng.choice(racks)} if g.chance(0.85) else None
            g.node(cpu=g.rng.choice(("2", "3", "4")), memory="8Gi", labels=labels)
    else:
        for _ in range(g.rng.randint(2, 4)):
            g.node(cpu=g.rng.choice(("2", "3", "4")), memory="8Gi")
    if g.chance(0.5):
        g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], requests={"cpu": g.rng.choice(("500m", "1"))},
              labels={"app": g.rng.choice(("a", "b"))})
    for k in range(g.rng.randint(0, 2) if g.chance(0.5) else 0):  # running groups: possible victims
        ns, name = "default", f"run-pg-{k}"
        prio = g.rng.choice((None, 5, 5, 7))
        size = g.rng.randint(1, 3)
        min_count = g.rng.randint(1, size) if g.chance(0.7) else None
        g.objects.append(_pod_group(g, name, ns, min_count, prio, g.rng.choice((None, "single", "all", "all"))))
        app = g.rng.choice(("a", "b"))
        for m in range(size):
            g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], ns=ns, name=f"{name}-{m}", labels={"app": app},
                  requests={"cpu": g.rng.choice(("500m", "1"))}, priority=prio,
                  priorityClassName=f"prio-{prio}" if prio is not None else None,
                  schedulingGroup={"podGroupName": name})
    for app in ("a", "b"):
        if g.chance(0.2):
            g.objects.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                              "metadata": {"name": f"pdb-{app}", "namespace": "default"},
                              "spec": {"selector": {"matchLabels": {"app": app}}, "minAvailable": 1},
                              "status": {"disruptionsAllowed": g.rng.choice((0, 1)), "currentHealthy": 1,
                                         "desiredHealthy": 1, "expectedPods": 1}})
    for k in range(g.rng.randint(1, 4)):
        ns, name = "default", f"pg-{k}"
        # about half the groups are a Job's pods: one template, so the members share every spec
        # field (labels included), as the compiled gang runs need (place_run takes members whose
        # spec objects are the previous member's: from the third on of a new spec), and more of them
        job = g.chance(0.5)
        members = g.rng.randint(2, 6) if job else g.rng.randint(1, 4)
        gang = g.chance(0.75)
        min_count = None
        if gang:
            min_count = max(1, members + g.rng.choice((0, 0, -1, 1)))
        priority = g.rng.choice((None, None, 5, 10, 10, 20))
        # PodGroupPreemptionPolicy: the group's policy and its members' (flipped: all of the other one)
        group_policy, members_never = None, False
        if policy:
            group_policy = "Never" if g.chance(0.35) else g.rng.choice((None, "PreemptLowerPriority"))
            if group_policy == "Never" and priority is None:  # a Never class names the priority too
                priority = 0
            members_never = (group_policy == "Never") != g.chance(0.15)
        if not g.chance(0.1):
            pod_group = _pod_group(g, name, ns, min_count, priority, g.rng.choice((None, None, "single", "all")),
                                   group_policy)
            if tas and g.chance(0.8):
                key = g.rng.choice(("topology.kubernetes.io/zone", "topology.kubernetes.io/zone", RACK_LABEL,
                                    RACK_LABEL, "example.com/none"))
                pod_group["spec"]["schedulingConstraints"] = {"topology": [{"key": key}]}
            g.objects.append(pod_group)
        odd = g.rng.randrange(members) if g.chance(0.2) else -1
        odd_kind = g.rng.choice(("priority", "scheduler", "policy"))
        scheduler = "other-scheduler" if g.chance(0.15) else None
        zone = {"topology.kubernetes.io/zone": g.rng.choice(ZONES)} if g.chance(0.2) else None
        # (a Job's members smaller, so that more of its gangs fit: a run places members until one
        # does not; the Job's template has one app label)
        cpu = g.rng.choice(("250m", "500m", "500m", "1") if job else ("250m", "500m", "1", "1500m"))
        job_app = g.rng.choice(("a", "b")) if job else None
        running = g.rng.randint(1, 2) if gang and g.chance(0.25) else 0
        never = members_never and g.chance(0.9)  # (the running members: once in a while not)
        for m in range(running):  # members bound before (they count towards minCount)
            g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], ns=ns, name=f"{name}-run-{m}",
                  requests={"cpu": "250m"}, priority=(priority or 0) if never else priority or None,
                  priorityClassName=f"prio-{priority or 0}-never" if never else
                  f"prio-{priority}" if priority else None,
                  preemptionPolicy="Never" if never else None, schedulingGroup={"podGroupName": name})
        for m in range(members):
            # (no class for priority 0: there is no prio-0, only prio-0-never; admission gives 0 then)
            prio, pclass, sched, pod_policy = priority or None, f"prio-{priority}" if priority else None, \
                scheduler, None
            if members_never:
                prio, pclass, pod_policy = priority or 0, f"prio-{priority or 0}-never", "Never"
            if m == odd and odd_kind == "priority":
                prio, pclass, pod_policy = 7, "prio-7", None
            elif m == odd and odd_kind == "scheduler":
                sched = None if scheduler else "other-scheduler"
            elif m == odd and members_never:  # same priority, the other policy (as admission writes it)
                prio, pclass, pod_policy = priority or None, f"prio-{priority}" if priority else None, None
            elif m == odd:  # same priority, preemptionPolicy Never (as admission writes it)
                prio, pclass, pod_policy = priority or 0, f"prio-{priority or 0}-never", "Never"
            g.pod(ns=ns, name=f"{name}-{m}", requests={"cpu": cpu}, priority=prio, priorityClassName=pclass,
                  schedulerName=sched, preemptionPolicy=pod_policy, nodeSelector=zone,
                  schedulingGroup={"podGroupName": name}, labels={"app": job_app or g.rng.choice(("a", "b"))})
        if g.chance(0.3):
            prio = g.rng.choice((None, None, 20))
            g.pod(ns=ns, requests={"cpu": g.rng.choice(("250m", "1", "2"))}, priority=prio,
                  priorityClassName=f"prio-{prio}" if prio is not None else None)
    if g.chance(0.25) or claims:
        _gang_claims(g, claims)
    if nar:
        _gang_node_allocatable(g)
    for pod in g.pods + g.incoming:
        pod["spec"]["terminationGracePeriodSeconds"] = 0
    sc = _clean(g.scenario())
    if tas:
        sc["tas"] = True  # (fastsched's gates; the oracle is started with ORACLE_TAS_GATES)
    if policy:
        sc["preemption_policy"] = True  # (the oracle is started with ORACLE_POLICY_GATES)
    if claims:
        sc["workload_claims"] = True  # (the oracle is started with ORACLE_CLAIMS_GATES)
    if nar:
        sc["node_allocatable"] = True  # (... or ORACLE_NAR_GATES)
    return sc


def _gang_node_allocatable(g: _Gen) -> None:
    """DRANodeAllocatableResources on the members' GPUs (drawn after the rest): most GPUs take cpu
    or memory from their node per device (``deviceMultiplier``; the GPUs have no capacities to map),
    some with per-pod and per-container cpu overheads; now and then a member gets a sidecar
    container naming its claims (the per-container overhead counts it) or pod-level requests that
    may not cover the claims' amounts. A claim the whole group shares is reserved for the group
    (DRAWorkloadResourceClaims): a mapped device in it is not "shared across pods"; a claim the
    members share under their own entries is, and only its first user gets it."""
    for sl in (o for o in g.objects if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == DRA_DRIVER):
        for device in sl["spec"]["devices"]:
            if not g.chance(0.9):
                continue
            nar: dict = {}
            if g.chance(0.6):
                nar["cpu"] = {"mapping": {"deviceMultiplier": g.rng.choice(("250m", "500m", "1", "2"))}}
            elif g.chance(0.7):
                nar["memory"] = {"mapping": {"deviceMultiplier": g.rng.choice(("1Gi", "4Gi", "6Gi"))}}
            if not nar or g.chance(0.3):
                overhead = {}
                if g.chance(0.7):
                    overhead["perPod"] = g.rng.choice(("250m", "1", "0"))
                if not overhead or g.chance(0.5):
                    overhead["perContainer"] = g.rng.choice(("100m", "500m"))
                nar.setdefault("cpu", {})["overhead"] = overhead
            device["nodeAllocatableResources"] = nar
    for m in g.incoming:
        entries = m["spec"].get("resourceClaims")
        if not entries:
            continue
        if g.chance(0.25):
            m["spec"]["containers"].append({"name": "sidecar", "image": "busybox", "resources": {
                "requests": {"cpu": "100m"}, "claims": [{"name": entries[0]["name"]}]}})
        if g.chance(0.2):
            cpus = [c.get("resources", {}).get("requests", {}).get("cpu", "0") for c in m["spec"]["containers"]]
            total = sum(int(v[:-1]) if v.endswith("m") else int(float(v) * 1000) for v in cpus)
            m["spec"]["resources"] = {"requests": {"cpu": f"{total + g.rng.choice((0, 500, 1500))}m"}}


def _composite_pod_group(name: str, ns: str, min_group_count: int | None, priority: int | None,
                         workload: str, disruption: str | None = None, parent: str | None = None,
                         topology: str | None = None, preemption_policy: str | None = None) -> dict:
    """A CompositePodGroup manifest (``scheduling.k8s.io/v1alpha3``) as the API server stores it:
    ``priority`` as Priority admission writes it from the class named (``prio-<p>``), a
    ``workloadRef`` (validation wants one with a parent: every level gets one)."""
    policy: dict = {"basic": {}} if min_group_count is None else {"gang": {"minGroupCount": min_group_count}}
    spec: dict = {"workloadRef": {"workloadName": workload, "templateName": name}, "schedulingPolicy": policy}
    if priority is not None:
        never = "-never" if preemption_policy == "Never" else ""
        spec["priorityClassName"], spec["priority"] = f"prio-{priority}{never}", priority
    if preemption_policy is not None:
        spec["preemptionPolicy"] = preemption_policy
    if disruption is not None:
        spec["disruptionMode"] = {disruption: {}}
    if parent is not None:
        spec["parentCompositePodGroupName"] = parent
    if topology is not None:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    return {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-cpg-{ns}-{name}"}, "spec": spec}


#: the topology keys the composite scenarios' constraints name (one no node has, now and then)
_TOPOLOGY_KEYS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/zone", RACK_LABEL, RACK_LABEL,
                  "example.com/none")


def _generate_composite(seed: int, policy: bool = False) -> dict:
    """The class ``gangs-composite``: 3 to 6 nodes in zones and racks (as ``gangs-tas``), now and
    then a running tree of a low priority (possible victims) with ``disruptionMode: all`` on its
    root, on a middle CompositePodGroup or only on a leaf (the three shapes upstream's
    ``TestNewDomainForWorkloadPreemption`` covers), then 1 to 3 incoming trees: a root
    CompositePodGroup (``gang{minGroupCount}`` at, below or above its children, or ``basic``) over
    2 or 3 children, now and then one of them a nested CompositePodGroup over 1 or 2 leaves; the
    leaves PodGroups (gangs with ``minCount`` at, below or above their members, or basic), of 1 to 3
    members (about half the leaves a Job's: 2 to 5 members of one spec, as in :func:`generate_gangs`),
    whose members follow each other in ``incoming`` leaf by leaf; topology constraints on
    CompositePodGroups and leaves; one priority per tree (the root's is the group's), now and
    then a member of another (a validation error for the whole tree); now and then a leaf whose
    parent is not created ("missing parent"), members of a leaf already running, and plain pods
    between trees (sometimes of the highest priority: they may preempt running trees).

    ``policy`` (PodGroupPreemptionPolicy on too): every root CompositePodGroup has a
    ``preemptionPolicy`` (``Never`` for about a third, through a ``prio-<p>-never`` class, or
    PreemptLowerPriority, written or defaulted), its members the same as a rule, now and then
    all of the other one (validatePodGroup's error)."""
    g = _Gen("gangs-composite-policy" if policy else "gangs-composite", seed)
    g.config = GANG_CONFIG
    for p in PRIORITIES:
        g.objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": f"prio-{p}"}, "value": p})
    for p in (0, *PRIORITIES) if policy else ():  # Priority admission gives their pods preemptionPolicy Never
        g.objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": f"prio-{p}-never"}, "value": p, "preemptionPolicy": "Never"})
    racks = [f"rack-{i}" for i in range(g.rng.randint(1, 3))]
    for _ in range(g.rng.randint(3, 5)):  # (smaller than gangs-tas': trees that preempt)
        labels = {RACK_LABEL: g.rng.choice(racks)} if g.chance(0.85) else None
        g.node(cpu=g.rng.choice(("1", "2", "2", "3")), memory="8Gi", labels=labels)
    if g.chance(0.5):
        g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], requests={"cpu": g.rng.choice(("500m", "1"))},
              labels={"app": g.rng.choice(("a", "b"))})
    ns = "default"

    def pclass(prio: int | None) -> str | None:  # (no prio-0: admission gives 0 without a class)
        return f"prio-{prio}" if prio else None

    if g.chance(0.65):  # a running tree: possible victims
        prio = g.rng.choice((None, 5, 5, 7))
        shape = g.rng.choice(("root", "mid", "leaf", "none"))
        root, wl = "run-cpg", "wl-run-cpg"
        g.objects.append(_composite_pod_group(root, ns, g.rng.choice((None, 1)), prio, wl,
                                              "all" if shape == "root" else g.rng.choice((None, "single"))))
        parent = root
        if shape == "mid" or g.chance(0.3):
            g.objects.append(_composite_pod_group("run-cpg-mid", ns, None, prio, wl,
                                                  "all" if shape == "mid" else g.rng.choice((None, "single")),
                                                  parent=root))
            parent = "run-cpg-mid"
        app = g.rng.choice(("a", "b"))
        for k in range(g.rng.randint(1, 2)):
            name = f"run-pg-{k}"
            size = g.rng.randint(1, 2)
            disruption = "all" if shape == "leaf" else g.rng.choice((None, "single"))
            g.objects.append(_pod_group(g, name, ns, g.rng.randint(1, size) if g.chance(0.7) else None, prio,
                                        disruption, parent=parent if k == 0 or g.chance(0.5) else root,
                                        workload=wl))
            for m in range(size):
                g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], ns=ns, name=f"{name}-{m}",
                      labels={"app": app}, requests={"cpu": g.rng.choice(("500m", "1", "1"))}, priority=prio,
                      priorityClassName=pclass(prio), schedulingGroup={"podGroupName": name})
    for app in ("a", "b"):
        if g.chance(0.2):
            g.objects.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                              "metadata": {"name": f"pdb-{app}", "namespace": ns},
                              "spec": {"selector": {"matchLabels": {"app": app}}, "minAvailable": 1},
                              "status": {"disruptionsAllowed": g.rng.choice((0, 1)), "currentHealthy": 1,
                                         "desiredHealthy": 1, "expectedPods": 1}})
    for k in range(g.rng.randint(1, 3)):
        root, wl = f"cpg-{k}", f"wl-cpg-{k}"
        priority = g.rng.choice((None, 5, 10, 10, 20, 20))
        tree_policy, never = None, False
        if policy:  # the root's policy, and its members' (flipped: all of the other one)
            tree_policy = "Never" if g.chance(0.35) else g.rng.choice((None, "PreemptLowerPriority"))
            if tree_policy == "Never" and priority is None:  # a Never class names the priority too
                priority = 0
            never = (tree_policy == "Never") != g.chance(0.15)
        # the tree: (name, parent, leaf?) in the order its members come
        nested = g.chance(0.3)
        children = g.rng.randint(2, 3) - (1 if nested else 0)
        leaves: list[tuple[str, str]] = [(f"{root}-pg-{j}", root) for j in range(children)]
        mid = f"{root}-mid"
        if nested:
            at = g.rng.randint(0, len(leaves))
            leaves[at:at] = [(f"{mid}-pg-{j}", mid) for j in range(g.rng.randint(1, 2))]
        n_children = children + (1 if nested else 0)

        def min_group(n: int) -> int | None:
            return max(1, n + g.rng.choice((0, 0, 0, -1, 1))) if g.chance(0.7) else None

        def topology(p: float) -> str | None:
            return g.rng.choice(_TOPOLOGY_KEYS) if g.chance(p) else None

        g.objects.append(_composite_pod_group(root, ns, min_group(n_children), priority, wl,
                                              g.rng.choice((None, None, "single", "all")), topology=topology(0.5),
                                              preemption_policy=tree_policy))
        if nested:
            g.objects.append(_composite_pod_group(mid, ns, min_group(sum(p == mid for _, p in leaves)), priority,
                                                  wl, g.rng.choice((None, "single", "all")), parent=root,
                                                  topology=topology(0.3), preemption_policy=tree_policy))
        missing = len(leaves) - 1 if g.chance(0.08) else -1  # (last: the tree's members stay together)
        odd = (g.rng.randrange(len(leaves)), 0) if g.chance(0.1) else None
        for j, (name, parent) in enumerate(leaves):
            job = g.chance(0.5)  # a leaf of a Job's pods: one template (see generate_gangs)
            members = g.rng.randint(2, 5) if job else g.rng.randint(1, 3)
            pod_group = _pod_group(g, name, ns, max(1, members + g.rng.choice((0, 0, 0, -1, 1))) if g.chance(0.75)
                                   else None, priority, g.rng.choice((None, None, "single", "all")),
                                   tree_policy, parent=f"{root}-missing" if j == missing else parent, workload=wl)
            if (key := topology(0.3)) is not None:
                pod_group["spec"]["schedulingConstraints"] = {"topology": [{"key": key}]}
            g.objects.append(pod_group)
            cpu = g.rng.choice(("250m", "500m", "500m", "1") if job else ("250m", "500m", "1", "1500m"))
            job_app = g.rng.choice(("a", "b")) if job else None
            for m in range(g.rng.randint(1, 2) if g.chance(0.15) else 0):  # members bound before
                g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], ns=ns, name=f"{name}-run-{m}",
                      requests={"cpu": "250m"}, priority=priority or None, priorityClassName=pclass(priority),
                      schedulingGroup={"podGroupName": name})
            for m in range(members):
                prio = 7 if odd == (j, m) else priority
                if never and prio != 7:  # (as Priority admission writes a Never class's pods)
                    g.pod(ns=ns, name=f"{name}-{m}", requests={"cpu": cpu}, priority=prio or 0,
                          priorityClassName=f"prio-{prio or 0}-never", preemptionPolicy="Never",
                          schedulingGroup={"podGroupName": name}, labels={"app": job_app or g.rng.choice(("a", "b"))})
                    continue
                g.pod(ns=ns, name=f"{name}-{m}", requests={"cpu": cpu}, priority=prio or None,
                      priorityClassName=pclass(prio), schedulingGroup={"podGroupName": name},
                      labels={"app": job_app or g.rng.choice(("a", "b"))})
        if g.chance(0.3):
            prio = g.rng.choice((None, None, 20))
            g.pod(ns=ns, requests={"cpu": g.rng.choice(("250m", "1", "2"))}, priority=prio,
                  priorityClassName=pclass(prio))
    for pod in g.pods + g.incoming:
        pod["spec"]["terminationGracePeriodSeconds"] = 0
    sc = _clean(g.scenario())
    sc["tas"] = sc["composite"] = True  # (fastsched's gates; the oracle is started with ORACLE_COMPOSITE_GATES)
    if policy:
        sc["preemption_policy"] = True  # (and PodGroupPreemptionPolicy on both sides)
    return sc


def _gang_claims(g: _Gen, group_claims: bool = False) -> None:
    """DRA for group members: a DeviceClass, a ResourceSlice of 0 to 4 GPUs per node, and for some
    incoming groups a claim of one GPU per member. Drawn after the rest of the scenario.

    Those groups get the highest priority (20, their PodGroup and members; a member of priority 7
    keeps it): a pod holding a claim is never a victim. The oracle has no resourceclaim controller,
    so a victim's claim would stay allocated there, while fastsched's controller releases it when
    the victim is deleted.

    A group with claims gets one of: a claim per member (as before), one claim all its members
    share, or both, the shared one first or last in the members' ``resourceClaims``. A later
    member reuses the allocation the first member's Reserve made in the group cycle (upstream's
    ``podGroupStateData.pendingAllocations``, GenericWorkload); with the shared claim first, Filter's
    fresh-then-pending results swap the two claims' allocations in Reserve, as upstream's do; and
    every sharer after the first fails PreBind (``got allocated elsewhere in the meantime``: the
    oracle's claims conflict on a stale resourceVersion, as the API server's do).

    ``group_claims`` (DRAWorkloadResourceClaims): the PodGroup of a group sharing a claim names it
    in ``spec.resourceClaims`` as its members do (so it is reserved for the group), now and then
    under another entry name (then it is the members' own, reserved for each); and now and then the
    shared claim is already allocated on a node with GPUs and reserved for the group, as after an
    earlier cycle of it (its members must go there; a group that fails gets it unreserved or
    deallocated by PodGroupPostFilter)."""
    res = "resource.k8s.io/v1"
    g.objects.append({"apiVersion": res, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                      "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]}})
    gpus: dict[str, int] = {}
    for node in g.nodes:
        name = node["metadata"]["name"]
        n = gpus[name] = g.rng.choice((0, 1, 2, 2, 4))  # (4: room for members of a group sharing a claim on one node)
        g.objects.append({"apiVersion": res, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
                          "spec": {"driver": DRA_DRIVER, "nodeName": name,
                                   "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                   "devices": [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}}
                                               for i in range(n)]}})
    groups: dict[str, list[dict]] = {}
    for p in g.incoming:
        if p["spec"].get("schedulingGroup"):
            groups.setdefault(p["spec"]["schedulingGroup"]["podGroupName"], []).append(p)
    pod_groups = {o["metadata"]["name"]: o for o in g.objects if o["kind"] == "PodGroup"}
    held: set[tuple[str, int]] = set()  # the devices claims allocated before hold
    for name, members in groups.items():
        if not g.chance(0.6):
            continue
        if name in pod_groups:
            spec = pod_groups[name]["spec"]
            spec["priorityClassName"] = "prio-20-never" if spec.get("preemptionPolicy") == "Never" else "prio-20"
            spec["priority"] = 20
        for p in g.pods:  # its members already running
            if (p["spec"].get("schedulingGroup") or {}).get("podGroupName") == name:
                never = (p["spec"].get("priorityClassName") or "").endswith("-never")
                p["spec"]["priority"], p["spec"]["priorityClassName"] = 20, "prio-20-never" if never else "prio-20"
        # "own": a claim per member; "shared": one claim for the group; "shared-first" /
        # "shared-last": both, in that order in each member's resourceClaims
        sharing = g.rng.choice(("own", "own", "shared", "shared-first", "shared-last"))
        ns = members[0]["metadata"].get("namespace", "default")
        if sharing != "own":
            shared_claim = _gpu_claim(g, f"claim-{name}-shared", ns)
            if group_claims and name in pod_groups:
                entry = "shared-gpu" if g.chance(0.85) else "other-gpu"
                pod_groups[name]["spec"]["resourceClaims"] = [
                    {"name": entry, "resourceClaimName": f"claim-{name}-shared"}]
                # (a device no other claim of the scenario holds: two allocations of one device
                # would be a state no API server lets happen)
                free = [(n["metadata"]["name"], i) for n in g.nodes for i in range(gpus[n["metadata"]["name"]])
                        if (n["metadata"]["name"], i) not in held]
                if entry == "shared-gpu" and free and g.chance(0.3):
                    node, index = g.rng.choice(free)
                    held.add((node, index))
                    shared_claim["status"] = {
                        "allocation": {"devices": {"results": [{
                            "request": "gpus", "driver": DRA_DRIVER, "pool": node, "device": f"gpu-{index}"}]},
                            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                        "reservedFor": [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": name,
                                         "uid": pod_groups[name]["metadata"]["uid"]}]}
                    shared_claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
        for m in members:
            if m["spec"].get("priority") != 7:
                never = (m["spec"].get("priorityClassName") or "").endswith("-never")
                m["spec"]["priority"], m["spec"]["priorityClassName"] = 20, "prio-20-never" if never else "prio-20"
            entries = []
            if sharing != "shared":
                claim = f"claim-{m['metadata']['name']}"
                _gpu_claim(g, claim, m["metadata"].get("namespace", "default"))
                entries.append({"name": "gpus", "resourceClaimName": claim})
            if sharing != "own":
                shared = {"name": "shared-gpu", "resourceClaimName": f"claim-{name}-shared"}
                entries.insert(0 if sharing in ("shared", "shared-first") else len(entries), shared)
            m["spec"]["resourceClaims"] = entries
            m["spec"]["containers"][0].setdefault("resources", {})["claims"] = [{"name": e["name"]} for e in entries]


def _gpu_claim(g: _Gen, name: str, namespace: str) -> dict:
    """A ResourceClaim of one GPU of the ``gpu`` class (its manifest, appended to the objects)."""
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": name, "namespace": namespace, "uid": f"uid-rc-{name}"},
             "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                 "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}}
    g.objects.append(claim)
    return claim


# ------------------------------------------------------------------------------------------------
# the fastsched side
# ------------------------------------------------------------------------------------------------
def _reserved_for_only(sched: Any, pod: Any, claim: str) -> bool:
    """Whether every ``status.reservedFor`` entry of the claim names ``pod`` (the oracle's
    ``fresh``: allocated by this pod's binding)."""
    obj = sched.cluster.get_object("ResourceClaim", claim, pod.namespace)
    if obj is None:
        return False
    return all(r.get("uid") == pod.uid for r in obj.reserved_for)


def _batches(incoming: list[dict], roots: dict[str, str] | None) -> Iterator[tuple[int, str, list[dict]]]:
    """The scenario's incoming entries as the drivers give them: ``(position of the first, group,
    entries)``, consecutive members of one group (:func:`_group_of`) together, any other pod alone
    (group "")."""
    i = 0
    while i < len(incoming):
        g = _group_of(incoming[i], roots)
        j = i + 1
        while g and j < len(incoming) and _group_of(incoming[j], roots) == g:
            j += 1
        yield i, g, incoming[i:j]
        i = j


def _group_of(manifest: dict, roots: dict[str, str] | None = None) -> str:
    """The group a member's cycle is the group's: its PodGroup ("namespace/name"), or with
    ``roots`` (:func:`_composite_roots`) the root CompositePodGroup of its PodGroup's tree."""
    sg = manifest.get("spec", {}).get("schedulingGroup") or {}
    name = sg.get("podGroupName")
    if not name:
        return ""
    key = f"{manifest['metadata'].get('namespace', 'default')}/{name}"
    return (roots or {}).get(key, key)


def _composite_roots(objects: list[dict]) -> dict[str, str]:
    """Each PodGroup with a parent whose ancestors all exist -> its root CompositePodGroup
    ("namespace/name"): the entity its members are scheduled in (a PodGroup whose parent is
    missing is its own: GangScheduling's PreEnqueue gates its members)."""
    parents: dict[tuple[str, str], str | None] = {}
    for o in objects:
        if o.get("kind") == "CompositePodGroup":
            ns = o["metadata"].get("namespace", "default")
            parents[(ns, o["metadata"]["name"])] = o["spec"].get("parentCompositePodGroupName")
    out: dict[str, str] = {}
    for o in objects:
        parent = o.get("spec", {}).get("parentCompositePodGroupName") if o.get("kind") == "PodGroup" else None
        if parent is None:
            continue
        ns = o["metadata"].get("namespace", "default")
        seen: set[str] = set()
        while parent is not None and (ns, parent) in parents and parent not in seen:
            seen.add(parent)
            up = parents[(ns, parent)]
            if up is None:
                out[f"{ns}/{o['metadata']['name']}"] = f"{ns}/{parent}"
                break
            parent = up
    return out


def run_fastsched_groups(scenario: dict) -> dict:
    """fastsched on a gang scenario: each run of consecutive members of one group added together
    and given one cycle; a plain pod one attempt. Returns ``{"groups": [...], "replay": [...]}``
    (the node each incoming pod was placed on in its cycle, for the oracle's ties), and
    ``"outcomes"``, what the fast-path comparison takes (:func:`batch_outcomes`)."""
    from ..clock import VirtualClock
    from ..config import load_config
    from ..scheduler.result import SCHEDULED

    base = _replay_scheduler_class()

    class GroupScheduler(base):  # type: ignore[misc, valid-type]
        wanted_by_pod: dict[str, str] = {}
        rerun_wanted: dict[str, str] = {}
        chosen: dict[str, str] = {}
        rerun_chosen: dict[str, str] = {}
        claims_allocated: dict[str, list[str]] = {}
        node_allocatable: dict[str, list[str]] = {}
        algorithm: dict[str, Any] = {}
        submitted: list = []
        runs = 0  # the group algorithm's runs in this group's cycle (the second: PodGroupPostFilter's)
        # TopologyAwareWorkloadScheduling: the oracle's ties per (group, run, placement, member),
        # fastsched's choices there, its placement order and pick per (group, run), the placement
        # each run kept
        replay_tas: dict[str, str] = {}
        tas_chosen: dict[str, str] = {}
        placement_orders: dict[str, list[str]] = {}
        placement_picks: dict[str, str] = {}
        kept: dict[str, dict[str, str]] = {}
        bind_order: dict[str, list[str]] = {}
        # CompositePodGroup (see _run_composite_root_algorithm)
        _composite = False
        replay_composite: dict[str, str] = {}
        composite_chosen: dict[str, str] = {}
        _root_now = ""
        _counts: dict[str, int] = {}

        def _run_root_scheduling_algorithm(self, fw, group_state, pg_info, **options):
            self.runs += 1
            return super()._run_root_scheduling_algorithm(fw, group_state, pg_info, **options)

        # CompositePodGroup: the replays are keyed "<root>|<run>|<n>" (the n-th member attempt,
        # PlacementGenerate call or tied scoring of the run: the oracle's composite.go)
        def _run_composite_root_algorithm(self, fw, group_state, pg_info):
            self.runs += 1
            self._root_now = f"{pg_info.namespace}/{pg_info.name}"
            self._counts = {"attempt": 0, "generate": 0, "pick": 0}
            results = super()._run_composite_root_algorithm(fw, group_state, pg_info)
            if self.runs == 1:  # the members' attempts: those of the subtree kept, before completion
                for leaf in pg_info.tree.leaves():
                    for pr in getattr(results.get(leaf.key), "pod_results", ()):
                        key = f"{pr.pinfo.pod.namespace}/{pr.pinfo.pod.name}"
                        self.chosen[key] = pr.node_name or ""
                        self.algorithm[key] = pr
            return results

        def _composite_key(self, what: str) -> str:
            self._counts[what] += 1
            return f"{self._root_now}|{self.runs}|{self._counts[what]}"

        def _tas_key(self, pg_info: Any, *parts: str) -> str:
            return "|".join((f"{pg_info.namespace}/{pg_info.name}", str(self.runs), *parts))

        def _pod_group_pod_algorithm(self, fw, placement_state, member):
            if self._composite:
                k = self._composite_key("attempt")
                self.wanted = self.replay_composite.get(k) or None
                pod_result, revert = super()._pod_group_pod_algorithm(fw, placement_state, member)
                self.composite_chosen[k] = pod_result.node_name or ""
                return pod_result, revert
            key = f"{member.pod.namespace}/{member.pod.name}"
            rerun = self.runs > 1
            placement = self._placement_now if self._tas else None
            tas_key = ""
            if self._tas:
                pg = member.pod.scheduling_group.pod_group_name
                tas_key = "|".join((f"{member.pod.namespace}/{pg}", str(self.runs),
                                    placement.name if placement is not None else "", key))
                self.wanted = self.replay_tas.get(tas_key) or None
            else:
                self.wanted = (self.rerun_wanted if rerun else self.wanted_by_pod).get(key) or None
            pod_result, revert = super()._pod_group_pod_algorithm(fw, placement_state, member)
            if self._tas:
                self.tas_chosen[tas_key] = pod_result.node_name or ""
            if rerun:
                self.rerun_chosen[key] = pod_result.node_name or ""
            else:
                self.chosen[key] = pod_result.node_name or ""
                self.algorithm[key] = pod_result
            return pod_result, revert

        def _pod_group_default_algorithm(self, fw, placement_state, pg_info, reverts):
            result = super()._pod_group_default_algorithm(fw, placement_state, pg_info, reverts)
            if self._tas and not self._composite:  # this placement's choices (the run keeps one placement's: _keep_member_records)
                keys = [f"{m.pod.namespace}/{m.pod.name}" for m in pg_info.members]
                result.harness = {k: (self.chosen.get(k), self.algorithm.get(k), self.rerun_chosen.get(k))
                                  for k in keys}
            return result

        def _keep_member_records(self, pg_info, result):
            if self._composite:
                return super()._keep_member_records(pg_info, result)
            for k, (chosen, algorithm, rerun_chosen) in getattr(result, "harness", {}).items():
                for d, v in ((self.chosen, chosen), (self.algorithm, algorithm), (self.rerun_chosen, rerun_chosen)):
                    if v is None:
                        d.pop(k, None)
                    else:
                        d[k] = v
            if result.placement is not None:
                self.kept.setdefault(f"{pg_info.namespace}/{pg_info.name}", {})[str(self.runs)] = \
                    result.placement.name
            return super()._keep_member_records(pg_info, result)

        def _placement_order(self, pg_info, placements):
            placements = super()._placement_order(pg_info, placements)
            key = self._composite_key("generate") if self._composite else self._tas_key(pg_info)
            self.placement_orders[key] = [p.name for p in placements]
            return placements

        def _pick_best_placement(self, scores):
            i = super()._pick_best_placement(scores)
            if self._composite:
                self.placement_picks[self._composite_key("pick")] = scores[i].placement.name
                return i
            best = max(s.total_score for s in scores)
            if sum(s.total_score == best for s in scores) > 1:
                self.placement_picks[self._tas_key(self._pg_info_now)] = scores[i].placement.name
            return i

        def _pod_group_placement_algorithm(self, fw, group_state, pg_info, assumed=None):
            self._pg_info_now = pg_info
            return super()._pod_group_placement_algorithm(fw, group_state, pg_info, assumed)

        def _run_binding_cycle(self, fw, state, qpi, assumed, host, started):
            # the order of the members' binding cycles (PreBind): the oracle binds in it
            if assumed.scheduling_group is not None:
                group = f"{assumed.namespace}/{assumed.scheduling_group.pod_group_name}"
                self.bind_order.setdefault(group, []).append(f"{assumed.namespace}/{assumed.name}")
            return super()._run_binding_cycle(fw, state, qpi, assumed, host, started)

        def _handle_pod_group_failure_before_scheduling(self, pg_info, err, started):
            from ..scheduler.schedule_one_podgroup import _as_status

            self.submitted.append(_as_status(err))
            return super()._handle_pod_group_failure_before_scheduling(pg_info, err, started)

        def _submit_pod_group_algorithm_result(self, fw, pg_info, result, started, root_status):
            self.submitted.append(result.status)
            return super()._submit_pod_group_algorithm_result(fw, pg_info, result, started, root_status)

        def _finish_submit(self, pg_info, root_result, started, root_status):
            if pg_info.is_composite:  # (a flat group's is _submit_pod_group_algorithm_result's)
                self.submitted.append(root_result.status)
            return super()._finish_submit(pg_info, root_result, started, root_status)

    tas = bool(scenario.get("tas"))
    composite = bool(scenario.get("composite"))
    gates = workload_gates(tas, bool(scenario.get("preemption_policy")), bool(scenario.get("workload_claims")),
                           composite, bool(scenario.get("node_allocatable")))
    sched = GroupScheduler(load_config(scenario["config"], feature_gates=gates), seed=int(scenario.get("seed", 0)),
                           record="all", clock=VirtualClock(start=NOW_EPOCH), feature_gates=gates)
    sched._tas, sched._composite = tas, composite
    sched.replay_composite, sched.composite_chosen = dict(scenario.get("replay_composite") or {}), {}
    roots = _composite_roots(list(scenario.get("objects", ()))) if composite else {}
    tree_leaves: dict[str, list[str]] = {}
    for leaf, root in roots.items():
        tree_leaves.setdefault(root, []).append(leaf)
    sched.wanted_by_pod, sched.chosen, sched.algorithm, sched.submitted = {}, {}, {}, []
    sched.rerun_wanted, sched.rerun_chosen, sched.claims_allocated = {}, {}, {}
    sched.node_allocatable = {}
    sched.replay_tas, sched.tas_chosen = dict(scenario.get("replay_tas") or {}), {}
    sched.placement_orders, sched.placement_picks, sched.kept = {}, {}, {}
    sched.bind_order = {}
    incoming = list(scenario["incoming"])
    for i, m in enumerate(incoming):
        k = f"{m['metadata'].get('namespace', 'default')}/{m['metadata']['name']}"
        r = (scenario.get("replay") or [])
        if i < len(r) and r[i]:
            sched.wanted_by_pod[k] = r[i]
        r = (scenario.get("replay_rerun") or [])
        if i < len(r) and r[i]:
            sched.rerun_wanted[k] = r[i]
    sched.add(informer_order(scenario.get("objects")))
    sched.add(list(scenario["nodes"]))
    if scenario.get("pods"):
        sched.add(list(scenario["pods"]))
    groups: list[dict] = []
    outcomes: list[dict] = []
    for i, g, batch in _batches(incoming, roots):
        sched.clock.advance_to(NOW_EPOCH + i * START_STEP)
        sched.wanted = sched.wanted_by_pod.get(f"{batch[0]['metadata'].get('namespace', 'default')}/"
                                               f"{batch[0]['metadata']['name']}") if not g else None
        sched.add(batch)
        pods = [sched.get_pod(m["metadata"].get("namespace", "default"), m["metadata"]["name"]) for m in batch]
        before = len(sched.submitted)
        running = {p.uid: p.key for p in sched.cluster.pods.values() if p.node_name and p.deletion_timestamp is None}
        unallocated = {p.key: [c["resourceClaimName"] for c in m["spec"].get("resourceClaims", ())
                               if c.get("resourceClaimName") and _claim_allocation(sched, p.namespace,
                                                                                     c["resourceClaimName"]) is None]
                       for p, m in zip(pods, batch)}
        sched.runs = 0
        _run_batch(sched)
        if sched._waiting:
            sched._finish_permitted_bindings()
        for p in pods:  # the claims its binding allocated (PreBind), as the oracle reports them:
            # a bound member's claims, unallocated before, now allocated and reserved for it alone
            # (a claim the group shares is reported for the member that allocated it only, and a
            # member whose PreBind failed after writing one of its claims reports none)
            now = sched.cluster.pods.get(p.uid)
            bound = now is not None and bool(now.node_name)
            sched.claims_allocated[p.key] = sorted(
                f"{p.namespace}/{c}={a}" for c in unallocated[p.key]
                if bound and _reserved_for_only(sched, p, c)
                and (a := _claim_allocation(sched, p.namespace, c)) is not None)
            # DRANodeAllocatableResources: the claim statuses its binding wrote, as the oracle's
            # attempt reports them (taken now: a later group may preempt it)
            sched.node_allocatable[p.key] = _node_allocatable_texts(now) if bound else []
        outcomes.extend(batch_outcomes(sched, pods, g, tree_leaves.get(g), running))
        if not g:
            res = sched.results.get(pods[0].uid)
            key = f"{pods[0].namespace}/{pods[0].name}"
            if res is not None and res.attempts:
                sched.chosen[key] = (res.node_name or "") if res.status == SCHEDULED else ""
            if (res is None or res.status != SCHEDULED) and not _nominated(sched, pods[0].uid):
                sched.delete_pod(pods[0].uid)  # (a pod nominated after preemption waits, as on the oracle's side)
            continue
        out: dict = {"group": g, "messages": {}, "bound": {}}
        victims = sorted(k for uid, k in running.items()
                         if (p := sched.cluster.pods.get(uid)) is None or p.deletion_timestamp is not None)
        if victims:
            out["victims"] = victims
        nominated_to = {p.key: n for p in pods if (n := _nominated(sched, p.uid))}
        if nominated_to:
            out["nominated"] = nominated_to
        ns, name = g.split("/", 1)
        kind = "CompositePodGroup" if g in tree_leaves else "PodGroup"
        if len(sched.submitted) == before:  # no cycle: gated (or no PodGroup)
            res = sched.results.get(pods[0].uid)
            parent = (getattr(sched.cluster.get_object(kind, name, ns), "parent_composite_pod_group_name", None)
                      if composite and kind == "PodGroup" else None)
            # (a PodGroup whose parent is missing has no root in the queue's forest: its members
            # wait in incompletePodGroupPods, no PreEnqueue runs)
            if sched.cluster.get_object(kind, name, ns) is not None and res is not None and parent is None:
                out["gated"] = res.message
        else:
            st = sched.submitted[before]
            out["status"] = {"code": _code_name(st), "reasons": list(st.reasons())}
            if kind == "CompositePodGroup":  # each leaf's condition (submitPodGroupAlgorithmResult per leaf)
                conditions = {}
                for leaf in tree_leaves[g]:
                    pg = sched.cluster.get_object("PodGroup", leaf.split("/", 1)[1], ns)
                    cond = next((c for c in (pg.conditions if pg is not None else ())
                                 if c.get("type") == "PodGroupInitiallyScheduled"), None)
                    if cond is not None:
                        conditions[leaf] = [cond["status"], cond["reason"], cond.get("message", "")]
                out["conditions"] = conditions
            if kind == "CompositePodGroup":
                alternatives = _composite_domain_errors(sched, st, list(scenario.get("objects", ())), g)
                if alternatives:
                    out["domain_errors"] = alternatives
            if tas and kind == "PodGroup":
                alternatives = _domain_errors(sched, st, ns, name)
                if alternatives:
                    out["domain_errors"] = alternatives
            for pod in pods:
                key = f"{pod.namespace}/{pod.name}"
                res = sched.results.get(pod.uid)
                if res is not None and res.status == SCHEDULED:
                    out["bound"][key] = res.node_name
                else:
                    out["messages"][key] = res.message if res is not None else "no result"
            pg = sched.cluster.get_object("PodGroup", name, ns) if kind == "PodGroup" else None
            cond = next((c for c in (pg.conditions if pg is not None else ())
                         if c.get("type") == "PodGroupInitiallyScheduled"), None)
            if cond is not None:
                out["condition"] = [cond["status"], cond["reason"], cond.get("message", "")]
            if g in sched.kept:
                out["placement"] = dict(sched.kept[g])
            placements = {k.split("|")[1]: sorted(v) for k, v in sched.placement_orders.items()
                          if k.split("|")[0] == g and kind == "PodGroup"}
            if placements:
                out["placements"] = placements
        for pod in pods:  # the failed members leave (as a plain pod that failed does); nominated ones wait
            res = sched.results.get(pod.uid)
            if (res is None or res.status != SCHEDULED) and not _nominated(sched, pod.uid):
                sched.delete_pod(pod.uid)
        groups.append(out)
    replay = []
    for m in incoming:
        replay.append(sched.chosen.get(f"{m['metadata'].get('namespace', 'default')}/{m['metadata']['name']}", ""))
    keys = [f"{m['metadata'].get('namespace', 'default')}/{m['metadata']['name']}" for m in incoming]
    rerun = [sched.rerun_chosen.get(k, "") for k in keys]
    attempts = _attempts(sched, incoming)
    nominated = [(attempts.get(k) or {}).get("nominated_node") or "" for k in keys]
    out_tas = {"replay_tas": dict(sched.tas_chosen), "placement_order": dict(sched.placement_orders),
               "placement_pick": dict(sched.placement_picks)} if tas else {}
    if composite:
        out_tas["replay_composite"] = dict(sched.composite_chosen)
    bind_order = {g: order for g, order in sched.bind_order.items() if len(order) > 1}
    return {"groups": groups, "replay": replay, "replay_rerun": rerun if any(rerun) else [],
            "replay_nominated": nominated if any(nominated) else [],
            "selected": dict(sched.chosen), "attempts": attempts, **out_tas,
            **({"bind_order": bind_order} if bind_order else {}), "outcomes": outcomes}


def batch_outcomes(sched: Any, pods: list, group: str, leaves: list[str] | None, running: dict[str, str]) -> list[dict]:
    """A batch's outcomes after its attempt (:mod:`fastsched.testing.oracle_fast`): each pod's, then
    its group's PodGroupInitiallyScheduled condition(s) (none for a plain pod)."""
    from .oracle_fast import group_outcome, pod_outcome

    out = [pod_outcome(sched, p.uid, f"{p.namespace}/{p.name}", running) for p in pods]
    if group:
        out.append(group_outcome(sched, group, leaves))
    return out


def run_fast_groups(scenario: dict, stats: Any = None) -> list[dict]:
    """The gang classes' fast run: the batches of :func:`run_fastsched_groups` (same gates, seed,
    clock steps, one attempt per batch, the failed pods that are not nominated deleted after it)
    through a plain Scheduler with no records and the default switches (the gang runs, the Permit
    run and ``commit_run`` on); returns the :func:`batch_outcomes` of each batch, in order."""
    from ..clock import VirtualClock
    from ..config import load_config
    from ..scheduler import Scheduler
    from ..scheduler.result import SCHEDULED
    from .oracle_fast import FastPathStats, counted, running_pods

    stats = stats if stats is not None else FastPathStats()
    composite = bool(scenario.get("composite"))
    gates = workload_gates(bool(scenario.get("tas")), bool(scenario.get("preemption_policy")),
                           bool(scenario.get("workload_claims")), composite, bool(scenario.get("node_allocatable")))
    roots = _composite_roots(list(scenario.get("objects", ()))) if composite else {}
    tree_leaves: dict[str, list[str]] = {}
    for leaf, root in roots.items():
        tree_leaves.setdefault(root, []).append(leaf)
    incoming = list(scenario["incoming"])
    outcomes: list[dict] = []
    with counted(stats):
        sched = Scheduler(load_config(scenario["config"], feature_gates=gates), seed=int(scenario.get("seed", 0)),
                          clock=VirtualClock(start=NOW_EPOCH), feature_gates=gates)
        sched.add(informer_order(scenario.get("objects")))
        sched.add(list(scenario["nodes"]))
        if scenario.get("pods"):
            sched.add(list(scenario["pods"]))
        for i, g, batch in _batches(incoming, roots):
            sched.clock.advance_to(NOW_EPOCH + i * START_STEP)
            sched.add(batch)
            pods: list[Any] = [sched.get_pod(m["metadata"].get("namespace", "default"), m["metadata"]["name"])
                               for m in batch]
            running = running_pods(sched)
            _run_batch(sched)
            if sched._waiting:
                sched._finish_permitted_bindings()
            got = batch_outcomes(sched, pods, g, tree_leaves.get(g), running)
            stats.bound += sum(o.get("node", "") != "" for o in got)
            outcomes.extend(got)
            for pod in pods:  # as run_fastsched_groups: the failed pods leave, nominated ones wait
                res = sched.results.get(pod.uid)
                if (res is None or res.status != SCHEDULED) and not _nominated(sched, pod.uid):
                    sched.delete_pod(pod.uid)
    return outcomes


def _run_batch(sched: Any) -> None:
    """The batch's one attempt (its group's cycle, or the plain pod's), no clock steps (a waiting
    group stays waiting). The oracle attempts each batch once and nothing else: a pod of an earlier
    batch left waiting nominated after preemption is never attempted again (``run``: "a preemptor
    is not attempted again"). With SchedulerPopFromBackoffQ an empty activeQ (the batch gated by
    PreEnqueue: no cycle) would hand the attempt to podBackoffQ's head, that waiting preemptor,
    which would bind and change what the later batches see; so podBackoffQ is not popped here
    (it holds only earlier batches' pods: the batch's own are in activeQ unless gated)."""
    active_q = sched.queue._active_q
    popper, active_q._backoff_q_popper = active_q._backoff_q_popper, None
    try:
        sched.run(until=sched.clock.now(), max_attempts=1)
    finally:
        active_q._backoff_q_popper = popper


_DOMAIN_ERROR = "cannot determine domain for already scheduled pods: "


def _domain_errors(sched: Any, st: Any, ns: str, name: str) -> list[str]:
    """TopologyPlacementGenerator's error over the group's scheduled pods in every order they can
    come in upstream (``podGroupStateData.scheduledPods`` ranges over Go maps: the first pod that
    fails, and the two domains named, depend on that order), when the cycle failed with it; []
    otherwise. :func:`compare_groups` accepts the oracle's text when it is one of these."""
    from itertools import islice, permutations

    from ..framework import Code
    from ..plugins.topologyaware import _DomainError, topology_key

    if st.code() != Code.ERROR or not st.message().startswith(_DOMAIN_ERROR):
        return []
    pg = sched.cluster.get_object("PodGroup", name, ns)
    fw = next(iter(sched.profiles.values()))
    plugin = fw.plugins_map.get("TopologyPlacementGenerator")
    key = topology_key(type("G", (), {"pod_group": pg})()) if pg is not None else None
    if plugin is None or key is None:
        return []
    pods = sched.cache.pod_group_states_lister().get(ns, name).scheduled_pods()
    out = set()
    for order in islice(permutations(pods), 5040):
        try:
            plugin._scheduled_pods_topology_domain(key, list(order))
        except _DomainError as e:
            out.add(_DOMAIN_ERROR + str(e))
    return sorted(out)


def _composite_domain_errors(sched: Any, st: Any, objects: list[dict], root: str) -> list[str]:
    """:func:`_domain_errors` for a CompositePodGroup tree (the error may be any group's of the
    tree: a leaf's or a CompositePodGroup's, over the scheduled pods of every leaf under it,
    ``helper.GetPodGroupStates``, map order upstream): every text the scheduled pods give in
    any order, for each group of the tree with a topology constraint."""
    from itertools import islice, permutations

    from ..framework import Code
    from ..plugins.topologyaware import _DomainError

    if st.code() != Code.ERROR or _DOMAIN_ERROR not in st.message():
        return []
    fw = next(iter(sched.profiles.values()))
    plugin = fw.plugins_map.get("TopologyPlacementGenerator")
    if plugin is None:
        return []
    ns = root.split("/", 1)[0]
    parents = {o["metadata"]["name"]: o["spec"].get("parentCompositePodGroupName") for o in objects
               if o["kind"] in ("PodGroup", "CompositePodGroup") and o["metadata"].get("namespace", "default") == ns}
    keys = {o["metadata"]["name"]: ((o["spec"].get("schedulingConstraints") or {}).get("topology") or [{}])[0].get("key")
            for o in objects if o["kind"] in ("PodGroup", "CompositePodGroup")
            and o["metadata"].get("namespace", "default") == ns}
    leaves = [o["metadata"]["name"] for o in objects if o["kind"] == "PodGroup"
              and o["metadata"].get("namespace", "default") == ns]
    def chain(name: str | None) -> list[str]:  # the group and its ancestors, up to the root
        out: list[str] = []
        while name is not None and name not in out:
            out.append(name)
            name = parents.get(name)
        return out

    under: dict[str, list[str]] = {}  # a group of this tree -> the leaves under it (a leaf: itself)
    for leaf in leaves:
        up = chain(leaf)
        if up[-1] == root.split("/", 1)[1]:
            for name in up:
                under.setdefault(name, []).append(leaf)
    out = set()
    lister = sched.cache.pod_group_states_lister()
    for group, members in under.items():
        if not members or keys.get(group) is None:
            continue
        pods = [p for leaf in members for p in lister.get(ns, leaf).scheduled_pods()]
        for order in islice(permutations(pods), 5040):
            try:
                plugin._scheduled_pods_topology_domain(keys[group], list(order))
            except _DomainError as e:
                out.add(_DOMAIN_ERROR + str(e))
    return sorted(out)


def _nominated(sched: Any, uid: str) -> str:
    """The node a pending pod is nominated to ("" when none, or when it is gone)."""
    pod = sched.cluster.pods.get(uid)
    return (pod.nominated_node_name or "") if pod is not None and not pod.node_name else ""


def _attempts(sched: Any, incoming: list[dict]) -> dict[str, dict]:
    """Each attempted pod's attempt in the oracle's terms (pod -> attempt), from its decision record;
    a member's FitError and error are its own in the group's algorithm (its record ends with the
    group's verdict)."""
    from ..framework import Code
    from ..framework.types import FitError
    from .oracle import _attempt_from_record

    out: dict[str, dict] = {}
    for m in incoming:
        key = f"{m['metadata'].get('namespace', 'default')}/{m['metadata']['name']}"
        if key not in sched.chosen:
            continue
        res = next((r for r in sched.results.values() if f"{r.pod.namespace}/{r.pod.name}" == key), None)
        if res is None or not res.history:
            out[key] = {"pod": key, "error": "fastsched made no record"}
            continue
        pr = sched.algorithm.get(key)
        at = _attempt_from_record(res.history[0], key, keep_scores_on_binding_error=pr is not None)
        at["claim_allocations"] = sched.claims_allocated.get(key, [])
        at["node_allocatable"] = sched.node_allocatable.get(key, [])
        if pr is not None:  # a group member
            st = pr.status
            at["fit_error"] = str(pr.err) if isinstance(pr.err, FitError) else ""
            at["error"] = st.message() if st is not None and st.code() == Code.ERROR else ""
            at["selected"] = (pr.node_name or "") if st is None else ""
        out[key] = at
    return out


def _code_name(st: Any) -> str:
    from ..framework import Code

    names = {Code.SUCCESS: "Success", Code.ERROR: "Error", Code.UNSCHEDULABLE: "Unschedulable",
             Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable", Code.WAIT: "Wait",
             Code.SKIP: "Skip", Code.PENDING: "Pending"}
    return names.get(st.code(), str(st.code()))


# ------------------------------------------------------------------------------------------------
# comparison
# ------------------------------------------------------------------------------------------------
def _oracle_group(g: dict) -> dict:
    out: dict = {"group": g["group"], "messages": dict(g.get("messages") or {}), "bound": dict(g.get("bound") or {})}
    if g.get("gated"):  # as fastsched's PodResult tells a gated pod
        out["gated"] = (f'rejected by PreEnqueue plugin "{g["gated"].get("plugin", "")}": '
                        + ", ".join(g["gated"].get("reasons") or ()))
    if g.get("status"):
        out["status"] = {"code": g["status"]["code"], "reasons": list(g["status"].get("reasons") or [])}
    if g.get("condition"):
        out["condition"] = list(g["condition"])
    if g.get("victims"):
        out["victims"] = sorted(g["victims"])
    if g.get("nominated"):
        out["nominated"] = dict(g["nominated"])
    if g.get("placement"):
        out["placement"] = dict(g["placement"])
    if g.get("placements"):  # the generator's names (Go map order: compared as sets)
        out["placements"] = {run: sorted(names) for run, names in g["placements"].items()}
    if g.get("conditions"):
        out["conditions"] = {leaf: list(c) for leaf, c in g["conditions"].items()}
    return out


def compare_groups(mine: list[dict], theirs: list[dict]) -> list[dict]:
    """The differences of the first group whose outcome differs: ``[{"group", "field", "fastsched",
    "oracle"}]``; [] when equal (groups the oracle skipped, with neither PodGroup nor profile, are
    left out of its list as fastsched's)."""
    theirs = [_oracle_group(g) for g in theirs if g.get("status") or g.get("gated")]
    mine = [g for g in mine if g.get("status") or "gated" in g]
    for i in range(max(len(mine), len(theirs))):
        if i >= len(mine) or i >= len(theirs):
            return [{"group": (mine[i] if i < len(mine) else theirs[i])["group"], "field": "groups",
                     "fastsched": mine[i]["group"] if i < len(mine) else None,
                     "oracle": theirs[i]["group"] if i < len(theirs) else None}]
        a, b = mine[i], theirs[i]
        a = _as_oracle_domain_error(a, b)
        diffs = [{"group": a["group"], "field": f, "fastsched": a.get(f), "oracle": b.get(f)}
                 for f in ("group", "gated", "status", "bound", "messages", "condition", "conditions", "victims",
                           "nominated", "placements", "placement")
                 if a.get(f) != b.get(f)]
        if diffs:
            return diffs
    return []


def _as_oracle_domain_error(a: dict, b: dict) -> dict:
    """fastsched's group answer with its TopologyPlacementGenerator error replaced by the oracle's
    when the oracle's is one the scheduled pods give in another order (``domain_errors``, see
    :func:`_domain_errors`); as it is otherwise."""
    alternatives = a.get("domain_errors")
    # (the error's text, also inside a CompositePodGroup's "... due to child error: <text>")
    theirs = [r[r.index(_DOMAIN_ERROR):] for r in (b.get("status") or {}).get("reasons") or () if _DOMAIN_ERROR in r]
    mine = [r[r.index(_DOMAIN_ERROR):] for r in (a.get("status") or {}).get("reasons") or () if _DOMAIN_ERROR in r]
    if not alternatives or len(theirs) != 1 or len(mine) != 1 or theirs[0] not in alternatives:
        return {k: v for k, v in a.items() if k != "domain_errors"}

    def swap(v: Any) -> Any:
        if isinstance(v, str):
            return v.replace(mine[0], theirs[0])
        if isinstance(v, list):
            return [swap(x) for x in v]
        if isinstance(v, dict):
            return {k: swap(x) for k, x in v.items()}
        return v

    return {k: swap(v) for k, v in a.items() if k != "domain_errors"}


def check_groups(scenario: dict, oracle: Oracle, *, fast_paths: Any = None) -> tuple[list[dict], dict, dict]:
    """Both sides on one gang scenario (``oracle`` started with ``feature_gates=ORACLE_GATES``):
    (differences, fastsched's answer, the oracle's). Beyond the groups' outcomes, the node of every
    attempt (a member's in its group's cycle, a plain pod's; "" when it failed) is compared.
    ``fast_paths`` (a :class:`~fastsched.testing.oracle_fast.FastPathStats`): when the sides agree,
    the fast-path comparison too (:func:`check_fast_paths_groups`)."""
    diffs, mine, theirs = _check_groups(scenario, oracle)
    if not diffs and fast_paths is not None:
        diffs = check_fast_paths_groups(scenario, mine, fast_paths)
    return diffs, mine, theirs


#: the scenario fields run_fastsched_groups replays (fastsched's own choices of an earlier run)
_FASTSCHED_REPLAYS = ("replay", "replay_rerun", "replay_tas", "replay_composite")


def check_fast_paths_groups(scenario: dict, recorded: dict | None = None, stats: Any = None) -> list[dict]:
    """The fast-path comparison on a gang scenario (:mod:`fastsched.testing.oracle_fast`): the
    :func:`run_fast_groups` outcomes against ``recorded`` (a :func:`run_fastsched_groups` answer
    the oracle validated; made here, without the scenario's replays, when None or when the scenario
    carries replays: the fast run draws its ties from the seeded RNG, it has no replay)."""
    from .oracle_fast import compare_outcomes

    if recorded is None or any(scenario.get(k) for k in _FASTSCHED_REPLAYS):
        recorded = run_fastsched_groups({k: v for k, v in scenario.items() if k not in _FASTSCHED_REPLAYS})
    return compare_outcomes(run_fast_groups(scenario, stats), recorded["outcomes"])


def _check_groups(scenario: dict, oracle: Oracle) -> tuple[list[dict], dict, dict]:
    mine = run_fastsched_groups(scenario)
    theirs = oracle.ask({**scenario, "replay_rerun": mine["replay_rerun"],
                         "replay_nominated": mine["replay_nominated"],
                         **{k: mine[k] for k in _REPLAYS if k in mine}},
                        mine["replay"])
    if theirs.get("error"):
        return ([{"group": None, "field": "oracle error", "fastsched": None, "oracle": theirs["error"]}],
                mine, theirs)
    return (compare_answer(mine, oracle_selected(theirs), theirs.get("groups") or [], theirs.get("attempts") or []),
            mine, theirs)


def oracle_selected(answer: dict) -> dict[str, str]:
    """Each attempt's node in an oracle answer (pod -> node, "" when it failed)."""
    return {a["pod"]: a.get("selected") or "" for a in answer.get("attempts") or ()}


def compare_answer(mine: dict, selected: dict[str, str], groups: list[dict],
                   attempts: list[dict] | None = None) -> list[dict]:
    """:func:`compare_groups`; then, given the oracle's ``attempts``, every attempt field by field
    (:func:`fastsched.testing.oracle.compare`: a member's in its group's cycle, a plain pod's); then
    each attempt's node."""
    diffs = compare_groups(mine["groups"], groups)
    if not diffs and attempts is not None:  # field by field, in the oracle's order
        theirs = list(attempts)
        order = [a["pod"] for a in theirs] + sorted(set(mine["attempts"]) - {a["pod"] for a in theirs})
        diffs = compare([mine["attempts"][k] for k in order if k in mine["attempts"]], theirs)
        for d in diffs:
            d.setdefault("group", None)
    if not diffs and selected != mine["selected"]:
        pod = next(k for k in sorted(set(selected) | set(mine["selected"]))
                   if selected.get(k) != mine["selected"].get(k))
        diffs = [{"group": None, "pod": pod, "field": "selected", "fastsched": mine["selected"].get(pod),
                  "oracle": selected.get(pod)}]
    return diffs


def check_recorded(record: dict) -> list[dict]:
    """fastsched again on a recorded gang scenario (``differential_groups(record=...)``), compared
    with the oracle's recorded answer."""
    mine = run_fastsched_groups(record["scenario"])
    return compare_answer(mine, record["selected"], record["groups"], record.get("attempts"))


# ------------------------------------------------------------------------------------------------
# the differential run (``fastsched differential --class gangs``)
# ------------------------------------------------------------------------------------------------
#: the scenario class name (not among oracle_scenarios.CLASSES: a default run stays as it was)
GANG_CLASS = "gangs"
#: the same with TopologyAwareWorkloadScheduling on (topology constraints, zones and racks)
GANG_TAS_CLASS = "gangs-tas"
#: the same with PodGroupPreemptionPolicy on (PodGroups with a preemption policy)
GANG_POLICY_CLASS = "gangs-policy"
#: the same with DRAWorkloadResourceClaims on (claims shared by a group named by its PodGroup)
GANG_CLAIMS_CLASS = "gangs-claims"
#: the same with DRANodeAllocatableResources too (GPUs taking cpu and memory from their nodes)
GANG_NAR_CLASS = "gangs-nar"
#: CompositePodGroup trees over PodGroups (CompositePodGroup and TopologyAwareWorkloadScheduling on)
GANG_COMPOSITE_CLASS = "gangs-composite"
#: the same with PodGroupPreemptionPolicy on (root CompositePodGroups with a preemption policy)
GANG_COMPOSITE_POLICY_CLASS = "gangs-composite-policy"
#: the scenario fields that replay fastsched's TAS choices on the oracle's side
_TAS_REPLAYS = ("replay_tas", "placement_order", "placement_pick")
#: ... and every replayed choice: the TAS ones and the order of the members' binding cycles
_REPLAYS = (*_TAS_REPLAYS, "bind_order", "replay_composite")


def differential_groups(scenarios: int, seed: int, out: Any = None, *, binary: Any = None,
                        feature_gates: str | None = None, oracle: Oracle | None = None,
                        log: Any = None, record: Any = None, tas: bool = False, policy: bool = False,
                        claims: bool = False, composite: bool = False, nar: bool = False,
                        fast_paths: bool = False) -> Any:
    """``scenarios`` gang scenarios (seeds ``seed``, ``seed + 1``, ...) on both sides, the oracle
    started with ``GenericWorkload=true`` (and ``feature_gates`` besides); each difference written
    (unshrunk) as ``<out>/gangs-<seed>.json``. Returns a :class:`~fastsched.testing.oracle.ClassSummary`
    (``pods``: the members the oracle tried). With ``record``, every agreeing scenario and the
    oracle's answer go to ``<record>/gangs.jsonl.gz`` (replacing it; :func:`check_recorded` replays one).
    ``tas``: the class ``gangs-tas`` (TopologyAwareWorkloadScheduling on both sides, topology
    constraints: :func:`generate_gangs`), recorded as ``gangs-tas.jsonl.gz``; ``policy``: the class
    ``gangs-policy`` (PodGroupPreemptionPolicy on both sides), recorded as ``gangs-policy.jsonl.gz``;
    ``claims``: the class ``gangs-claims`` (DRAWorkloadResourceClaims on both sides), recorded as
    ``gangs-claims.jsonl.gz``; ``nar``: the class ``gangs-nar`` (DRANodeAllocatableResources too),
    recorded as ``gangs-nar.jsonl.gz``; ``composite``: the class ``gangs-composite`` (CompositePodGroup and
    TopologyAwareWorkloadScheduling on both sides, trees of CompositePodGroups), recorded as
    ``gangs-composite.jsonl.gz``; ``composite`` and ``policy``: the class ``gangs-composite-policy``
    (PodGroupPreemptionPolicy too, the root CompositePodGroups' policies), recorded as
    ``gangs-composite-policy.jsonl.gz``. ``fast_paths``: each scenario the oracle agrees with goes
    through fastsched's fast paths too (:func:`check_fast_paths_groups`; the summary's ``fast``)."""
    import json
    import time
    from pathlib import Path

    from .oracle import ClassSummary, _compact, write_recorded
    from .oracle_fast import PREFIX, FastPathStats

    own = oracle is None
    base_gates = (ORACLE_COMPOSITE_GATES + (",PodGroupPreemptionPolicy=true" if policy else "") if composite
                  else ORACLE_NAR_GATES if nar else ORACLE_CLAIMS_GATES if claims else ORACLE_POLICY_GATES
                  if policy else ORACLE_TAS_GATES if tas else ORACLE_GATES)
    orc = oracle or Oracle(binary, feature_gates=",".join(g for g in (base_gates, feature_gates) if g))
    s = ClassSummary()
    stats = s.fast = FastPathStats() if fast_paths else None
    recorded: list[dict] = []
    t0 = time.perf_counter()
    try:
        for k in range(scenarios):
            sc = generate_gangs(seed + k, tas=tas, policy=policy, claims=claims, composite=composite, nar=nar)
            try:
                diffs, mine, theirs = check_groups(sc, orc, fast_paths=stats)
            except Exception as exc:  # noqa: BLE001 - fastsched refused the scenario: a difference too
                diffs, mine, theirs = [{"group": None, "field": "fastsched exception",
                                        "fastsched": f"{type(exc).__name__}: {exc}", "oracle": None}], {}, {}
            s.scenarios += 1
            s.pods += len(theirs.get("attempts") or ())
            if diffs:
                s.differences += 1
                s.fast_differences += any((d.get("field") or "").startswith(PREFIX) for d in diffs)
                if out is not None:
                    Path(out).mkdir(parents=True, exist_ok=True)
                    (Path(out) / f"{sc['id']}.json").write_text(json.dumps(
                        {"scenario": {**sc, "replay": mine.get("replay", []), "replay_rerun": mine.get("replay_rerun", []),
                                      "replay_nominated": mine.get("replay_nominated", []),
                                      **{t: mine[t] for t in _REPLAYS if t in mine}},
                         "differences": diffs}, indent=1))
                if log:
                    d = diffs[0]
                    log(f"  {sc['id']}: {d['group']} {d['field']}: fastsched {str(d['fastsched'])[:160]} "
                        f"oracle {str(d['oracle'])[:160]}")
                continue
            if record is not None:
                recorded.append({"scenario": {**sc, "replay": mine["replay"], **{
                    k: mine[k] for k in ("replay_rerun", "replay_nominated", *_REPLAYS) if mine.get(k)}},
                                 "groups": theirs.get("groups") or [],
                                 "selected": oracle_selected(theirs),
                                 "attempts": [_compact(a) for a in theirs.get("attempts") or ()]})
        if record is not None:
            cls = ((GANG_COMPOSITE_POLICY_CLASS if policy else GANG_COMPOSITE_CLASS) if composite
                   else GANG_NAR_CLASS if nar else GANG_CLAIMS_CLASS if claims else GANG_POLICY_CLASS if policy
                   else GANG_TAS_CLASS if tas
                   else GANG_CLASS)
            write_recorded(Path(record) / f"{cls}.jsonl.gz", recorded)
    finally:
        if own:
            orc.close()
    s.seconds = time.perf_counter() - t0
    return s
