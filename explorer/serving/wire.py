"""One exchange with an engine under one deadline and one size cap, both enforced while the bytes arrive.

httpx's timeouts are per operation: a read timeout of 20 s is met by a server that sends one byte every 2 s, so
an answer (its status line and headers included) could take hours; and ``response.content`` reads the whole
body before anyone can look at its size. So every socket under the client belongs to :class:`_Backend`, whose
reads, writes and connects wait at most until the exchange's deadline (a context variable set around the
exchange: :func:`exchange`), and the body is read chunk by chunk and dropped as soon as it passes its cap: an
endless chunked answer costs at most the cap in memory.
"""

from __future__ import annotations

import contextvars
import ssl
import time
from collections.abc import Iterable, Mapping

import httpcore
import httpx

from explorer.serving.errors import ServedError

__all__ = ["ERROR_BYTES", "exchange", "transport"]

ERROR_BYTES = 64 * 2**10  # of an error answer read at most (its excerpt is all that is shown)
SocketOption = tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]  # httpcore's
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("explorer_serving_deadline", default=None)


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` cut to what is left of the exchange's deadline; ``error`` once none is left."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("the exchange's deadline passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A socket whose every wait ends by the exchange's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> object:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's own sockets, each wrapped in :class:`_Stream`."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[SocketOption] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_tcp(host, port, _left(timeout, httpcore.ConnectTimeout), local_address,
                                               socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[SocketOption] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, _left(timeout, httpcore.ConnectTimeout),
                                                       socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def transport(limits: httpx.Limits) -> httpx.HTTPTransport:
    """httpx's transport over :class:`_Backend` (its pool is replaced: httpx takes no network backend itself;
    tests/test_serving_wire.py fails if a new httpx stops using it). Made once per process: building one loads
    the TLS roots twice, a fraction of a second."""
    made = httpx.HTTPTransport(limits=limits, trust_env=False)
    made._pool = httpcore.ConnectionPool(  # noqa: SLF001
        ssl_context=httpx.create_ssl_context(trust_env=False), max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
        network_backend=_Backend())
    return made


def _too_large(who: str, cap: int, declared: int | None = None) -> ServedError:
    size = f"{declared / 2**20:,.0f} MB, more than" if declared is not None else "more than"
    return ServedError(f"{who} answered {size} the {cap / 2**20:.0f} MB this explorer reads from one answer (it "
                       "stopped reading there): ask for less.", "garbage")


def exchange(client: httpx.Client, method: str, url: str, *, body: Mapping[str, object] | None,
             headers: Mapping[str, str], wait: float, connect: float, cap: int, who: str) -> tuple[int, bytes]:
    """The status and body of one request, all of it within ``wait`` seconds from now (connect, send, headers and
    body together; the connection alone within ``connect``), the body at most ``cap`` bytes (an error answer's
    first :data:`ERROR_BYTES` only). httpx's own exceptions go through (the caller words them)."""
    reset = _DEADLINE.set(time.monotonic() + wait)
    try:
        with client.stream(method, url, json=body, headers=headers,
                           timeout=httpx.Timeout(wait, connect=min(connect, wait))) as response:
            limit = cap if response.status_code < 400 else ERROR_BYTES
            declared = response.headers.get("content-length", "")
            if response.status_code < 400 and declared.isdigit() and int(declared) > cap:
                raise _too_large(who, cap, int(declared))
            got = bytearray()
            for chunk in response.iter_bytes():
                got += chunk
                if len(got) > limit:
                    if response.status_code < 400:
                        raise _too_large(who, cap)
                    break
            return response.status_code, bytes(got[:limit])
    finally:
        _DEADLINE.reset(reset)
