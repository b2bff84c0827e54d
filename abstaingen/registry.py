"""The one way abstaingen keeps the things that play a role by name: generation backends, OOD backends,
reply judges, exporters, sandbox backends, witness checkers, precondition checks, the builtin backend's
scenario recipes, the llm backend's perturbation drafts and the OOD baselines.

A thing registers where it is defined (`@REGISTRY.register(name)`); lists of names (the funnel's stages,
the CLI's choices, error messages) are read from the registry, never typed out again. A package whose
implementations live in their own modules keeps its protocol and registry in `base.py` and loads the
implementations in the lookup its `__init__.py` offers, so no implementation imports the package that
loads it (tests/test_layers.py holds the import graph free of cycles).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping
from typing import Generic, TypeVar

from abstaingen.errors import AbstaingenError

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Registry(Mapping[K, V], Generic[K, V]):
    """Name -> thing, in the order things registered; read like a dict."""

    def __init__(self, role: str) -> None:
        self.role = role  # what the things are, for messages: "exporter", "reply judge", ...
        self._things: dict[K, V] = {}

    def register(self, name: K) -> Callable[[V], V]:
        """A decorator that files the thing it decorates under `name`; a name taken twice is a bug."""

        def add(thing: V) -> V:
            if name in self._things and self._things[name] is not thing:
                raise ValueError(f"two {self.role}s registered as {name!r}")
            self._things[name] = thing
            return thing

        return add

    def find(self, name: K) -> V:
        """The thing registered as `name`; any other name is one user error that lists the known ones."""
        if name not in self._things:
            raise AbstaingenError(f"unknown {self.role} {name!r} (known: {', '.join(map(str, sorted(self._things, key=str)))})")
        return self._things[name]

    def __getitem__(self, name: K) -> V:
        return self._things[name]

    def __iter__(self) -> Iterator[K]:
        return iter(self._things)

    def __len__(self) -> int:
        return len(self._things)

    def __repr__(self) -> str:
        return f"Registry({self.role!r}: {', '.join(map(str, self._things))})"
