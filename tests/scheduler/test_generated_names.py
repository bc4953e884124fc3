"""Pods named by ``generateName`` when added: the validated pod, renamed by a field copy and checked
on its name alone, is the pod the full path (a rebuilt pod, validated again) gives, and the same
errors come out; a planted mutant (the name check left out) is caught."""
import copy
import dataclasses

import pytest

from fastsched import Scheduler
from fastsched.errors import FastschedError
from fastsched.scheduler import cluster as cluster_module
from fastsched.testing import make_node, pod_manifest


def _full_path(self, obj):
    """The reference: the renamed pod rebuilt (``replace``: not admitted), so validated again."""
    while True:
        name = self.names.generate(obj.generate_name)
        if not self.name_taken(obj.KIND, obj.namespace, name):
            break
    manifest = obj.manifest
    if manifest:
        manifest = dict(manifest)
        manifest["metadata"] = {**(manifest.get("metadata") or {}), "name": name}
    return obj.replace(name=name, uid=obj.uid, manifest=manifest)


def _unchecked(self, obj):
    """A planted mutant: the renamed pod taken as admitted without the name's check."""
    pod = _full_path(self, obj)
    pod.admitted = True
    return pod


def _manifests(generate_name: str, n: int = 4) -> list[dict]:
    out = []
    for i in range(n):
        m = pod_manifest("x", "default", cpu="100m", labels={"app": "web"})
        del m["metadata"]["name"]
        m["metadata"]["generateName"] = generate_name
        if i == 2:
            m["metadata"]["uid"] = "0f0e0d0c-0000-4000-8000-00000000abcd"
        out.append(m)
    return out


def _outcome(generate_name: str, monkeypatch, rename=None) -> object:
    if rename is not None:
        monkeypatch.setattr(cluster_module.Cluster, "_with_generated_name", rename)
    s = Scheduler(seed=11)
    s.add_nodes([make_node(f"n{i}", cpu="4") for i in range(3)])
    try:
        s.add_pods(_manifests(generate_name))
    except FastschedError as e:
        return type(e).__name__, str(e)
    pods = [s.pods[uid] for uid in s._order]
    fields = [{f.name: getattr(p, f.name) for f in dataclasses.fields(p) if f.compare} | {"manifest": p.manifest}
              for p in pods]
    results = [(r.pod.key, r.pod.uid, r.status, r.node_name) for r in s.run()]
    return fields, results


# "x" * 62 + "-": valid as a prefix, but base[:58] + 5 characters is a valid name too; a dot before
# the suffix, "a." + suffix: valid; "Web-": the prefix and the name both refused
_PREFIXES = ["web-", "web.", "a.", "Web-", "-web-", "x" * 62 + "-", "web_"]


@pytest.mark.parametrize("generate_name", _PREFIXES)
def test_a_generated_name_gives_the_full_paths_pod_or_error(generate_name, monkeypatch):
    fast = _outcome(generate_name, monkeypatch)
    with monkeypatch.context() as m:
        full = _outcome(generate_name, m, _full_path)
    assert fast == full


def test_pods_named_by_generate_name_share_their_spec_objects(monkeypatch):
    s = Scheduler(seed=11)
    s.add_pods(_manifests("web-"))
    pods = [s.pods[uid] for uid in s._order]
    assert len({p.name for p in pods}) == 4
    assert all(p.containers is pods[0].containers for p in pods)


def test_the_name_check_is_needed(monkeypatch):
    """A planted mutant that skips the generated name's check admits a pod the full path refuses
    (the prefix passes its prefix rule, the generated name is refused: only with a name rule that
    differs between them; here a code-built pod whose validation was skipped on purpose is renamed
    to an invalid name by a generateName the loader never saw)."""
    from fastsched.api import Pod

    def add(rename):
        with monkeypatch.context() as m:
            if rename is not None:
                m.setattr(cluster_module.Cluster, "_with_generated_name", rename)
            s = Scheduler(seed=1)
            pod = Pod(generate_name="Bad_", namespace="default")
            pod.admitted = True
            try:
                s.add_pods([pod])
            except FastschedError as e:
                return str(e)
            return [p.name for p in s.pods.values()]

    assert isinstance(add(None), str) and add(None) == add(_full_path)
    assert not isinstance(add(_unchecked), str)
