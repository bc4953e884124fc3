"""Registry: plugin name -> factory (upstream ``runtime/registry.go``).

A factory is called as ``factory(args, handle)`` where ``args`` is the plugin's configured args (a
typed args object for in-tree plugins, a dict for others, or None) and ``handle`` the framework.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping

from ..errors import FastschedError
from ..util.forking import ForkCopier

PluginFactory = Callable[[Any, Any], Any]


class RegistryError(FastschedError, ValueError):
    pass


class Registry(Mapping[str, PluginFactory]):
    """An insertion-ordered mapping of plugin names to factories."""

    def __fork__(self, copier: ForkCopier) -> "Registry":
        # a fork shares the registry: it is never changed once the profiles are built
        return self

    def __init__(self, factories: Mapping[str, PluginFactory] | None = None):
        self._factories: dict[str, PluginFactory] = {}
        for name, factory in (factories or {}).items():
            self.register(name, factory)

    def register(self, name: str, factory: PluginFactory) -> None:
        """Add a factory; a name already present is an error."""
        if not callable(factory):
            raise RegistryError(f"factory for plugin {name!r} is not callable")
        if name in self._factories:
            raise RegistryError(f"a plugin named {name} already exists")
        self._factories[name] = factory

    def unregister(self, name: str) -> None:
        if name not in self._factories:
            raise RegistryError(f"no plugin named {name} exists")
        del self._factories[name]

    def merge(self, other: Mapping[str, PluginFactory]) -> "Registry":
        """Add every factory of ``other``; fails, adding nothing, on the first duplicate name."""
        for name in other:
            if name in self._factories:
                raise RegistryError(f"a plugin named {name} already exists")
        for name, factory in other.items():
            self._factories[name] = factory
        return self

    def copy(self) -> "Registry":
        return Registry(self._factories)

    def __getitem__(self, name: str) -> PluginFactory:
        return self._factories[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._factories)

    def __len__(self) -> int:
        return len(self._factories)

    def __repr__(self) -> str:
        return f"Registry({list(self._factories)})"


def factory_with_args(cls: type) -> PluginFactory:
    """A factory for plugin classes whose constructor is ``cls(args, handle)``."""
    return lambda args, handle: cls(args, handle)
