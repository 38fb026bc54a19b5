#!/usr/bin/env python
"""Drive one real Agent-Zero chat turn against a scripted OpenAI-compatible model.

Run with a Python that has Agent-Zero's requirements (tests/real_a0/make_env.sh), with
cwd = a throw-away COPY of an Agent-Zero tree (or pass --tree PATH to have one made):

    VENV/bin/python tests/real_a0/harness.py --tree A0_TREE --script script.json --message "hello"

Script file (JSON), either
    ["<assistant reply 1>", {...reply 2 as JSON object...}, ...]
or
    {"main": [...], "util": [...]}
Main-model replies are consumed in order; when exhausted the server answers with a
`response` tool call that ends the task.  Utility-model calls get the "util" list
in order, then a fixed short text.

The last stdout line is one JSON object:
    {"ok", "layout", "result", "error", "history": [{"ai", "content"}],
     "log": [{"type", "heading", "content"}], "model_calls", "main_calls", "util_calls",
     "calls": [{"kind", "stream", "n_messages"}], "script_left"}
Everything before it is A0's own console output.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAIN_MODEL = "harness-main"
UTIL_MODEL = "harness-util"
DEFAULT_FINAL = {
    "thoughts": ["The harness script is exhausted, ending the task."],
    "headline": "Harness: script exhausted",
    "tool_name": "response",
    "tool_args": {"text": "harness: script exhausted"},
}
DEFAULT_UTIL_REPLY = "Harness chat"


# --------------------------------------------------------------------------------------
# scripted OpenAI-compatible server
# --------------------------------------------------------------------------------------
class ScriptedModel:
    def __init__(self, main: list, util: list, final: str, dump_path: str | None):
        self.main = list(main)
        self.util = list(util)
        self.final = final
        self.lock = threading.Lock()
        self.calls: list[dict] = []
        self.dump_path = dump_path
        self.dumped: list[dict] = []

    def next_reply(self, kind: str, req: dict) -> str:
        with self.lock:
            msgs = req.get("messages") or []
            self.calls.append(
                {"kind": kind, "stream": bool(req.get("stream")), "n_messages": len(msgs)}
            )
            if self.dump_path:
                self.dumped.append({"kind": kind, "request": req})
                # written whole, then renamed: a background request of Agent-Zero's caught by the
                # hard exit at the end must not leave the file truncated
                partial = self.dump_path + ".partial"
                with open(partial, "w") as f:
                    json.dump(self.dumped, f, indent=1, default=str)
                os.replace(partial, self.dump_path)
            if kind == "main":
                return self.main.pop(0) if self.main else self.final
            return self.util.pop(0) if self.util else DEFAULT_UTIL_REPLY


def _as_text(entry) -> str:
    return entry if isinstance(entry, str) else json.dumps(entry)


def make_handler(model: ScriptedModel):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # keep A0's stdout clean
            pass

        def _json(self, code: int, obj: dict):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [
                    {"id": MAIN_MODEL, "object": "model"}, {"id": UTIL_MODEL, "object": "model"}]})
            else:
                self._json(404, {"error": {"message": "not found"}})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            try:
                req = json.loads(self.rfile.read(length) or b"{}")
            except Exception:
                req = {}
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._json(404, {"error": {"message": f"unsupported path {self.path}"}})
                return
            name = str(req.get("model", ""))
            kind = "util" if UTIL_MODEL in name else "main"
            text = model.next_reply(kind, req)
            cid = "chatcmpl-" + uuid.uuid4().hex[:12]
            created = int(time.time())
            usage = {"prompt_tokens": 10, "completion_tokens": max(1, len(text) // 4),
                     "total_tokens": 10 + max(1, len(text) // 4)}
            if not req.get("stream"):
                self._json(200, {
                    "id": cid, "object": "chat.completion", "created": created, "model": name,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "stop"}],
                    "usage": usage,
                })
                return
            # OpenAI SSE streaming
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True

            def chunk(delta: dict, finish=None, **extra):
                obj = {"id": cid, "object": "chat.completion.chunk", "created": created,
                       "model": name,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                obj.update(extra)
                self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
                self.wfile.flush()

            try:
                chunk({"role": "assistant", "content": ""})
                step = 24
                for i in range(0, len(text), step):
                    chunk({"content": text[i:i + step]})
                chunk({}, "stop")
                if (req.get("stream_options") or {}).get("include_usage"):
                    self.wfile.write(b"data: " + json.dumps({
                        "id": cid, "object": "chat.completion.chunk", "created": created,
                        "model": name, "choices": [], "usage": usage}).encode() + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # A0 stops reading once a complete tool request has been streamed

    return Handler


def start_server(model: ScriptedModel):
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(model))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="scripted-llm", daemon=True).start()
    return server, server.server_address[1]


# --------------------------------------------------------------------------------------
# A0 configuration per layout
# --------------------------------------------------------------------------------------
def detect_layout(root: str) -> str:
    if os.path.isfile(os.path.join(root, "helpers", "extension.py")):
        return "v1"  # v0.9.9+ / v1.x: helpers/, plugins/, usr/extensions/python/<point>/
    if os.path.isfile(os.path.join(root, "python", "helpers", "extension.py")):
        return "v0"  # <= v0.9.8.x: python/helpers/, usr/extensions/<point>/
    raise SystemExit(f"not an Agent-Zero tree: {root}")


NOOP_EXT = (
    "# harness: same-named no-op override (disables a memory extension)\n"
    "from python.helpers.extension import Extension\n\n\n"
    "class HarnessNoop(Extension):\n"
    "    async def execute(self, **kwargs):\n"
    "        return None\n"
)

V0_MEMORY_EXTENSIONS = [
    ("monologue_start", "_10_memory_init.py"),
    ("message_loop_prompts_after", "_50_recall_memories.py"),
    ("message_loop_prompts_after", "_91_recall_wait.py"),
    ("monologue_end", "_50_memorize_fragments.py"),
    ("monologue_end", "_51_memorize_solutions.py"),
]


def v0_override_roots(root: str) -> list[str]:
    """Folders whose same-named files override python/extensions/<point>/<file> (v0 layout).

    v0.9.8.x scans usr/extensions/<point>/; v0.9.7 and older have no usr/extensions and
    only merge agents/<profile>/extensions/<point>/ (so use every profile folder there).
    """
    with open(os.path.join(root, "python", "helpers", "extension.py")) as f:
        if "usr/extensions" in f.read():
            return [os.path.join(root, "usr", "extensions")]
    agents = os.path.join(root, "agents")
    return [os.path.join(agents, d, "extensions") for d in sorted(os.listdir(agents))
            if os.path.isdir(os.path.join(agents, d)) and not d.startswith(".")]


def write(path: str, text: str):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def model_section(default: dict, name: str, port: int, ctx_length: int, ctx_history: float | None = None) -> dict:
    sec = dict(default or {})
    sec.update({"provider": "other", "name": name, "api_base": f"http://127.0.0.1:{port}/v1",
                "api_key": "", "ctx_length": ctx_length, "vision": False, "kwargs": {}})
    if ctx_history is not None:
        sec["ctx_history"] = ctx_history
    return sec


def configure(layout: str, root: str, port: int, args) -> dict:
    """Write files into the tree copy; return override_settings for initialize_agent."""
    workdir = args.workdir or args._tmp_workdir
    os.makedirs(workdir, exist_ok=True)
    # usr/settings.json is merged with defaults by settings.normalize_settings (both layouts).
    # workdir_path outside the A0 base dir keeps files.normalize_a0_path() from turning it
    # into /a0/usr/workdir (which code execution would mkdir on this host).
    user_settings = {"workdir_path": workdir}
    override = {}
    if layout == "v1":
        import yaml
        cfg_default = os.path.join(root, "plugins", "_model_config", "default_config.yaml")
        with open(cfg_default) as f:
            cfg = yaml.safe_load(f) or {}
        cfg["allow_chat_override"] = False
        cfg["chat_model"] = model_section(cfg.get("chat_model"), MAIN_MODEL, port, args.ctx_length, args.ctx_history)
        cfg["utility_model"] = model_section(cfg.get("utility_model"), UTIL_MODEL, port, 32000)
        # usr/plugins/<name>/config.json REPLACES the default config (no merge)
        write(os.path.join(root, "usr", "plugins", "_model_config", "config.json"), json.dumps(cfg, indent=1))
        disabled = list(args.disable_plugin or [])
        if not args.keep_memory:
            disabled.append("_memory")
        for plugin in disabled:  # usr/plugins/<name>/.toggle-0 turns a plugin off
            write(os.path.join(root, "usr", "plugins", plugin, ".toggle-0"), "")
        ce_default = os.path.join(root, "plugins", "_code_execution", "default_config.yaml")
        if os.path.isfile(ce_default):
            with open(ce_default) as f:
                ce = yaml.safe_load(f) or {}
            ce["ssh_enabled"] = False  # local TTY (auto would also pick local when dockerized)
            ce["code_exec_first_output_timeout"] = args.code_timeout
            ce["code_exec_between_output_timeout"] = args.code_timeout
            if args.output_timeout is not None:  # the `runtime: output` poll of a running process
                ce["output_first_output_timeout"] = args.output_timeout
                ce["output_between_output_timeout"] = args.output_timeout
            write(os.path.join(root, "usr", "plugins", "_code_execution", "config.json"), json.dumps(ce, indent=1))
    else:
        user_settings.update({"shell_interface": "local"})
        if not args.keep_memory:
            user_settings.update({"memory_recall_enabled": False, "memory_memorize_enabled": False})
            for ext_root in v0_override_roots(root):
                for point, fname in V0_MEMORY_EXTENSIONS:
                    write(os.path.join(ext_root, point, fname), NOOP_EXT)
        base = f"http://127.0.0.1:{port}/v1"
        override = {
            "chat_model_provider": "other", "chat_model_name": MAIN_MODEL,
            "chat_model_api_base": base, "chat_model_ctx_length": args.ctx_length,
            **({"chat_model_ctx_history": args.ctx_history} if args.ctx_history is not None else {}),
            "chat_model_vision": False, "chat_model_kwargs": {},
            "util_model_provider": "other", "util_model_name": UTIL_MODEL,
            "util_model_api_base": base, "util_model_ctx_length": 32000, "util_model_kwargs": {},
            "shell_interface": "local",
        }
    if args.settings:
        user_settings.update(json.loads(args.settings))
    if args.mcp_servers:
        user_settings["mcp_servers"] = args.mcp_servers
    write(os.path.join(root, "usr", "settings.json"), json.dumps(user_settings, indent=1))
    return override


# --------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--script", required=True, help="JSON script file (list of replies or {main,util})")
    ap.add_argument("--message", default="hello harness", help="user message for the turn")
    ap.add_argument("--then", action="append", default=[], metavar="MESSAGE",
                    help="a further user message, sent in the same chat once the previous task ended (repeatable); "
                         "their results are in \"results\"")
    ap.add_argument("--timeout", type=float, default=180, help="result_sync timeout (s)")
    ap.add_argument("--tree", help="pristine A0 tree: copy it to a temp dir and run there "
                                   "(default: run in the cwd, which must already be a copy)")
    ap.add_argument("--overlay", action="append", default=[],
                    help="directory copied onto the tree root before start (repeatable), "
                         "e.g. an extension pack laid out as usr/extensions/...")
    ap.add_argument("--keep-tree", action="store_true", help="do not delete the temp copy made by --tree")
    ap.add_argument("--keep-memory", action="store_true", help="do not disable the memory extensions")
    ap.add_argument("--disable-plugin", action="append", default=[],
                    help="v1 layout: also disable this plugin via usr/plugins/<name>/.toggle-0 "
                         "(repeatable; e.g. _telegram_integration on v0.9.9.0, which imports aiogram)")
    ap.add_argument("--settings", help="extra usr/settings.json keys as a JSON object")
    ap.add_argument("--mcp-servers", help="Agent-Zero's MCP servers setting (JSON): its servers are connected "
                                          "before the chat, as Agent-Zero's start does")
    ap.add_argument("--ctx-length", type=int, default=32000, help="the chat model's context window in tokens")
    ap.add_argument("--ctx-history", type=float, help="the share of the window the history may take before Agent-Zero compresses it")
    ap.add_argument("--workdir", help="code-execution workdir (default: new temp dir)")
    ap.add_argument("--code-timeout", type=int, default=10,
                    help="v1.x: code_exec first/between-output timeouts (s)")
    ap.add_argument("--output-timeout", type=int, default=None,
                    help="v1.x: first/between-output timeouts of the output runtime, which polls a running process (s)")
    ap.add_argument("--dump-requests", help="write every model request (JSON) to this file")
    ap.add_argument("--final", help="reply used once the main script is exhausted (default: response tool)")
    ap.add_argument("--project", help="v1 layout: run the chat in this Agent-Zero project (created if missing)")
    ap.add_argument("--plugin-switch", action="append", default=[], metavar="NAME=on|off[@project=P][@profile=A]",
                    help="v1 layout: switch a plugin on or off before the chat through Agent-Zero's own "
                         "helpers.plugins.toggle_plugin, as its plugin settings do (repeatable)")
    ap.add_argument("--stop-when-paused", action="store_true",
                    help="end the run as soon as the chat is paused (context.paused) instead of waiting for the result")
    ap.add_argument("--resume-when-paused", action="store_true",
                    help="the first time the chat is paused, resume it as the UI's resume button does "
                         "(context.paused = False) and go on; with --stop-when-paused, a second pause ends the run")
    args = ap.parse_args()

    with open(args.script) as f:
        script = json.load(f)
    if isinstance(script, dict):
        main_list, util_list = script.get("main", []), script.get("util", [])
    else:
        main_list, util_list = script, []
    model = ScriptedModel([_as_text(x) for x in main_list], [_as_text(x) for x in util_list],
                          args.final or json.dumps(DEFAULT_FINAL),
                          os.path.abspath(args.dump_requests) if args.dump_requests else None)

    args.overlay = [os.path.abspath(o) for o in args.overlay]
    if args.workdir:
        args.workdir = os.path.abspath(args.workdir)
    args._tmp_workdir = tempfile.mkdtemp(prefix="a0h-workdir-")
    out: dict = {"ok": False, "layout": None, "tree": None, "port": None,
                 "result": None, "error": None, "history": [], "log": []}
    tmp_copy = None
    try:
        if args.tree:
            tmp_copy = tempfile.mkdtemp(prefix="a0h-tree-")
            shutil.copytree(args.tree, tmp_copy, dirs_exist_ok=True, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__"))
            os.chdir(tmp_copy)
        root = os.getcwd()
        for ov in args.overlay:
            shutil.copytree(ov, root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
        layout = detect_layout(root)
    except BaseException as e:  # noqa: BLE001
        out["error"] = f"{type(e).__name__}: {e}"
        finish(out, model, args, tmp_copy)

    server, port = start_server(model)
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ.setdefault("API_KEY_OTHER", "harness-key")
    sys.path.insert(0, root)
    out.update({"layout": layout, "tree": root, "port": port})

    context = None
    try:
        override = configure(layout, root, port, args)
        if layout == "v1":
            from helpers import history as hist
            from helpers import message_queue, runtime
        else:
            from python.helpers import history as hist
            from python.helpers import message_queue, runtime
        runtime.args["dockerized"] = "true"  # no RFC/SSH to a dev container
        import initialize
        from agent import AgentContext, UserMessage

        config = initialize.initialize_agent(override_settings=override or None)
        if args.mcp_servers:  # connects each server and lists its tools before returning
            if layout == "v1":
                from helpers import mcp_handler
            else:
                from python.helpers import mcp_handler
            mcp_handler.initialize_mcp(args.mcp_servers)
        context = AgentContext(config)
        if args.project:  # first: a project folder that exists already would be created under another name
            enter_project(context, args.project)
        apply_plugin_switches(args.plugin_switch)
        message_queue.log_user_message(context, args.message, [])  # as the UI's message API does before it
        task = context.communicate(UserMessage(message=args.message, attachments=[]))
        if args.stop_when_paused or args.resume_when_paused:
            deadline = time.monotonic() + args.timeout
            while task.is_alive() and not context.paused and time.monotonic() < deadline:
                time.sleep(0.05)
            if context.paused and args.resume_when_paused:
                time.sleep(0.5)  # the turn that paused finishes its end-of-turn extensions
                out["resumed_after"] = len(context.agent0.history.output())
                context.paused = False  # what the UI's resume button does
                while task.is_alive() and not context.paused and time.monotonic() < deadline:
                    time.sleep(0.05)
            if context.paused:
                time.sleep(0.5)  # the turn that paused finishes its end-of-turn extensions
            else:
                out["result"] = task.result_sync(max(1.0, deadline - time.monotonic()))
        else:
            out["result"] = task.result_sync(args.timeout)
        out["results"] = [out["result"]]
        for message in args.then:
            message_queue.log_user_message(context, message, [])
            task = context.communicate(UserMessage(message=message, attachments=[]))
            out["results"].append(task.result_sync(args.timeout))
        out["paused"] = bool(context.paused)
        out["ok"] = True
    except BaseException as e:  # noqa: BLE001 - report everything
        out["error"] = f"{type(e).__name__}: {e}"
        out["traceback"] = traceback.format_exc()
    try:
        if context is not None:
            agent0 = context.agent0
            for m in agent0.history.output():
                out["history"].append({"ai": bool(m["ai"]), "role": "ai" if m["ai"] else "user",
                                       "content": hist._stringify_content(m["content"])})
            for item in context.log.logs:
                out["log"].append({"type": item.type, "heading": item.heading or "",
                                   "content": item.content or ""})
    except BaseException as e:  # noqa: BLE001
        out["collect_error"] = f"{type(e).__name__}: {e}"
    finish(out, model, args, tmp_copy)


def apply_plugin_switches(specs: list[str]):
    """``NAME=on|off[@project=P][@profile=A]``: Agent-Zero writes its own toggle file for that scope."""
    if not specs:
        return
    from helpers import plugins

    for spec in specs:
        head, *scopes = spec.split("@")
        name, _, state = head.partition("=")
        scope = dict(item.split("=", 1) for item in scopes)
        plugins.toggle_plugin(name, state == "on", project_name=scope.get("project", ""),
                              agent_profile=scope.get("profile", ""))


def enter_project(context, name: str):
    """The chat runs in project ``name``, activated the way the UI does it."""
    from helpers import projects

    if not os.path.isdir(projects.get_project_meta(name)):
        # the keys left out get Agent-Zero's defaults (projects._normalizeBasicData)
        projects.create_project(name, {"title": name})
    projects.activate_project(context.id, name)


def finish(out: dict, model: ScriptedModel, args, tmp_copy: str | None):
    """Print the result JSON as the last stdout line, clean up, hard-exit."""
    out["model_calls"] = len(model.calls)
    out["main_calls"] = sum(1 for c in model.calls if c["kind"] == "main")
    out["util_calls"] = sum(1 for c in model.calls if c["kind"] == "util")
    out["calls"] = model.calls
    out["script_left"] = len(model.main)

    # A0 background threads may still print: silence fds 1/2 first so the JSON stays last.
    sys.stdout.flush()
    sys.stderr.flush()
    real_stdout = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    if tmp_copy and not args.keep_tree:
        shutil.rmtree(tmp_copy, ignore_errors=True)
    shutil.rmtree(args._tmp_workdir, ignore_errors=True)
    data = ("\n" + json.dumps(out, default=str) + "\n").encode()
    try:
        while data:
            data = data[os.write(real_stdout, data):]
    except OSError:
        pass  # reader went away (e.g. | head)
    os._exit(0 if out["ok"] else 1)  # A0 leaves non-daemon threads running


if __name__ == "__main__":
    main()
