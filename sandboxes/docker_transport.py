"""MCP over the stdio of a container created with the Docker SDK.

The container is created with stdin open, attached before it starts (so no output is lost), and
always removed when the session ends, however it ends. Docker multiplexes the container's stdout
and stderr on the attach socket in frames (an 8-byte header: stream id, then the payload size);
stdout carries the JSON-RPC lines, stderr goes to the grader's error log.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any, TextIO

import anyio
import docker
import docker.errors
import mcp_types as types
from mcp.client._transport import TransportStreams as Streams
from mcp.shared.message import SessionMessage

STDERR = 2
MAX_STDERR_BYTES = 2**20  # what the grader keeps of a container's stderr; the rest is dropped


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:  # the session surfaces it as a protocol error
        return exc


@asynccontextmanager
async def container_stdio(client: docker.DockerClient, create: dict[str, Any], errlog: TextIO) -> AsyncIterator[Streams]:
    container = await anyio.to_thread.run_sync(lambda: client.containers.create(stdin_open=True, **create))
    try:
        attached = await anyio.to_thread.run_sync(lambda: container.attach_socket(
            params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}))
        await anyio.to_thread.run_sync(container.start)
        raw: socket.socket = attached._sock  # the SDK wraps the socket; asyncio needs the socket itself
        raw.setblocking(False)
        reader, writer = await asyncio.open_connection(sock=raw, limit=64 * 2**20)
        incoming_send, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        outgoing, outgoing_receive = anyio.create_memory_object_stream[SessionMessage](0)

        async def read_frames() -> None:
            pending, stderr_left = b"", MAX_STDERR_BYTES
            async with incoming_send:
                try:
                    while True:
                        header = await reader.readexactly(8)
                        payload = await reader.readexactly(int.from_bytes(header[4:], "big"))
                        if header[0] == STDERR:
                            if stderr_left > 0:
                                errlog.write(payload[:stderr_left].decode("utf-8", errors="replace"))
                                if len(payload) >= stderr_left:
                                    errlog.write("\n[stderr cut here: the container wrote more]\n")
                            stderr_left -= len(payload)
                            continue
                        *lines, pending = (pending + payload).split(b"\n")
                        for line in lines:
                            if line.strip():
                                await incoming_send.send(_parse(line))
                except (asyncio.IncompleteReadError, ConnectionError, anyio.ClosedResourceError,
                        anyio.BrokenResourceError):
                    return  # the container went away: the session sees the stream close

        async def write_lines() -> None:
            async with outgoing_receive:
                async for message in outgoing_receive:
                    writer.write(message.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n")
                    await writer.drain()

        async with anyio.create_task_group() as group:
            group.start_soon(read_frames)
            group.start_soon(write_lines)
            try:
                yield incoming, outgoing
            finally:
                group.cancel_scope.cancel()
                writer.close()
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(_remove, container)


def remove_now(container: Any) -> None:
    with suppress(docker.errors.NotFound):
        container.remove(force=True)


def _remove(container: Any) -> None:
    """Remove the container; if the engine does not manage in time, keep trying in the background.

    A failed removal must not end the run: the session is over either way, and a leftover container
    is counted and swept by `DockerBackend.sweep` when the run ends."""
    try:
        remove_now(container)
    except Exception as exc:  # noqa: BLE001 - timeouts come from requests, refusals from the engine
        LEFTOVERS.append(f"{container.name}: {type(exc).__name__}: {exc}"[:300])
        threading.Thread(target=_remove_later, args=(container,), daemon=True).start()


LEFTOVERS: list[str] = []  # containers whose removal failed at first, with why


def _remove_later(container: Any) -> None:
    for delay in (1, 5, 15):
        time.sleep(delay)
        try:
            remove_now(container)
            return
        except Exception:  # noqa: BLE001 - tried again after the delay, then left for the sweep
            continue
