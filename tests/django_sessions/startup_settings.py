"""The test settings without the blake2sign_web app, for start-up tests in a fresh process.

SESSION_MIDDLEWARE picks the session middleware; BAD_SESSION_SETTING, when set, breaks one setting
(ENCRYPT and DECRYPT turn that option on: bad only without the cryptography package); WITH_APP keeps
the blake2sign_web app, for its system checks.
"""

import os

from tests.django_settings import *  # noqa: F403
from tests.django_settings import INSTALLED_APPS, MIDDLEWARE

if not os.environ.get("WITH_APP"):  # the system checks need the app
    INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "blake2sign_web.django"]
MIDDLEWARE = [os.environ.get("SESSION_MIDDLEWARE", m) if m.endswith(".SessionMiddleware") else m for m in MIDDLEWARE]
ROOT_URLCONF = "tests.django_sessions.urls"

BAD = os.environ.get("BAD_SESSION_SETTING")
if BAD == "HASHER":
    BLAKE2SIGN_WEB = {"SESSIONS": {"HASHER": "md5"}}
elif BAD == "SECRET_KEY":
    SECRET_KEY = "too-short"
elif BAD == "SESSION_COOKIE_PATH":
    SESSION_COOKIE_PATH = "/\r\nSet-Cookie: admin=1"
elif BAD in ("ENCRYPT", "DECRYPT"):
    BLAKE2SIGN_WEB = {"SESSIONS": {BAD: True}}
