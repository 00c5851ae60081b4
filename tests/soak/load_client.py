"""The soak's load without wrk: the same shopper as shopper.lua, in Python threads, in a process of its own.

    python -m tests.soak.load_client URL SECONDS CONNECTIONS COOKIE_NAME COOKIE LINK

Prints one ``SOAK-RESULT {json}`` line with the figures shopper.lua prints. Its requests per second are
bounded by one Python process as well as by the server: compare them only with runs of the same
generator (the summary names it).
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
import time
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlsplit

ITEMS = ("tea", "cup", "pot", "spoon", "tray")


class Shopper(threading.Thread):
    """One connection's worth of requests, in shopper.lua's order, until ``deadline``."""

    def __init__(self, host: str, port: int, deadline: float, cookie_name: str, cookie: str, link: str) -> None:
        super().__init__(daemon=True)
        self.address = (host, port)
        self.deadline = deadline
        self.cookie_name, self.cookie, self.link = cookie_name, cookie, link
        self.latencies: list[float] = []
        self.counts = {"succeeded": 0, "non_2xx": 0, "cookies_set": 0, "sessions_lost": 0}
        self.socket_errors = {"connect": 0, "read": 0, "write": 0, "timeout": 0}

    def next_request(self, sent: int) -> tuple[str, str, dict[str, str]]:
        headers = {"Cookie": f"{self.cookie_name}={self.cookie}"}
        step = sent % 5
        if step == 0:
            return "POST", f"/cart/add?item={ITEMS[sent % len(ITEMS)]}", {**headers, "Content-Length": "0"}
        if step == 1:
            return "GET", self.link, headers
        if step == 2:
            return "GET", self.link, {**headers, "Range": f"bytes={sent % 1000}-{sent % 1000 + 1023}"}
        return "GET", "/cart", headers

    def run(self) -> None:
        connection = http.client.HTTPConnection(*self.address, timeout=10)
        sent = 0
        while time.monotonic() < self.deadline:
            sent += 1
            method, target, headers = self.next_request(sent)
            started = time.perf_counter()
            try:
                connection.request(method, target, headers=headers)
                response = connection.getresponse()
                response.read()
            except TimeoutError:
                self.socket_errors["timeout"] += 1
                connection.close()
                continue
            except ConnectionRefusedError:
                self.socket_errors["connect"] += 1
                connection.close()
                continue
            except (OSError, http.client.HTTPException):
                self.socket_errors["read"] += 1
                connection.close()
                continue
            self.latencies.append(time.perf_counter() - started)
            self.counts["succeeded" if 200 <= response.status < 300 else "non_2xx"] += 1
            set_cookie = response.getheader("Set-Cookie")
            if set_cookie:
                self.counts["cookies_set"] += 1
                morsel = SimpleCookie(set_cookie).get(self.cookie_name)
                if morsel is not None and morsel.value not in ("", "null"):
                    self.cookie = morsel.value
                else:
                    self.counts["sessions_lost"] += 1
        connection.close()


def run(url: str, seconds: float, connections: int, cookie_name: str, cookie: str, link: str) -> dict[str, Any]:
    parts = urlsplit(url)
    started = time.monotonic()
    shoppers = [
        Shopper(parts.hostname or "127.0.0.1", parts.port or 80, started + seconds, cookie_name, cookie, link)
        for _ in range(connections)
    ]
    for shopper in shoppers:
        shopper.start()
    for shopper in shoppers:
        shopper.join()
    duration = time.monotonic() - started
    latencies = sorted(latency for shopper in shoppers for latency in shopper.latencies)

    def percentile(share: float) -> float:
        return latencies[min(int(share * len(latencies)), len(latencies) - 1)] * 1000 if latencies else 0.0

    result: dict[str, Any] = {"duration_s": duration, "status_errors": 0}
    for name in ("succeeded", "non_2xx", "cookies_set", "sessions_lost"):
        result[name] = sum(shopper.counts[name] for shopper in shoppers)
    result["requests"] = result["succeeded"] + result["non_2xx"]
    result["status_errors"] = result["non_2xx"]
    result["socket_errors"] = {
        name: sum(shopper.socket_errors[name] for shopper in shoppers) for name in shoppers[0].socket_errors
    }
    result["latency_ms"] = {"p50": percentile(0.5), "p90": percentile(0.9), "p99": percentile(0.99)}
    result["latency_ms"]["max"] = latencies[-1] * 1000 if latencies else 0.0
    return result


if __name__ == "__main__":
    url, seconds, connections, cookie_name, cookie, link = sys.argv[1:7]
    print("SOAK-RESULT " + json.dumps(run(url, float(seconds), int(connections), cookie_name, cookie, link)))
