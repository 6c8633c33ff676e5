"""Write the curated reports of your own cloud: ``python -m toolkit.report``.

With nothing named, every curated notebook runs against its own sandbox (``make report``);
``--cloud public --credential cli`` runs them on the tenant the Azure CLI signed in to, each
notebook discovering the scope it is not given. Parameters reach each notebook through
papermill (those its ``parameters`` cell declares); the executed notebooks are kept beside their
HTML pages in ``--output-dir``: each report's full page (``<name>.html``) and its page without
code (``<name>-no-code.html``: text, tables, charts and maps), or the one ``--pages`` names.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from toolkit.report.pages import PAGES

__all__ = ["main", "parameters_of"]


def _value(text: str) -> Any:
    """Read a ``-p NAME VALUE`` value as YAML (numbers, lists, ``null``), as papermill's does."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def parameters_of(args: argparse.Namespace) -> dict[str, Any]:
    """Gather the notebooks' parameters from the command's options.

    Returns
    -------
    dict
        Only those given: ``cloud``, ``credential``, ``management_group``, ``subscriptions``,
        ``resource_groups``, ``day``, ``places``, ``workspace``, ``history_store``, then each
        ``-p NAME VALUE``.
    """
    given: dict[str, Any] = {
        "cloud": args.cloud, "credential": args.credential,
        "management_group": args.management_group,
        "subscriptions": args.subscription or None, "resource_groups": args.resource_group or None,
        "day": args.day, "places": args.place or None, "workspace": args.workspace,
        "history_store": args.history_store,
    }
    out = {k: v for k, v in given.items() if v is not None}
    for name, value in args.parameter:
        out[name] = _value(value)
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m toolkit.report",
        description="Run the curated notebooks (or the ones named) as reports of your cloud: "
                    "each executed notebook and its HTML pages are written to --output-dir.")
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to run (default: every curated notebook)")
    scope = parser.add_argument_group("what the reports are about (default: what the "
                                      "credential can see; with nothing set, the sandbox)")
    scope.add_argument("--cloud", help="public, usgov, china (or az's AzureCloud...); default "
                                       "TOOLKIT_CLOUD, else the sandbox")
    scope.add_argument("--credential", help="cli, default, managed_identity, interactive, "
                                            "device_code (default TOOLKIT_CREDENTIAL)")
    scope.add_argument("--management-group", help="the management group the tenant reports "
                                                  "start from (default: the tenant root group)")
    scope.add_argument("--subscription", action="append", metavar="ID_OR_NAME",
                       help="a subscription to report on (repeatable)")
    scope.add_argument("--resource-group", action="append", metavar="NAME",
                       help="a resource group to report on (repeatable)")
    scope.add_argument("--day", help="the instant the reports are as of (ISO 8601); default "
                                     "now by the services' clock")
    scope.add_argument("--place", action="append", metavar="NAME",
                       help="a place of the maps reports (repeatable; found with geocode)")
    scope.add_argument("--workspace", help="the workspace (id or name) of the eventstream "
                                           "report")
    scope.add_argument("--history-store", help="the policy history store (a folder or fsspec "
                                               "URL) the compliance reports read and append to")
    scope.add_argument("-p", "--parameter", nargs=2, action="append", default=[],
                       metavar=("NAME", "VALUE"), help="any other parameter (a YAML value)")
    parser.add_argument("--output-dir", type=Path, default=Path("reports"))
    parser.add_argument("--pages", choices=PAGES, default="both",
                        help="the pages of each report: both (default), full (<name>.html: "
                             "text, code and outputs) or no-code (<name>-no-code.html: text, "
                             "tables, charts and maps, without a line of code)")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    parser.add_argument("--timeout", type=int, default=300, help="seconds a cell may take")
    return parser


def _check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse what would fail in every notebook, before any kernel starts (exit status 2)."""
    import keyword
    from datetime import datetime

    from toolkit._core.credentials import credential_word
    from toolkit._core.errors import ValidationError
    from toolkit._spec.clouds import CLOUDS, get_cloud

    try:
        if args.cloud is not None:
            get_cloud(args.cloud)
    except KeyError:
        names = ", ".join(n for n in CLOUDS if n != "neutral")
        parser.error(f"argument --cloud: no cloud is named {args.cloud!r} (the clouds: {names}, "
                     "or the Azure CLI's names: AzureCloud, AzureUSGovernment, AzureChinaCloud)")
    if args.credential is not None:
        try:
            credential_word(args.credential)
        except ValidationError as err:
            parser.error(f"argument --credential: {args.credential!r} {err.rule}")
    if args.day is not None:
        try:
            datetime.fromisoformat(args.day)
        except ValueError:
            parser.error(f"argument --day: {args.day!r} is no ISO 8601 day or instant "
                         "(2026-11-20, 2026-11-20T09:00:00Z)")
    for option, values in (("--subscription", args.subscription),
                           ("--resource-group", args.resource_group), ("--place", args.place)):
        for value in values or ():
            if not value.strip():
                parser.error(f"argument {option}: an empty value names nothing")
    for name, _ in args.parameter:
        if not name.isidentifier() or keyword.iskeyword(name):
            parser.error(f"argument -p/--parameter: {name!r} is no parameter name (a Python "
                         "identifier, as the notebooks' parameters cells declare them)")
    if args.jobs < 1 or args.timeout < 1:
        parser.error("--jobs and --timeout must be at least 1")
    if args.output_dir.exists() and not args.output_dir.is_dir():
        parser.error(f"argument --output-dir: {args.output_dir} is a file, not a folder")


def main(argv: list[str] | None = None) -> int:
    """Run the reports; exit status 1 when a notebook failed (the others are written).

    Returns
    -------
    int
        The exit status.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    _check(parser, args)
    try:
        from toolkit.report.run import curated_notebooks, run_reports
    except ImportError as err:  # pragma: no cover - depends on the install
        parser.exit(2, f"{parser.prog}: the report command needs the report extra "
                       f"(pip install 'cloudops-frames[report]'): {err}\n")
    notebooks = args.notebooks or curated_notebooks()
    if not notebooks:
        parser.error("no notebooks named, and the curated notebooks are not installed")
    missing = [str(p) for p in notebooks if not p.is_file()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")

    def say(line: str) -> None:
        print(line, flush=True)

    start = time.perf_counter()
    outcomes = run_reports(notebooks, args.output_dir, parameters=parameters_of(args),
                           jobs=args.jobs, timeout=args.timeout, say=say, pages=args.pages)
    failed = [o for o in outcomes if not o.ok]
    say(f"{len(outcomes)} notebooks in {time.perf_counter() - start:.1f} s ({args.jobs} at a "
        f"time); reports in {args.output_dir.resolve()}")
    for o in failed:
        print(f"failed: {o.notebook}: {o.error}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
