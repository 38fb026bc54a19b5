"""The files the plugin form adds beside the hooks, generated at install time: the manifest
Agent-Zero reads, and a read-only settings screen showing the active organization and its
doctrine (``webui/config.html``, filled through ``hooks.py`` from :mod:`org.a0.plugin_settings`)."""

from __future__ import annotations

from org.install.plugin import PLUGIN_META, PLUGIN_NAME

HOOKS_SCRIPT = "hooks.py"
CONFIG_SCREEN = "webui/config.html"

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
    ]
