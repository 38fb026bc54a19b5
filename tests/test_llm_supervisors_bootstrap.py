"""The bootstrap scan: a code style or design supervisor's first run sees the code base's layout
and a sample of its files, not only the files the recent tasks touched."""

from __future__ import annotations

from pathlib import Path

from test_llm_supervisors import (  # noqa: F401 (fixtures)
    _active_organization,
    code_style,
    edit,
    home,
    request_text,
    respond,
    turns,
    write_config,
)

from org.standin.session import StandInSession

SECRET = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"


def project(root: Path) -> Path:
    """A small code base: 14 modules in three packages, a README, a manifest, and what must stay out."""
    (root / ".git").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "shop"\n')
    (root / "README.md").write_text("# Shop\n\nOrders, billing and shipping. Run `make test`.\n")
    for package, modules in {"orders": ("cart", "checkout", "refunds", "models"), "billing": ("invoices", "taxes", "ledger", "cards"),
                             "shipping": ("labels", "carriers", "tracking", "rates", "zones", "returns")}.items():
        for module in modules:
            path = root / "shop" / package / f"{module}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"class {module.capitalize()}Error(Exception):\n    pass\n\n\ndef load_{module}(path: str) -> dict:\n"
                            f"    raise {module.capitalize()}Error(path)\n")
    (root / ".env").write_text(f"STRIPE_KEY={SECRET}\n")
    (root / "node_modules" / "left-pad").mkdir(parents=True)
    (root / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    (root / "shop" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    return root


def test_a_bootstrap_run_sees_the_code_base_and_a_review_run_does_not(home, llm_server, tmp_path):  # noqa: F811
    root = project(tmp_path / "shop-repo")
    write_config(home, llm_server, code_style={"every_tasks": 1})
    llm_server.script(code_style(), code_style(conventions_updated=[]))
    session = StandInSession()
    session.run_task("fix the cart", turns(edit(root / "shop" / "orders" / "cart.py"), respond()))
    session.run_task("fix the rates", turns(edit(root / "shop" / "shipping" / "rates.py"), respond()))
    session.run_task("again", turns(respond()))

    first, second = (request_text(r) for r in llm_server.requests[:2])
    assert "BOOTSTRAP MODE" in first and "## CODE BASE (bootstrap scan" in first
    layout = first.split("## CODE BASE", 1)[1]
    assert f"{root}/ (" in layout
    for listed in ("README.md", "pyproject.toml", "shop/billing/ledger.py", "shop/shipping/zones.py", "shop/orders/refunds.py"):
        assert listed in layout
    assert "node_modules" not in layout and ".git/" not in layout
    assert "### " + str(root / "README.md") in layout and "Orders, billing and shipping" in layout
    sampled = [line for line in layout.splitlines() if line.startswith(f"### {root}/shop/")]
    assert len(sampled) > 6 and {p.split("/")[-2] for p in sampled} == {"orders", "billing", "shipping"}
    assert SECRET not in first and "STRIPE_KEY" not in first and "PNG" not in first
    assert "REVIEW MODE" in second and "## CODE BASE" not in second  # a review run reads what the tasks touched


def test_the_scan_never_takes_agent_zeros_tree_or_a_system_folder_for_the_project(tmp_path):
    from org.contracts.supervisor_outputs import TaskDigest
    from org.llm_supervisors.codebase import project_roots

    a0 = tmp_path / "a0"
    (a0 / ".git").mkdir(parents=True)
    (a0 / "usr" / "organizations").mkdir(parents=True)
    (a0 / "usr" / "workdir").mkdir(parents=True)
    (a0 / "usr" / "workdir" / "tool.py").write_text("x = 1\n")
    repo = project(tmp_path / "repo")

    def touched(*names: str) -> list[TaskDigest]:
        return [TaskDigest.model_validate({"task": 1, "started": "2026-01-01T00:00:00Z", "duration_seconds": 1.0,
                                           "files_touched": list(names), "outcome": "completed"})]

    skip = ((a0 / "usr" / "organizations").resolve(),)
    assert project_roots(touched(str(a0 / "usr" / "workdir" / "tool.py")), skip) == [(a0 / "usr" / "workdir").resolve()]
    assert project_roots(touched(str(repo / "shop" / "orders" / "cart.py")), skip) == [repo.resolve()]
    assert project_roots(touched("/etc/hosts", "/proc/self/status", "/tmp"), skip) == []


def test_a_full_bootstrap_prompt_keeps_to_its_size_and_drops_whole_sample_files():
    from org.contracts.supervisor_outputs import TaskDigest
    from org.llm_supervisors.codebase import CodeBase
    from org.llm_supervisors.supervisors import PROMPT_CHARS, SPECS, RunInput, build_messages

    digests = [TaskDigest(task=n, started="2026-03-02T10:00:00Z", outcome="completed", duration_seconds=1, user_message="u" * 1200, final_response="r" * 1200,
                          files_touched=[f"/p/shop/m{n}_{i}.py" for i in range(30)]) for n in range(1, 11)]
    layout = "\n".join(f"shop/package_{n}/module_{n}.py" for n in range(200))
    base = CodeBase(layout=layout, files=[(f"/p/shop/m{n}.py", "x = 1\n" * 416) for n in range(10)])
    run = RunInput(digests, [], [], [f"D{n} [low cleanup, from code_style]: " + "d" * 250 for n in range(1, 11)],
                   [(f"/p/shop/t{n}.py", "y = 2\n" * 250) for n in range(6)], [], base)
    _, user = build_messages(SPECS["code_style"], run)
    assert len(user["content"]) <= PROMPT_CHARS + 200
    sample = user["content"].split("## CODE BASE", 1)[1]
    assert sample.count("```") % 2 == 0 and "more sampled file(s) left out to fit the prompt" in sample
