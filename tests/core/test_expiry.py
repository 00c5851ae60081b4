"""blake2sign_web.expiry: the one rule behind both frameworks' expiry accessors and the cookie's Max-Age."""

from __future__ import annotations

import pytest

from blake2sign_web.expiry import SessionEnd, session_end

#: A time with a fraction of a second, as time.time() gives: whole-second ages must still come back exact.
NOW = 1_795_000_000.734


def end(**options: object) -> SessionEnd:
    options.setdefault("default_age", 1000)
    options.setdefault("browser_session_default", False)
    return session_end(NOW, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "age", "max_age"),
    [
        ({}, 1000, 1000),
        ({"idle_timeout": 4}, 4, 4),
        ({"expiry": 5000}, 5000, 5000),  # an expiry of its own replaces the default age
        ({"expiry": 5000, "idle_timeout": 4}, 4, 4),
        ({"expiry": 0}, 1000, None),  # browser close: no Max-Age, the server's limit stays
        ({"expiry": 0, "idle_timeout": 4}, 4, None),
        ({"browser_session_default": True, "idle_timeout": 4}, 4, None),
        ({"browser_session_default": True, "expiry": 30}, 30, 30),
        ({"expiry_at": NOW + 99.5}, 100, 100),  # rounded up, as the token's expiry
        ({"expiry_at": NOW + 99.5, "absolute_timeout": 60}, 60, 60),
        ({"absolute_timeout": 60, "started": NOW - 50.5}, 10, 10),
        ({"expiry": -10}, -10, -10),  # ended
        ({"default_age": None, "browser_session_default": True}, None, None),
        ({"default_age": None, "browser_session_default": True, "absolute_timeout": 7}, 7, None),
    ],
)
def test_session_end(options: dict[str, object], age: int | None, max_age: int | None) -> None:
    result = end(**options)
    assert (result.age, result.max_age) == (age, max_age)
    if age is None:
        assert result.at is None
    else:
        assert result.at == pytest.approx(NOW + age, abs=1)


def test_seconds_and_a_date_together_are_refused() -> None:
    with pytest.raises(ValueError, match="expiry or expiry_at"):
        end(expiry=5, expiry_at=NOW + 5)
