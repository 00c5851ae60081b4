"""A session engine whose save() fails as a store's does when another request deleted the session."""

from __future__ import annotations

from django.contrib.sessions.backends.base import UpdateError

from blake2sign_web.django import sessions


class SessionStore(sessions.SessionStore):
    def save(self, must_create: bool = False) -> None:
        if self.get("interrupt"):
            raise UpdateError
        super().save(must_create)
