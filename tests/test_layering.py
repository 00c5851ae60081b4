"""The package's layering, read from its source (no import runs): packages in one direction, no import circle,
no clock read in an adapter.

Rules live once in the framework-neutral core, adapters only translate (issue 28); the core is four packages
(issue 39). Three things keep that visible and are checked here, from the AST of every module:

- **One direction between packages** (``LAYERS``): the token layer (``signing``) imports nothing of ours but the
  exceptions and the dictionaries; the stores use the token layer; sessions and links use both and never each
  other; the edge verifiers' package (``edge``) reads links; the adapters and the public modules at the root use
  any of them. Nothing imports upward.

- **No import circle** inside ``blake2sign_web`` and ``example_project``: the graph of every import, at module
  level, in functions and under ``TYPE_CHECKING`` alike, has no cycle. A circle means two modules own one idea
  between them.
- **No clock read in the adapters** (``blake2sign_web/django``, ``blake2sign_web/starlette``): every rule about
  time (expiry, timeouts, idle refresh, record lifetimes, revocation clocks, the cookie's ``expires``) is the
  core's, which reads the clock. ``ALLOWED_CLOCKS`` lists the exceptions, each with its reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE = "blake2sign_web"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE
ADAPTERS = ("django", "starlette", "flask")
EXAMPLE = Path(__file__).resolve().parents[1] / "example_project"

#: Each part of the package and the parts it may import (besides itself). A module at the root that is not
#: listed is one of the public paths the docs import from (``chunks``, ``cookies``, ``files``, ``playlists``).
LAYERS: Mapping[str, frozenset[str]] = {
    "exceptions": frozenset(),
    "dictionaries": frozenset(),
    "signing": frozenset({"exceptions", "dictionaries"}),
    "stores": frozenset({"exceptions", "signing"}),
    "sessions": frozenset({"exceptions", "dictionaries", "signing", "stores"}),
    "links": frozenset({"exceptions", "signing", "stores"}),
    "edge": frozenset({"exceptions", "signing", "stores", "links"}),
}
#: The modules allowed directly under ``blake2sign_web/``: the package, its exceptions, and the public paths.
ROOT_MODULES = frozenset({"__init__", "exceptions", "chunks", "cookies", "files", "playlists"})

#: Functions that read a clock, by their full name.
CLOCKS = frozenset(
    {
        "time.time",
        "time.time_ns",
        "time.monotonic",
        "time.monotonic_ns",
        "time.perf_counter",
        "time.perf_counter_ns",
        "time.localtime",
        "time.gmtime",
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
        "datetime.datetime.today",
        "datetime.date.today",
        "django.utils.timezone.now",
        "django.utils.timezone.localdate",
        "django.utils.timezone.localtime",
        "anyio.current_time",
    }
)

#: (module, clock) -> why an adapter may read it: only measurement, never a rule about time.
ALLOWED_CLOCKS: Mapping[tuple[str, str], str] = {
    ("blake2sign_web.django.middleware", "time.perf_counter"): "Server-Timing: the session's load and save time",
    ("blake2sign_web.starlette.sessions", "time.perf_counter"): "Server-Timing: the session's load and save time",
}


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own, for its ``__init__.py``)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _base(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute name ``from <...> import`` names (``from .. import x`` in ``a.b.c``: ``a``)."""
    if not node.level:
        return node.module or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def imports(module: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The package's modules that ``module`` imports anywhere in its source, lazy imports included."""
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, path, node)
            # ``from a import b``: the module a.b when there is one, else a (b is a name in it).
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        elif isinstance(node, ast.Call) and _called_name(node) == "import_module":
            names = list(_dynamic_imports(module, tree, node))
        else:
            continue
        found.update(name for name in names if name in known and name != module)
    return found


def _called_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _dynamic_imports(module: str, tree: ast.Module, call: ast.Call) -> Iterator[str]:
    """What an ``import_module`` call can load: a constant name, or (the packages' lazy attributes) ``_LAZY``'s."""
    argument = call.args[0] if call.args else None
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        yield argument.value
        return
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(target, ast.Name) and target.id == "_LAZY" for target in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            for value in node.value.values:
                assert isinstance(value, ast.Constant), f"{module}: _LAZY's values must be module names"
                yield f"{module}.{value.value}"
            return
    if module.startswith(EXAMPLE.name + "."):
        return  # the example loads the session engine a visitor picks: Django's and ours, none of its own modules
    raise AssertionError(f"{module}: import_module() of a name this test cannot follow; add it here")


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    known = modules(root)
    return {module: imports(module, path, known) for module, path in known.items()}


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Every circle of ``graph``, each once: its strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def clock_reads(source: str) -> list[tuple[int, str]]:
    """(line, clock) for every use of a clock function in ``source``: called, or passed on to be called."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}  # local name -> what it is
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:  # ``import a.b`` binds ``a``
                    top = alias.name.partition(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)):
            name = _full_name(node, aliases)
            if name in CLOCKS:
                found.append((node.lineno, name))
    return sorted(found)


def _full_name(node: ast.expr, aliases: Mapping[str, str]) -> str | None:
    """``time.time`` for ``time.time`` after ``import time``, ``datetime.datetime.now`` for ``datetime.now``..."""
    attributes = []
    while isinstance(node, ast.Attribute):
        attributes.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(attributes)])


def test_the_cycle_finder_finds_circles() -> None:
    """The finder itself: a circle of two, one of three beside a tail, a module importing itself; none in a tree."""
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": set(), "d": {"e"}, "e": {"f"}, "f": {"d"}, "g": {"g"}}
    assert cycles(graph) == [["a", "b"], ["d", "e", "f"], ["g"]]
    assert cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_graph_holds_every_kind_of_import() -> None:
    """Module-level, relative, function-level, TYPE_CHECKING and lazy (``_LAZY``) imports are all edges."""
    graph = import_graph()
    assert "blake2sign_web.signing.signer" in graph["blake2sign_web.signing.serializer"]  # from .signer import ...
    assert "blake2sign_web.links.files" in graph["blake2sign_web.starlette.signed_urls"]  # from ..links import files
    assert "blake2sign_web.starlette.revocation" in graph["blake2sign_web.starlette.sessions"]  # in a function
    assert "blake2sign_web.signing.serializer" in graph["blake2sign_web.sessions.loading"]  # under TYPE_CHECKING
    assert "blake2sign_web.django.views" in graph["blake2sign_web.django"]  # _LAZY
    assert "blake2sign_web.django.checks" in graph["blake2sign_web.django.apps"]  # from . import (checks, ...)


def part(module: str) -> str:
    """The part of the package a module belongs to: ``blake2sign_web.sessions.token`` -> ``sessions``."""
    return module.split(".")[1] if "." in module else ""


def test_the_packages_import_in_one_direction() -> None:
    wrong = [
        f"{module} imports {target}"
        for module, targets in import_graph().items()
        if part(module) in LAYERS
        for target in sorted(targets)
        if part(target) != part(module) and part(target) not in LAYERS[part(module)]
    ]
    assert not wrong, "imports against the layers (move the shared part down):\n" + "\n".join(wrong)


def test_the_direction_check_sees_a_sideways_import(tmp_path: Path) -> None:
    package = tmp_path / PACKAGE
    for name, source in {
        "__init__.py": "",
        "sessions/__init__.py": "",
        "sessions/cookies.py": "from ..links.grants import grant\n",
        "links/__init__.py": "",
        "links/grants.py": "def grant(): ...\n",
    }.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(source)
    graph = import_graph(package)
    assert graph["blake2sign_web.sessions.cookies"] == {"blake2sign_web.links.grants"}
    assert "links" not in LAYERS[part("blake2sign_web.sessions.cookies")]


def test_the_root_holds_only_the_public_modules() -> None:
    found = {path.stem for path in ROOT.glob("*.py")}
    assert found <= ROOT_MODULES, f"modules at the root that belong in a package: {sorted(found - ROOT_MODULES)}"
    every_part = {path.name for path in ROOT.iterdir() if path.is_dir() and (path / "__init__.py").exists()}
    assert every_part - set(ADAPTERS) - {"templatetags"} == set(LAYERS) - {"exceptions"}


def test_no_import_circle_in_the_example_project() -> None:
    found = cycles(import_graph(EXAMPLE))
    assert not found, f"import circles in example_project: {found}"


def test_no_import_circle() -> None:
    found = cycles(import_graph())
    assert not found, f"import circles in {PACKAGE}: {found}"


def test_the_clock_scan_sees_every_spelling() -> None:
    """``time.time()``, ``perf_counter`` imported by name, ``datetime.now`` and Django's ``timezone.now``."""
    source = (
        "import time\nfrom time import perf_counter\nfrom datetime import datetime, timezone\n"
        "from django.utils import timezone as tz\nimport anyio\n"
        "a = time.time()\nb = perf_counter()\nc = datetime.now(timezone.utc)\nd = tz.now()\ne = f(clock=time.time)\n"
        "g = anyio.current_time()\nh = timezone.utc\n"
    )
    assert clock_reads(source) == [
        (6, "time.time"),
        (7, "time.perf_counter"),
        (8, "datetime.datetime.now"),
        (9, "django.utils.timezone.now"),
        (10, "time.time"),
        (11, "anyio.current_time"),
    ]


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_no_clock_read_in_the_adapters(adapter: str) -> None:
    """Every rule about time is the core's: an adapter calls a core function, which reads the clock."""
    reads = [
        f"{path.relative_to(ROOT.parent)}:{line}: {clock}"
        for module, path in modules().items()
        if module.startswith(f"{PACKAGE}.{adapter}")
        for line, clock in clock_reads(path.read_text())
        if (module, clock) not in ALLOWED_CLOCKS
    ]
    assert not reads, "clock read in an adapter (move the rule into the core):\n" + "\n".join(reads)


def test_every_allowed_clock_is_still_used() -> None:
    """An exception nobody needs any more is removed, so that the list says what is true."""
    known = modules()
    for module, clock in ALLOWED_CLOCKS:
        assert clock in {name for _, name in clock_reads(known[module].read_text())}, (module, clock)
