"""The page's PNG charts (matplotlib): ratios by instrument, where the instructions go, revocation at scale."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import request_cost
from .breakdown import KIND_ORDER, SHORT
from .targets import (
    COLD_WHERE,
    DETERMINISTIC_TARGETS,
    DJANGO_OURS,
    DJANGO_OURS_DJANGO,
    DJANGO_THEIRS,
    HTTP_TARGETS,
    LABELS,
    STARLETTE_OURS,
    STARLETTE_THEIRS,
    TITLES,
    baseline_name,
)

INSTRUMENTS = [
    "callgrind, in process",
    "callgrind, server worker",
    COLD_WHERE,
    "clock, in process",
    "clock, HTTP (1 connection)",
    "clock, many users, 1 worker",
    "clock, many users, 4 workers",
]


def ratio_chart(data: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pairs = [(f, o, t) for f, o, t, _ in DETERMINISTIC_TARGETS]
    figure, axes = plt.subplots(len(pairs), 1, figsize=(9, 3.4 * len(pairs)), squeeze=False)
    colors = {"read": "#4c72b0", "write": "#dd8452"}
    for axis, (framework, ours, theirs) in zip(axes[:, 0], pairs, strict=True):
        rows = [t for t in data["targets"] if (t["framework"], t["ours"], t["theirs"]) == (framework, ours, theirs)]
        labels = [w for w in INSTRUMENTS if any(t["where"] == w for t in rows)]
        for offset, workload in ((-0.2, "read"), (0.2, "write")):
            ys, medians, low, high = [], [], [], []
            for i, where in enumerate(labels):
                t = next((t for t in rows if t["where"] == where and t["workload"] == workload), None)
                if t is None or t["median"] is None:
                    continue
                ys.append(i + offset)
                medians.append(t["median"])
                low.append(max(t["median"] - (t["low"] if t["low"] is not None else t["median"]), 0))
                high.append(max((t["high"] if t["high"] is not None else t["median"]) - t["median"], 0))
            axis.barh(
                ys, medians, height=0.38, xerr=[low, high], color=colors[workload], capsize=2, label=LABELS[workload]
            )
        for target, style, label in (
            (
                next(t for f, o, th, t in DETERMINISTIC_TARGETS if (f, o, th) == (framework, ours, theirs)),
                "--",
                "deterministic target",
            ),
            (next(t for f, o, th, t in HTTP_TARGETS if (f, o, th) == (framework, ours, theirs)), ":", "HTTP target"),
        ):
            axis.axvline(target, color="black", linestyle=style, linewidth=1, label=label)
        axis.set_yticks(range(len(labels)), labels, fontsize=8)
        axis.invert_yaxis()
        axis.set_xlim(0, 1.5)
        axis.set_xlabel("ours' added cost / the incumbent's (bars: median; whiskers: spread)", fontsize=8)
        axis.set_title(f"{TITLES[framework]}: {ours} / {theirs}", fontsize=10)
        axis.legend(fontsize=7, loc="best")
    figure.suptitle(f"What our sessions add, as a fraction of the incumbent's: {data['machine']}", fontsize=9)
    figure.tight_layout(rect=(0, 0, 1, 0.97))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)


def breakdown_chart(data: dict[str, Any], path: Path) -> bool:
    """Stacked bars: instructions each engine adds per request by kind of work, in process and on a server."""
    cg = data["parts"].get("callgrind", {})
    panels = [(k, t) for k, t in (("in_process", "in process"), ("server", "on a server worker")) if cg.get(k)]
    if not panels:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    engines = {
        "django": [DJANGO_THEIRS, DJANGO_OURS_DJANGO, DJANGO_OURS, request_cost.DJANGO_COOKIE_PROBE],
        "starlette": [STARLETTE_THEIRS, STARLETTE_OURS, request_cost.STARLETTE_COOKIE_PROBE],
    }
    figure, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 7), squeeze=False, sharey=True)
    palette = plt.get_cmap("tab20")
    labels: list[str] = []
    for axis, (key, title) in zip(axes[0], panels, strict=True):
        bars_: list[tuple[str, dict[str, float]]] = []
        for framework, names in engines.items():
            by_workload = cg[key].get(framework)
            if not isinstance(by_workload, dict):
                continue
            base = baseline_name(framework)
            for workload in ("api", "read", "write"):
                rows = by_workload.get(workload) or {}
                for name in names:
                    if name in rows and base in rows and "groups" in rows[name]:
                        mine, theirs = rows[name]["groups"], rows[base]["groups"]
                        added = {k: mine.get(k, 0.0) - theirs.get(k, 0.0) for k in KIND_ORDER}
                        bars_.append((f"{TITLES[framework]} {LABELS[workload]}: {name}", added))
        labels = [b[0] for b in bars_]
        for index, kind in enumerate(KIND_ORDER):
            left = [sum(max(v[k], 0.0) for k in KIND_ORDER[:index]) / 1000 for _, v in bars_]
            widths = [max(v[kind], 0.0) / 1000 for _, v in bars_]
            axis.barh(range(len(bars_)), widths, left=left, color=palette(index), label=SHORT[kind], height=0.7)
        axis.set_yticks(range(len(bars_)), labels, fontsize=7)
        axis.invert_yaxis()
        axis.set_xlabel("thousands of instructions added per request (callgrind)", fontsize=8)
        axis.set_title(title, fontsize=9)
    axes[0][-1].legend(fontsize=7, loc="lower right")
    figure.suptitle(f"Where a session's added instructions go: {data['machine']}", fontsize=9)
    figure.tight_layout(rect=(0, 0, 1, 0.96))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return True


def scale_chart(data: dict[str, Any], path: Path) -> bool:
    """Checks per second, and their median and p99 latency, by application processes: one Redis and the cluster."""
    part = data["parts"].get("revocation_scale") or {}
    throughput = part.get("throughput") or {}
    if not throughput:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    figure, (rate_axis, latency_axis) = plt.subplots(1, 2, figsize=(10, 4))
    colors = {"one Redis": "#4c72b0", "cluster": "#dd8452"}
    for name, by_count in throughput.items():
        counts = sorted(by_count, key=int)
        xs = [int(c) for c in counts]
        color = colors.get(name, "#55a868")
        rate_axis.plot(xs, [by_count[c]["checks_per_s"] for c in counts], marker="o", color=color, label=name)
        latency_axis.plot(
            xs, [by_count[c]["median_us"] / 1000 for c in counts], marker="o", color=color, label=f"{name}, median"
        )
        latency_axis.plot(
            xs,
            [by_count[c]["p99_us"] / 1000 for c in counts],
            marker="s",
            linestyle="--",
            color=color,
            label=f"{name}, p99",
        )
    every = sorted({int(c) for by_count in throughput.values() for c in by_count})
    for axis in (rate_axis, latency_axis):
        axis.set_xticks(every)
        axis.set_xlabel("application processes", fontsize=8)
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=7, loc="best")
    rate_axis.set_ylim(bottom=0)
    rate_axis.set_ylabel("revocation checks per second (all processes)", fontsize=8)
    rate_axis.set_title("Throughput", fontsize=10)
    latency_axis.set_yscale("log")
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    latency_axis.yaxis.set_major_formatter(plain)
    latency_axis.yaxis.set_minor_formatter(plain)
    latency_axis.tick_params(axis="y", which="minor", labelsize=7)
    latency_axis.set_ylabel("latency of one check under that load (ms)", fontsize=8)
    latency_axis.set_title("Latency", fontsize=10)
    s = part.get("settings", {})
    figure.suptitle(
        f"Revocation checks, one Redis and a 3-primary cluster, {s.get('concurrency')} in flight per process\n"
        f"{part.get('machine', data['machine'])} (clients and servers share the cores: a floor)"
        + (" - quick smoke run" if s.get("quick") else ""),
        fontsize=8,
    )
    figure.tight_layout(rect=(0, 0, 1, 0.92))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return True
