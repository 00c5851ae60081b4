"""Generate realistic session payloads, as the session middlewares write them, for dictionary training.

python3 scripts/session_corpus.py --seed 1 --count 5 [--pools evaluation]   # prints one JSON payload a line

Each payload is ``orjson.dumps(session)``: compact JSON, keys in the order the frameworks insert
them. What the sessions hold follows the code that writes them:

- Django: ``auth.login`` inserts ``_auth_user_id`` (the pk as a string: 1-12 digits, or a UUID),
  ``_auth_user_backend`` and ``_auth_user_hash`` (``salted_hmac(...).hexdigest()``: 64 hex digits
  since Django 3.1, 40 before) in that order, after whatever the anonymous session already held.
  The messages framework's ``SessionStorage`` stores ``_messages`` as the string its
  ``MessageEncoder`` writes (``json.JSONEncoder`` defaults: ``", "`` separators, non-ASCII escaped),
  ``[["__json_message", 0, 25, "Saved."]]``. ``CSRF_USE_SESSIONS`` stores ``_csrftoken`` (32
  characters since Django 4.1, the 64-character masked form before). ``set_expiry`` stores
  ``_session_expiry`` (seconds, or an ISO date). Language keys, password-reset and cart keys.
- Starlette/FastAPI: user ids or user dicts (e-mail, name, OpenID userinfo), CSRF tokens, flash
  messages, Authlib's OAuth state (``_state_<provider>_<state>`` = ``{"data": {...}, "exp": ...}``,
  the data being ``redirect_uri``, PKCE ``code_verifier``, OIDC ``nonce`` and the authorize ``url``,
  as ``StarletteAppMixin.save_authorize_data`` stores them), carts and small preferences.

Two pool sets: ``training`` (what the shipped dictionary is trained on) and ``evaluation``, whose
names, e-mail domains, hosts, messages, products and custom backend paths never appear in training,
so the dictionary is measured on data it was not tuned to. Output is deterministic for a seed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import string
import sys
import uuid
from base64 import urlsafe_b64encode
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import urlencode

import orjson

Session = dict[str, Any]

HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
#: About 2026-11: the epoch seconds that timestamps and expiry dates cluster around.
NOW = 1_795_000_000

#: Backends shipped by Django and by the packages people use; in both pool sets.
COMMON_BACKENDS = (
    ("django.contrib.auth.backends.ModelBackend", 50),
    ("allauth.account.auth_backends.AuthenticationBackend", 14),
    ("django.contrib.auth.backends.RemoteUserBackend", 4),
    ("guardian.backends.ObjectPermissionBackend", 4),
    ("django_auth_ldap.backend.LDAPBackend", 4),
    ("social_core.backends.google.GoogleOAuth2", 4),
    ("social_core.backends.github.GithubOAuth2", 3),
    ("axes.backends.AxesStandaloneBackend", 3),
    ("mozilla_django_oidc.auth.OIDCAuthenticationBackend", 3),
)


@dataclass(frozen=True)
class Pools:
    """The values a corpus draws from; the two sets share only what every project shares."""

    first_names: tuple[str, ...]
    last_names: tuple[str, ...]
    mail_domains: tuple[str, ...]
    hosts: tuple[str, ...]
    custom_backends: tuple[str, ...]
    messages: tuple[str, ...]
    object_names: tuple[str, ...]
    products: tuple[str, ...]
    languages: tuple[str, ...]
    timezones: tuple[str, ...]
    providers: tuple[str, ...]


TRAINING = Pools(
    first_names=(
        "James",
        "Mary",
        "Olivia",
        "Liam",
        "Noah",
        "Emma",
        "Ava",
        "Lucas",
        "Mia",
        "Hugo",
        "Léa",
        "Jonas",
        "Sofia",
        "Mateo",
        "Yuki",
        "Amara",
        "Ravi",
        "Chen",
        "Fatima",
        "Oskar",
        "Ingrid",
        "José",
        "Zoë",
    ),
    last_names=(
        "Smith",
        "Johnson",
        "Brown",
        "Garcia",
        "Müller",
        "Schmidt",
        "Rossi",
        "Dubois",
        "Silva",
        "Kowalski",
        "Nguyen",
        "Tanaka",
        "Okafor",
        "Patel",
        "Larsen",
        "O'Brien",
        "Novak",
        "Hernández",
        "Kim",
        "Cohen",
    ),
    mail_domains=(
        "gmail.com",
        "outlook.com",
        "yahoo.com",
        "example.com",
        "icloud.com",
        "proton.me",
        "gmx.de",
        "hotmail.com",
        "web.de",
        "acme.io",
        "company.org",
        "uni-hamburg.de",
    ),
    hosts=("example.com", "app.example.com", "www.acme.io", "shop.example.org", "localhost:8000", "portal.company.org"),
    custom_backends=(
        "accounts.backends.EmailBackend",
        "users.backends.EmailOrUsernameModelBackend",
        "core.auth.EmailAuthBackend",
        "myproject.authentication.backends.TokenBackend",
        "apps.accounts.backends.CaseInsensitiveModelBackend",
        "authentication.backends.SSOBackend",
    ),
    messages=(
        "Saved.",
        "Your profile was updated successfully.",
        "Welcome back!",
        "You have signed out.",
        "Successfully signed in as {name}.",
        "Confirmation e-mail sent to {email}.",
        "Password changed.",
        "Item added to your cart.",
        "Your order #{number} was placed.",
        "Please correct the errors below.",
        "The {object} “{name}” was added successfully.",
        "The {object} “{name}” was changed successfully.",
        "Something went wrong. Please try again.",
        "Settings updated.",
        "Invitation sent.",
        "You do not have permission to do that.",
        "Your session has expired, please log in again.",
    ),
    object_names=("article", "user", "order", "product", "page", "comment", "invoice", "group"),
    products=("t-shirt", "mug", "notebook", "poster", "hoodie", "sticker-pack", "cap", "tote-bag"),
    languages=("en", "en-us", "de", "fr", "es", "pt-br", "nl", "it", "pl", "ja", "zh-hans"),
    timezones=("UTC", "Europe/Berlin", "Europe/London", "America/New_York", "Asia/Tokyo", "Europe/Paris"),
    providers=("google", "github", "microsoft"),
)

EVALUATION = Pools(
    first_names=(
        "Aiden",
        "Chloe",
        "Mohammed",
        "Elif",
        "Sven",
        "Priya",
        "Kwame",
        "Anastasia",
        "Diego",
        "Saanvi",
        "Björn",
        "Camille",
        "Tomasz",
        "Aoife",
        "Haruto",
        "Nia",
        "Ömer",
        "Valentina",
        "Wei",
        "Thandiwe",
    ),
    last_names=(
        "Anderson",
        "Fischer",
        "Bianchi",
        "Moreau",
        "Santos",
        "Wiśniewski",
        "Tran",
        "Suzuki",
        "Adeyemi",
        "Sharma",
        "Johansson",
        "Murphy",
        "Horvat",
        "Fernández",
        "Park",
        "Levi",
        "Ivanova",
        "Yilmaz",
    ),
    mail_domains=(
        "fastmail.com",
        "posteo.de",
        "mail.ru",
        "live.co.uk",
        "orange.fr",
        "libero.it",
        "qq.com",
        "student.kth.se",
        "corp.example.net",
        "startup.dev",
    ),
    hosts=("dashboard.example.net", "my.startup.dev", "store.bicycles.shop", "127.0.0.1:8080", "intranet.corp.local"),
    custom_backends=(
        "core.auth.backends.PhoneNumberBackend",
        "django_cas_ng.backends.CASBackend",
        "sesame.backends.ModelBackend",
        "graphql_jwt.backends.JSONWebTokenBackend",
        "tenants.auth.TenantAwareBackend",
        "oauth2_provider.backends.OAuth2Backend",
    ),
    messages=(
        "Changes stored.",
        "Thanks! We received your request.",
        "Your subscription is now active.",
        "Two-factor authentication enabled for {email}.",
        "Hello {name}, good to see you again.",
        "Ticket #{number} closed.",
        "The {object} “{name}” was deleted successfully.",
        "Upload failed: file too large.",
        "Your trial ends in {number} days.",
        "Link copied.",
    ),
    object_names=("ticket", "project", "subscription", "document", "event"),
    products=("bike-bell", "helmet", "inner-tube", "saddle-bag", "chain-lube"),
    languages=("sv", "fi", "tr", "ko", "uk", "cs", "en-gb", "zh-hant"),
    timezones=("America/Sao_Paulo", "Asia/Kolkata", "Australia/Sydney", "Africa/Lagos", "Europe/Istanbul"),
    providers=("gitlab", "okta", "keycloak", "auth0"),
)

POOLS = {"training": TRAINING, "evaluation": EVALUATION}

#: OAuth endpoints and scopes by provider; OpenID providers get a nonce.
AUTHORIZE = {
    "google": ("https://accounts.google.com/o/oauth2/v2/auth", "openid email profile"),
    "github": ("https://github.com/login/oauth/authorize", "user:email"),
    "microsoft": ("https://login.microsoftonline.com/common/oauth2/v2.0/authorize", "openid email profile"),
    "gitlab": ("https://gitlab.com/oauth/authorize", "read_user openid"),
    "okta": ("https://dev-123456.okta.com/oauth2/default/v1/authorize", "openid profile email"),
    "keycloak": ("https://sso.corp.local/realms/main/protocol/openid-connect/auth", "openid"),
    "auth0": ("https://tenant.eu.auth0.com/authorize", "openid profile email offline_access"),
}


class Generator:
    """One deterministic stream of sessions drawn from a pool set."""

    def __init__(self, seed: int, pools: Pools) -> None:
        self.rng = random.Random(seed)
        self.pools = pools

    # -- values --------------------------------------------------------------------------------

    def token(self, length: int, alphabet: str = ALNUM) -> str:
        return "".join(self.rng.choices(alphabet, k=length))

    def hex(self, length: int) -> str:
        return self.token(length, HEX)

    def pick(self, values: tuple[str, ...]) -> str:
        return self.rng.choice(values)

    def user_pk(self) -> str:
        """A primary key as Django's session stores it: 1-12 digits (small ids most often) or a UUID."""
        if self.rng.random() < 0.08:
            return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        return str(self.user_id())

    def user_id(self) -> int:
        """An integer id, as Starlette apps store it: 1-12 digits."""
        digits = self.rng.choices(range(1, 13), weights=(4, 8, 10, 12, 12, 10, 8, 6, 4, 3, 2, 2))[0]
        return self.rng.randint(1 if digits == 1 else 10 ** (digits - 1), 10**digits - 1)

    def name(self) -> str:
        return f"{self.pick(self.pools.first_names)} {self.pick(self.pools.last_names)}"

    def email(self, name: str | None = None) -> str:
        name = name or self.name()
        first, last = name.lower().split(" ", 1)
        local = self.rng.choice((f"{first}.{last}", f"{first}{self.rng.randint(1, 99)}", f"{first[0]}{last}"))
        local = local.encode("ascii", "ignore").decode().replace("'", "")
        return f"{local}@{self.pick(self.pools.mail_domains)}"

    def message_text(self) -> str:
        name = self.name()
        return self.pick(self.pools.messages).format(
            name=name,
            email=self.email(name),
            number=self.rng.randint(2, 99999),
            object=self.pick(self.pools.object_names),
        )

    def iso_time(self) -> str:
        moment = datetime.fromtimestamp(NOW + self.rng.randint(-86_400, 30 * 86_400), tz=timezone.utc)
        moment += timedelta(microseconds=self.rng.randint(0, 999_999))
        return moment.isoformat()

    def url(self, path: str) -> str:
        return f"https://{self.pick(self.pools.hosts)}{path}"

    # -- Django --------------------------------------------------------------------------------

    def backend(self) -> str:
        if self.rng.random() < 0.12:
            return self.pick(self.pools.custom_backends)
        paths, weights = zip(*COMMON_BACKENDS, strict=True)
        return self.rng.choices(paths, weights=weights)[0]

    def auth_hash(self) -> str:
        return self.hex(64 if self.rng.random() < 0.85 else 40)

    def django_login(self, session: Session | None = None) -> Session:
        """What ``django.contrib.auth.login`` adds, after whatever the session held before."""
        session = {} if session is None else session
        session["_auth_user_id"] = self.user_pk()
        session["_auth_user_backend"] = self.backend()
        session["_auth_user_hash"] = self.auth_hash()
        return session

    def django_messages(self) -> str:
        """``SessionStorage``'s value: MessageEncoder's JSON of [key, is_safe, level, text(, extra_tags)]."""
        stored = []
        for _ in range(self.rng.choices((1, 2, 3), weights=(80, 15, 5))[0]):
            level = self.rng.choices((25, 20, 30, 40, 10), weights=(45, 25, 12, 15, 3))[0]
            message: list[Any] = ["__json_message", 0, level, self.message_text()]
            if self.rng.random() < 0.1:
                message.append(self.rng.choice(("", "safe", "alert-dismissible", "toast")))
            stored.append(message)
        # MessageEncoder is a json.JSONEncoder with its defaults: ", " separators, non-ASCII escaped.
        return json.dumps(stored)

    def csrf_secret(self) -> str:
        return self.token(32 if self.rng.random() < 0.75 else 64)

    def session_expiry(self) -> int | str:
        return self.rng.choice((0, 0, 3600, 86_400, 604_800, 1_209_600, 2_592_000, self.iso_time()))

    def django_cart(self) -> dict[str, Any]:
        """The shape of the well-known tutorial cart: product pk -> quantity and price as a string."""
        return {
            str(self.rng.randint(1, 5000)): {
                "quantity": self.rng.randint(1, 4),
                "price": f"{self.rng.randint(1, 300)}.{self.rng.randint(0, 99):02d}",
            }
            for _ in range(self.rng.randint(1, 4))
        }

    def django_session(self) -> Session:
        """A logged-in Django session: the auth keys plus what commonly sits beside them."""
        session: Session = {}
        if self.rng.random() < 0.1:
            session["django_language" if self.rng.random() < 0.6 else "_language"] = self.pick(self.pools.languages)
        if self.rng.random() < 0.06:
            session["cart"] = self.django_cart()
        self.django_login(session)
        if self.rng.random() < 0.25:
            session["_csrftoken"] = self.csrf_secret()
        if self.rng.random() < 0.15:
            session["_session_expiry"] = self.session_expiry()
        if self.rng.random() < 0.08:
            session["django_language"] = self.pick(self.pools.languages)
        if self.rng.random() < 0.04:
            session["_password_reset_token"] = f"{self.token(6, string.ascii_lowercase + string.digits)}-{self.hex(32)}"
        if self.rng.random() < 0.05:
            session["account_verified_email"] = None
        if self.rng.random() < 0.3:
            session["_messages"] = self.django_messages()
        return session

    def django_anonymous(self) -> Session:
        """A session before login: CSRF secret, messages, language, a cart."""
        session: Session = {}
        choices = self.rng.sample(("_csrftoken", "_messages", "django_language", "cart"), self.rng.randint(1, 3))
        for key in ("django_language", "cart", "_csrftoken", "_messages"):
            if key not in choices:
                continue
            if key == "_csrftoken":
                session[key] = self.csrf_secret()
            elif key == "_messages":
                session[key] = self.django_messages()
            elif key == "cart":
                session[key] = self.django_cart()
            else:
                session[key] = self.pick(self.pools.languages)
        return session

    # -- Starlette / FastAPI ---------------------------------------------------------------

    def starlette_csrf(self) -> str:
        kind = self.rng.random()
        if kind < 0.4:
            return hashlib.sha1(self.token(16).encode(), usedforsecurity=False).hexdigest()  # flask/starlette-wtf
        if kind < 0.8:
            return self.token(43, URLSAFE)  # secrets.token_urlsafe(32)
        return self.hex(64)  # secrets.token_hex(32)

    def flash(self) -> tuple[str, Any]:
        text = self.message_text()
        category = self.rng.choice(("success", "info", "warning", "error", "danger"))
        style = self.rng.random()
        if style < 0.5:
            return "_messages", [{"message": text, "category": category}]
        if style < 0.8:
            return "flash", [{"category": category, "message": text}]
        return "_flashes", [[category, text]]

    def userinfo(self, provider: str) -> dict[str, Any]:
        """An OpenID Connect userinfo/ID-token dict, as Authlib examples put it in ``session["user"]``."""
        name = self.name()
        first, last = name.split(" ", 1)
        issued = NOW + self.rng.randint(-86_400, 0)
        authorize = AUTHORIZE[provider][0]
        issuer = authorize.split("/o/")[0].split("/oauth")[0].split("/protocol")[0].split("/authorize")[0]
        info: dict[str, Any] = {
            "iss": issuer,
            "azp": f"{self.rng.randint(10**11, 10**12)}-{self.token(32, string.ascii_lowercase + string.digits)}"
            ".apps.googleusercontent.com"
            if provider == "google"
            else self.token(20),
        }
        info["aud"] = info["azp"]
        info["sub"] = (
            str(self.rng.randint(10**20, 10**21))
            if provider == "google"
            else str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        )
        info["email"] = self.email(name)
        info["email_verified"] = True
        info["at_hash"] = self.token(22, URLSAFE)
        info["nonce"] = self.token(20)
        info["name"] = name
        if self.rng.random() < 0.5:
            info["picture"] = f"https://lh3.googleusercontent.com/a/{self.token(60, URLSAFE)}=s96-c"
        info["given_name"] = first
        info["family_name"] = last
        info["iat"] = issued
        info["exp"] = issued + 3600
        return info

    def oauth_state(self) -> tuple[str, dict[str, Any]]:
        """Authlib's ``_state_<provider>_<state>`` entry, as ``StarletteIntegration.set_state_data`` writes it."""
        provider = self.pick(self.pools.providers)
        authorize, scope = AUTHORIZE[provider]
        state = self.token(30)
        redirect_uri = self.url(self.rng.choice(("/auth", "/auth/callback", f"/login/{provider}/callback")))
        client_id = (
            self.token(20)
            if provider != "google"
            else f"{self.rng.randint(10**11, 10**12)}-x.apps.googleusercontent.com"
        )
        data: dict[str, Any] = {"redirect_uri": redirect_uri}
        query: list[tuple[str, str]] = [
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", redirect_uri),
            ("scope", scope),
            ("state", state),
        ]
        if self.rng.random() < 0.5:
            verifier = self.token(48)
            data["code_verifier"] = verifier
            challenge = urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if "openid" in scope:
            nonce = self.token(20)
            data["nonce"] = nonce
            query.append(("nonce", nonce))
        if "code_verifier" in data:
            query += [("code_challenge", challenge), ("code_challenge_method", "S256")]
        data["url"] = f"{authorize}?{urlencode(query)}"
        expires = NOW + self.rng.randint(0, 86_400) + 3600 + self.rng.randint(0, 999_999) / 1e6
        return f"_state_{provider}_{state}", {"data": data, "exp": expires}

    def cart(self) -> dict[str, Any]:
        items = [
            {
                "product_id": self.rng.randint(1, 99_999),
                "sku": f"{self.pick(self.pools.products)}-{self.rng.choice(('s', 'm', 'l', 'xl', 'blue', 'red'))}",
                "quantity": self.rng.randint(1, 3),
            }
            for _ in range(self.rng.randint(1, 5))
        ]
        cart: dict[str, Any] = {"items": items, "currency": self.rng.choice(("EUR", "USD", "GBP", "SEK"))}
        if self.rng.random() < 0.2:
            cart["coupon"] = self.token(8, string.ascii_uppercase + string.digits)
        return cart

    def preferences(self) -> dict[str, Any]:
        keys = self.rng.sample(
            ("theme", "timezone", "locale", "sidebar_collapsed", "page_size"), self.rng.randint(1, 3)
        )
        values = {
            "theme": self.rng.choice(("dark", "light", "system")),
            "timezone": self.pick(self.pools.timezones),
            "locale": self.pick(self.pools.languages),
            "sidebar_collapsed": self.rng.random() < 0.5,
            "page_size": self.rng.choice((10, 20, 25, 50, 100)),
        }
        return {key: values[key] for key in keys}

    def starlette_typical(self) -> Session:
        """The benchmark's typical Starlette session: a user id, a CSRF token, one flash message."""
        session: Session = {"user_id": self.user_id(), "csrf_token": self.starlette_csrf()}
        key, value = self.flash()
        session[key] = value
        return session

    def starlette_session(self) -> Session:
        """A Starlette/FastAPI session: user by id or dict, CSRF, flashes, OAuth state, cart, preferences."""
        session: Session = {}
        if self.rng.random() < 0.15:
            key, state = self.oauth_state()
            session[key] = state
        user = self.rng.random()
        if user < 0.35:
            session["user_id"] = self.user_id()
        elif user < 0.55:
            name = self.name()
            session["user"] = {"id": self.user_id(), "email": self.email(name), "name": name}
        elif user < 0.65:
            session["user"] = self.userinfo(self.pick(self.pools.providers))
        elif user < 0.75:
            name = self.name()
            session.update(user_id=self.user_id(), email=self.email(name), username=name.split(" ")[0].lower())
        if self.rng.random() < 0.1:
            session["login_at"] = NOW + self.rng.randint(-86_400, 0)
        if self.rng.random() < 0.5:
            session["csrf_token"] = self.starlette_csrf()
        if self.rng.random() < 0.12:
            session["cart"] = self.cart()
        if self.rng.random() < 0.15:
            session["preferences"] = self.preferences()
        if self.rng.random() < 0.08:
            session["next"] = self.rng.choice(("/", "/dashboard", "/account/settings", "/checkout", "/admin/"))
        if self.rng.random() < 0.3:
            key, value = self.flash()
            session[key] = value
        if not session:
            session["csrf_token"] = self.starlette_csrf()
        return session

    def cart_session(self) -> Session:
        """The benchmark's cart: a cart, maybe beside a CSRF token."""
        session: Session = {"cart": self.cart()}
        if self.rng.random() < 0.5:
            session["csrf_token"] = self.starlette_csrf()
        return session


#: Named kinds: what the corpus mixes (with weights) and what the benchmark reports by name.
KINDS: dict[str, Callable[[Generator], Session]] = {
    "django_login": Generator.django_login,
    "django_login_messages": lambda g: {**g.django_login(), "_messages": g.django_messages()},
    "django_login_csrf": lambda g: {**g.django_login(), "_csrftoken": g.csrf_secret()},
    "django_session": Generator.django_session,
    "django_anonymous": Generator.django_anonymous,
    "starlette_typical": Generator.starlette_typical,
    "starlette_session": Generator.starlette_session,
    "cart": Generator.cart_session,
}

#: The training mix: logged-in Django sessions and Starlette sessions most, the rest beside.
MIX = {
    "django_login": 20,
    "django_session": 30,
    "django_anonymous": 8,
    "starlette_typical": 10,
    "starlette_session": 27,
    "cart": 5,
}


def sessions(kind: str, *, seed: int, count: int, pools: str = "training") -> list[Session]:
    """``count`` sessions of one kind (or ``"mix"``), the same for the same arguments."""
    generator = Generator(seed, POOLS[pools])
    if kind == "mix":
        kinds = generator.rng.choices(list(MIX), weights=list(MIX.values()), k=count)
        return [KINDS[name](generator) for name in kinds]
    return [KINDS[kind](generator) for _ in range(count)]


def payloads(kind: str, *, seed: int, count: int, pools: str = "training") -> list[bytes]:
    """The same sessions as ``orjson.dumps`` writes them: what the signer compresses."""
    return [orjson.dumps(session) for session in sessions(kind, seed=seed, count=count, pools=pools)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--kind", default="mix", choices=["mix", *KINDS])
    parser.add_argument("--pools", default="training", choices=list(POOLS))
    args = parser.parse_args()
    for payload in payloads(args.kind, seed=args.seed, count=args.count, pools=args.pools):
        sys.stdout.buffer.write(payload + b"\n")


if __name__ == "__main__":
    main()
