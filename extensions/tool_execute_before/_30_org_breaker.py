# Circuit breaker: a call that already failed the same way several times, after the agent
# was told, is not run again; the agent gets a short [SUPERVISOR] Blocked result instead.
# All logic lives in the `org` package; this file only hands Agent-Zero's objects over.
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


class OrgBreaker(Extension):
    async def execute(self, tool_args=None, tool_name=None, **kwargs):
        if _org_hooks is not None:
            await _org_hooks.tool_execute_before(self.agent, tool_args=tool_args, tool_name=tool_name)
