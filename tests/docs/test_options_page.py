"""docs/options.md's Flask column says what the Flask adapter reads: each cell is ``options.FLASK``'s spelling.

The page is written by hand, the spelling lives once in the core (``sessions.options.FLASK``) and the keys the
adapter accepts in ``blake2sign_web.flask.sessions``; this test fails, naming the cell to write, when they part.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from blake2sign_web.sessions import options
from blake2sign_web.stores import redis_stores as redis_store

pytest.importorskip("flask")

from blake2sign_web.flask.revocation import RedisStore
from blake2sign_web.flask.sessions import NOT_OFFERED, SECTION_KEYS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "options.md"
#: A row's label where it is not the option's key with spaces.
KEY_OF = {
    "oversize": "on_oversize",
    "largest session": "max_decompressed_size",
    "key prefix": "revocation_key_prefix",
    "when the store is down": "revocation_unavailable",
    "clock skew": "revocation_clock_skew",
    "earlier names until": "revocation_earlier_names_until",
}
#: Rows that are no ``Option``: the secrets (``FLASK.secrets``) and the store's user key (a ``RedisStore`` argument).
SECRETS = {
    "secret": options.FLASK.secrets.secret,
    "fallback secrets": options.FLASK.secrets.fallback.removesuffix("[{}]"),
}
STORE_ONLY = {"user key"}
CODE = re.compile(r"`([^`]+)`")
STORE_ARGUMENT = re.compile(r"RedisStore\((\w+)=\.\.\.\)")


def flask_cells() -> dict[str, str]:
    """Each table row's label and its Flask cell."""
    cells: dict[str, str] = {}
    column = None
    for line in PAGE.read_text().splitlines():
        if not line.startswith("|"):
            column = None
            continue
        row = [cell.strip() for cell in line.strip("|").split(" | ")]
        if row[0] == "option":
            column = row.index("Flask")
        elif column is not None and not set(line) <= set("|-: "):
            cells[row[0]] = row[column]
    return cells


def expected(label: str) -> str | None:
    """The first code span the cell must hold, or None for what the adapter does not read from app.config."""
    if label in SECRETS:
        return SECRETS[label]
    if label in STORE_ONLY:
        return None
    key = KEY_OF.get(label, label.replace(" ", "_"))
    name = options.FLASK.name(options.BY_KEY[key])
    return None if key in NOT_OFFERED or name.startswith("RedisStore ") else name  # a store argument: below


def test_every_option_has_a_row_in_the_flask_column() -> None:
    cells = flask_cells()
    keys = {KEY_OF.get(label, label.replace(" ", "_")) for label in cells}
    assert {option.key for option in options.OPTIONS} <= keys
    assert set(SECRETS) | STORE_ONLY <= set(cells)


@pytest.mark.parametrize("label", sorted(flask_cells()))
def test_each_flask_cell_is_the_adapters_spelling(label: str) -> None:
    cell = flask_cells()[label]
    written = CODE.findall(cell)
    name = expected(label)
    if name is not None:
        assert written, f"docs/options.md, row {label!r}: the Flask cell should be `{name}`"
        assert written[0] == name, f"docs/options.md, row {label!r}: the Flask cell should be `{name}`"
        return
    # Not a key of app.config: a RedisStore argument that exists, or "—" with its reason.
    store = STORE_ARGUMENT.fullmatch(written[0]) if written else None
    if store is not None:
        # Flask's RedisStore takes user_key and passes the rest to the core's blocking store.
        arguments = {*inspect.signature(RedisStore).parameters, *inspect.signature(redis_store.RedisStore).parameters}
        assert store.group(1) in arguments, cell
    else:
        assert cell.startswith("— ("), f"row {label!r}: '—' and why, or a RedisStore argument"
        assert cell.endswith(")"), f"row {label!r}: '—' and why, or a RedisStore argument"
    assert not any(code.startswith(options.FLASK.section) for code in written), f"row {label!r} names an unknown key"


def test_the_page_names_exactly_the_keys_the_adapter_accepts() -> None:
    section = options.FLASK.section
    named = {
        match.group(1)
        for cell in flask_cells().values()
        for match in re.finditer(re.escape(section) + r"\['(\w+)'\]", cell)
    }
    assert named == set(SECTION_KEYS)
