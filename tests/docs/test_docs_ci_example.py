"""docs/ci-example.md stays true: its workflow is YAML, its commands use flags that exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from conformance import cli
from tests.support import ROOT

TEXT = (ROOT / "docs" / "ci-example.md").read_text()


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", TEXT, flags=re.S)


def test_workflow_and_baseline_are_valid_yaml() -> None:
    workflow, baseline = (yaml.safe_load(b) for b in blocks("yaml"))
    steps = workflow["jobs"]["conformance"]["steps"]
    assert any(s.get("uses", "").startswith("actions/upload-artifact") for s in steps)
    assert any("GITHUB_STEP_SUMMARY" in s.get("run", "") for s in steps)
    from conformance.results import baseline as baselines

    assert baselines.parse(yaml.safe_dump(baseline)).entries


def test_dmlconf_commands_parse() -> None:
    workflow = blocks("yaml")[0].replace("\\\n", " ")
    commands = [line.strip() for line in workflow.splitlines()
                if line.strip().startswith("dmlconf ")]
    assert any(c.startswith("dmlconf run ") for c in commands)
    for command in commands:
        argv = shlex.split(command.split(">>")[0].split("||")[0])[1:]
        args = cli.parser().parse_args(argv)  # SystemExit on an unknown flag
        if args.command == "run":
            assert args.baseline and args.junit and args.markdown and args.json


def test_pytest_options_exist() -> None:
    from conformance import pytest_plugin

    text = Path(pytest_plugin.__file__).read_text()
    for option in set(re.findall(r"--dml-[a-z]+(?:-[a-z]+)*", TEXT)):
        assert f'"{option}"' in text, option
