"""In-tree plugins, one package per plugin (named as upstream's directories)."""
from .registry import IN_TREE_PLUGINS, in_tree_registry

__all__ = ["IN_TREE_PLUGINS", "in_tree_registry"]
