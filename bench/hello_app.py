"""The baseline of the HTTP benchmark: a falcon hello-world JSON app.

It is served by the project's own serving code (``artcat serve``'s: waitress in one pinned process,
or granian's pinned workers sharing one port), so the service and its baseline differ only in
what the app does.

    python -m bench.hello_app --port 8100 --workers 1
"""

from __future__ import annotations

import argparse

import falcon

from common.granian_serve import run_granian
from common.serve import pin_to_one_core, run_waitress


class Hello:
    """Answer a small JSON document."""

    def on_get(self, _req: falcon.Request, resp: falcon.Response) -> None:
        """Say hello."""
        resp.media = {"hello": "world"}


def build_app() -> falcon.App:
    """Build the hello-world app."""
    app = falcon.App()
    app.add_route("/hello", Hello())
    return app


def main() -> None:
    """Serve the baseline until SIGTERM."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    if args.workers == 1:  # as ``artcat serve`` in development
        pin_to_one_core()
        run_waitress(build_app(), args.host, args.port, threads=args.threads)
        return
    run_granian(
        build_app, args.host, args.port, workers=args.workers, threads=args.threads, grace=10
    )


if __name__ == "__main__":
    main()
