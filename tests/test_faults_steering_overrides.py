"""Fault tests, source: ``steering.yaml``, the user's overrides of the steering texts.

The promise under test and the shared stand-ins: ``tests/fault_kit.py``.
"""

from __future__ import annotations

import textwrap

import pytest
from fault_kit import (
    LOOP_TEXT,
    TOOL,
    Driver,
    a0org_messages,
    assert_logged_once,
    assert_no_catch_all,
    assert_no_duplicate_messages,
)

from org.supervisor.steering import TAG, count_sentences

pytestmark = pytest.mark.usefixtures("fresh_store")


# ---- steering.yaml overrides

#: name -> (content of steering.yaml, fragments the log message must contain besides the path)
STEERING_FAULTS: dict[str, tuple[str | bytes, list[str]]] = {
    "bad_yaml": ('loop_repeat: "[SUPERVISOR] unterminated\n', ["cannot read steering overrides"]),
    "a_list": ("- loop_repeat\n- cascade\n", ["expected a mapping of steering key -> text"]),
    "a_scalar": ("just some text\n", ["expected a mapping of steering key -> text"]),
    "unknown_key": ('loop_repeet: "[SUPERVISOR] Loop."\n', ["loop_repeet", "unknown steering key"]),
    "unknown_repeated_key": ('loop_repeat.again: "[SUPERVISOR] Loop."\n', ["loop_repeat.again", "unknown steering key"]),
    "int_key": ('42: "[SUPERVISOR] Loop."\n', ["42", "unknown steering key"]),
    "no_tag": ('loop_repeat: "Loop: you repeated $tool."\n', ["loop_repeat", "must start with [SUPERVISOR]"]),
    "tag_later": ('loop_repeat: "Careful. [SUPERVISOR] Loop."\n', ["loop_repeat", "must start with [SUPERVISOR]"]),
    "four_sentences": ('loop_repeat: "[SUPERVISOR] One. Two! Three? Four."\n', ["loop_repeat", "has 4 sentences", "at most 3"]),
    "unknown_placeholder": ('loop_repeat: "[SUPERVISOR] Loop on $tool, see $secret."\n', ["loop_repeat", "$secret", "allowed: $action, $advice, $outcome, $times, $tool"]),
    "braced_unknown_placeholder": ('loop_repeat: "[SUPERVISOR] Loop on ${toolname}."\n', ["loop_repeat", "$toolname"]),
    "not_text": ("loop_repeat: 5\n", ["loop_repeat", "expected text, found int"]),
    "null_text": ("loop_repeat: null\n", ["loop_repeat", "expected text, found NoneType"]),
    "nested": ('loop_repeat: {text: "[SUPERVISOR] Loop."}\n', ["loop_repeat", "expected text, found dict"]),
    "not_utf8": (b'loop_repeat: "[SUPERVISOR] L\xff\xfeop."\n', ["cannot read steering overrides"]),
    "python_tag": ('loop_repeat: !!python/object/apply:os.getcwd []\n', ["cannot read steering overrides"]),
}


@pytest.mark.parametrize("case", sorted(STEERING_FAULTS))
def test_broken_steering_override_falls_back_to_the_default_and_is_logged_once(home, caplog, case):
    content, fragments = STEERING_FAULTS[case]
    path = home / "steering.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    driver = Driver()
    warnings = driver.fail(3) + driver.fail(3)  # steered at turn 3 and again at turn 6
    loop = [w for w in warnings if w.startswith(TAG)]
    assert loop and loop[0].startswith(LOOP_TEXT), loop  # the default text
    assert all(count_sentences(w) <= 3 for w in loop)
    assert_logged_once(caplog, str(path), *fragments)
    assert_no_catch_all(caplog)
    assert_no_duplicate_messages(caplog)


def test_steering_override_is_a_directory(home, caplog):
    path = home / "steering.yaml"
    path.mkdir()
    warnings = Driver().fail(3)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert_logged_once(caplog, str(path), "cannot read steering overrides")


@pytest.mark.parametrize("content", ["", "# only a comment\n", "null\n", "{}\n"], ids=["empty", "comment", "null", "empty_mapping"])
def test_empty_steering_override_uses_the_defaults_silently(home, caplog, content):
    (home / "steering.yaml").write_text(content, encoding="utf-8")
    warnings = Driver().fail(3)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert a0org_messages(caplog) == []


def test_good_overrides_apply_next_to_broken_ones(home, caplog):
    path = home / "steering.yaml"
    path.write_text(textwrap.dedent("""\
        loop_repeat: "[SUPERVISOR] Custom loop text: $tool failed $times times."
        loop_oscillation: "no tag here"
        cascade: 12
    """), encoding="utf-8")
    warnings = Driver().fail(3)
    assert f"{TAG} Custom loop text: {TOOL} failed 3 times." in warnings
    assert_logged_once(caplog, str(path), "loop_oscillation", "must start with [SUPERVISOR]")
    assert_logged_once(caplog, str(path), "cascade", "expected text")
    # fixed while the agent runs: the new file is read on the next steering
    path.write_text('loop_repeat: "[SUPERVISOR] Second version on $tool."\n', encoding="utf-8")
    driver = Driver()
    warnings = driver.fail(3)
    assert f"{TAG} Second version on {TOOL}." in warnings


