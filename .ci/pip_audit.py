"""Audit the installed dependencies against PyPI's advisories; fail only on real findings.

pip-audit exits 1 both when it finds a vulnerability and when it cannot reach PyPI (with a
traceback), so its exit code cannot tell CI which happened. This reads its JSON report instead:

- a known vulnerability: each is listed with its fix, and the exit code is 1;
- PyPI unreachable (offline, DNS, timeout): said plainly, exit code 0; an audit that could not
  run is not a finding, and the next run audits again;
- anything else going wrong: pip-audit's error is shown, exit code 2.

Only pypi.org is contacted (pip-audit's default PyPI service). The environment is read locally
(nothing is resolved or installed, pip's self-check is off), and the project itself, installed
editable, is skipped.

Some PyPI mirrors serve a project's JSON (``/pypi/NAME/json``) but not a release's
(``/pypi/NAME/VERSION/json``), which is what pip-audit asks for; it then reports every package
as "not found". For those the project's JSON is read instead: its ``vulnerabilities`` are those
of the latest release, so a package installed at the latest release is audited that way, and
any other is listed as not audited (never counted as clean).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import requests

OFFLINE_SIGNS = (
    "ConnectionError",
    "NameResolutionError",
    "Max retries exceeded",
    "ConnectTimeout",
    "ReadTimeout",
    "Temporary failure in name resolution",
)
COMMAND = [
    sys.executable, "-m", "pip_audit",
    "--local", "--skip-editable",
    "--vulnerability-service", "pypi",
    "--progress-spinner", "off",
    "--format", "json",
]  # fmt: skip


def main() -> int:
    """Run pip-audit and report; return the exit code for CI."""
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "audit.json"
        done = subprocess.run(  # noqa: S603 - a fixed command line, no shell
            [*COMMAND, "--output", str(report)], env=env, capture_output=True, text=True
        )
        text = report.read_text() if report.exists() else ""
    if not text.strip():
        if any(sign in done.stderr for sign in OFFLINE_SIGNS):
            print("pip-audit: PyPI is unreachable; dependencies NOT audited (not a finding)")
            return 0
        print(done.stderr or done.stdout, file=sys.stderr)
        print(f"pip-audit failed (exit code {done.returncode}) without a report", file=sys.stderr)
        return 2
    deps = json.loads(text)["dependencies"]
    audited = [d for d in deps if not d.get("skip_reason")]
    not_found = [d for d in deps if "not found on PyPI" in d.get("skip_reason", "")]
    by_project = latest_release_audit([_name_version(d) for d in not_found])
    audited += [d for d in by_project if d is not None]
    covered = {d["name"] for d in audited}
    skipped = sorted(d["name"] for d in deps if d["name"] not in covered)
    found = [(d, v) for d in audited for v in d.get("vulns", [])]
    for dep, vuln in found:
        fixed = ", ".join(vuln.get("fix_versions") or []) or "no fixed version yet"
        aliases = ", ".join(vuln.get("aliases") or [])
        print(f"{dep['name']} {dep['version']}: {vuln['id']} ({aliases}); fixed in {fixed}")
    as_latest = len(by_project) - by_project.count(None)
    print(
        f"pip-audit: {len(audited)} packages audited ({len(audited) - as_latest} by release, "
        f"{as_latest} as the latest release), "
        f"{len(found)} known vulnerabilities; {len(skipped)} not audited"
        + (f": {', '.join(skipped)}" if skipped else "")
    )
    if not audited:
        print("pip-audit: WARNING: nothing could be audited (is this PyPI a partial mirror?)")
    return 1 if found else 0


def _name_version(dep: dict[str, Any]) -> tuple[str, str]:
    """Return the name and installed version of a dependency pip-audit skipped."""
    reason = dep["skip_reason"]  # "... could not be audited: NAME (VERSION)"
    version = reason.rsplit("(", 1)[-1].rstrip(")") if reason.endswith(")") else ""
    return dep["name"], version


def latest_release_audit(packages: list[tuple[str, str]]) -> list[dict[str, Any] | None]:
    """Audit packages installed at their latest release from the project JSON of PyPI.

    Returns, for each package, a pip-audit style entry (name, version, vulns), or None when it
    cannot be audited this way (not the latest release, or PyPI did not answer).
    """
    with requests.Session() as http, ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda p: _project_audit(http, *p), packages))


def _project_audit(http: requests.Session, name: str, version: str) -> dict[str, Any] | None:
    try:
        resp = http.get(f"https://pypi.org/pypi/{name}/json", timeout=15)
        data = resp.json() if resp.status_code == 200 else None
    except (requests.RequestException, ValueError):
        return None
    if not data or data.get("info", {}).get("version") != version:
        return None
    vulns = [
        {"id": v.get("id"), "aliases": v.get("aliases"), "fix_versions": v.get("fixed_in")}
        for v in data.get("vulnerabilities") or []
        if not v.get("withdrawn")
    ]
    return {"name": name, "version": version, "vulns": vulns}


if __name__ == "__main__":
    sys.exit(main())
