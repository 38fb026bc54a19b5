"""The trust boundary between the supervisors' model and the agent's prompt.

The supervisors' model reads the project's code, and code can carry text aimed at it; the
model can also simply be wrong. What it writes is therefore data, never an order:

* :func:`neutralise` escapes model text for the prompt: no heading, code fence, control
  character, terminal escape or bidirectional override of its own survives, so a
  directive cannot pose as a section (``## ACTIVE DIRECTIVES``) or hide what it says;
* :func:`screen` names what makes a directive or document unfit to reach the agent
  without a person's word: commands reaching outside the project (network fetches,
  piping to a shell, deleting outside it, reading credentials), paths outside the project,
  URLs the project does not already use, and words that tell the agent to ignore its
  instructions, hide something from the user or claim the user's authorisation. Such an
  item is quarantined in the review queue, not injected.

Each check is a small pure function in :data:`CHECKS`; a finding is a short reason.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from org.kernel.credentials import is_credential_file
from org.lazy_patterns import lazy_pattern

# -- neutralising ------------------------------------------------------------------------------

#: ANSI/VT escape sequences (CSI, OSC, and two-character escapes).
_ANSI = lazy_pattern(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
#: Control characters but the line break and tab, C1 controls, and the characters that reorder
#: or hide text (bidirectional overrides and isolates, zero-width characters, the BOM).
_CONTROL = lazy_pattern("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\u061c\ufeff]")
_HEADING_AT_START = lazy_pattern(r"^([ \t]*)(#+)", re.MULTILINE)
_FENCE = lazy_pattern(r"`{3,}|~{3,}")
_SECTION_NAMES = lazy_pattern(r"(?<!')#*[ \t]*\b(ACTIVE DIRECTIVES|PROJECT KNOWLEDGE|EXTRAS)\b(?!')", re.IGNORECASE)


def neutralise(text: str) -> str:
    """``text`` as inert data for the prompt: controls, escapes and bidi overrides removed, headings
    and code fences escaped, the pack's own section names lower-cased (``## ACTIVE DIRECTIVES``
    becomes ``'active directives'``). Applying it twice changes nothing more."""
    text = _CONTROL.sub("", _ANSI.sub("", text.replace("\t", " ")))
    text = _SECTION_NAMES.sub(lambda m: f"'{m.group(1).lower()}'", text)
    text = _HEADING_AT_START.sub(lambda m: m.group(1) + "\\" + m.group(2) if m.group(2) else m.group(0), text)
    text = re.sub(r"\\\\+#", r"\\#", text)  # stays idempotent
    return _FENCE.sub("'''", text)


def view(text: str) -> str:
    """``text`` for a person's terminal: every control, escape and invisible character shown as ``\\xNN`` /
    ``\\uNNNN`` (not removed: the person deciding should see that it was there)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}" if ord(m.group(0)) < 0x100 else f"\\u{ord(m.group(0)):04x}",
                        text.replace("\t", " "))


# -- screening ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProjectBounds:
    """What the project already is: its folders and the hosts its code and tasks name."""

    roots: tuple[str, ...] = ()
    hosts: frozenset[str] = field(default_factory=frozenset)


_URL = lazy_pattern(r"\b([a-z][a-z0-9+.\-]*)://([^\s/'\"`<>)\]]*)", re.IGNORECASE)
_NETWORK_COMMAND = lazy_pattern(
    r"(?i)(?<![\w-])(curl|wget|nc|ncat|netcat|scp|sftp|ftp|rsync|telnet|socat|invoke-webrequest|iwr|irm|aws\s+s3\s+(?:cp|sync|mv)"
    r"|gsutil\s+cp|rclone\s+(?:copy|sync)|az\s+storage)(?![\w-])")
_UPLOAD = lazy_pattern(r"(?i)\b(upload|exfiltrat\w*|send|post|transmit|copy)\b[^\n]{0,80}?\b(to|into)\b[^.\n]{0,40}(://|@|\bs3\b|\bbucket\b)")
_PIPE_TO_SHELL = lazy_pattern(
    r"(?i)\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|\|\s*(?:sudo\s+)?(?:python[0-9.]*|perl|ruby|node|iex|powershell|pwsh)\b"
    r"|\b(?:bash|sh|zsh)\s+-c\b|\beval\s*[\"'`$(]|\bsource\s+<\(")
_DELETE = lazy_pattern(r"(?i)(?<![\w-])(?:rm\s+(?:-[a-z]*\s+)*|rmdir\s+|shred\s+|del\s+/[sq]\s+|find\s+\S+.*-delete)(?P<target>[^\s;|&]*)")
#: A path: in the home folder, climbing out of the working folder, or absolute under a system's top folder
#: (``/users/{id}`` is a route, ``/etc/passwd`` is not).
_PATH = lazy_pattern(
    r"(?<![\w.:/\-\\~])((?:~(?![~\s])[\w.\-]*|\$HOME|\$\{HOME\})(?:/[^\s'\"`,;:)\]]*)?|(?:\.\./)+[^\s'\"`,;:)\]]*"
    r"|/(?:root|home|etc|usr|var|tmp|opt|proc|sys|dev|bin|sbin|lib|lib64|mnt|media|srv|boot|run|a0|Users|private|Volumes)"
    r"(?:/[^\s'\"`,;:)\]]*)?(?![\w.\-]))")
_CREDENTIAL_WORDS = lazy_pattern(
    r"(?i)(?:^|[\s'\"`(/=])(?:\.ssh\b|id_rsa|id_ed25519|id_ecdsa|authorized_keys|\.aws/|\.env\b|/etc/passwd|/etc/shadow|\.netrc"
    r"|\.git-credentials|\.pgpass|\.kube/config|\.docker/config\.json|\.npmrc|\.pypirc|credentials\.json|private[ _-]key)")
_OVERRIDE = lazy_pattern(
    r"(?i)\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:previous|prior|above|earlier|all|any|your|system|other)\b"
    r"[^.\n]{0,30}\b(?:instructions?|rules?|prompts?|directives?|guidelines?|polic(?:y|ies)|constraints?)\b"
    r"|\bnew (?:system )?instructions\b|\byou are now\b|\bsystem prompt\b|\bjailbreak\b|\bdeveloper mode\b")
_HIDE = lazy_pattern(
    r"(?i)\b(?:do not|don't|never|without)\s+(?:tell(?:ing)?|inform(?:ing)?|mention(?:ing)?|show(?:ing)?|report(?:ing)?|reveal(?:ing)?"
    r"|notify(?:ing)?|alert(?:ing)?|let(?:ting)?)\b[^.\n]{0,30}\b(?:user|human|person|operator|anyone)\b"
    r"|\b(?:hide|conceal|keep)\b[^.\n]{0,40}\bfrom (?:the )?(?:user|human|operator)\b|\bcover (?:up|your tracks)\b")
_AUTHORITY = lazy_pattern(
    r"(?i)\b(?:user|human|operator|owner)\b[^.\n]{0,20}\b(?:has|have|had|is|already)\s+(?:already\s+)?"
    r"(?:authori[sz]ed|approved|permitted|allowed|granted|consented|agreed)"
    r"|\bwithout (?:asking|confirmation|approval|permission|confirming)\b|\bno need to (?:ask|confirm)\b|\bpre-?(?:approved|authori[sz]ed)\b")


#: Text posing as the pack's own prompt: a section heading, a directive line, Agent-Zero's extras marker.
_FORGED = lazy_pattern(r"(?im)^[ \t>]*#+[ \t]*(?:ACTIVE DIRECTIVES|PROJECT KNOWLEDGE)\b|\bD\d+ *\[(?:critical|normal|low)\b|\[EXTRAS\]")


def _network(text: str, bounds: ProjectBounds) -> list[str]:
    found = {m.group(1).lower() for m in _NETWORK_COMMAND.finditer(text)}
    reasons = [f"runs a network command ({', '.join(sorted(found))})"] if found else []
    if _UPLOAD.search(text):
        reasons.append("sends data out of the project")
    return reasons


def _shell(text: str, bounds: ProjectBounds) -> list[str]:
    return ["pipes into a shell or an interpreter"] if _PIPE_TO_SHELL.search(text) else []


def _outside(path: str, bounds: ProjectBounds) -> bool:
    """A path that leaves the project: the home folder, a climb out of it, or an absolute path elsewhere."""
    if path.startswith(("~", "$HOME", "${HOME}")):
        return True
    if path.startswith("../"):
        return True
    normal = posixpath.normpath(path)
    return not any(normal == root or normal.startswith(root.rstrip("/") + "/") for root in bounds.roots)


def _paths(text: str, bounds: ProjectBounds) -> list[str]:
    outside = [m.group(1) for m in _PATH.finditer(text) if _outside(m.group(1), bounds)]
    return [f"names a path outside the project ({', '.join(dict.fromkeys(outside[:3]))})"] if outside else []


def _delete(text: str, bounds: ProjectBounds) -> list[str]:
    for match in _DELETE.finditer(text):
        target = match.group("target")
        if not target or target in ("*", "/*") or _outside(target, bounds):
            return ["deletes outside the project"]
    return []


def _credentials(text: str, bounds: ProjectBounds) -> list[str]:
    named = any(is_credential_file(word) for word in re.findall(r"[\w.~/\-]+", text) if "/" in word or word.startswith("."))
    return ["reads credentials"] if named or _CREDENTIAL_WORDS.search(text) else []


def _urls(text: str, bounds: ProjectBounds) -> list[str]:
    hosts = {m.group(2).rsplit("@", 1)[-1].split(":")[0].lower() for m in _URL.finditer(text)}
    unknown = sorted(h for h in hosts if h and h not in bounds.hosts)
    return [f"names a URL the project does not use ({', '.join(unknown[:3])})"] if unknown else []


def _words(pattern: re.Pattern[str], reason: str) -> Callable[[str, ProjectBounds], list[str]]:
    return lambda text, bounds: [reason] if pattern.search(text) else []


#: Every check: (text, what the project is) -> reasons, empty when the text is fine.
CHECKS: tuple[Callable[[str, ProjectBounds], list[str]], ...] = (
    _network, _shell, _delete, _credentials, _paths, _urls,
    _words(_OVERRIDE, "tells the agent to ignore its instructions"),
    _words(_FORGED, "poses as the pack's own prompt sections"),
    _words(_HIDE, "tells the agent to hide something from the user"),
    _words(_AUTHORITY, "claims the user's authorisation"),
)


def screen(texts: Iterable[str], bounds: ProjectBounds = ProjectBounds()) -> list[str]:
    """Why these texts (one directive's or one document's fields) must wait for a person; [] when none.

    Checked as written and as :func:`neutralise` shows them, so an escape sequence or an
    invisible character cannot split a word to slip past a check.
    """
    reasons: list[str] = []
    for text in texts:
        for variant in dict.fromkeys((text, neutralise(text))):
            for check in CHECKS:
                reasons += [r for r in check(variant, bounds) if r not in reasons]
    return reasons


def bounds_of(workdirs: Iterable[str], texts: Iterable[str]) -> ProjectBounds:
    """The project's folders (the tasks' working directories) and the hosts its code and tasks already name."""
    roots = tuple(dict.fromkeys(posixpath.normpath(w) for w in workdirs if w and w.startswith("/") and w.rstrip("/")))
    hosts = frozenset(m.group(2).rsplit("@", 1)[-1].split(":")[0].lower() for text in texts for m in _URL.finditer(text))
    return ProjectBounds(roots, hosts)


__all__ = ["CHECKS", "ProjectBounds", "bounds_of", "neutralise", "screen", "view"]
