"""A loopback TCP proxy that a test can cut and restore: a network partition between
one kapi server and etcd, while etcd itself keeps serving everyone else.

    proxy = TcpProxy.start(etcd.client_port)   # kapi gets --etcd-servers proxy.url
    proxy.cut()      # open connections are closed, new ones are closed at once
    proxy.restore()  # connections are forwarded again
    proxy.close()
"""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass, field

from kapi.server import free_port


@dataclass
class TcpProxy:
    target_port: int
    port: int
    _listener: socket.socket
    _cut: threading.Event = field(default_factory=threading.Event)
    _closed: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _open: set[socket.socket] = field(default_factory=set)

    @classmethod
    def start(cls, target_port: int) -> TcpProxy:
        port = free_port()
        listener = socket.create_server(("127.0.0.1", port))
        listener.settimeout(0.2)
        proxy = cls(target_port, port, listener)
        threading.Thread(target=proxy._accept, daemon=True).start()
        return proxy

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cut(self) -> None:
        """Close every forwarded connection; until :meth:`restore`, refuse new ones."""
        self._cut.set()
        with self._lock:
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._open.clear()

    def restore(self) -> None:
        self._cut.clear()

    def close(self) -> None:
        self._closed.set()
        self.cut()
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self._cut.is_set():
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=2)
            except OSError:
                client.close()
                continue
            client.settimeout(None)
            upstream.settimeout(None)
            with self._lock:
                self._open.update((client, upstream))
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            with self._lock:
                self._open.discard(source)
                self._open.discard(sink)
            source.close()  # the other direction's thread closes ``sink``
