"""HTTP/1.1 over a plain socket, byte for byte: what http.client and httpx refuse to send (CR, LF, NUL, 1 MB)."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field


@dataclass
class RawResponse:
    """What came back: the status (None if the server closed without answering) and the header lines as bytes."""

    status: int | None
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytes = b""
    #: The server reset the connection (it stopped reading a request it had refused).
    reset: bool = False

    def header_values(self, name: bytes) -> list[bytes]:
        return [value for key, value in self.headers if key.lower() == name.lower()]


def request_bytes(method: str, target: bytes, headers: list[bytes], body: bytes = b"") -> bytes:
    """A request with ``headers`` (raw ``Name: value`` lines) after Host, and Connection: close."""
    lines = [method.encode() + b" " + target + b" HTTP/1.1", b"Host: 127.0.0.1", *headers, b"Connection: close"]
    if body or method == "POST":
        lines.append(b"Content-Length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def exchange(port: int, request: bytes, timeout: float = 15) -> RawResponse:
    """Send ``request`` on a new connection and read until the server closes it."""
    received = b""
    reset = False
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        try:
            connection.sendall(request)
        except (BrokenPipeError, ConnectionResetError):
            reset = True  # a server may answer and close before reading everything; read what it sent
        try:
            while chunk := connection.recv(65536):
                received += chunk
        except ConnectionResetError:
            reset = True
    return parse(received, reset)


def parse(received: bytes, reset: bool) -> RawResponse:
    head, _, body = received.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1."):
        return RawResponse(None, body=received, reset=reset)
    status_line, *lines = head.split(b"\r\n")
    headers = []
    for line in lines:
        name, _, value = line.partition(b":")
        headers.append((name, value.strip()))
    return RawResponse(int(status_line.split(b" ", 2)[1]), headers, body, reset)
