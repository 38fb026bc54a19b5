"""The locked JSON read-modify-write (``org.kernel.files.update_json_file``): no lost update
between threads or processes, and a write that dies before its rename leaves the old file."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from org.kernel.files import update_json_file

ROOT = Path(__file__).resolve().parent.parent


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"count": 0}


def dump(value: dict) -> str:
    return json.dumps(value, sort_keys=True) + "\n"


def add_one(value: dict) -> dict:
    value["count"] += 1
    return value


def test_threads_lose_no_update(tmp_path):
    path = tmp_path / "counter.json"

    def work() -> None:
        for _ in range(50):
            update_json_file(path, load, add_one, dump)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert load(path) == {"count": 400}


def test_two_processes_lose_no_update(tmp_path):
    path = tmp_path / "counter.json"
    script = ("import json, sys\nfrom pathlib import Path\nfrom org.kernel.files import update_json_file\n"
              "path = Path(sys.argv[1])\n"
              "load = lambda p: json.loads(p.read_text()) if p.exists() else {'count': 0}\n"
              "def add_one(v):\n    v['count'] += 1\n    return v\n"
              "for _ in range(100):\n    update_json_file(path, load, add_one, lambda v: json.dumps(v))\n")
    workers = [subprocess.Popen([sys.executable, "-c", script, str(path)], cwd=ROOT) for _ in range(2)]
    assert [w.wait(timeout=60) for w in workers] == [0, 0]
    assert load(path) == {"count": 200}


def test_a_process_that_dies_before_the_rename_leaves_the_old_file(tmp_path):
    path = tmp_path / "counter.json"
    path.write_text(dump({"count": 7}))
    script = ("import json, os, sys\nfrom pathlib import Path\nfrom org.kernel import files\n"
              "os.replace = lambda *a: os._exit(3)  # the process dies with the new text written but not renamed\n"
              "path = Path(sys.argv[1])\n"
              "files.update_json_file(path, lambda p: json.loads(p.read_text()), lambda v: {'count': v['count'] + 1},\n"
              "                       lambda v: json.dumps(v))\n")
    assert subprocess.run([sys.executable, "-c", script, str(path)], cwd=ROOT, timeout=60).returncode == 3
    assert load(path) == {"count": 7}
    update_json_file(path, load, add_one, dump)  # the lock died with the process
    assert load(path) == {"count": 8}


def test_change_returning_none_writes_nothing(tmp_path):
    path = tmp_path / "counter.json"
    assert update_json_file(path, load, lambda value: None, dump) == {"count": 0}
    assert not path.exists()


def test_a_failed_write_raises_or_goes_to_on_write_error(tmp_path, monkeypatch):
    path = tmp_path / "counter.json"
    path.write_text(dump({"count": 1}))

    def refuse(*args: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("org.kernel.files.os.replace", refuse)
    with pytest.raises(PermissionError):
        update_json_file(path, load, add_one, dump)
    failures: list[OSError] = []
    assert update_json_file(path, load, add_one, dump, on_write_error=failures.append) == {"count": 2}
    assert [type(f) for f in failures] == [PermissionError]
    assert load(path) == {"count": 1} and sorted(p.name for p in tmp_path.iterdir()) == ["counter.json", "counter.json.lock"]
