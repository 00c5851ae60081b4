"""The signers of a session configuration (``session_token.session_signers``)."""

from __future__ import annotations

import secrets

from blake2sign_web.sessions.token import session_signers

SECRET = "a-test-secret-of-at-least-thirty-two-characters"


def test_the_writer_signs_the_largest_session_its_configuration_allows() -> None:
    """Above the core's 256 KiB default the writer signs it, so the size policy can say how large it is."""
    largest = 512 * 1024
    signers = session_signers(
        SECRET,
        max_age=3600,
        idle_timeout=None,
        reader_limit=4096,
        purpose="tests.session-signers",
        max_decompressed_size=largest,
        compression=None,
    )
    session = {"blob": secrets.token_hex(150 * 1024)}  # 300 KiB of JSON, more than the default allows
    token = signers.writer.dumps(session)
    assert len(token) > 300 * 1024 * 4 // 3
