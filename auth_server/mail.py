"""Outgoing email over SMTP, sent off the request thread so that timing tells nothing.

A staging instance (``ENVIRONMENT=staging``) never sends email, whatever ``EMAIL_ENABLED`` says:
its users are copies of production's (with placeholder addresses) and its testers' accounts; a
message it refuses is logged by subject and recipient domain, never with its body (which holds
reset links).

A development instance with email off (the default) writes each message it is given instead
to a file of its own under the instance folder, ``outbox/``, readable by its owner only (0600
in a 0700 folder): a link in it (a credential) reaches no log and no one else. (The pages give
it none while email is off: without email nobody can prove an address, see
``auth_server/ownership.py``.) The log line names the file, never the body. Production with
email off writes nothing anywhere but that log line.
"""

from __future__ import annotations

import logging
import os
import secrets
import smtplib
import ssl
import time
from concurrent.futures import Future, ThreadPoolExecutor
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

from common.settings import STAGING, AuthSettings

log = logging.getLogger("artcat.mail")

DEVELOPMENT = "development"
OUTBOX = "outbox"
DEFAULT_SENDER = "artcat@localhost"


class Mailer:
    """Send plain-text messages through the configured SMTP server."""

    def __init__(self, settings: AuthSettings) -> None:
        self.settings = settings
        # Sending happens in the background: answering "sent" at once whether or not an account
        # exists keeps the forgotten-password and sign-up pages from telling which emails are
        # registered.
        self._executor: ThreadPoolExecutor | None = None

    @property
    def enabled(self) -> bool:
        """Tell whether email can be sent (enabled, with a sender and a public URL for links)."""
        s = self.settings
        if s.environment == STAGING:
            return False
        return bool(s.email_enabled and s.smtp_host and s.smtp_from and s.public_url)

    @property
    def outbox(self) -> Path | None:
        """Return the folder unsent messages are written to (development, email off), or None."""
        if self.enabled or self.settings.environment != DEVELOPMENT:
            return None
        return self.settings.instance_dir / OUTBOX

    def _suppressed(self, to: str, subject: str) -> bool:
        """Tell whether a message must not be sent nor kept, logging it (without its body)."""
        if self.enabled or self.outbox is not None:
            return False
        why = "staging" if self.settings.environment == STAGING else "email disabled"
        log.info("email not sent (%s): %r to @%s", why, subject, to.rpartition("@")[2])
        return True

    def send_later(self, to: str, subject: str, body: str) -> Future[None]:
        """Queue a message; failures are logged (without the message body, which holds links)."""
        if self._suppressed(to, subject):
            done: Future[None] = Future()
            done.set_result(None)
            return done
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="artcat-mail")
        return self._executor.submit(self._send_logged, to, subject, body)

    def _send_logged(self, to: str, subject: str, body: str) -> None:
        try:
            self.send(to, subject, body)
        except (OSError, smtplib.SMTPException) as ex:
            log.warning("sending %r failed: %s", subject, type(ex).__name__)

    def message(self, to: str, subject: str, body: str) -> EmailMessage:
        """Return the message as it would be sent."""
        sender = self.settings.smtp_from or DEFAULT_SENDER
        msg = EmailMessage()
        msg["From"] = sender
        msg["To"] = to
        msg["Subject"] = subject
        msg["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or None)
        msg.set_content(body)
        return msg

    def send(self, to: str, subject: str, body: str) -> None:
        """Send one message now (where email is off: kept in the outbox, or only logged)."""
        if self._suppressed(to, subject):
            return
        msg = self.message(to, subject, body)
        outbox = self.outbox
        if outbox is not None:
            path = write_private(outbox, msg.as_bytes())
            log.info(
                "email not sent (email disabled): %r to @%s is in %s/%s",
                subject,
                to.rpartition("@")[2],
                OUTBOX,
                path.name,
            )
            return
        s = self.settings
        context = ssl.create_default_context()
        smtp: smtplib.SMTP
        if s.smtp_security == "tls":
            smtp = smtplib.SMTP_SSL(
                s.smtp_host, s.smtp_port, timeout=s.smtp_timeout, context=context
            )
        else:
            smtp = smtplib.SMTP(s.smtp_host, s.smtp_port, timeout=s.smtp_timeout)
        with smtp:
            if s.smtp_security == "starttls":
                smtp.starttls(context=context)
            if s.smtp_user:
                smtp.login(s.smtp_user, s.smtp_password)
            smtp.send_message(msg)

    def close(self) -> None:
        """Wait for queued messages and stop the sending threads."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)


def write_private(folder: Path, content: bytes) -> Path:
    """Write ``content`` to a new file in ``folder`` that only the owner can read; return it."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)  # also when it was made before, by hand
    name = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{secrets.token_hex(6)}.eml"
    path = folder / name
    # Created 0600 in one step (O_EXCL: never through a file or link already there).
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(content)
    return path
