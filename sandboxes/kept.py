"""Sandbox sessions kept open per environment, for the many short checks of the llm backend's drafts.

Every T+ and T- draft is replayed in its environment; starting a sandbox for each costs more than the
replay (about 0.5 s in bwrap, more in Docker). `KeptSessions.session(bundle)` lends the environment's
running session to one check at a time and starts it on first use. A session is entered and left by a
task of its own (its task groups must be), which closes it once no check has borrowed it for
`idle_s`, or when its event loop ends; a check whose sandbox failed closes it, and the next starts a
new one. Each borrower resets the session (`reset` or `replay` does), so nothing carries over."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from abstaingen.model import EnvironmentBundle, TaskOverlay
from abstaingen.sandboxes.backends import SandboxBackend
from abstaingen.sandboxes.session import CallOutcome, SandboxError, SandboxSession
from abstaingen.store import bundle_in_scratch


@dataclass
class _Kept:
    folder: Path
    loop: asyncio.AbstractEventLoop  # its lock and events belong to this loop
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    session: SandboxSession | None = None
    used: asyncio.Event = field(default_factory=asyncio.Event)  # set on each loan: the idle clock restarts
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    owner: asyncio.Task[None] | None = None


def _content(bundle: EnvironmentBundle) -> str:
    return hashlib.sha256(bundle.model_dump_json().encode()).hexdigest()


T = TypeVar("T")


async def _examples(bundle: EnvironmentBundle, sessions: KeptSessions) -> dict[str, CallOutcome]:
    found = {}
    async with sessions.session(bundle) as session:
        for tool in bundle.tools:
            if tool.examples:
                await session.reset(TaskOverlay())
                found[tool.name] = await session.call(tool.name, tool.examples[0])
    return found


class KeptSessions:
    def __init__(self, backend: SandboxBackend, idle_s: float = 5.0):
        self.backend = backend
        self.idle_s = idle_s
        self._kept: dict[tuple[int, str], _Kept] = {}  # by event loop and bundle content
        self._known: dict[tuple[str, str], object] = {}  # by bundle content and what was found out
        self._folders = ExitStack()

    @asynccontextmanager
    async def session(self, bundle: EnvironmentBundle) -> AsyncIterator[SandboxSession]:
        """The bundle's session, for this check alone; SandboxError when it cannot start or fails."""
        kept = self._kept_for(bundle)
        async with kept.lock:
            if kept.session is None:
                await self._start(kept)
            assert kept.session is not None
            kept.used.set()
            try:
                yield kept.session
            except SandboxError:
                await self._close(kept)
                raise

    async def once(self, bundle: EnvironmentBundle, what: str,
                   find: Callable[[EnvironmentBundle, KeptSessions], Awaitable[T]]) -> T:
        """`find(bundle, self)`, run once per environment and kept: what every draft of an environment asks
        the sandbox the same way (the tools' example calls, S1's changeable records)."""
        key = (_content(bundle), what)
        if key not in self._known:
            self._known[key] = await find(bundle, self)
        return self._known[key]  # type: ignore[return-value]

    async def examples(self, bundle: EnvironmentBundle) -> dict[str, CallOutcome]:
        """Each tool called once with its first example on the initial state, by tool name."""
        return await self.once(bundle, "examples", _examples)

    def _kept_for(self, bundle: EnvironmentBundle) -> _Kept:
        loop = asyncio.get_running_loop()
        key = (id(loop), _content(bundle))
        if key not in self._kept or self._kept[key].loop is not loop:  # an ended loop's id may come back
            self._kept[key] = _Kept(folder=self._folders.enter_context(bundle_in_scratch(bundle)), loop=loop)
        return self._kept[key]

    async def _start(self, kept: _Kept) -> None:
        kept.stop, kept.closed = asyncio.Event(), asyncio.Event()
        started: asyncio.Future[SandboxSession] = asyncio.get_running_loop().create_future()
        kept.owner = asyncio.create_task(self._own(kept, started))
        kept.session = await started

    async def _own(self, kept: _Kept, started: asyncio.Future[SandboxSession]) -> None:
        try:
            async with SandboxSession(kept.folder, self.backend) as session:
                started.set_result(session)
                while not kept.stop.is_set():
                    kept.used.clear()
                    try:
                        await asyncio.wait_for(kept.used.wait(), self.idle_s)
                    except TimeoutError:
                        if not kept.lock.locked():
                            break
        except Exception as exc:  # noqa: BLE001 - the borrower hears of it; this task must not die loudly
            if not started.done():
                started.set_exception(exc if isinstance(exc, SandboxError) else SandboxError(str(exc)))
        finally:
            kept.session = None
            kept.closed.set()

    async def _close(self, kept: _Kept) -> None:
        kept.stop.set()
        kept.used.set()
        await kept.closed.wait()

    async def aclose(self) -> None:
        """Close the sessions of this event loop and remove every folder (the other loops' sessions
        close when they idle or their loop ends)."""
        loop = asyncio.get_running_loop()
        for kept in self._kept.values():
            if kept.loop is loop and kept.session is not None:
                await self._close(kept)
        self._kept.clear()
        self._folders.close()
