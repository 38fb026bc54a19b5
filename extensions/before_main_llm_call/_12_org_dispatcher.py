# Organization kernel: picks the role, sets the PACE level and writes SALUTE reports.
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


class OrgDispatcher(Extension):
    async def execute(self, loop_data=None, **kwargs):
        if _org_hooks is not None:
            _org_hooks.before_main_llm_call(self.agent, loop_data=loop_data)
