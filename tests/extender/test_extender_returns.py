"""Extender answers are decoded defensively (issue 12): whatever an extender sends, the client raises
an ExtenderError naming the extender (and the value), or returns verdicts the scheduler can use.

Upstream's handling then applies: a Filter error fails the attempt with Error unless the extender is
ignorable (then it is skipped); a Prioritize error only drops that extender's scores for the cycle,
ignorable or not (``prioritizeNodes`` in pkg/scheduler/schedule_one.go logs it and goes on).
"""
import pytest

from fastsched.config.types import Extender as ExtenderConfig
from fastsched.extender import ExtenderError, HTTPExtender, Victims, weighted_extender_score
from fastsched.extender.testing import ReferenceExtender
from fastsched.scheduler import Scheduler
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node, make_pod


@pytest.fixture
def nodes():
    return build_snapshot([make_node(f"node-{i}") for i in range(3)]).batch()


def client(srv, **kw):
    kw.setdefault("filter_verb", "filter")
    kw.setdefault("prioritize_verb", "prioritize")
    kw.setdefault("weight", 1)
    return HTTPExtender(ExtenderConfig(url_prefix=srv.url, **kw))


def prioritize_error(answer, weight=1):
    with ReferenceExtender(answers={"prioritize": answer}) as srv:
        with pytest.raises(ExtenderError) as e:
            client(srv, weight=weight).prioritize(make_pod("p"), build_snapshot([make_node("n1")]).batch())
        return str(e.value).replace(srv.url, "URL")


def filter_answer(nodes, answer, **kw):
    with ReferenceExtender(answers={"filter": answer}) as srv:
        kept, failed, unresolvable = client(srv, **kw).filter(make_pod("p"), nodes)
        return kept.names, failed, {k: v.replace(srv.url, "URL") for k, v in unresolvable.items()}


def filter_error(nodes, answer, **kw):
    with ReferenceExtender(answers={"filter": answer}) as srv:
        with pytest.raises(ExtenderError) as e:
            client(srv, **kw).filter(make_pod("p"), nodes)
        return str(e.value).replace(srv.url, "URL")


# -- prioritize -------------------------------------------------------------------------------------------
def test_prioritize_score_2_to_the_62_is_out_of_range():
    assert prioritize_error([{"Host": "n1", "Score": 2**62}]) == (
        'extender "URL" returned score 4611686018427387904 for node "n1": out of range')


def test_prioritize_score_minus_2_to_the_63_is_out_of_range():
    assert prioritize_error([{"Host": "n1", "Score": -2**63}]) == (
        'extender "URL" returned score -9223372036854775808 for node "n1": out of range')


def test_prioritize_score_outside_int64_is_out_of_range():
    assert prioritize_error([{"Host": "n1", "Score": 2**64}]) == (
        'extender "URL" returned score 18446744073709551616 for node "n1": out of range')


def test_prioritize_score_whose_weighted_value_overflows_is_out_of_range():
    score = 3 * 10**17   # x 10 fits int64; x 5 (weight) x 10 does not
    assert prioritize_error([{"Host": "n1", "Score": score}], weight=5) == (
        f'extender "URL" returned score {score} for node "n1": out of range')


@pytest.mark.parametrize("score,shown", [(1.5, "1.5"), (5.0, "5.0"), ("5", '"5"'), (True, "true"), ([5], "[5]")],
                         ids=["fraction", "float", "string", "bool", "list"])
def test_prioritize_non_integer_score_is_an_error(score, shown):
    assert prioritize_error([{"Host": "n1", "Score": score}]) == (
        f'extender "URL" returned score {shown} for node "n1": not an integer')


@pytest.mark.parametrize("answer,message", [
    ({"n1": 5}, 'extender "URL" answered prioritize with {"n1": 5}, not a HostPriorityList'),
    ([5], 'extender "URL" returned 5 in its HostPriorityList: not a HostPriority object'),
    ([{"Host": 5, "Score": 1}], 'extender "URL" returned Host 5: not a node name'),
    (b"", 'extender "URL" answered prioritize with an empty body, not a HostPriorityList'),
], ids=["object", "number-entry", "number-host", "empty-body"])
def test_prioritize_wrong_types_are_errors(answer, message):
    assert prioritize_error(answer) == message


def test_prioritize_accepts_in_range_scores_and_nulls(nodes):
    answer = [{"Host": "node-0", "Score": 7}, {"Host": "node-1", "Score": None}, {"host": "node-2", "score": -3}]
    with ReferenceExtender(answers={"prioritize": answer}) as srv:
        assert client(srv, weight=2).prioritize(make_pod("p"), nodes) == ({"node-0": 7, "node-1": 0, "node-2": -3}, 2)
    with ReferenceExtender(answers={"prioritize": None}) as srv:
        assert client(srv).prioritize(make_pod("p"), nodes) == ({}, 1)


def test_weighted_extender_score_is_upstreams_product_checked():
    assert weighted_extender_score("e", "n", 10, 5) == 500
    assert weighted_extender_score("e", "n", (2**63 - 1) // 10, 1) == (2**63 - 1) // 10 * 10
    with pytest.raises(ExtenderError, match=r'^extender "e" returned score 922337203685477581 for node "n": '
                                            r'out of range$'):
        weighted_extender_score("e", "n", (2**63 - 1) // 10 + 1, 1)


# -- filter -----------------------------------------------------------------------------------------------
def test_filter_answer_empty_object_names_the_extender(nodes):
    kept, failed, unresolvable = filter_answer(nodes, {})
    reason = 'node(s) were filtered out by extender "URL" without a reason'
    assert kept == [] and failed == {}
    assert unresolvable == {"node-0": reason, "node-1": reason, "node-2": reason}


def test_filter_answer_null_reads_as_an_empty_object(nodes):
    kept, failed, unresolvable = filter_answer(nodes, None)
    assert kept == [] and failed == {} and len(unresolvable) == 3


def test_filter_nodes_dropped_silently_beside_listed_failures(nodes):
    kept, failed, unresolvable = filter_answer(
        nodes, {"NodeNames": ["node-2"], "FailedNodes": {"node-0": "busy"}}, node_cache_capable=True)
    assert kept == ["node-2"] and failed == {"node-0": "busy"}
    assert unresolvable == {"node-1": 'node(s) were filtered out by extender "URL" without a reason'}


def test_filter_http_500_is_an_error(nodes):
    assert filter_error(nodes, (500, b"oops")) == "failed filter with extender at URL URL/filter, code 500"


def test_filter_non_json_body_is_an_error(nodes):
    assert filter_error(nodes, b"<html>oops</html>") == (
        "extender at URL URL/filter answered filter with malformed JSON: Expecting value: line 1 column 1 (char 0)")


@pytest.mark.parametrize("answer,message", [
    (b"", 'extender "URL" answered filter with an empty body, not an ExtenderFilterResult object'),
    ([], 'extender "URL" answered filter with [], not an ExtenderFilterResult object'),
    ({"Error": 5}, 'extender "URL" returned Error 5: not a string'),
    ({"NodeNames": [1]}, 'extender "URL" returned NodeNames [1]: not a list of node names'),
    ({"NodeNames": "node-0"}, 'extender "URL" returned NodeNames "node-0": not a list of node names'),
    ({"Nodes": {"items": "x"}}, 'extender "URL" returned Nodes {"items": "x"}: not a NodeList'),
    ({"Nodes": {"items": [5]}}, 'extender "URL" returned a node 5 in Nodes: not a Node with a metadata.name'),
    ({"FailedNodes": ["node-0"]},
     'extender "URL" returned FailedNodes ["node-0"]: not a map of node names to messages'),
    ({"FailedAndUnresolvableNodes": {"node-0": 5}},
     'extender "URL" returned FailedAndUnresolvableNodes message 5 for node "node-0": not a string'),
], ids=["empty-body", "list", "error-number", "names-numbers", "names-string", "items-string", "item-number",
        "failed-list", "failed-message-number"])
def test_filter_wrong_types_are_errors(nodes, answer, message):
    assert filter_error(nodes, answer) == message


def test_preempt_wrong_types_are_errors():
    victim = make_pod("victim", uid="v-1", node_name="node-0", priority=1)
    snap = build_snapshot([make_node("node-0")], [victim])
    answer = {"NodeNameToMetaVictims": {"node-0": {"Pods": [{"UID": "v-1"}], "NumPDBViolations": "1"}}}
    with ReferenceExtender(answers={"preempt": answer}) as srv:
        with pytest.raises(ExtenderError) as e:
            client(srv, preempt_verb="preempt").process_preemption(make_pod("p", priority=9),
                                                                   {"node-0": Victims([victim], 0)}, snap)
        assert str(e.value).replace(srv.url, "URL") == (
            'extender "URL" returned NumPDBViolations "1" for node "node-0": not an int64')


# -- through the scheduler --------------------------------------------------------------------------------
def config(url, ignorable=False):
    return f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 100
extenders:
  - urlPrefix: "{url}"
    filterVerb: filter
    prioritizeVerb: prioritize
    weight: 1
    ignorable: {str(ignorable).lower()}
    httpTimeout: 2s
"""


def run_one(answers, ignorable=False):
    with ReferenceExtender(answers=answers) as srv:
        s = Scheduler(config(srv.url, ignorable), seed=1)
        s.add_nodes([make_node(f"node-{i}", cpu="4") for i in range(3)])
        s.add_pod(make_pod("p", cpu="1"))
        (r,) = s.run()
        return r, srv.url, srv.verbs_called()


@pytest.mark.parametrize("score", [2**62, -2**63], ids=["2^62", "-2^63"])
def test_scheduler_survives_an_out_of_range_prioritize_score(score):
    # upstream ignores a failing Prioritize: the pod is placed on the plugins' scores alone
    r, _, verbs = run_one({"prioritize": [{"Host": "node-1", "Score": score}, {"Host": "node-2", "Score": 10}]})
    assert r.scheduled and "prioritize" in verbs


def test_scheduler_filter_answer_empty_object_says_which_extender_removed_the_nodes():
    r, url, _ = run_one({"filter": {}})
    assert r.status == "Unschedulable"
    assert r.message.startswith(
        f'0/3 nodes are available: 3 node(s) were filtered out by extender "{url}" without a reason.')


@pytest.mark.parametrize("answer,message", [
    ((500, b"oops"), "failed filter with extender at URL {url}/filter, code 500"),
    (b"{not json", "extender at URL {url}/filter answered filter with malformed JSON: Expecting property name "
                   "enclosed in double quotes: line 1 column 2 (char 1)"),
    ({"NodeNames": [1]}, 'extender "{url}" returned NodeNames [1]: not a list of node names'),
], ids=["http-500", "non-json", "wrong-types"])
def test_scheduler_filter_errors_fail_the_attempt_with_error(answer, message):
    r, url, _ = run_one({"filter": answer})
    assert r.status == "Error" and r.node_name is None
    assert r.message == message.format(url=url)


def test_scheduler_skips_an_ignorable_extender_that_answers_garbage():
    r, _, verbs = run_one({"filter": {"NodeNames": [1]}}, ignorable=True)
    assert r.scheduled and "filter" in verbs
