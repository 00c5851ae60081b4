"""Every session option through both frameworks: one bad value each, refused by the core's rule in each one's words.

Starlette's ``SessionMiddleware`` raises at construction, naming its argument; Django's system checks report the
option's check id, naming the setting. Neither names the other's option, and both come from ``options.OPTIONS``:
an option added there without a bad value here fails ``test_every_option_with_a_rule_has_a_case``.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import run_checks
from django.http import HttpResponse
from django.test import override_settings
from starlette.applications import Starlette

from blake2sign_web.django import conf
from blake2sign_web.sessions import options
from blake2sign_web.sessions.cookie_attributes import prefix_fix
from blake2sign_web.sessions.cookies import morsel_overhead
from blake2sign_web.sessions.options import BY_KEY, DJANGO, OPTIONS, STARLETTE, Option
from blake2sign_web.starlette import SessionMiddleware

SECRET = "options-test-secret-0123456789abcdefghijklmnopqrstuvwxyz"

#: A value each option refuses.
BAD: dict[str, Any] = {
    "hasher": "md5",
    "compression": "gzip",
    "dictionary": 7,
    "compression_threshold": -1,
    "tag_size": 20,
    "format": 3,
    "max_decompressed_size": 100,
    "typed": 1,
    "encrypt": 1,
    "decrypt": "yes",
    "compress_encrypted": None,
    "cookie_name": "a;b",
    "path": "/\r\nX: 1",
    "domain": "example.com; Secure",
    "same_site": "sometimes",
    "partitioned": "yes",
    "cookie_size_limit": 8192,
    "on_oversize": "truncate",
    "max_age": "14d",
    "chunked": 1,
    "max_chunks": 10,
    "idle_timeout": 0,
    "absolute_timeout": 2**32,
    "migrate": "yes",
    "server_timing": "yes",
    "revocation_unavailable": "maybe",
    "revocation_clock_skew": -1,
    "revocation_key_prefix": "a:b",
    "revocation_earlier_names_until": "31/01/2027",
}
#: Starlette arguments that belong to another object (RedisStore's key_prefix is checked when it is built).
NOT_AN_ARGUMENT = {"revocation_key_prefix"}
#: Django checks SESSION_COOKIE_SAMESITE's value itself when it writes the cookie (a ValueError, as Django's own).
DJANGOS_OWN = {"same_site"}


def with_rules(framework: str) -> list[Option]:
    """The options with a rule that the framework's users set, each with a bad value in BAD."""
    if framework == "starlette":
        return [o for o in OPTIONS if o.key in BAD and o.starlette is not None and o.key not in NOT_AN_ARGUMENT]
    return [o for o in OPTIONS if o.key in BAD and o.django is not None and o.key not in DJANGOS_OWN]


def test_every_option_with_a_rule_has_a_case() -> None:
    assert set(BAD) == {option.key for option in OPTIONS if option.must or option.problem}


@pytest.mark.parametrize("spelling", [STARLETTE, DJANGO], ids=["starlette", "django"])
@pytest.mark.parametrize("key", list(BAD))
def test_the_core_names_the_option_as_the_framework_writes_it(key: str, spelling: options.Spelling) -> None:
    [problem] = options.problems({key: BAD[key]}, spelling)
    option = BY_KEY[key]
    assert problem.key == key
    assert problem.check_id == option.check_id
    assert problem.message.startswith(spelling.name(option))
    assert repr(BAD[key]) in problem.message


@pytest.mark.parametrize("option", with_rules("starlette"), ids=lambda option: option.key)
def test_starlette_refuses_a_bad_argument(option: Option) -> None:
    argument = STARLETTE.written(option)
    with pytest.raises(option.error) as raised:
        SessionMiddleware(Starlette(), secret_key=SECRET, **{argument: BAD[option.key]})
    message = str(raised.value)
    assert message.startswith(f"SessionMiddleware {argument} ")
    assert "BLAKE2SIGN_WEB" not in message
    assert "SESSION_COOKIE_" not in message


@pytest.mark.parametrize("option", with_rules("django"), ids=lambda option: option.key)
def test_django_reports_a_bad_setting_under_its_check_id(option: Option) -> None:
    setting = DJANGO.written(option)
    overrides = (
        {setting: BAD[option.key]}
        if setting.startswith("SESSION_")
        else {"BLAKE2SIGN_WEB": {"SESSIONS": {setting: BAD[option.key]}}}
    )
    with override_settings(**overrides):
        found = [m for m in run_checks() if m.id and m.id.startswith("blake2sign_web")]
    assert [m.id for m in found] == [option.check_id]
    assert found[0].msg.startswith(DJANGO.name(option))
    assert "SessionMiddleware" not in found[0].msg


# The rules between options, through both frameworks.

RULES = [
    # (name, Starlette's arguments, Django's settings, check id, Starlette's fix, Django's fix)
    (
        "partitioned-without-secure",
        {"partitioned": True},
        {"SESSION_COOKIE_PARTITIONED": True, "SESSION_COOKIE_SECURE": False},
        "blake2sign_web.E024",
        "https_only=True",
        "SESSION_COOKIE_SECURE = True",
    ),
    (
        "max-chunks-without-chunked",
        {"max_chunks": 3},
        {"BLAKE2SIGN_WEB": {"SESSIONS": {"MAX_CHUNKS": 3}}},
        "blake2sign_web.E021",
        "chunked=True",
        "CHUNKED = True",
    ),
    (
        "typed-with-format-1",
        {"typed": True, "format": 1},
        {"BLAKE2SIGN_WEB": {"SESSIONS": {"TYPED": True, "FORMAT": 1}}},
        "blake2sign_web.E019",
        "format=2",
        "FORMAT 2",
    ),
    (
        "same-site-none-without-secure",
        {"same_site": "none"},
        {"SESSION_COOKIE_SAMESITE": "None", "SESSION_COOKIE_SECURE": False},
        "blake2sign_web.E011",
        "https_only=True",
        "SESSION_COOKIE_SECURE = True",
    ),
]


@pytest.mark.parametrize(("name", "starlette", "django", "check_id", "starlette_fix", "django_fix"), RULES)
def test_a_rule_between_options_names_the_fix_in_each_framework(
    name: str,
    starlette: dict[str, Any],
    django: dict[str, Any],
    check_id: str,
    starlette_fix: str,
    django_fix: str,
) -> None:
    with pytest.raises(ValueError, match=r"^SessionMiddleware ") as raised:
        SessionMiddleware(Starlette(), secret_key=SECRET, **starlette)
    assert starlette_fix in str(raised.value)
    assert django_fix not in str(raised.value)
    with override_settings(**django):
        found = [m for m in run_checks() if m.id and m.id.startswith("blake2sign_web")]
    assert [m.id for m in found] == [check_id]
    assert django_fix in found[0].msg
    assert starlette_fix not in found[0].msg


def test_partitioned_with_secure_works_in_both() -> None:
    SessionMiddleware(Starlette(), secret_key=SECRET, partitioned=True, https_only=True)
    with override_settings(SESSION_COOKIE_PARTITIONED=True, SESSION_COOKIE_SECURE=True):
        assert [m.id for m in run_checks() if m.id and m.id.startswith("blake2sign_web")] == []
        config = conf.session_config()
        assert config.partitioned is True
        with override_settings(SESSION_COOKIE_PARTITIONED=False):
            assert conf.session_config().cookie_overhead == config.cookie_overhead - len("; Partitioned")
    assert conf.session_config().partitioned is False


def test_djangos_defaults_are_the_cores() -> None:
    """BLAKE2SIGN_WEB['SESSIONS'] has a key for every option Django spells there, with the core's default."""
    section = {option.django: option.default for option in OPTIONS if option.django and option.django.isupper()}
    assert {key: value for key, value in section.items() if not key.startswith("SESSION_")} == conf.SESSION_DEFAULTS


def test_a_cookie_path_is_a_string_in_both() -> None:
    """Starlette writes ``path=None`` as it stands; Django would write no Path, leaving the cookie on one directory."""
    with pytest.raises(ValueError, match=r"^SessionMiddleware path must be printable ASCII"):
        SessionMiddleware(Starlette(), secret_key=SECRET, path=None)  # type: ignore[arg-type]
    with override_settings(SESSION_COOKIE_PATH=None):
        found = [m for m in run_checks() if m.id and m.id.startswith("blake2sign_web")]
    assert [(m.id, m.msg.split(" must")[0]) for m in found] == [("blake2sign_web.E012", "SESSION_COOKIE_PATH")]


# Rules the Django adapter used to write itself, now the core's.


@pytest.mark.parametrize(("spelling", "name"), [(DJANGO, "SECRET_KEY_FALLBACKS"), (STARLETTE, "fallback_secrets")])
@pytest.mark.parametrize(
    "fallbacks", ["an-old-secret-that-is-long-enough", b"an-old-secret-that-is-long-enough", set()]
)
def test_fallbacks_that_are_not_a_list_are_one_problem(spelling: options.Spelling, name: str, fallbacks: Any) -> None:
    """A string would make every character a key: a token signed with the key "a" would verify (Django's E009)."""
    [problem] = options.secret_problems(SECRET, fallbacks, spelling)
    assert (problem.check_id, problem.error) == ("blake2sign_web.E009", TypeError)
    assert problem.message.startswith(f"{name} must be a list of secrets, not a {type(fallbacks).__name__}")
    assert problem.message.endswith(f"write {name}{' = ' if spelling is DJANGO else '='}[old_key]")
    assert options.secret_problems(SECRET, [SECRET], spelling) == []


def test_a_settings_dict_must_be_a_dict_of_known_keys() -> None:
    [problem] = options.section_problems([], "BLAKE2SIGN_WEB", ("SESSIONS",))
    assert (problem.message, problem.check_id, problem.error) == (
        "BLAKE2SIGN_WEB must be a dict, not list",
        "blake2sign_web.E001",
        TypeError,
    )
    [problem] = options.section_problems({"SESIONS": {}, "SESSIONS": {}}, "BLAKE2SIGN_WEB", ("SESSIONS",))
    assert problem.message == "BLAKE2SIGN_WEB has an unknown key 'SESIONS'; the known keys are SESSIONS"
    assert problem.error is ValueError


@pytest.mark.parametrize(
    ("name", "needs"),
    [
        ("__Secure-s", ["https_only=True"]),
        ("__Host-s", ["https_only=True", "path='/'", "domain=None"]),
        ("__Http-s", ["https_only=True", "http_only=True"]),
        ("__Host-Http-s", ["https_only=True", "path='/'", "domain=None", "http_only=True"]),
    ],
)
def test_the_prefix_hint_names_every_attribute_the_prefix_demands(name: str, needs: list[str]) -> None:
    """The same rules as cookies.prefix_problem, in the framework's spelling (Django's hint of E020)."""
    hint = prefix_fix(name, options.cookie_settings(STARLETTE))
    assert hint.startswith(f"Set {', '.join(needs)} (and serve the site over HTTPS)")
    assert hint.endswith(f"or choose a session_cookie without the prefix {name[:-1]!r}.")


@pytest.mark.parametrize("samesite", ["Lax", "None", False])
@pytest.mark.parametrize(("path", "domain"), [("/", None), ("/app/", "example.com"), ("", None)])
@pytest.mark.parametrize("flags", [(False, False), (True, True)])
def test_the_overhead_is_what_django_writes_at_the_widest_max_age(
    samesite: Any, path: str, domain: str | None, flags: tuple[bool, bool]
) -> None:
    """The size policy counts the attributes Django's response writes after the value (through a Morsel)."""
    secure, http_only = flags
    response = HttpResponse()
    response.set_cookie(
        "sessionid", "v", max_age=9_999_999_999, path=path, domain=domain, secure=secure, httponly=http_only,
        samesite=samesite or None,
    )  # fmt: skip
    written = response.cookies["sessionid"].OutputString()
    overhead = morsel_overhead(
        path=path, domain=domain, same_site=samesite, secure=secure, http_only=http_only, partitioned=False
    )
    assert len(written) == len("sessionid") + len("v") + overhead


def test_the_signer_gets_each_flag_only_when_it_is_on() -> None:
    assert options.signer_options({"hasher": "blake3", "typed": False, "encrypt": True}) == {
        "hasher": "blake3",
        "encrypt": True,
    }
    assert set(options.signer_options(options.DEFAULTS)) == set(options.SIGNER_OPTIONS)


def test_djangos_names_are_data_of_the_spelling() -> None:
    """Which option is a key of BLAKE2SIGN_WEB['SESSIONS'] and which a SESSION_* setting: read from OPTIONS."""
    sections, own = options.section_keys(DJANGO), options.setting_keys(DJANGO)
    assert set(sections.values()) | set(own.values()) == set(BY_KEY)
    assert own == {
        "SESSION_COOKIE_NAME": "cookie_name",
        "SESSION_COOKIE_PATH": "path",
        "SESSION_COOKIE_DOMAIN": "domain",
        "SESSION_COOKIE_SAMESITE": "same_site",
        "SESSION_COOKIE_SECURE": "secure",
        "SESSION_COOKIE_HTTPONLY": "http_only",
        "SESSION_COOKIE_PARTITIONED": "partitioned",
        "SESSION_COOKIE_AGE": "max_age",
    }
    assert sections["REVOCATION_CACHE"] == "revocation"


@pytest.mark.parametrize(("store", "bad"), [("sessions", False), ("missing", True), (["sessions"], True)])
def test_the_revocation_store_must_be_one_the_framework_names(store: Any, bad: bool) -> None:
    found = options.problems({"revocation": store, "revocation_key_prefix": "site"}, DJANGO, stores={"sessions": False})
    named = "BLAKE2SIGN_WEB['SESSIONS']['REVOCATION_CACHE'] must be None or an alias in CACHES"
    assert [(p.check_id, p.message.startswith(named)) for p in found] == (
        [("blake2sign_web.E013", True)] if bad else []
    )


@pytest.mark.parametrize(("has_prefix", "reported"), [(False, ["revocation_key_prefix"]), (True, [])])
def test_a_store_that_names_the_site_itself_needs_no_key_prefix(has_prefix: bool, reported: list[str]) -> None:
    """A Django cache with a KEY_PREFIX of its own keeps two sites' records apart as REVOCATION_KEY_PREFIX would."""
    found = options.problems({"revocation": "sessions"}, DJANGO, stores={"sessions": has_prefix})
    assert [problem.key for problem in found] == reported


@pytest.mark.parametrize("same_site", ["bogus", False])
def test_an_option_the_framework_checks_itself_is_left_to_it(same_site: Any) -> None:
    """Django refuses a bad SESSION_COOKIE_SAMESITE itself: not reported, and no rule reads it (SameSite=None's)."""
    values = {"same_site": same_site, "secure": False}
    assert options.problems(values, DJANGO, checked_by_framework=options.DJANGO_CHECKS) == []
    assert options.problems({"same_site": "None"}, DJANGO, checked_by_framework=options.DJANGO_CHECKS) != []


def test_a_setting_of_sections_is_readable_unless_one_is_not_a_dict() -> None:
    known = ("HASHER",)
    found = options.settings_problems({"SESSIONS": {"HASHR": 1}}, "B", ("SESSIONS",), "SESSIONS", known)
    assert [p.message for p in found] == ["B['SESSIONS'] has an unknown key 'HASHR'; the known keys are HASHER"]
    assert options.readable(found)
    found = options.settings_problems({"SESSIONS": []}, "B", ("SESSIONS",), "SESSIONS", known)
    assert [p.message for p in found] == ["B['SESSIONS'] must be a dict, not list"]
    assert not options.readable(found)
