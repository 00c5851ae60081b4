"""The whole SessionBase API through the real middleware stack, sync and async, with both middlewares."""

from __future__ import annotations

import json

import django
import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient, Client

from blake2sign_web.django.sessions import SessionStore

from .conftest import cookie, run, session_of, signer

pytestmark = pytest.mark.urls("tests.django_sessions.urls")


def test_values_round_trip_in_a_signed_cookie(client: Client, session_middleware: str) -> None:
    value = {"list": [1, 2.5, None, True], "text": "héllo ✓", "nested": {"a": []}}
    response = run(client, ["__setitem__", "data", value], ["__setitem__", "n", 3])
    token = cookie(response).value
    assert ":" not in token
    assert token[0] in "AQ"  # format 2: uncompressed, or compressed against the session dictionary
    assert signer().loads(token) == {"data": value, "n": 3}
    assert session_of(run(client)) == {"data": value, "n": 3}


def test_dict_api(client: Client, session_middleware: str) -> None:
    run(client, ["update", {"a": 1, "b": 2}])
    response = run(
        client,
        ["get", "a"],
        ["get", "missing", "default"],
        ["__contains__", "b"],
        ["has_key", "zz"],
        ["setdefault", "c", 3],
        ["setdefault", "a", 99],
        ["pop", "b"],
        ["pop", "gone", None],
        ["__delitem__", "c"],
        ["keys"],
        ["values"],
        ["items"],
        ["set_test_cookie"],
        ["test_cookie_worked"],
        ["delete_test_cookie"],
    )
    results = json.loads(response.content)["results"]
    assert results == [1, "default", True, False, 3, 1, 2, None, None, ["a"], [1], [["a", 1]], None, True, None]
    assert session_of(run(client)) == {"a": 1}


def test_clear_then_write(client: Client, session_middleware: str) -> None:
    run(client, ["__setitem__", "a", 1])
    assert session_of(run(client, ["clear"], ["__setitem__", "b", 2])) == {"b": 2}
    assert session_of(run(client)) == {"b": 2}


def test_flush_deletes_the_cookie(client: Client, session_middleware: str) -> None:
    run(client, ["__setitem__", "a", 1])
    response = run(client, ["flush"])
    assert cookie(response).value == ""
    assert cookie(response)["max-age"] == 0
    assert session_of(run(client)) == {}


def test_cycle_key_issues_a_new_token_of_the_same_data(client: Client, session_middleware: str) -> None:
    run(client, ["__setitem__", "a", 1])
    response = run(client, ["cycle_key"])
    body = json.loads(response.content)
    assert body["key"] == cookie(response).value
    assert signer().loads(body["key"]) == {"a": 1}


def test_unaccessed_session_sends_nothing(client: Client, session_middleware: str) -> None:
    run(client, ["__setitem__", "a", 1])
    response = client.get("/untouched/")
    assert cookie(response) is None
    assert not response.has_header("Vary")


def test_read_only_access_varies_without_a_new_cookie(client: Client, session_middleware: str) -> None:
    run(client, ["__setitem__", "a", 1])
    response = run(client, ["get", "a"])
    assert cookie(response) is None
    assert response["Vary"] == "Cookie"


def test_exists_and_clear_expired_need_no_store() -> None:
    store = SessionStore()
    assert store.exists("anything") is False
    SessionStore.clear_expired()
    store["a"] = 1
    store.save()
    assert SessionStore(store.session_key)["a"] == 1


@pytest.mark.skipif(django.VERSION < (5, 0), reason="Django 4.2 has no async session API")
def test_async_api(session_middleware: str) -> None:
    async_to_sync(_async_api)()


async def _async_api() -> None:
    client = AsyncClient()

    async def arun(*ops: list[object]) -> dict[str, object]:
        response = await client.post("/aops/", json.dumps({"ops": list(ops)}), content_type="application/json")
        assert response.status_code == 200
        if cookie(response) is not None:
            client.cookies[cookie(response).key] = cookie(response).value
        return json.loads(response.content)  # type: ignore[no-any-return]

    await arun(["aset", "a", 1], ["aupdate", {"b": 2, "c": 3}])
    body = await arun(
        ["aget", "a"],
        ["aget", "zz", 0],
        ["ahas_key", "b"],
        ["apop", "b"],
        ["asetdefault", "d", 4],
        ["akeys"],
        ["avalues"],
        ["aitems"],
        ["aset_test_cookie"],
        ["atest_cookie_worked"],
        ["adelete_test_cookie"],
        ["aset_expiry", 300],
        ["aget_expiry_age"],
        ["aget_expire_at_browser_close"],
        ["acycle_key"],
        ["aexists", "x"],
    )
    assert body["results"][:8] == [1, 0, True, 2, 4, ["a", "c", "d"], [1, 3, 4], [["a", 1], ["c", 3], ["d", 4]]]
    assert body["results"][9] is True
    assert body["results"][12] == 300
    assert body["results"][13] is False
    assert body["results"][15] is False
    expires_at = signer().load_token(body["key"]).expires_at
    assert expires_at is not None
    body = await arun(["aget", "a"])
    assert body["session"] == {"a": 1, "c": 3, "d": 4, "_session_expiry": 300}
    body = await arun(["aflush"])
    assert body["session"] == {}
    assert (await arun())["session"] == {}
