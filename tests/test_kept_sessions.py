"""One sandbox per environment for the llm backend's draft checks: started once, lent to one check at a
time, replaced when it failed, closed when idle or when its event loop ends."""

from __future__ import annotations

import anyio
import pytest
from builtin_fixtures import builtin_bundle

from abstaingen.model import TaskOverlay
from abstaingen.sandboxes import kept
from abstaingen.sandboxes.backends import LocalBackend
from abstaingen.sandboxes.kept import KeptSessions
from abstaingen.sandboxes.session import SandboxError, SandboxSession

pytestmark = pytest.mark.component


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"started": 0, "closed": 0}

    class Counted(SandboxSession):
        async def __aenter__(self) -> SandboxSession:
            counts["started"] += 1
            return await super().__aenter__()

        async def __aexit__(self, *exc_info: object) -> None:
            counts["closed"] += 1
            await super().__aexit__(*exc_info)

    monkeypatch.setattr(kept, "SandboxSession", Counted)
    return counts


def test_checks_of_one_environment_share_one_sandbox_one_at_a_time(counted: dict[str, int]) -> None:
    bundle, other = builtin_bundle("travel"), builtin_bundle("banking")
    inside = []

    async def check(sessions: KeptSessions, which: object) -> None:
        async with sessions.session(which) as session:  # type: ignore[arg-type]
            inside.append(1)
            assert len(inside) == 1  # no other check holds this session now
            await session.reset(TaskOverlay())
            await anyio.sleep(0.05)
            inside.pop()

    async def main() -> None:
        sessions = KeptSessions(LocalBackend(), idle_s=60)
        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(check, sessions, bundle)
        assert counted == {"started": 1, "closed": 0}
        async with sessions.session(other):
            pass
        assert counted["started"] == 2  # another environment, another sandbox
        await sessions.aclose()
        assert counted["closed"] == 2

    anyio.run(main)


def test_a_failed_session_is_closed_and_the_next_check_gets_a_new_one(counted: dict[str, int]) -> None:
    bundle = builtin_bundle("travel")

    async def main() -> None:
        sessions = KeptSessions(LocalBackend(), idle_s=60)
        with pytest.raises(SandboxError):
            async with sessions.session(bundle):
                raise SandboxError("stopped answering")
        assert counted == {"started": 1, "closed": 1}
        async with sessions.session(bundle) as session:
            assert [t.name for t in await session.list_tools()]  # the new sandbox answers
        assert counted["started"] == 2
        await sessions.aclose()

    anyio.run(main)


def test_a_new_event_loop_gets_a_session_of_its_own(counted: dict[str, int]) -> None:
    """Prefect runs each stage's tasks on a loop of its own; a loop's lock or session is useless on another,
    even when the new loop happens to get the old one's id."""
    bundle = builtin_bundle("travel")
    sessions = KeptSessions(LocalBackend(), idle_s=60)

    async def use() -> None:
        async with sessions.session(bundle) as session:
            await session.reset(TaskOverlay())

    anyio.run(use)
    anyio.run(use)
    assert counted == {"started": 2, "closed": 2}


def test_an_idle_session_closes_itself_and_the_loop_ending_closes_the_rest(counted: dict[str, int]) -> None:
    bundle, other = builtin_bundle("travel"), builtin_bundle("banking")

    async def main() -> None:
        sessions = KeptSessions(LocalBackend(), idle_s=0.2)
        async with sessions.session(bundle):
            pass
        with anyio.fail_after(30):
            while counted["closed"] < 1:
                await anyio.sleep(0.05)
        slow = KeptSessions(LocalBackend(), idle_s=600)
        async with slow.session(other):
            pass  # left open: the loop's end must close it

    anyio.run(main)
    assert counted == {"started": 2, "closed": 2}
