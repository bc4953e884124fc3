"""Label selectors, node selectors and node affinity matching."""
import pytest

from fastsched.api import (
    EVERYTHING,
    NOTHING,
    Affinity,
    LabelSelector,
    ManifestError,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
    preferred_node_affinity_score,
    required_node_affinity_matches,
)


def selector(match_labels=None, expressions=None):
    spec = {}
    if match_labels is not None:
        spec["matchLabels"] = match_labels
    if expressions is not None:
        spec["matchExpressions"] = expressions
    return LabelSelector.from_dict(spec, "spec.selector")


def node(name="node-1", **labels):
    return Node(name=name, labels=labels)


# --------------------------------------------------------------------------------------------
# LabelSelector
# --------------------------------------------------------------------------------------------
def test_empty_selector_selects_everything_and_nil_selects_nothing():
    empty = LabelSelector.from_dict({})
    assert empty.is_empty() and empty == EVERYTHING
    assert empty.matches({}) and empty.matches({"app": "web"})
    nothing = LabelSelector.from_dict(None)
    assert nothing is NOTHING and LabelSelector.nothing() is NOTHING
    assert not nothing.is_empty() and nothing.selects_nothing()
    assert not nothing.matches({}) and not nothing.matches({"app": "web"})
    assert LabelSelector.from_dict({"matchLabels": {}, "matchExpressions": []}).is_empty()


@pytest.mark.parametrize(
    "operator, values, labels, expected",
    [
        ("In", ["web", "api"], {"app": "web"}, True),
        ("In", ["web", "api"], {"app": "db"}, False),
        ("In", ["web"], {}, False),  # absent label is never In
        ("In", [""], {"app": ""}, True),
        ("NotIn", ["web"], {"app": "db"}, True),
        ("NotIn", ["web"], {"app": "web"}, False),
        ("NotIn", ["web"], {}, True),  # absent label satisfies NotIn
        ("Exists", [], {"app": ""}, True),
        ("Exists", [], {"other": "x"}, False),
        ("DoesNotExist", [], {}, True),
        ("DoesNotExist", [], {"app": "web"}, False),
    ],
)
def test_label_selector_operators(operator, values, labels, expected):
    expression = {"key": "app", "operator": operator}
    if values:
        expression["values"] = values
    assert selector(expressions=[expression]).matches(labels) is expected


def test_match_labels_and_expressions_are_anded():
    sel = selector({"app": "web"}, [{"key": "tier", "operator": "NotIn", "values": ["db"]}])
    assert sel.matches({"app": "web", "tier": "front"})
    assert sel.matches({"app": "web"})
    assert not sel.matches({"app": "web", "tier": "db"})
    assert not sel.matches({"app": "api"})
    assert not sel.is_empty()


def test_requirements_are_normalized_and_sorted_by_key():
    sel = selector({"zone": "a"}, [{"key": "app", "operator": "In", "values": ["x", "y", "x"]},
                                   {"key": "gpu", "operator": "Exists"}])
    assert sel.requirements() == (
        ("app", "In", frozenset({"x", "y"})),
        ("gpu", "Exists", frozenset()),
        ("zone", "In", frozenset({"a"})),  # matchLabels become single-value In
    )


def test_from_match_labels_requires_every_pair():
    sel = LabelSelector.from_match_labels({"app": "web", "tier": "front"})
    assert sel.matches({"app": "web", "tier": "front", "extra": "1"})
    assert not sel.matches({"app": "web"})
    assert LabelSelector.from_match_labels({}) is EVERYTHING


@pytest.mark.parametrize(
    "expression, path_suffix, message",
    [
        ({"key": "app", "operator": "Gt", "values": ["1"]}, "matchExpressions[0].operator", "not a valid"),
        ({"key": "app", "operator": "In"}, "matchExpressions[0].values", "non-empty"),
        ({"key": "app", "operator": "NotIn", "values": []}, "matchExpressions[0].values", "non-empty"),
        ({"key": "app", "operator": "Exists", "values": ["x"]}, "matchExpressions[0].values", "must be empty"),
        ({"key": "bad key", "operator": "Exists"}, "matchExpressions[0].key", "invalid label key"),
        ({"key": "Example.com/app", "operator": "Exists"}, "matchExpressions[0].key", "prefix"),
        ({"key": "app", "operator": "In", "values": ["has space"]}, "matchExpressions[0].values[0]",
         "invalid label value"),
        ({"key": "app", "operator": "In", "values": "web"}, "matchExpressions[0].values", "expected a list"),
        ({"key": "app", "operator": "In", "values": [1]}, "matchExpressions[0].values[0]", "expected a string"),
    ],
)
def test_invalid_label_selectors_raise_with_path(expression, path_suffix, message):
    with pytest.raises(ManifestError, match=message) as info:
        selector(expressions=[expression])
    assert info.value.path == f"spec.selector.{path_suffix}"


def test_wrong_structural_types_raise():
    with pytest.raises(ManifestError) as info:
        LabelSelector.from_dict({"matchExpressions": "app=web"}, "spec.selector")
    assert info.value.path == "spec.selector.matchExpressions"
    with pytest.raises(ManifestError) as info:
        LabelSelector.from_dict({"matchLabels": ["app"]}, "spec.selector")
    assert info.value.path == "spec.selector.matchLabels"
    with pytest.raises(ManifestError) as info:
        LabelSelector.from_dict({"matchLabels": {"app": 1}}, "spec.selector")
    assert info.value.path == "spec.selector.matchLabels.app"
    with pytest.raises(ManifestError):
        LabelSelector.from_dict("app=web", "spec.selector")


def test_valid_label_keys_with_prefix():
    sel = selector({"app.kubernetes.io/name": "web", "a_b.c-d": "x"})
    assert sel.matches({"app.kubernetes.io/name": "web", "a_b.c-d": "x"})


def test_selector_equality():
    assert selector({"a": "1"}) == selector(expressions=[{"key": "a", "operator": "In", "values": ["1"]}])
    assert hash(selector({"a": "1"})) == hash(selector({"a": "1"}))
    assert NOTHING != EVERYTHING


# --------------------------------------------------------------------------------------------
# NodeSelector
# --------------------------------------------------------------------------------------------
def term(*expressions, fields=()):
    return {"matchExpressions": list(expressions), "matchFields": list(fields)}


def node_selector(*terms):
    return NodeSelector.from_dict({"nodeSelectorTerms": list(terms)}, "spec.affinity")


def expr(key, operator, *values):
    return {"key": key, "operator": operator, "values": list(values)}


@pytest.mark.parametrize(
    "expression, labels, expected",
    [
        (expr("zone", "In", "a", "b"), {"zone": "b"}, True),
        (expr("zone", "In", "a"), {}, False),
        (expr("zone", "NotIn", "a"), {"zone": "b"}, True),
        (expr("zone", "NotIn", "a"), {}, True),
        (expr("zone", "NotIn", "a"), {"zone": "a"}, False),
        (expr("gpu", "Exists"), {"gpu": ""}, True),
        (expr("gpu", "DoesNotExist"), {"gpu": ""}, False),
        (expr("cores", "Gt", "4"), {"cores": "8"}, True),
        (expr("cores", "Gt", "4"), {"cores": "4"}, False),
        (expr("cores", "Lt", "4"), {"cores": "3"}, True),
        # "-10" is not a valid label value (must start with an alphanumeric), so upstream's
        # NewRequirement rejects it and the term never matches
        (expr("cores", "Lt", "-10"), {"cores": "-11"}, False),
        (expr("cores", "Gt", "4"), {"cores": "+5"}, True),  # Go ParseInt accepts a sign
        (expr("cores", "Gt", "4"), {"cores": "eight"}, False),  # non-integer label never matches
        (expr("cores", "Gt", "4"), {"cores": " 8"}, False),
        (expr("cores", "Gt", "4"), {"cores": "8.5"}, False),
        (expr("cores", "Lt", "4"), {}, False),  # absent label never matches Gt/Lt
    ],
)
def test_node_selector_operators(expression, labels, expected):
    assert node_selector(term(expression)).matches(node(**labels)) is expected


def test_terms_are_ored_and_requirements_anded():
    sel = node_selector(
        term(expr("zone", "In", "a"), expr("disk", "In", "ssd")),
        term(expr("zone", "In", "b")),
    )
    assert sel.matches(node(zone="a", disk="ssd"))
    assert not sel.matches(node(zone="a", disk="hdd"))
    assert sel.matches(node(zone="b"))
    assert not sel.matches(node(zone="c"))


def test_empty_terms_and_empty_selectors_match_nothing():
    assert not node_selector().matches(node(zone="a"))
    assert not node_selector({}).matches(node(zone="a"))
    assert not node_selector(term()).matches(node())
    assert NodeSelectorTerm().is_empty
    # an empty term does not hide a matching one
    assert node_selector({}, term(expr("zone", "In", "a"))).matches(node(zone="a"))


@pytest.mark.parametrize(
    "bad",
    [
        expr("cores", "Gt", "4", "5"),  # Gt needs exactly one value
        expr("cores", "Gt", "four"),  # ... which must be an integer
        expr("cores", "Lt"),
        expr("zone", "In"),  # In needs values
        expr("zone", "Exists", "a"),  # Exists takes none
        expr("zone", "Near", "a"),  # unknown operator
        expr("bad key", "Exists"),
        expr("zone", "In", "not valid!"),
    ],
)
def test_invalid_requirement_makes_only_its_term_fail(bad):
    # the lazy-error node selector: the broken term never matches, the other terms still do
    sel = node_selector(term(bad, expr("zone", "Exists")), term(expr("zone", "In", "b")))
    assert sel.terms[0].parse_errors
    assert sel.parse_errors
    assert not sel.matches(node(zone="a", cores="10"))
    assert sel.matches(node(zone="b", cores="10"))


def test_match_fields_on_node_name():
    in_field = node_selector(term(fields=[expr("metadata.name", "In", "node-1")]))
    assert in_field.matches(node("node-1"))
    assert not in_field.matches(node("node-2"))
    not_in = node_selector(term(fields=[expr("metadata.name", "NotIn", "node-1")]))
    assert not not_in.matches(node("node-1"))
    assert not_in.matches(node("node-2"))


def test_match_fields_and_expressions_are_anded():
    sel = node_selector(term(expr("zone", "In", "a"), fields=[expr("metadata.name", "In", "node-1")]))
    assert sel.matches(node("node-1", zone="a"))
    assert not sel.matches(node("node-1", zone="b"))
    assert not sel.matches(node("node-2", zone="a"))


@pytest.mark.parametrize(
    "field",
    [
        expr("metadata.name", "In", "node-1", "node-2"),  # exactly one value
        expr("metadata.name", "In"),
        expr("metadata.name", "Exists"),  # only In / NotIn
        expr("metadata.name", "Gt", "1"),
    ],
)
def test_invalid_match_fields_make_the_term_fail(field):
    sel = node_selector(term(fields=[field]))
    assert sel.terms[0].parse_errors
    assert not sel.matches(node("node-1"))


def test_other_fields_read_as_empty_like_upstream_fields_set():
    assert not node_selector(term(fields=[expr("metadata.namespace", "In", "x")])).matches(node("node-1"))
    assert node_selector(term(fields=[expr("metadata.namespace", "NotIn", "x")])).matches(node("node-1"))


def test_match_fields_are_skipped_for_a_node_without_name():
    # upstream only evaluates matchFields when the node's field set is non-empty
    sel = node_selector(term(expr("zone", "In", "a"), fields=[expr("metadata.name", "In", "node-1")]))
    assert sel.matches(node("", zone="a"))


def test_structural_errors_in_node_selectors_raise():
    with pytest.raises(ManifestError) as info:
        NodeSelector.from_dict({"nodeSelectorTerms": {"matchExpressions": []}}, "spec.x")
    assert info.value.path == "spec.x.nodeSelectorTerms"
    with pytest.raises(ManifestError) as info:
        NodeSelector.from_dict({"nodeSelectorTerms": [{"matchExpressions": [{"key": 1, "operator": "In"}]}]},
                               "spec.x")
    assert info.value.path == "spec.x.nodeSelectorTerms[0].matchExpressions[0].key"


def test_requirement_constructed_in_code():
    requirement = NodeSelectorRequirement("cores", "Gt", ["2"])
    assert requirement.matches_labels({"cores": "3"})
    assert NodeSelector([NodeSelectorTerm([requirement])]).matches(node(cores="3"))


# --------------------------------------------------------------------------------------------
# Preferred terms and required node affinity
# --------------------------------------------------------------------------------------------
def preferred(weight, *expressions):
    return PreferredSchedulingTerm.from_dict({"weight": weight, "preference": term(*expressions)}, "p")


def test_preferred_score_sums_matching_weights():
    terms = [
        preferred(3, expr("zone", "In", "a")),
        preferred(5, expr("disk", "In", "ssd")),
        preferred(7, expr("zone", "In", "b")),
        preferred(0, expr("zone", "In", "a")),  # weight 0 is dropped
        PreferredSchedulingTerm(11, NodeSelectorTerm()),  # empty preference is dropped
        preferred(13, expr("cores", "Gt", "x")),  # parse error: never matches
    ]
    # zone=a (3) + disk=ssd (5) = 8
    assert preferred_node_affinity_score(terms, node(zone="a", disk="ssd", cores="4")) == 8
    assert preferred_node_affinity_score(terms, node(zone="c")) == 0
    assert not terms[3].counts and not terms[4].counts and terms[0].counts


def test_preferred_term_weight_must_be_an_integer():
    with pytest.raises(ManifestError) as info:
        PreferredSchedulingTerm.from_dict({"weight": "3", "preference": {}}, "spec.p[0]")
    assert info.value.path == "spec.p[0].weight"


def test_required_node_affinity_combines_node_selector_and_required_terms():
    required = node_selector(term(expr("zone", "In", "a", "b")))
    pod = Pod(name="p", node_selector={"disk": "ssd"}, affinity=Affinity(node_affinity=NodeAffinity(required=required)))
    assert required_node_affinity_matches(pod, node(zone="a", disk="ssd"))
    assert not required_node_affinity_matches(pod, node(zone="a", disk="hdd"))  # nodeSelector fails
    assert not required_node_affinity_matches(pod, node(zone="c", disk="ssd"))  # terms fail
    assert not required_node_affinity_matches(pod, node(zone="a"))  # nodeSelector label absent


def test_required_node_affinity_without_constraints_matches_everything():
    assert required_node_affinity_matches(Pod(name="p"), node())
    assert required_node_affinity_matches(Pod(name="p", node_selector={}), node())
    # preferred-only node affinity does not restrict
    pod = Pod(name="p", affinity=Affinity(node_affinity=NodeAffinity(preferred=(preferred(1, expr("a", "Exists")),))))
    assert required_node_affinity_matches(pod, node())


def test_required_node_affinity_with_no_terms_matches_nothing():
    pod = Pod(name="p", affinity=Affinity(node_affinity=NodeAffinity(required=node_selector())))
    assert not required_node_affinity_matches(pod, node(zone="a"))


def test_node_selector_value_must_match_exactly_including_empty_values():
    pod = Pod(name="p", node_selector={"gpu": ""})
    assert required_node_affinity_matches(pod, node(gpu=""))
    assert not required_node_affinity_matches(pod, node())
