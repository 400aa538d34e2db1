"""The rule every new password must pass, wherever it is set: the sign-up, reset and change
forms, and the operator's ``artcat users create``. One function, ``password_problem``, says why
a password is refused (or None)."""

from __future__ import annotations

from zxcvbn import zxcvbn

# NIST SP 800-63B (5.1.1.2): at least 8 characters, at least 64 allowed (argon2 hashes any
# length; the maximum bounds the work per request), no composition rules, and a check against
# common, breached and context-specific passwords: zxcvbn's offline estimate (its dictionaries
# of common and leaked passwords, names and words, keyboard patterns, dates, repeats), with the
# user's email and name as context. A score of 3 ("safely unguessable") is the bar.
PASSWORD_MIN = 8
PASSWORD_MAX = 1000
PASSWORD_MIN_SCORE = 3
ZXCVBN_MAX = 72  # zxcvbn's own bound; a longer password is judged by its first 72 characters
SITE_WORDS = ("artcat", "art catalog", "catalog", "catalogue", "gallery", "artwork")
STRENGTH_HINT = (
    f"At least {PASSWORD_MIN} characters; longer is better. A few unrelated words are easy to "
    "remember and hard to guess. Symbols and capitals are welcome but not required. Common or "
    "leaked passwords, and ones built from your name or email, are refused."
)


def _context(email: str, name: str) -> list[str]:
    """Return the words an attacker would try first for this user."""
    local, _, domain = email.strip().lower().partition("@")
    words = [email.strip().lower(), local, *domain.split("."), name.strip().lower()]
    words += [*name.lower().split(), "".join(name.lower().split()), *SITE_WORDS]
    return [w for w in words if len(w) >= 3]


def password_problem(password: str, *, email: str = "", name: str = "") -> str | None:
    """Return why a new password is too weak, or None when it is acceptable."""
    if len(password) < PASSWORD_MIN:
        return f"Use at least {PASSWORD_MIN} characters."
    if len(password) > PASSWORD_MAX:
        return f"Use at most {PASSWORD_MAX} characters."
    folded = password.strip().lower()
    if folded and folded in {email.strip().lower(), name.strip().lower()}:
        return "Don't use your email address or name as your password."
    result = zxcvbn(password[:ZXCVBN_MAX], user_inputs=_context(email, name))
    if result["score"] >= PASSWORD_MIN_SCORE:
        return None
    feedback = result["feedback"]
    why = feedback["warning"] or "It follows a pattern that is quick to try."
    advice = " ".join(feedback["suggestions"][:1]) or "Add another word or two."
    return f"This password is too easy to guess. {why} {advice}"
