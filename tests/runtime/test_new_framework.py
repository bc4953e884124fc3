"""Framework construction: upstream NewFramework's rules and messages."""
import pytest

from fastsched.config.types import KubeSchedulerProfile, Plugin, PluginConfig, Plugins, PluginSet
from fastsched.runtime import FrameworkError, Registry, RegistryError, new_framework

from .fakes import OnlyFilter, QueueSortAndBind, TestPlugin, registry_of


def pset(*entries, disabled=()):
    enabled = [Plugin(e) if isinstance(e, str) else Plugin(*e) for e in entries]
    return PluginSet(enabled=enabled, disabled=[Plugin(d) for d in disabled])


def profile(name="default-scheduler", plugin_config=(), base=True, **points):
    plugins = Plugins()
    if base:
        plugins.queue_sort = pset("QSB")
        plugins.bind = pset("QSB")
    for point, value in points.items():
        setattr(plugins, point, value)
    return KubeSchedulerProfile(scheduler_name=name, plugins=plugins, plugin_config=list(plugin_config))


def names(lst):
    return [p.name() for p in lst]


# -- Registry ----------------------------------------------------------------------------------------
def test_registry_register_and_merge():
    r = Registry()
    r.register("A", lambda a, h: None)
    with pytest.raises(RegistryError, match="a plugin named A already exists"):
        r.register("A", lambda a, h: None)
    other = Registry({"B": lambda a, h: None, "A": lambda a, h: None})
    with pytest.raises(RegistryError, match="a plugin named A already exists"):
        r.merge(other)
    assert list(r) == ["A"]  # a failed merge adds nothing
    r.merge(Registry({"B": lambda a, h: None}))
    assert list(r) == ["A", "B"]
    r.unregister("A")
    with pytest.raises(RegistryError):
        r.unregister("A")
    with pytest.raises(RegistryError):
        r.register("C", "not callable")


# -- instantiation ------------------------------------------------------------------------------------
def test_only_needed_plugins_are_instantiated_with_their_args():
    made = []

    def factory(name):
        def f(args, handle):
            made.append((name, args))
            return TestPlugin(name, handle=handle)
        return f

    r = Registry({"A": factory("A"), "B": factory("B"), "Unused": factory("Unused")})
    r.register("QSB", lambda a, h: QueueSortAndBind())
    fw = new_framework(r, profile(filter=pset("A"), score=pset(("B", 3)),
                                  plugin_config=[PluginConfig("A", {"x": 1})]))
    assert sorted(made) == [("A", {"x": 1}), ("B", None)]
    assert fw.plugin("A").handle is fw
    assert names(fw.filter_plugins) == ["A"]
    assert fw.score_plugin_weight == {"B": 3}


def test_repeated_plugin_config():
    with pytest.raises(FrameworkError, match="^repeated config for plugin A$"):
        new_framework(registry_of(TestPlugin("A")),
                      profile(filter=pset("A"), plugin_config=[PluginConfig("A"), PluginConfig("A")]))


def test_factory_error_is_wrapped():
    r = Registry({"QSB": lambda a, h: QueueSortAndBind()})

    def bad(args, handle):
        raise ValueError("bad args: foo")

    r.register("Bad", bad)
    with pytest.raises(FrameworkError, match='^initializing plugin "Bad": bad args: foo$'):
        new_framework(r, profile(filter=pset("Bad")))


def test_plugin_not_in_registry():
    with pytest.raises(FrameworkError, match='^FilterPlugin "Missing" does not exist$'):
        new_framework(registry_of(), profile(filter=pset("Missing")))
    with pytest.raises(FrameworkError, match='^ScorePlugin "MyCustomPluginA" does not exist$'):
        new_framework(registry_of(), profile(score=pset(("MyCustomPluginA", 2))))


def test_plugin_does_not_extend_interface():
    r = registry_of()
    r.register("OnlyFilter", lambda a, h: OnlyFilter())
    with pytest.raises(FrameworkError, match='^plugin "OnlyFilter" does not extend ScorePlugin plugin$'):
        new_framework(r, profile(score=pset("OnlyFilter")))


def test_plugin_listed_twice():
    with pytest.raises(FrameworkError, match='^plugin "A" already registered as "FilterPlugin"$'):
        new_framework(registry_of(TestPlugin("A")), profile(filter=pset("A", "A")))


def test_extension_point_order_decides_first_error():
    # PreFilter is checked before Filter, as in upstream's getExtensionPoints
    with pytest.raises(FrameworkError, match='PreFilterPlugin "X" does not exist'):
        new_framework(registry_of(), profile(filter=pset("Y"), pre_filter=pset("X")))


def test_queue_sort_and_bind_are_required():
    r = registry_of(TestPlugin("A"), TestPlugin("B"))
    with pytest.raises(FrameworkError, match='^only one queue sort plugin required for profile with scheduler '
                                             'name "s", but got 0$'):
        new_framework(r, profile("s", base=False, bind=pset("A")))
    r.register("QS2", lambda a, h: QueueSortAndBind("QS2"))
    with pytest.raises(FrameworkError, match='but got 2$'):
        new_framework(r, profile("s", base=False, queue_sort=pset("QSB", "QS2"), bind=pset("A")))
    with pytest.raises(FrameworkError, match='^at least one bind plugin is needed for profile with scheduler '
                                             'name "s"$'):
        new_framework(r, profile("s", base=False, queue_sort=pset("QSB")))


def test_profile_without_plugins_builds_an_empty_framework():
    fw = new_framework(registry_of(), KubeSchedulerProfile(scheduler_name="x", plugins=None))
    assert fw.profile_name() == "x"
    assert not fw.has_filter_plugins() and not fw.has_score_plugins()


# -- weights -------------------------------------------------------------------------------------------
def test_score_weight_defaults_to_one_and_explicit_wins_over_multipoint():
    r = registry_of(TestPlugin("A"), TestPlugin("B"))
    fw = new_framework(r, profile(score=pset(("A", 5)), multi_point=pset(("A", 2), "B")))
    assert fw.score_plugin_weight == {"A": 5, "B": 1}
    # the explicit Score entry is an override: it keeps its place before MultiPoint plugins
    assert names(fw.score_plugins) == ["A", "B"]


def test_score_weight_overflow():
    r = registry_of(TestPlugin("A"), TestPlugin("B"))
    big = (2**63 - 1) // 100
    # v1.37 wraps getValidScoreWeights' error: "score plugins: %w"
    with pytest.raises(FrameworkError, match="^score plugins: total score of Score plugins could overflow$"):
        new_framework(r, profile(score=pset(("A", big), ("B", 1))))
    new_framework(r, profile(score=pset(("A", big))))  # exactly at the limit is fine


def test_score_plugin_whose_name_differs_from_config():
    r = registry_of()
    r.register("Configured", lambda a, h: TestPlugin("Different"))
    with pytest.raises(FrameworkError, match='^score plugin "Different" is not configured with weight$'):
        new_framework(r, profile(score=pset("Configured")))


# -- MultiPoint ----------------------------------------------------------------------------------------
def test_multipoint_expands_to_every_implemented_point():
    r = registry_of(TestPlugin("A"))
    r.register("OnlyFilter", lambda a, h: OnlyFilter())
    fw = new_framework(r, profile(base=False, multi_point=pset("QSB", "A", "OnlyFilter")))
    assert names(fw.filter_plugins) == ["A", "OnlyFilter"]
    assert names(fw.score_plugins) == ["A"]
    assert names(fw.queue_sort_plugins) == ["QSB"]
    assert names(fw.bind_plugins) == ["QSB", "A"]
    assert names(fw.pre_enqueue_plugins()) == ["A"]
    assert names(fw.permit_plugins) == ["A"]


def test_multipoint_order_overrides_then_multipoint_then_explicit():
    r = registry_of(*(TestPlugin(n) for n in "ABCDE"))
    fw = new_framework(r, profile(multi_point=pset("A", "B", "C"), filter=pset("D", "C", "E", "A")))
    # overrides (C, A in their Filter order) first, then MultiPoint-only (B), then the other explicit ones
    assert names(fw.filter_plugins) == ["C", "A", "B", "D", "E"]


def test_multipoint_respects_disabled_and_star():
    r = registry_of(*(TestPlugin(n) for n in "ABC"))
    fw = new_framework(r, profile(multi_point=pset("A", "B", "C"),
                                  filter=pset(disabled=["B"]),
                                  score=pset("C", disabled=["*"])))
    assert names(fw.filter_plugins) == ["A", "C"]
    # '*' skips MultiPoint expansion for Score: only the explicit entry remains
    assert names(fw.score_plugins) == ["C"]
    assert names(fw.pre_score_plugins) == ["A", "B", "C"]


def test_multipoint_double_registration():
    r = registry_of(TestPlugin("A"))
    with pytest.raises(FrameworkError, match='^plugin "A" already registered as "PreFilterPlugin"$'):
        new_framework(r, profile(multi_point=pset("A", "A")))


def test_multipoint_unknown_plugin():
    with pytest.raises(FrameworkError, match='^PreFilterPlugin "Nope" does not exist$'):
        new_framework(registry_of(), profile(multi_point=pset("Nope")))


def test_list_plugins_reports_expanded_lists_with_weights():
    r = registry_of(TestPlugin("A"), TestPlugin("B"))
    fw = new_framework(r, profile(multi_point=pset(("A", 4)), score=pset(("B", 2))))
    lp = fw.list_plugins()
    assert [(p.name, p.weight) for p in lp.score.enabled] == [("A", 4), ("B", 2)]
    assert [p.name for p in lp.filter.enabled] == ["A"]
    assert [p.name for p in lp.queue_sort.enabled] == ["QSB"]


def test_enqueue_extensions_default_for_plugins_without_them():
    r = registry_of(TestPlugin("A"))
    fw = new_framework(r, profile(filter=pset("A")))
    exts = fw.enqueue_extensions()
    assert [e.name() for e in exts] == ["A"]
    (ev,) = exts[0].events_to_register()
    assert ev.event.is_wildcard()


def test_structural_interfaces_without_subclassing():
    class DuckFilter:
        def name(self):
            return "Duck"

        def filter(self, state, pod, node_info):
            return None

    r = registry_of()
    r.register("Duck", lambda a, h: DuckFilter())
    fw = new_framework(r, profile(filter=pset("Duck")))
    assert names(fw.filter_plugins) == ["Duck"]
    with pytest.raises(FrameworkError, match="does not extend ScorePlugin"):
        new_framework(r, profile(score=pset("Duck")))


def test_close_calls_plugins_close():
    closed = []

    class Closing(OnlyFilter):
        def close(self):
            closed.append(self.name())

    r = registry_of()
    r.register("C", lambda a, h: Closing("C"))
    fw = new_framework(r, profile(filter=pset("C")))
    fw.close()
    assert closed == ["C"]


# -- the workload-aware points (v1.37: PlacementGenerate, PlacementScore, PodGroupPostFilter) ----------
class _Placement(TestPlugin):
    """Generates and scores placements (upstream TopologyPlacement / PodGroupPodsCount shapes)."""

    def generate_placements(self, state, pod_group, parent_placement):
        return [], None

    def score_placement(self, state, pod_group, placement):
        return 0, None


class _GroupPostFilter(TestPlugin):
    def pod_group_post_filter(self, state, pod_group, scheduling_func):
        return None, None


def test_workload_points_need_their_interface():
    r = registry_of(TestPlugin("A"))
    for point, iface in (("placement_generate", "PlacementGeneratePlugin"), ("placement_score", "PlacementScorePlugin"),
                         ("pod_group_post_filter", "PodGroupPostFilterPlugin")):
        with pytest.raises(FrameworkError, match=f'^plugin "A" does not extend {iface} plugin$'):
            new_framework(r, profile(**{point: pset("A")}))
        with pytest.raises(FrameworkError, match=f'^{iface} "Missing" does not exist$'):
            new_framework(r, profile(**{point: pset("Missing")}))


def test_workload_points_filled_from_the_config_and_multipoint():
    r = registry_of(_Placement("P"), _GroupPostFilter("G"))
    fw = new_framework(r, profile(placement_score=pset(("P", 3)), multi_point=pset("G", ("P", 7))))
    assert names(fw.placement_score_plugins) == ["P"] and names(fw.pod_group_post_filter_plugins) == ["G"]
    assert names(fw.placement_generate_plugins) == ["P"]   # MultiPoint expands it there too
    # getValidScoreWeights for PlacementScore: the point's own weight first, 0 meaning 1
    assert fw.placement_score_plugin_weight == {"P": 3}
    assert fw.score_plugin_weight == {"G": 1, "P": 7}   # (TestPlugin scores too)
    lp = fw.list_plugins()
    assert [(p.name, p.weight) for p in lp.placement_score.enabled] == [("P", 3)]


def test_at_most_one_placement_generate_plugin():
    r = registry_of(_Placement("P1"), _Placement("P2"))
    with pytest.raises(FrameworkError, match='^at most one placement generate plugin is allowed for profile with '
                                             'scheduler name "s"$'):
        new_framework(r, profile("s", placement_generate=pset("P1", "P2")))


def test_placement_score_weight_overflow_and_name():
    big = (2**63 - 1) // 100
    r = registry_of(_Placement("A"), _Placement("B"))
    with pytest.raises(FrameworkError, match="^placement score plugins: total score of Score plugins could overflow$"):
        new_framework(r, profile(placement_score=pset(("A", big), ("B", 1))))
    r.register("Configured", lambda a, h: _Placement("Different"))
    with pytest.raises(FrameworkError, match='^placement score plugin "Different" is not configured with weight$'):
        new_framework(r, profile(placement_score=pset("Configured")))


def test_in_tree_plugins_on_the_workload_points():
    # NodeResourcesFit implements PlacementScorePlugin, DefaultPreemption and DynamicResources
    # PodGroupPostFilterPlugin upstream (v1.37.2); the default profile expands them there
    from fastsched.scheduler import Scheduler

    fw = Scheduler().profiles["default-scheduler"]
    assert names(fw.placement_score_plugins) == ["NodeResourcesFit"]
    assert fw.placement_score_plugin_weight == {"NodeResourcesFit": 1}
    assert names(fw.pod_group_post_filter_plugins) == ["DynamicResources", "DefaultPreemption"]
    assert names(fw.placement_generate_plugins) == []
