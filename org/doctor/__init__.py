"""``a0org doctor``: prove that every piece of the pack is in place and loads.

Run it inside the container with Agent-Zero's Python (``/opt/venv-a0/bin/a0org doctor``).
An import check alone is not enough: Agent-Zero loads extension files with
``spec_from_file_location`` + ``exec_module`` and the hooks swallow a failed library
import on purpose (so the agent keeps working), which makes "not running" look like
"healthy". So doctor loads each installed hook exactly the way the era's loader does,
against the tree's real ``Extension`` base class, and reads the hook's
``ORG_IMPORT_ERROR``.

Exit code: 0 when everything needed is installed and loads, 1 otherwise. Every
problem says what to do about it. PyYAML and pydantic are only imported lazily, for
validating the active organization; without them doctor reports instead of crashing.

* :mod:`.hooks`: every hook installed, current, and loading as Agent-Zero loads it; name clashes;
* :mod:`.library`: the ``org`` library this Python imports;
* :mod:`.configuration`: the organizations folder, the active organization, ``supervisors.yaml``;
* :mod:`.report`: the checks, and the report as text;
* :mod:`.cli`: ``python -m org.doctor`` and ``a0org doctor``.
"""
