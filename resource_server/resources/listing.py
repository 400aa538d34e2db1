"""What the user-scoped resources share: the caller and item-only routes."""

from __future__ import annotations

import falcon

from common.api.errors import AuthError
from common.hal import Link, Urls, templated
from resource_server.routes import PlainRoute


def caller_of(req: falcon.Request) -> str:
    """Return the id of the user whose access token the request carries."""
    token = getattr(req.context, "token", None)
    if token is None or not token.user_id:
        raise AuthError()
    return str(token.user_id)


class ItemRoute(PlainRoute):
    """A route reached only by id (no collection), linked from the root as a template."""

    def links(self, urls: Urls) -> dict[str, Link]:
        """Return the root's templated item link."""
        return {self.rel: templated(urls.api(f"{self.path}/{{id}}"))}
