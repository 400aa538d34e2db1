"""Outgoing email over SMTP, sent off the request thread so that timing tells nothing.

A staging instance (``ENVIRONMENT=staging``) never sends email, whatever ``EMAIL_ENABLED`` says:
its users are copies of production's (with placeholder addresses) and its testers' accounts; a
message it refuses is logged by subject and recipient domain, never with its body (which holds
reset links).
"""

from __future__ import annotations

import logging
import smtplib
import ssl
from concurrent.futures import Future, ThreadPoolExecutor
from email.message import EmailMessage
from email.utils import make_msgid

from common.settings import STAGING, AuthSettings

log = logging.getLogger("artcat.mail")


class Mailer:
    """Send plain-text messages through the configured SMTP server."""

    def __init__(self, settings: AuthSettings) -> None:
        self.settings = settings
        # Sending happens in the background: answering "sent" at once whether or not an account
        # exists keeps the forgotten-password page from telling which emails are registered.
        self._executor: ThreadPoolExecutor | None = None

    @property
    def enabled(self) -> bool:
        """Tell whether email can be sent (enabled, with a sender and a public URL for links)."""
        s = self.settings
        if s.environment == STAGING:
            return False
        return bool(s.email_enabled and s.smtp_host and s.smtp_from and s.public_url)

    def _suppressed(self, to: str, subject: str) -> bool:
        """Tell whether a message must not be sent, logging it (without its body) if so."""
        if self.enabled:
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

    def send(self, to: str, subject: str, body: str) -> None:
        """Send one message now (nothing is sent, and this is logged, where email is off)."""
        if self._suppressed(to, subject):
            return
        s = self.settings
        msg = EmailMessage()
        msg["From"] = s.smtp_from
        msg["To"] = to
        msg["Subject"] = subject
        msg["Message-ID"] = make_msgid(domain=s.smtp_from.rpartition("@")[2] or None)
        msg.set_content(body)
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
