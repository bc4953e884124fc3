"""A property round over the entry points a cluster dump reaches that the field-by-field fuzz
(``test_mutation_fuzz``, lists of mappings handed to ``Scheduler.add``) does not: the dump as
text, as ``kubectl get -o yaml`` prints it (a ``kind: List``) and as multi-document YAML, and
``Scheduler.add_nodes`` / ``add_pods`` with mappings (their own batched paths), with many pods.

A draw takes examples/cluster.yaml (a real dump, trimmed of managedFields) and changes one to
three places at any depth, the List's envelope included: a value of another type (int, string,
list, mapping, null, bool), a field deleted, a huge or negative number, unicode, an item
repeated (a duplicate name). Each mutant must end

* loaded and run, every pod handed to the scheduler with one result (the loop loses none), or
* refused with a :class:`~fastsched.errors.FastschedError` naming a field (or, for the envelope
  and the identity of an object, its kind);

never another exception. Derandomized; a few seconds each.
"""
from __future__ import annotations

import copy
import json
import os
import warnings
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched import Scheduler
from fastsched.errors import FastschedError
from tests.api.test_mutation_fuzz import field_paths
from tests.mutation import DELETE, DUPLICATE, apply, places

#: FASTSCHED_FUZZ_SCALE=N draws N times the examples (a longer round than the suite's)
SCALE = int(os.environ.get("FASTSCHED_FUZZ_SCALE", "1"))
ROOT = Path(__file__).resolve().parents[2]
DUMP: dict = json.loads(json.dumps(yaml.safe_load((ROOT / "examples" / "cluster.yaml").read_text())))

#: values of every JSON type, and the edges: huge, negative, unicode, empty
WRONG = [None, True, False, 0, -1, 7, 2 ** 63, -2 ** 63 - 1, 1e300, 2.5, "", "x", "ünïcødé-☃\u202e", "-5",
         "1e999", [], [1], ["a", "b"], {}, {"k": 1}, {"name": None}]
SETTINGS = settings(max_examples=40 * SCALE, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


PLACES = places(DUMP)


@st.composite
def mutants(draw) -> tuple[dict, list]:
    doc = copy.deepcopy(DUMP)
    changes = []
    for path in draw(st.lists(st.sampled_from(PLACES), min_size=1, max_size=3, unique=True)):
        change = draw(st.sampled_from([DELETE, DUPLICATE, *WRONG]))
        apply(doc, path, change)
        changes.append((path, "delete" if change is DELETE else "duplicate" if change is DUPLICATE else change))
    return doc, changes


def _check_refusal(error: FastschedError, changes: list) -> None:
    message = str(error)
    assert message, repr(error)
    # (a name taken is upstream's AlreadyExists, which names the object, not a field; a document
    # of a multi-document file that is no object is named by its number)
    assert field_paths(error) or "already exists" in message or "kind" in message or "items" in message \
        or "apiVersion" in message or "List" in message or message.startswith("document "), \
        f"no field named: {message} ({changes})"
    assert "Traceback" not in message


def _run_and_check(scheduler: Scheduler) -> None:
    pending = [p for p in scheduler.cluster.pods.values() if not p.node_name]
    results = scheduler.run(max_attempts=20_000)
    # (a pod the run did not settle would be lost: every pending pod has exactly one result)
    assert sorted(r.pod.uid for r in results) == sorted(p.uid for p in pending)


def _as_text(doc: Any, multi: bool) -> str:
    if multi and isinstance(doc, dict) and isinstance(doc.get("items"), list):
        return yaml.safe_dump_all(doc["items"], sort_keys=False, allow_unicode=True)
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


@SETTINGS
@given(case=mutants(), multi=st.booleans())
def test_a_mutated_dump_as_text_loads_and_runs_or_is_refused_at_a_field(case, multi):
    doc, changes = case
    scheduler = Scheduler(seed=1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scheduler.add(_as_text(doc, multi))
    except FastschedError as error:
        _check_refusal(error, changes)
        return
    _run_and_check(scheduler)


NODES = [item for item in DUMP["items"] if item["kind"] == "Node"]
#: the Deployment's first pod, copied to many pods of distinct names (the dump's own pods bound)
TEMPLATE = next(item for item in DUMP["items"] if item["kind"] == "Pod" and item["metadata"]["name"].startswith("web"))
BASE_KINDS = [item for item in DUMP["items"] if item["kind"] in ("Namespace", "PriorityClass")]


def _pods(count: int) -> list[dict]:
    out = []
    for i in range(count):
        pod = copy.deepcopy(TEMPLATE)
        pod["metadata"]["name"] = f"fuzz-{i}"
        pod["metadata"].pop("uid", None)
        pod["metadata"].pop("ownerReferences", None)
        pod["spec"].pop("nodeName", None)
        pod.pop("status", None)
        out.append(pod)
    return out


POD_PLACES = places(_pods(1)[0])
NODE_PLACES = places(NODES[0])


@SETTINGS
@given(node_changes=st.lists(st.tuples(st.integers(0, len(NODES) - 1), st.sampled_from(NODE_PLACES),
                                       st.sampled_from([DELETE, *WRONG])), max_size=2),
       pod_changes=st.lists(st.tuples(st.integers(0, 39), st.sampled_from(POD_PLACES),
                                      st.sampled_from([DELETE, DUPLICATE, *WRONG])), max_size=3),
       duplicate_pod=st.booleans())
def test_add_nodes_and_add_pods_with_mutated_mappings_run_every_pod_or_refuse_at_a_field(node_changes, pod_changes,
                                                                                       duplicate_pod):
    nodes, pods = copy.deepcopy(NODES), _pods(40)
    for index, path, change in node_changes:
        apply(nodes[index], path, change)
    for index, path, change in pod_changes:
        apply(pods[index], path, change)
    if duplicate_pod:
        pods.append(copy.deepcopy(pods[7]))  # a name taken: AlreadyExists, the pods before kept
    scheduler = Scheduler(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheduler.add(copy.deepcopy(BASE_KINDS))
        try:
            scheduler.add_nodes(nodes)
            scheduler.add_pods(pods)
        except FastschedError as error:
            _check_refusal(error, [node_changes, pod_changes, duplicate_pod])
    _run_and_check(scheduler)
