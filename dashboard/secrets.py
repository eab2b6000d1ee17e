"""Secret values never reach the page.

The agent scrubs secrets before anything is stored (agent/secret_scrubber.hpp) and the
LLM key goes only into request headers. The dashboard scrubs again, because a database may
come from an older build or another machine: the values of this process's credential-named
environment variables (the agent's rule), and text shaped like the API keys the providers
issue.
"""
import os
import re

REPLACEMENT = "[secret]"
MIN_SECRET_LENGTH = 6  # the agent's kMinSecretLength: shorter values protect nothing
_CREDENTIAL_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH",
                     "PRIVATE", "SESSION", "COOKIE")
# OpenAI-style (sk-..., sk-proj-...), Google API keys (AIza + 35), bearer headers.
_KEY_SHAPES = re.compile(
    r"\bsk-[A-Za-z0-9_-]{16,}|\bAIza[0-9A-Za-z_-]{35}\b|(?i:\bbearer\s+)[A-Za-z0-9._~+/=-]{16,}")


def credential_variable(name):
    upper = name.upper()
    listed = {n.strip() for n in os.environ.get("PALLADIUM_SECRET_ENV", "").split(",") if n.strip()}
    return name in listed or any(w in upper for w in _CREDENTIAL_WORDS)


class Scrubber:
    def __init__(self, environ=None):
        env = os.environ if environ is None else environ
        values = {v for k, v in env.items() if credential_variable(k) and len(v) >= MIN_SECRET_LENGTH}
        # Longest first, so a secret containing another is removed whole.
        self._secrets = sorted(values, key=len, reverse=True)

    def __call__(self, text):
        if not isinstance(text, str) or not text:
            return text
        for s in self._secrets:
            text = text.replace(s, REPLACEMENT)
        return _KEY_SHAPES.sub(REPLACEMENT, text)
