"""HTTP clients that connect from a chosen loopback address, to play two people at once.

Linux answers on all of 127.0.0.0/8, so a client bound to 127.0.0.2 reaches a server listening
on 127.0.0.1, which sees the peer as 127.0.0.2 (the test servers trust no proxy header, so the
socket's address is the client's address, as behind no proxy in production).
"""

from __future__ import annotations

from typing import Any

import requests
from requests.adapters import HTTPAdapter

OWNER = "127.0.0.1"
GUESSER = "127.0.0.2"


class SourceAddressAdapter(HTTPAdapter):
    """A transport adapter whose connections are bound to one local address."""

    def __init__(self, address: str, **kwargs: Any) -> None:
        self.address = address
        super().__init__(**kwargs)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def client_from(address: str) -> requests.Session:
    """Return a session whose every request comes from ``address``."""
    http = requests.Session()
    adapter = SourceAddressAdapter(address)
    http.mount("http://", adapter)
    http.mount("https://", adapter)
    return http
