"""performance-config.yaml decoding: Go-style keys, op validation, params, label filters."""
import pytest

from fastsched.perf import PerfConfigError, label_filter_enabled, load_perf_config, parse_go_duration, parse_perf_config

BASIC = """\
- name: SchedulingBasic
  defaultPodTemplatePath: ../templates/pod.yaml
  workloadTemplate:
  - opcode: createNodes
    countParam: $initNodes
  - opcode: createPods
    countParam: $measurePods
    collectMetrics: true
  workloads:
  - name: small
    labels: [performance]
    threshold: 100
    params: {initNodes: 5, measurePods: 10}
"""


def parse(text):
    import yaml
    return parse_perf_config(yaml.safe_load(text), source="cfg.yaml")


def test_reads_upstream_shapes():
    cfg = parse(BASIC)
    tc = cfg.test_cases[0]
    assert tc.name == "SchedulingBasic" and tc.default_pod_template_path == "../templates/pod.yaml"
    assert [op.opcode for op in tc.workload_template] == ["createNodes", "createPods"]
    w = tc.workloads[0]
    assert w.threshold == 100 and w.params == {"initNodes": 5, "measurePods": 10}
    assert tc.selector_for(w).name == "SchedulingThroughput" and tc.selector_for(w).data_bucket == "Average"
    ops = tc.ops_for(w)
    assert ops.unused_params == [] and ops.ops[0].fields["count"] == 5 and ops.ops[1].fields["count"] == 10


def test_keys_match_case_insensitively_as_go_decodes_them():
    cfg = parse(BASIC.replace("countParam: $initNodes", "CountParam: $initNodes")
                .replace("collectMetrics", "CollectMetrics").replace("  workloads:", "  Workloads:"))
    ops = cfg.test_cases[0].ops_for(cfg.test_cases[0].workloads[0]).ops
    assert ops[0].fields["count"] == 5 and ops[1].fields["collectMetrics"] is True


@pytest.mark.parametrize("change, message", [
    (("opcode: createNodes", "opcode: createNodez"), "[0].workloadTemplate[0].opcode: unknown opcode 'createNodez'"),
    (("countParam: $initNodes", "countParam: initNodes"), '[0].workloadTemplate[0].countParam: invalid countParam'),
    (("countParam: $initNodes", "countParm: $initNodes"), '[0].workloadTemplate[0].countParm: unknown field'),
    (("collectMetrics: true", "collectMetrics: true\n    skipWaitToCompletion: true"),
     "collectMetrics and skipWaitToCompletion cannot be true at the same time"),
    (("collectMetrics: true", "collectMetrics: false"), "no op in the workload template collects metrics"),
    (("threshold: 100", "threshold: -1"), "[0].workloads[0].threshold: invalid Threshold"),
    (("threshold: 100", "threshold: lots"), "[0].workloads[0].threshold: cannot unmarshal string"),
    (("    countParam: $measurePods", "    count: 1.5"), "[0].workloadTemplate[1].count: cannot unmarshal number 1.5"),
    (("  - name: small", "  - name: small\n    colour: red"), '[0].workloads[0].colour: unknown field "colour"'),
])
def test_bad_configs_name_the_field(change, message):
    with pytest.raises(PerfConfigError) as err:
        parse(BASIC.replace(*change))
    assert str(err.value).startswith("cfg.yaml: ") and message in str(err.value), str(err.value)


def test_params_are_checked_per_workload():
    cfg = parse(BASIC.replace("measurePods: 10}", "measurePods: 10, extra: 3}"))
    tc = cfg.test_cases[0]
    assert tc.ops_for(tc.workloads[0]).unused_params == ["extra"]
    cfg = parse(BASIC.replace("initNodes: 5, ", ""))
    with pytest.raises(PerfConfigError, match=r"SchedulingBasic/small: \[0\].workloadTemplate\[0\].countParam: "
                                              r"parameter initNodes is undefined"):
        cfg.test_cases[0].ops_for(cfg.test_cases[0].workloads[0])
    cfg = parse(BASIC.replace("initNodes: 5", "initNodes: five"))
    with pytest.raises(PerfConfigError, match="parameter initNodes has the wrong type string"):
        cfg.test_cases[0].ops_for(cfg.test_cases[0].workloads[0])


def test_template_params_take_a_yaml_default_after_a_bar():
    """resolveTemplateParams (v1.37): "$name|default" uses the workload's parameter when it has
    one, else the default decoded as YAML (the parameter then does not count as used)."""
    text = BASIC.replace("    countParam: $initNodes\n",
                         "    countParam: $initNodes\n    templateParams: {roots: $numPCIRoots|2, kind: $kind|gpu,"
                         " plain: $initNodes}\n")
    tc = parse(text).test_cases[0]
    ops = tc.ops_for(tc.workloads[0])
    assert ops.ops[0].fields["templateParams"] == {"roots": 2, "kind": "gpu", "plain": 5}
    assert ops.unused_params == []
    tc = parse(text.replace("measurePods: 10}", "measurePods: 10, numPCIRoots: 5}")).test_cases[0]
    assert tc.ops_for(tc.workloads[0]).ops[0].fields["templateParams"]["roots"] == 5
    tc = parse(text.replace("$kind|gpu", "$kind")).test_cases[0]
    with pytest.raises(PerfConfigError, match=r'templateParams.kind: parameter "kind" not found'):
        tc.ops_for(tc.workloads[0])
    tc = parse(text.replace("$kind|gpu", "'$kind|[a'")).test_cases[0]
    with pytest.raises(PerfConfigError, match=r'templateParams.kind: decoding parameter "kind" default "\[a" as YAML'):
        tc.ops_for(tc.workloads[0])


def test_create_pod_sets_unroll_with_upstreams_op_indices():
    cfg = parse(BASIC.replace("  - opcode: createPods\n    countParam: $measurePods", """\
  - opcode: createPodSets
    count: 3
    namespacePrefix: init-ns
    createPodsOp:
      opcode: createPods
      countParam: $initPods
  - opcode: createPods
    countParam: $measurePods""").replace("measurePods: 10}", "measurePods: 10, initPods: 2}"))
    tc = cfg.test_cases[0]
    ops = tc.ops_for(tc.workloads[0]).ops
    assert [op.fields.get("namespace") for op in ops] == [None, "init-ns-0", "init-ns-1", "init-ns-2", None]
    assert all(op.fields["count"] == 2 for op in ops[1:4])


def test_durations_and_label_filters():
    assert parse_go_duration("1m30s") == 90 and parse_go_duration("250ms") == 0.25 and parse_go_duration("0") == 0
    with pytest.raises(ValueError, match="missing unit"):
        parse_go_duration("10")
    assert label_filter_enabled("performance", ["performance", "short"])
    assert not label_filter_enabled("performance,-short", ["performance", "short"])
    assert label_filter_enabled("+integration-test,-performance", ["integration-test"])
    assert label_filter_enabled("", [])


def test_file_errors(tmp_path):
    with pytest.raises(PerfConfigError, match="config file not found"):
        load_perf_config(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- name: [unclosed\n")
    with pytest.raises(PerfConfigError, match=r"bad.yaml: invalid YAML \(line 2"):
        load_perf_config(bad)


def test_not_modelled_ops_are_recognised():
    cfg = parse(BASIC.replace("  - opcode: createPods\n", "  - opcode: startCollectingProfile\n  - opcode: createPods\n"))
    assert "Go profiling" in cfg.test_cases[0].not_modelled()
    # createPodGroups runs since issue 30 (tests/perf/test_podgroup_configs.py)
    cfg = parse(BASIC.replace("  - opcode: createPods\n", "  - opcode: createPodGroups\n    count: 1\n"
                              "    namespace: ns\n    templatePath: pg.yaml\n  - opcode: createPods\n"))
    assert cfg.test_cases[0].not_modelled() is None
    # the DRA ops run since issue 16 (tests/dra/test_perf_workloads.py)
    cfg = parse(BASIC.replace("  - opcode: createPods\n", "  - opcode: createResourceDriver\n    driverName: x\n"
                              "    nodes: '*'\n  - opcode: createPods\n"))
    assert cfg.test_cases[0].not_modelled() is None
