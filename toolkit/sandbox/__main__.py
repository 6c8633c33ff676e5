"""Serve the sandbox on its own: ``python -m toolkit.sandbox --port 8800``."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys

from toolkit._spec.clouds import CLOUDS
from toolkit.sandbox.server import Sandbox


def _denied(sandbox: Sandbox, asked: list[str]) -> list[tuple[str, str]]:
    """List the (id, name) of the world's subscriptions named (by name or id) to refuse."""
    wanted = {a.lower() for a in asked}
    return [(s.id, s.name) for s in sandbox.world.subscriptions
            if s.id.lower() in wanted or s.name.lower() in wanted]


def main(argv: list[str] | None = None) -> int:
    """Run the sandbox until interrupted; print its address and a maps key and token to use."""
    parser = argparse.ArgumentParser(prog="python -m toolkit.sandbox",
                                     description="Serve the toolkit's sandbox on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="port (0 picks a free one)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the world")
    parser.add_argument("--tls", action="store_true", help="serve HTTPS with a generated cert")
    parser.add_argument("--cloud", default=os.environ.get("TOOLKIT_CLOUD") or "neutral",
                        choices=sorted(CLOUDS),
                        help="whose vocabulary to speak: the spec's neutral words (default) or "
                             "a real cloud's (Microsoft.*, x-ms-, Azure-AsyncOperation...)")
    parser.add_argument("--now", default=None,
                        help="the world's day or instant (2026-11-20, 2026-11-20T09:00:00Z); "
                             "default TOOLKIT_SANDBOX_NOW, else today: the same day gives the "
                             "same world")
    parser.add_argument("--deny-subscription", action="append", default=[], metavar="NAME_OR_ID",
                        help="a subscription the caller may not read (repeatable): requests "
                             "under it and under the management groups above it answer 403 "
                             "AuthorizationFailed, as for a principal with a role on only part "
                             "of the tenant")
    parser.add_argument("--secret", default=os.environ.get("TOOLKIT_SANDBOX_SECRET") or None,
                        help="derive the token signing key and the maps key from this secret "
                             "(default TOOLKIT_SANDBOX_SECRET, which keeps it out of the "
                             "process list; else random)")
    parser.add_argument("--lro-polls", type=int, default=2,
                        help="polls a long-running operation takes")
    parser.add_argument("--show-credentials", action="store_true",
                        help="print a bearer token and the maps key (they are secrets)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"argument --port: {args.port} is not a port (0 to 65535)")
    if args.cloud not in CLOUDS:  # a default from TOOLKIT_CLOUD is not checked by argparse
        parser.error(f"argument --cloud (from TOOLKIT_CLOUD): invalid choice: {args.cloud!r} "
                     f"(choose from {', '.join(sorted(CLOUDS))})")
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(name)s %(message)s")
    try:
        sandbox = Sandbox(seed=args.seed, port=args.port, tls=args.tls,
                          lro_polls=args.lro_polls, cloud=args.cloud, now=args.now,
                          secret=args.secret, deny_subscriptions=args.deny_subscription)
    except ValueError as err:
        parser.error(f"argument --now: {err}")
    denied = _denied(sandbox, args.deny_subscription)
    unknown = [d for d in args.deny_subscription
               if not any(d.lower() in (i.lower(), n.lower()) for i, n in denied)]
    if unknown:
        parser.error(f"argument --deny-subscription: no subscription of this world is named "
                     f"{', '.join(map(repr, unknown))} (its subscriptions: "
                     f"{', '.join(s.name for s in sandbox.world.subscriptions)})")
    try:
        sandbox.start()
    except OSError as err:
        parser.exit(1, f"{parser.prog}: cannot listen on {sandbox.host}:{args.port}: "
                       f"{err.strerror or err}\n")
    out = sys.stdout
    out.write(f"sandbox serving at {sandbox.url} (seed {args.seed}; the {args.cloud} cloud's "
              f"words: connect with cloud={args.cloud!r} or TOOLKIT_CLOUD={args.cloud}); its "
              f"clock started at {sandbox.epoch.isoformat()} (--now pins it, else today's "
              "date); Ctrl-C stops it\n")
    if sandbox.ca_file:
        out.write(f"CA certificate: {sandbox.ca_file} (pass verify= this path)\n")
    if denied:
        out.write(f"refusing (403) the subscriptions {', '.join(n for _, n in denied)} and the "
                  "management groups above them\n")
    if args.show_credentials:
        out.write(f"TOOLKIT_TOKEN={sandbox.token(None, expires_in=86400)}\n")
        out.write(f"TOOLKIT_MAPS_KEY={sandbox.maps_key.reveal()}\n")
    else:
        out.write("tokens are signed by this process; --show-credentials prints some to use\n")
    out.flush()
    # the process says Ctrl-C stops it: so it does even where it was started with SIGINT
    # ignored (Python then keeps it ignored), as a shell's background job or a parent that
    # ignores it start their children
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sandbox.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
