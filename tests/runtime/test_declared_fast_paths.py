"""A class declares whether a vectorized path reproduces it (set when it is subclassed), instead of
the path importing the class back to check: Framework for Filter with nominated pods,
DefaultPreemption for the vectorized dry run."""
from fastsched.plugins.defaultpreemption.default_preemption import DRY_RUN_METHODS, DefaultPreemption
from fastsched.runtime.framework import Framework
from fastsched.runtime.nominated import FRAMEWORK_METHODS


def test_a_framework_subclass_keeps_the_vectorized_nominated_path_unless_it_overrides_what_it_reproduces():
    class Plain(Framework):
        def extra(self):
            return 1

    assert Framework.nominated_filters_vectorizable and Plain.nominated_filters_vectorizable
    for method in FRAMEWORK_METHODS:
        Overriding = type("Overriding", (Framework,), {method: lambda self, *a, **k: None})
        assert not Overriding.nominated_filters_vectorizable, method
        Deeper = type("Deeper", (Overriding,), {})
        assert not Deeper.nominated_filters_vectorizable, method


def test_a_default_preemption_subclass_keeps_the_vectorized_dry_run_unless_it_overrides_what_it_reproduces():
    class Plain(DefaultPreemption):
        pass

    assert DefaultPreemption.dry_run_vectorizable and Plain.dry_run_vectorizable
    for method in DRY_RUN_METHODS:
        Overriding = type("Overriding", (DefaultPreemption,), {method: lambda self, *a, **k: None})
        assert not Overriding.dry_run_vectorizable, method
