"""The generation stages behind one protocol, one implementation per backend, registered by name.

    capability extraction   seed instruction      -> CapabilitySpec
    environment synthesis   CapabilitySpec         -> EnvironmentBundle (tools, state, handler code)
    positive task           bundle x scenario      -> PositiveTask (T+ with its reference DAG)
    perturbation            PositiveTask x bundle  -> TaskPair (T- with overlay, witness, labels)

The pipeline and the flow know only `Generator`; `[backends]` in the config picks a backend per
stage. Only these contracts travel between stages: what a backend needs to remember between its own
stages it derives again (the builtin backend re-derives a pair's plan from its seed).

A run opens its generators once (`generators_for_run`), one per backend it uses, made from the run's
config; stages then look them up by name (`get_generator`).
See generators/README.md for adding a backend.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from abstaingen.errors import AbstaingenError
from abstaingen.generators.base import (
    GENERATORS,
    PROVIDER_ERROR,
    Generator,
    ItemLost,
    NotApplicable,
    PositiveTask,
    register_generator,
)

if TYPE_CHECKING:
    from abstaingen.config import GenerateConfig

_OPEN: dict[str, Generator] = {}  # the open run's generators, by backend


def make_generator(name: str, config: GenerateConfig) -> Generator:
    """A generator for a run with this config; a config the backend cannot work with is one clear error."""
    import abstaingen.generators.builtin.stages  # noqa: F401  (registers the builtin backend)
    import abstaingen.generators.llm.stages  # noqa: F401  (and the llm one)

    return GENERATORS.find(name)(config)


@asynccontextmanager
async def generators_for_run(config: GenerateConfig, stages: tuple[str, ...]) -> AsyncIterator[dict[str, Generator]]:
    """The run's generators, one per backend its stages use, open for `get_generator` until the run ends."""
    made: dict[str, Generator] = {}
    try:
        for backend in dict.fromkeys(config.backend_for(stage) for stage in stages):
            made[backend] = make_generator(backend, config)
        _OPEN.update(made)
        yield made
    finally:
        for opened, generator in made.items():
            _OPEN.pop(opened, None)
            await generator.aclose()


def get_generator(name: str) -> Generator:
    """The open run's generator of this backend."""
    if name not in _OPEN:
        raise AbstaingenError(f"no run has the {name} backend open (see generators_for_run)")
    return _OPEN[name]


__all__ = ["GENERATORS", "PROVIDER_ERROR", "Generator", "ItemLost", "NotApplicable", "PositiveTask", "generators_for_run",
           "get_generator", "make_generator", "register_generator"]
