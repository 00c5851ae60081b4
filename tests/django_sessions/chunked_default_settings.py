"""chunked_settings with the default MAX_CHUNKS (2): what a default configuration writes, for the client tests."""

from tests.django_sessions.chunked_settings import *  # noqa: F403

BLAKE2SIGN_WEB = {"SESSIONS": {"CHUNKED": True}}
