"""Doctor's checks and its report: what was found, how bad it is, and what to do."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

OK, INFO, WARNING, PROBLEM = "ok", "info", "warning", "problem"


@dataclass
class Check:
    topic: str
    level: str
    subject: str
    message: str
    fix: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Report:
    a0_root: str
    era: str | None = None
    era_versions: str | None = None
    version: str | None = None
    hook_dir: str | None = None
    #: "plugin" or "extensions" (org.install.plugin)
    form: str | None = None
    pack_dir: str | None = None
    checks: list[Check] = field(default_factory=list)

    @property
    def problems(self) -> list[Check]:
        return [c for c in self.checks if c.level == PROBLEM]

    def add(self, *checks: Check) -> None:
        self.checks.extend(checks)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["problems"] = len(self.problems)
        data["ok"] = not self.problems
        return data


_TOPICS = {"tree": "Agent-Zero", "plugin": "Plugin", "hook": "Hooks", "clash": "Name clashes", "library": "Library", "organization": "Organization",
           "supervisors": "LLM supervisors", "link": "Supervision"}


def render(report: Report, topics: dict[str, str] | None = None) -> str:
    lines = [f"a0org doctor: {'Agent-Zero at ' if topics is None else ''}{report.a0_root}"]
    if report.era:
        form = "as a plugin" if report.form == "plugin" else "in extension folders"
        lines.append(f"  era {report.era} ({report.era_versions}), version {report.version}; {form}, hooks in {report.hook_dir}/")
        lines.append(f"  pack: {report.pack_dir or 'not found, so hooks are not compared with it (pass --pack-dir)'}")
    for topic, title in (topics or _TOPICS).items():
        checks = [c for c in report.checks if c.topic == topic]
        if not checks:
            continue
        lines.append(f"\n{title}")
        for check in checks:
            lines.append(f"  {check.level.upper():<8} {check.subject}: {check.message}")
            if check.fix and check.level != OK:
                lines.append(f"  {'':<8} fix: {check.fix}")
    warnings = sum(c.level == WARNING for c in report.checks)
    problems = len(report.problems)
    lines.append("")
    fine = "everything needed is installed and loads" if topics is None else "no problem"
    lines.append(f"Result: {problems} problem(s), {warnings} warning(s)." if problems else f"Result: {fine} ({warnings} warning(s)).")
    return "\n".join(lines)

