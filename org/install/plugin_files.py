"""The files the plugin form adds beside the hooks, generated at install time: the manifest
Agent-Zero reads, a read-only settings screen showing the active organization and its
doctrine (``webui/config.html``, filled through ``hooks.py`` from :mod:`org.a0.plugin_settings`),
and the supervision page (``webui/supervision.*`` from ``org/a0/webui/``, answered by
``api/supervision.py`` from :mod:`org.a0.supervision_view`)."""

from __future__ import annotations

from importlib import resources

from org.install.plugin import PLUGIN_META, PLUGIN_NAME

HOOKS_SCRIPT = "hooks.py"
CONFIG_SCREEN = "webui/config.html"
SUPERVISION_API = "api/supervision.py"
SUPERVISION_PAGE = ("supervision.html", "supervision.js", "supervision.css")

_SUPERVISION_API = '''\
"""The a0_org_kernel plugin's API: POST /api/plugins/a0_org_kernel/supervision {"context": CHAT_ID}.

Written by the a0-org-kernel installer and replaced on every install. Answers the supervision
page (webui/supervision.html) with what the pack wrote about the chat: read-only. Agent-Zero
checks the login and the CSRF token before it calls this.
"""

import asyncio

from helpers.api import ApiHandler, Request


class Supervision(ApiHandler):
    async def process(self, input: dict, request: Request) -> dict:
        context_id = str((input or {}).get("context") or "")[:200] or None
        try:
            from org.a0.supervision_view import supervision_view
        except Exception as exc:  # the library is not installed in Agent-Zero's Python
            return {"error": f"the a0-org-kernel library cannot be imported: {type(exc).__name__}: {exc}"}
        project = None
        if context_id:
            try:
                from agent import AgentContext

                context = AgentContext.get(context_id)
                project = context.get_data("project") if context is not None else None
            except Exception:
                project = None
        return await asyncio.to_thread(supervision_view, context_id, project if isinstance(project, str) else None)
'''

_HOOKS = '''\
"""Functions of the a0_org_kernel plugin that Agent-Zero calls by name (helpers.plugins.call_plugin_hook).

Written by the a0-org-kernel installer and replaced on every install. The plugin's settings
screen shows the active organization and its doctrine; nothing is saved from it: the doctrine
lives in usr/organizations.
"""


def get_plugin_config(**kwargs):
    try:
        from org.a0.plugin_settings import settings_view
    except Exception as exc:  # the library is not installed in Agent-Zero's Python
        return {"state": "error", "message": f"the a0-org-kernel library cannot be imported: {type(exc).__name__}: {exc}",
                "folder": "", "roles": []}
    return settings_view()


def save_plugin_config(**kwargs):
    return None  # read-only: Agent-Zero writes no config.json when this returns None
'''

_CONFIG_SCREEN = """\
<html>
<head>
    <title>Organization kernel</title>
</head>

<body>
    <!-- Written by the a0-org-kernel installer. Read-only: filled by the plugin's hooks.py. -->
    <div x-data>
        <template x-if="config">
            <div>
                <div class="section-title">Organization kernel</div>
                <div class="section-description">
                    The active organization and the doctrine of its roles, as the pack reads them from
                    usr/organizations. To change them, edit the files there or run
                    install_all.sh --activate ORG_ID; nothing on this screen is saved.
                    The plugin switch turns the pack on or off for everyone, a project or an agent profile.
                </div>

                <div class="field">
                    <div class="field-label">
                        <div class="field-title">Supervision of this chat</div>
                        <div class="field-description">
                            What the supervisor did in the chat open now and why: the timeline of checks, steering,
                            blocks and pauses and the progress that followed, the PACE level over turns, the knowledge
                            and directives in force, and the doctrine with where each value came from.
                        </div>
                    </div>
                    <div class="field-control">
                        <a target="_blank" rel="noopener"
                           :href="'/plugins/a0_org_kernel/webui/supervision.html?context=' + encodeURIComponent((globalThis.getContext && globalThis.getContext()) || '')">Open the supervision page</a>
                    </div>
                </div>

                <div class="field">
                    <div class="field-label">
                        <div class="field-title">Active organization</div>
                        <div class="field-description" x-text="config.message"></div>
                    </div>
                    <div class="field-control">
                        <span x-text="config.org_id ? config.org_name + ' (' + config.org_id + '), default role ' + config.default_role : 'none'"></span>
                    </div>
                </div>

                <template x-for="role in (config.roles || [])" :key="role.role_id">
                    <div class="field">
                        <div class="field-label">
                            <div class="field-title" x-text="role.role_name + ' (' + role.role_id + ')'"></div>
                            <div class="field-description" x-text="role.error || role.file"></div>
                        </div>
                        <div class="field-control">
                            <table>
                                <template x-for="item in (role.doctrine || [])" :key="item.name">
                                    <tr><td x-text="item.name"></td><td x-text="item.value"></td></tr>
                                </template>
                            </table>
                        </div>
                    </div>
                </template>
            </div>
        </template>
    </div>
</body>

</html>
"""


def plugin_yaml(version: str) -> bytes:
    """The manifest Agent-Zero reads (see docs/agent-zero.md, "The plugin form")."""
    text = (
        "# Written by the a0-org-kernel installer (install_all.sh); it is replaced on every install.\n"
        f"name: {PLUGIN_NAME}\n"
        "title: Organization kernel\n"
        "description: >-\n"
        "  a0-org-kernel: watches the agent after every turn and steers it out of loops, stalls and\n"
        "  tool-failure cascades with short [SUPERVISOR] messages, following the active organization's\n"
        "  doctrine (usr/organizations). Switch it off for a project or an agent profile to leave\n"
        "  those agents unsupervised.\n"
        f'version: "{version}"\n'
        "settings_sections: [agent]\n"
        "per_project_config: true\n"
        "per_agent_config: true\n"
        "always_enabled: false\n"
    )
    return text.encode("utf-8")


def plugin_files(version: str) -> list[tuple[str, bytes, str]]:
    """(path inside the plugin folder, content, what it is), the manifest first."""
    return [
        (PLUGIN_META, plugin_yaml(version), "plugin manifest"),
        (HOOKS_SCRIPT, _HOOKS.encode("utf-8"), "plugin settings: reads the organization"),
        (CONFIG_SCREEN, _CONFIG_SCREEN.encode("utf-8"), "plugin settings screen"),
        (SUPERVISION_API, _SUPERVISION_API.encode("utf-8"), "supervision page: its API"),
        *((f"webui/{name}", resources.files("org.a0").joinpath("webui", name).read_bytes(), "supervision page")
          for name in SUPERVISION_PAGE),
    ]
