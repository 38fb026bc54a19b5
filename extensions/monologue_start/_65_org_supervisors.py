# LLM-backed supervisors: at a task's start, waits (at most wait_seconds, shown in the UI)
# for supervisor runs and applies their results. All logic lives in the `org` package.
try:
    from helpers.extension import Extension  # Agent-Zero v0.9.9 and later
except ImportError:
    from python.helpers.extension import Extension  # Agent-Zero up to v0.9.8.x

try:
    from org.a0 import hooks as _org_hooks

    ORG_IMPORT_ERROR = None
except Exception as _exc:  # the pack must never break Agent-Zero's loader
    _org_hooks = None
    ORG_IMPORT_ERROR = f"{type(_exc).__name__}: {_exc}"


class OrgSupervisorsTaskStart(Extension):
    async def execute(self, loop_data=None, **kwargs):
        if _org_hooks is not None:
            await _org_hooks.monologue_start(self.agent, loop_data=loop_data)
