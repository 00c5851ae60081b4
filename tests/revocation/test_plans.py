"""The core's revocation decisions without a store: what to read and write, and what the replies mean.

The adapters only run these plans (a Django cache, redis.asyncio); the stores' own tests run them against a
real redis-server. Here, the rules alone.
"""

from __future__ import annotations

from typing import Any

import pytest

from blake2sign_web.sessions.revocation import SessionState
from blake2sign_web.stores import base as stores
from blake2sign_web.stores import plans as store_plans
from blake2sign_web.stores import revocation
from blake2sign_web.stores.plans import Replicas, Step

SESSION = bytes(range(16))
GENERATION = "ab" * 16


@pytest.mark.parametrize(("until", "names"), [(None, 1), (1_700_000_001, 2), (1_700_000_000, 1)])
def test_a_session_check_reads_the_session_then_its_user(until: float | None, names: int) -> None:
    """Its own names, and during an upgrade's window (before ``until``) the earlier ones too."""
    now = 1_700_000_000
    check = revocation.session_check(SESSION, 42, now - 30, GENERATION, "shop", 5, until, clock=lambda: now)
    assert check is not None
    earlier = names == 2
    assert check.keys == revocation.session_keys(SESSION, "shop", earlier) + revocation.user_keys(42, "shop", earlier)
    assert check.session_count == names  # its own name, and (in the window) the one without a prefix
    assert not check.revoked([None] * len(check.keys))
    ended = [revocation.SESSION_ENDED] + [None] * (len(check.keys) - 1)
    assert check.revoked(ended)


@pytest.mark.parametrize("until", [None, 1_800_000_001])
def test_a_session_check_compares_generations_not_clocks(until: float | None) -> None:
    check = revocation.session_check(SESSION, 42, 1_700_000_000, GENERATION, "shop", 5, until, lambda: 1_800_000_000)
    assert check is not None
    same = revocation.generation_record(GENERATION, clock=lambda: 1_800_000_000)
    other = revocation.generation_record("cd" * 16, clock=lambda: 1)
    own = check.session_count
    assert not check.revoked([None] * own + [same] + [None] * (len(check.keys) - own - 1))
    assert check.revoked([None] * own + [other] + [None] * (len(check.keys) - own - 1))


def test_nothing_to_read_without_a_session_id_or_a_user() -> None:
    assert revocation.session_check(None, None, 1_700_000_000) is None


def test_records_written_live_as_long_as_every_token_they_refuse() -> None:
    ended = revocation.ended_session(SESSION, 3600, "shop", 5)
    assert (ended.key, ended.value) == (revocation.session_key(SESSION, "shop"), revocation.SESSION_ENDED)
    assert ended.ttl == revocation.record_ttl(3600, 5)
    user = revocation.user_generation_record(42, GENERATION, 3600, "shop", clock=lambda: 1_700_000_000)
    assert (user.key, user.value) == (revocation.user_key(42, "shop"), f"g:{GENERATION}:1700000000")
    assert user.ttl == revocation.record_ttl(3600, revocation.DEFAULT_CLOCK_SKEW)
    assert revocation.recorded_generation(user.value) == GENERATION


def test_a_link_use_is_one_command() -> None:
    plain = revocation.link_use("nonce", 1_000_060, "client", clock=lambda: 1_000_000)
    assert plain.command() == ("SET", plain.key, plain.digest, "EX", plain.ttl, "NX")
    assert plain.ttl == 60 + revocation.RECORD_MARGIN
    assert plain.first_use(True)
    assert not plain.first_use(None)
    file = revocation.link_use("nonce", 1_000_060, "client", file_size=10, continuation=4, clock=lambda: 1_000_000)
    assert file.command()[:2] == ("EVAL", revocation.CONSUME_FILE_LINK_SCRIPT)
    assert file.command()[-2:] == (10, 4)
    assert file.first_use(2)
    assert not file.first_use(1)
    assert file.undo_command()[:2] == ("EVAL", revocation.UNDO_FIRST_USE_SCRIPT)


def test_a_continuation_without_the_script_is_the_same_clients_only() -> None:
    use = revocation.link_use("nonce", 1_000_060, "client", file_size=10, continuation=4, clock=lambda: 1_000_000)
    assert use.allowed_continuation(revocation.client_digest("client")) == 4
    assert use.allowed_continuation(revocation.client_digest("someone else")) is None
    assert use.allowed_continuation(None) is None
    whole = revocation.link_use("nonce", 1_000_060, "client", file_size=10, clock=lambda: 1_000_000)
    assert whole.allowed_continuation(revocation.client_digest("client")) is None


def test_a_cache_that_renames_keys_keeps_the_budget_in_the_once_records_slot() -> None:
    use = revocation.link_use("nonce", 1_000_060, "client", file_size=10, stored_name=lambda key: f":1:{key}")
    assert use.budget == revocation.budget_key("nonce", f":1:{revocation.single_use_key('nonce')}")


@pytest.mark.parametrize(
    ("owner", "keep_current", "fate"),
    [
        ("42", True, "keep"),  # log out my other devices
        ("42", False, "end"),  # log out everywhere, here too: the cookie goes on this response
        (None, True, "keep"),  # a password reset that then logs the user in
        (None, False, "leave"),
        ("1", True, "leave"),  # an administrator logging someone else out
        ("1", False, "leave"),
    ],
)
def test_what_log_out_everywhere_does_to_the_session_that_asks(
    owner: str | None, keep_current: bool, fate: str
) -> None:
    assert revocation.current_session_fate(owner, 42, keep_current) == fate


def test_a_session_state_reads_a_generation_once_per_user() -> None:
    state = SessionState(SESSION, True, "42", GENERATION)
    assert state.known_generation(42) == GENERATION  # as read with the session
    assert state.known_generation("7") is None  # another user logged in during the request: read its record
    assert state.took("7", "ef" * 16) == "ef" * 16
    assert state.known_generation(7) == "ef" * 16
    state.keep("7", "01" * 16)
    assert state.session_id != SESSION
    assert state.known_generation("7") == "01" * 16
    kept = state.session_id
    state.ended()
    assert (state.revoke_on_clear, state.user, state.generation) == (False, None, "")
    assert state.session_id not in (SESSION, kept)


def run(steps: Any, replies: list[Any]) -> tuple[Any, list[Step]]:
    """Drive a plan with canned replies: its outcome and the steps it sent."""
    sent: list[Step] = []

    def send(step: Step) -> Any:
        sent.append(step)
        return replies.pop(0)

    return store_plans.drive(steps, send), sent


def test_a_first_use_its_replicas_miss_is_undone_then_refused() -> None:
    use = revocation.link_use("nonce", 1_000_060, "client", clock=lambda: 1_000_000)
    assert run(store_plans.use_steps(use, Replicas(1, 0.5)), [(True, 1)]) == (
        True,
        [Step(use.key, use.command(), True)],
    )
    with pytest.raises(revocation.NotReplicated, match="use a single-use link durably: 0 of the 1"):
        run(store_plans.use_steps(use, Replicas(1, 0.5)), [(True, 0), 1])
    _, sent = run(store_plans.use_steps(use, Replicas()), [(None, 0)])
    assert len(sent) == 1  # refused: nothing to undo, nothing waited for


def test_store_plans_name_their_records_and_actions() -> None:
    plans = store_plans.StorePlans("shop", 5, Replicas(), clock=lambda: 1_700_000_000)
    plan = plans.log_out_everywhere(42, 3600)
    generation, sent = run(plan.steps, [(True, 0)])
    assert plan.action == "log a user out everywhere"
    assert sent[0].command[:3] == ("SET", revocation.user_key(42, "shop"), f"g:{generation}:1700000000")
    read = plans.user_generation(42)
    assert run(read.steps, [f"g:{generation}:1700000000".encode()])[0] == generation
    ended = plans.end_session(SESSION, 3600)
    assert run(ended.steps, [("OK", 0)])[1][0].key == revocation.session_key(SESSION, "shop")


def test_a_cache_add_of_no_time_adds_nothing_and_incr_never_creates() -> None:
    assert run(store_plans.cache_add("k", b"v", 0, Replicas()), [True, 1]) == (
        True,
        [Step("k", ("SET", "k", b"v", "NX")), Step("k", ("DEL", "k"))],
    )
    assert run(store_plans.cache_incr("k", 1, Replicas(1, 0.5)), [(None, 0)])[0] is None


def test_a_link_use_in_a_cache_of_its_own_operations() -> None:
    class Cache(dict):  # type: ignore[type-arg]
        def add(self, key: str, value: Any, timeout: int) -> bool:
            return self.setdefault(key, value) is value

        def set(self, key: str, value: Any, timeout: int) -> None:
            self[key] = value

        def decr(self, key: str, delta: int) -> int:
            if key not in self:
                raise ValueError(key)
            self[key] -= delta
            return int(self[key])

        def delete(self, key: str) -> None:
            self.pop(key, None)

    cache = Cache()
    first = revocation.link_use("n", 1_000_060, "c", file_size=10, clock=lambda: 1_000_000)
    assert store_plans.consume_in_cache(cache, first)
    again = revocation.link_use("n", 1_000_060, "c", file_size=10, continuation=6, clock=lambda: 1_000_000)
    assert store_plans.consume_in_cache(cache, again)
    assert not store_plans.consume_in_cache(cache, again)  # 4 bytes left
    other = revocation.link_use("n", 1_000_060, "another", file_size=10, continuation=1, clock=lambda: 1_000_000)
    assert not store_plans.consume_in_cache(cache, other)


def test_what_is_not_a_store_is_named() -> None:
    assert stores.store_problem(None, "single_use", "consume_link") is None
    assert stores.store_problem("redis://x", "single_use", "consume_link") == "single_use must be a RedisStore, not str"
    assert stores.client_problem(object()) is not None
    with pytest.raises(TypeError, match="SessionMiddleware revocation must be a RedisStore, not int"):
        stores.check_store(1, "SessionMiddleware revocation", "is_revoked")


def test_a_grouped_link_is_one_read_or_one_batch() -> None:
    plans = store_plans.StorePlans("shop", 5, Replicas(), clock=lambda: 1_000_000)
    key = revocation.group_key("course-42", "shop")
    plan = plans.check_link(None, 1_000_060, "client", None, None, "course-42", 1_000_000_000_001)
    assert plan.action == "check a link group"
    assert run(plan.steps, [None]) == ("ok", [Step(key, ("GET", key))])
    revoked = plans.check_link(None, 1_000_060, "client", None, None, "course-42", 1_000_000_000_000)
    assert run(revoked.steps, [b"1000000000000"])[0] == "withdrawn"  # issued at the revocation's instant
    once = plans.check_link("nonce", 1_000_060, "client", None, None, "course-42", 5_000_005)
    answer, sent = run(once.steps, [[b"4", ("OK", 0)]])  # issued after the revocation and the clocks' 5 s
    use = revocation.link_use("nonce", 1_000_060, "client", skew=5, clock=lambda: 1_000_000)
    assert answer == "ok"
    assert sent == [store_plans.Batch((Step(key, ("GET", key)), Step(use.key, use.command(), True)))]
    assert (
        run(plans.check_link("nonce", 1_000_060, "c", None, None, "course-42", 5).steps, [[None, (None, 0)]])[0]
        == "used"
    )
    ahead = plans.check_link(None, 1_000_060, "client", None, None, "course-42", 1_000_005_000_000)
    assert run(ahead.steps, [b"1000000000000"])[0] == "withdrawn"  # within the store's clock_skew (5 s)
    after = plans.check_link(None, 1_000_060, "client", None, None, "course-42", 1_000_005_000_001)
    assert run(after.steps, [b"1000000000000"])[0] == "ok"
    assert (
        run(plans.check_link("nonce", 1_000_060, "c", None, None, "course-42", 5).steps, [[b"5", (None, 0)]])[0]
        == "withdrawn"
    )  # withdrawn wins over used


def test_a_grouped_first_use_its_replicas_miss_is_undone_then_refused() -> None:
    plans = store_plans.StorePlans("", 5, Replicas(1, 0.5), clock=lambda: 1_000_000)
    plan = plans.check_link("nonce", 1_000_060, "client", None, None, "g", 5)
    with pytest.raises(revocation.NotReplicated, match="0 of the 1"):
        run(plan.steps, [[None, ("OK", 0)], 1])


def test_revoking_a_group_writes_its_time() -> None:
    plans = store_plans.StorePlans("shop", 5, Replicas(), clock=lambda: 1_700_000_000.5)
    plan = plans.revoke_link_group("course-42", 600)
    _, sent = run(plan.steps, [("OK", 0)])
    key = revocation.group_key("course-42", "shop")
    assert plan.action == "revoke a link group"
    assert sent == [Step(key, ("SET", key, "1700000000500000", "EX", revocation.record_ttl(600, 5)), True)]
