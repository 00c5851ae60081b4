"""Link groups: an opaque id (``course-42``) signed into links, so that one revocation refuses every link of it.

A grouped link carries ``group`` and ``issued`` (its signing time, in microseconds, so that a link signed after
the revocation's reply carries a later time) and must expire: the revocation's record lasts only as long as
the group's longest-lived link (docs/signed-urls.md, "Link groups"). The rules here are the text's: what a
group may be (``check_group``), what ``sign`` writes (``signed_pairs``), what ``verify_link`` reads
(``verified``). The record and the decision are ``revocation``'s; the store calls, ``stores.plans``'.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from ..exceptions import BadSignature
from ..stores.records import GROUP_ID, check_group, issued_now

#: An issue time in a link: Unix microseconds, at most 16 digits.
_ISSUED: Final = re.compile(r"[0-9]{1,16}")


def signed_pairs(
    group: object, expires: int | None, clock: Callable[[], float], group_param: str, issued_param: str
) -> list[tuple[str, str]]:
    """What ``sign`` adds for ``group`` (checked): the group and the issue time. ValueError without an expiry
    (``expires``): the group's revocation is kept only as long as its longest-lived link."""
    checked = check_group(group)
    if expires is None:
        raise ValueError(
            "a grouped link needs an expiry: pass expires_in or expires_at (revoking its group is remembered only "
            "as long as the group's longest-lived link, so a link that never expires would come back)"
        )
    return [(group_param, checked), (issued_param, str(issued_now(clock)))]


def verified(pairs: tuple[tuple[str, str], ...], group_param: str, expires_at: int | None) -> tuple[str, int]:
    """The group and issue time of a link whose MAC was checked (``pairs``: its group and issued parameters);
    BadSignature unless ``sign`` could have written them (one of each, well formed, with an expiry)."""
    groups = [v for k, v in pairs if k == group_param]
    issued = [v for k, v in pairs if k != group_param]
    if len(groups) != 1 or len(issued) != 1:
        raise BadSignature("URL needs one group and one issue time")
    if not GROUP_ID.fullmatch(groups[0]):
        raise BadSignature("malformed group")
    if not _ISSUED.fullmatch(issued[0]):
        raise BadSignature("malformed issue time")
    if expires_at is None:  # sign() never writes one: its group's revocation could not be kept long enough
        raise BadSignature("grouped URL without expiry")
    return groups[0], int(issued[0])
