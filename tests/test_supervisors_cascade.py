"""The LLM supervisors' settings through the cascade: a project's ``supervisors.yaml`` laid over
the organizations folder's, validated where each value came from, shown by ``a0org explain``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from org.explain import explain
from org.kernel.loading import DocumentError
from org.llm.config import load_config, read_config
from org.llm_supervisors.runner import SupervisorRunner

ORG = """\
model:
  base_url: http://127.0.0.1:9/v1
  model: team/model
supervisors:
  code_style: {every_tasks: 3, time_budget_seconds: 30}
  design: {enabled: true}
  internaliser: {enabled: false}
"""


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "supervisors.yaml").write_text(ORG)
    (tmp_path / "projects" / "webshop").mkdir(parents=True)
    return tmp_path


def project(folder, text: str):
    path = folder / "projects" / "webshop" / "supervisors.yaml"
    path.write_text(text)
    return path


def test_a_project_changes_what_it_names_and_keeps_the_rest(folder):
    path = project(folder, "supervisors:\n  code_style: {every_tasks: 1}\n  design: {enabled: false}\nnever_read: [secrets/]\n")
    config = read_config(folder / "supervisors.yaml", path)
    assert config.model.model == "team/model"  # not repeated in the project's file
    assert config.supervisors.code_style.every_tasks == 1 and config.supervisors.code_style.time_budget_seconds == 30
    assert not config.supervisors.design.enabled and config.never_read == ["secrets/"]
    assert read_config(folder / "supervisors.yaml").supervisors.code_style.every_tasks == 3  # other chats: as before


def test_null_gives_back_the_default(folder):
    path = project(folder, "supervisors:\n  code_style: {time_budget_seconds: null}\n")
    assert read_config(folder / "supervisors.yaml", path).supervisors.code_style.time_budget_seconds == 120.0


def test_a_mistake_in_the_projects_file_is_named_there_with_a_suggestion(folder):
    path = project(folder, "supervisors:\n  code_style:\n    every_task: 1\n")
    with pytest.raises(DocumentError) as raised:
        read_config(folder / "supervisors.yaml", path)
    [problem] = raised.value.problems
    assert problem.path == str(path) and problem.line == 3 and "every_tasks" in problem.reason
    assert load_config(folder / "supervisors.yaml", path) is None  # logged once; the supervisors stay off for that project


def test_the_projects_runner_uses_the_projects_settings_and_sees_an_edit(folder):
    runner = SupervisorRunner(folder, "webshop")
    assert runner.config().supervisors.code_style.every_tasks == 3  # no project file yet
    path = project(folder, "supervisors:\n  code_style: {every_tasks: 7}\n")
    assert runner.config().supervisors.code_style.every_tasks == 7
    path.write_text("supervisors:\n  code_style: {every_tasks: 8}\n  internaliser: {enabled: true}\n")
    assert runner.config().supervisors.code_style.every_tasks == 8
    assert SupervisorRunner(folder, None).config().supervisors.code_style.every_tasks == 3


def test_validate_checks_a_projects_file_merged(folder):
    good = project(folder, "supervisors:\n  design: {enabled: false}\n")
    done = subprocess.run([sys.executable, "-m", "org", "validate", str(good)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    project(folder, "supervisors:\n  desing: {enabled: false}\n")
    done = subprocess.run([sys.executable, "-m", "org", "validate", str(good)], capture_output=True, text=True)
    assert done.returncode == 1 and f"{good}:2" in done.stdout + done.stderr and "design" in done.stdout + done.stderr


def test_explain_shows_each_setting_with_its_source(folder):
    from org.replay import prepare_organization

    prepare_organization(folder, None)
    project(folder, "supervisors:\n  code_style: {every_tasks: 1}\n")
    shown = {f: (v, w) for f, v, w in explain(folder, "codegen", "webshop").supervisors}
    assert shown["supervisors.code_style.every_tasks"] == (1, "projects/webshop/supervisors.yaml:2")
    assert shown["supervisors.code_style.time_budget_seconds"] == (30.0, "supervisors.yaml:5")
    assert shown["supervisors.design.time_budget_seconds"][1] == "pack default"
    assert shown["model.model"] == ("team/model", "supervisors.yaml:3")
