"""The HLS benchmark runs: both servers serve the playlist and its segments, signed (every URI carrying the
link's query, every answer a whole file) and plain, and their CPU time is read."""

from __future__ import annotations

import pytest

from example_project.bench import hls

pytestmark = pytest.mark.server


def test_one_round_of_the_hls_benchmark() -> None:
    data = hls.run(rounds=1, passes=1)
    assert set(data["results"]) == {"Django", "Starlette"}
    for found in data["results"].values():
        assert found["requests_per_workload"] == hls.SEGMENTS + 1
        assert found["signed_median_s"] > 0
        assert found["plain_median_s"] > 0
    assert "signed / plain" in hls.report(data)
