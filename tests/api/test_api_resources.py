"""Effective pod requests (upstream resource.PodRequests / PodInfo.CalculateResource).

Every expected number is worked out by hand in the comments. cpu is in millicores, memory in bytes.
"""
from fastsched.api import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    Container,
    Pod,
    ResourceRequirements,
    non_zero_pod_requests,
    pod_requests,
)

MI = 1024**2
GI = 1024**3


def container(name, requests=None, limits=None, restart_policy=None):
    c = {"name": name, "image": "img"}
    resources = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    if resources:
        c["resources"] = resources
    if restart_policy:
        c["restartPolicy"] = restart_policy
    return c


def sidecar(name, requests=None):
    return container(name, requests, restart_policy="Always")


def pod(containers=(), init_containers=(), overhead=None, resources=None):
    spec = {"containers": list(containers)}
    if init_containers:
        spec["initContainers"] = list(init_containers)
    if overhead is not None:
        spec["overhead"] = overhead
    if resources is not None:
        spec["resources"] = resources
    return Pod.from_manifest({"kind": "Pod", "metadata": {"name": "p"}, "spec": spec}, validate=False)


def test_defaults_are_upstream_values():
    assert DEFAULT_MILLI_CPU_REQUEST == 100
    assert DEFAULT_MEMORY_REQUEST == 209_715_200


def test_regular_containers_are_summed():
    p = pod([container("a", {"cpu": "100m", "memory": "128Mi"}),
             container("b", {"cpu": "250m", "memory": "256Mi", "nvidia.com/gpu": "1"})])
    # cpu 100 + 250 = 350; memory 128Mi + 256Mi = 384Mi; gpu only in b
    assert pod_requests(p) == {"cpu": 350, "memory": 384 * MI, "nvidia.com/gpu": 1}
    assert p.requests == {"cpu": 350, "memory": 384 * MI, "nvidia.com/gpu": 1}


def test_init_container_bigger_than_the_sum_wins_per_resource():
    p = pod([container("a", {"cpu": "500m", "memory": "1Gi"})],
            [container("init", {"cpu": "2", "memory": "100Mi"})])
    # cpu: max(500, 2000) = 2000; memory: max(1Gi, 100Mi) = 1Gi
    assert p.requests == {"cpu": 2000, "memory": GI}


def test_init_containers_only_resource_is_present():
    p = pod([container("a", {"cpu": "100m"})], [container("init", {"ephemeral-storage": "1Gi"})])
    # a resource requested only by an init container still appears (max over an absent sum)
    assert p.requests == {"cpu": 100, "ephemeral-storage": GI}


def test_sidecar_before_normal_init_container_runs_alongside_it():
    p = pod([container("app", {"cpu": "300m"})],
            [sidecar("proxy", {"cpu": "100m"}),
             container("migrate", {"cpu": "1"}),
             sidecar("logs", {"cpu": "200m"})])
    # regular sum: 300 + sidecars 100 + 200 = 600
    # init candidates: proxy -> running sidecars 100; migrate -> 1000 + 100 = 1100;
    #                  logs -> running sidecars 100 + 200 = 300
    # max(600, 1100) = 1100
    assert p.requests == {"cpu": 1100}


def test_sidecar_after_normal_init_container_does_not_add_to_it():
    p = pod([container("app", {"cpu": "300m"})],
            [container("migrate", {"cpu": "1"}), sidecar("proxy", {"cpu": "500m"})])
    # regular sum: 300 + 500 = 800; candidates: migrate -> 1000 + 0; proxy -> 500
    # max(800, 1000) = 1000
    assert p.requests == {"cpu": 1000}


def test_sidecars_can_make_the_regular_sum_the_maximum():
    p = pod([container("app", {"cpu": "1", "memory": "1Gi"})],
            [sidecar("proxy", {"cpu": "500m", "memory": "512Mi"}),
             container("migrate", {"cpu": "1200m", "memory": "256Mi"})])
    # cpu: sum 1000 + 500 = 1500; migrate candidate 1200 + 500 = 1700 -> 1700
    # memory: sum 1Gi + 512Mi = 1536Mi; migrate candidate 256Mi + 512Mi = 768Mi -> 1536Mi
    assert p.requests == {"cpu": 1700, "memory": 1536 * MI}


def test_overhead_is_added_unless_excluded():
    p = pod([container("a", {"cpu": "100m"})], overhead={"cpu": "250m", "memory": "120Mi"})
    # cpu 100 + 250 = 350; memory 0 + 120Mi
    assert p.requests == {"cpu": 350, "memory": 120 * MI}
    assert pod_requests(p, exclude_overhead=True) == {"cpu": 100}
    assert p.overhead == {"cpu": 250, "memory": 120 * MI}


def test_non_missing_defaults_fill_only_absent_entries():
    p = pod([container("none"),
             container("zero-cpu", {"cpu": "0"}),
             container("mem", {"memory": "1Gi"})])
    # without defaults: cpu 0 (explicit zero is an entry), memory 1Gi
    assert p.requests == {"cpu": 0, "memory": GI}
    # with defaults: cpu 100 + 0 + 100 = 200; memory 200Mi + 200Mi + 1Gi = 1424Mi
    expected = {"cpu": 200, "memory": 1424 * MI}
    assert pod_requests(p, non_missing_defaults=True) == expected
    assert p.non_zero_requests == expected
    assert p.scoring_requests == expected


def test_non_missing_defaults_apply_to_init_containers_too():
    p = pod([container("app", {"cpu": "50m", "memory": "50Mi"})], [container("init")])
    # app: 50 / 50Mi (no defaults needed); init gets 100 / 200Mi and is bigger on both
    assert p.non_zero_requests == {"cpu": 100, "memory": 200 * MI}
    # without defaults the empty init container contributes nothing
    assert p.requests == {"cpu": 50, "memory": 50 * MI}


def test_defaults_with_overhead():
    p = pod([container("a")], overhead={"cpu": "10m"})
    # defaults 100 + overhead 10 = 110; memory default 200Mi
    assert p.non_zero_requests == {"cpu": 110, "memory": 200 * MI}
    assert p.requests == {"cpu": 10}


def test_pod_level_requests_override_cpu_memory_and_hugepages():
    p = pod([container("a", {"cpu": "200m", "memory": "100Mi", "hugepages-2Mi": "4Mi", "ephemeral-storage": "1Gi"})],
            overhead={"cpu": "100m"},
            resources={"requests": {"cpu": "1", "hugepages-2Mi": "8Mi", "ephemeral-storage": "5Gi"}})
    # cpu: pod-level 1000 replaces 200, then overhead 100 -> 1100
    # memory: no pod-level value, containers' 100Mi stays
    # hugepages-2Mi: pod-level 8Mi replaces 4Mi
    # ephemeral-storage is not a pod-level resource: containers' 1Gi stays
    assert p.requests == {"cpu": 1100, "memory": 100 * MI, "hugepages-2Mi": 8 * MI, "ephemeral-storage": GI}


def test_pod_level_requests_with_only_unsupported_resources_are_ignored():
    p = pod([container("a", {"ephemeral-storage": "1Gi"})], resources={"requests": {"ephemeral-storage": "5Gi"}})
    assert p.requests == {"ephemeral-storage": GI}
    # and the defaults are the per-container ones
    assert p.non_zero_requests == {"ephemeral-storage": GI, "cpu": 100, "memory": 200 * MI}


def test_non_zero_requests_with_pod_level_requests_only_default_resources_missing_everywhere():
    p = pod([container("a", {"cpu": "100m"}), container("b")], resources={"requests": {"memory": "1Gi"}})
    # effective requests: cpu 100 (from a), memory 1Gi (pod level)
    assert p.requests == {"cpu": 100, "memory": GI}
    # NodeInfo rule (CalculateResource): cpu and memory are both present -> no defaults at all
    assert p.non_zero_requests == {"cpu": 100, "memory": GI}
    # scoring rule: b gets the 100m default -> cpu 200; memory is overridden by the pod level
    assert p.scoring_requests == {"cpu": 200, "memory": GI}
    assert pod_requests(p, non_missing_defaults=True) == {"cpu": 200, "memory": GI}


def test_non_zero_requests_with_pod_level_requests_and_a_resource_missing_everywhere():
    p = pod([container("a"), container("b")], resources={"requests": {"cpu": "1"}})
    # cpu set at pod level (1000); memory missing at both levels -> 200Mi for each container
    assert p.non_zero_requests == {"cpu": 1000, "memory": 400 * MI}
    assert p.requests == {"cpu": 1000}


def test_sums_are_exact_before_rounding():
    # each 0.5-byte memory request is first rounded up to whole milli-units (apiserver
    # defaulting), then summed exactly: 500m + 500m = 1 byte, not 1 + 1
    p = pod([container("a", {"memory": "0.5"}), container("b", {"memory": "0.5"})])
    assert p.requests == {"memory": 1}
    # whereas sub-milli cpu is rounded up per container: 0.4m -> 1m each -> 2m
    p = pod([container("a", {"cpu": "0.4m"}), container("b", {"cpu": "0.4m"})])
    assert p.requests == {"cpu": 2}


def test_requests_default_to_limits():
    p = pod([container("a", requests={"memory": "64Mi"}, limits={"cpu": "1", "memory": "128Mi"})])
    # cpu request defaults to the 1-core limit; the explicit memory request is kept
    assert p.containers[0].requests == {"cpu": 1000, "memory": 64 * MI}
    assert p.requests == {"cpu": 1000, "memory": 64 * MI}


def test_pod_level_requests_default_from_containers_and_pod_limits():
    p = pod([container("a", {"cpu": "100m"}), container("b", {"cpu": "200m"})],
            resources={"limits": {"cpu": "2", "memory": "1Gi"}})
    # defaultPodRequests: cpu -> containers' aggregate 300m; memory -> no container request,
    # so the pod-level limit 1Gi
    assert p.resources.requests == {"cpu": 300, "memory": GI}
    assert p.requests == {"cpu": 300, "memory": GI}
    # pod-level requests are now set and hold cpu and memory: no defaults
    assert p.non_zero_requests == {"cpu": 300, "memory": GI}


def test_requests_of_objects_built_in_code():
    p = Pod(name="p", containers=(Container(name="a", requests={"cpu": 250, "memory": 10}),),
            resources=ResourceRequirements(requests={"memory": 20}), overhead={"cpu": 5})
    # cpu 250 + overhead 5; memory replaced by the pod-level 20
    assert p.requests == {"cpu": 255, "memory": 20}
    assert non_zero_pod_requests(p) == {"cpu": 255, "memory": 20}


def test_requests_are_cached_and_read_only():
    p = pod([container("a", {"cpu": "1"})])
    assert p.requests is p.requests
    try:
        p.requests["cpu"] = 0  # type: ignore[index]
    except TypeError:
        pass
    else:
        raise AssertionError("requests must be read-only")
    assert p.replace(containers=()).requests == {}


def test_copies_keep_exact_amounts_unless_requests_change():
    p = pod([container("a", {"memory": "0.5"}), container("b", {"memory": "0.5"})], overhead={"memory": "0.5"})
    # 0.5 + 0.5 + 0.5 = 1.5 bytes -> 2, even after copying the pod or a container
    assert p.requests == {"memory": 2}
    assert p.replace(name="q").requests == {"memory": 2}
    copied = p.replace(containers=tuple(c.replace(name=c.name + "-x") for c in p.containers))
    assert copied.requests == {"memory": 2}
    # new integer requests replace the exact ones: a -> 5 bytes, b keeps 0.5, overhead 0.5 -> 6
    changed = p.replace(containers=(p.containers[0].replace(requests={"memory": 5}), p.containers[1]))
    assert changed.containers[0].request_nanos == {"memory": 5 * 10**9}
    assert changed.requests == {"memory": 6}
