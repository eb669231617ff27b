"""The docs stay honest: every hook appears in docs/hooks.md with its exact
signature, every command and subcommand (and its options) in docs/cli.md.
Regenerate with ``python -m graphsval_core.cli.docgen hooks > docs/hooks.md`` and
``python -m graphsval_core.cli.docgen cli > docs/cli.md``."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import click
import pytest

from graphsval_core.cli.docgen import (
    cli_markdown,
    hook_functions,
    hook_signature,
    hooks_markdown,
    rst_to_markdown,
    walk_commands,
)
from graphsval_core.cli.main import cli
from graphsval_core.plugins import hookspecs

DOCS = Path(__file__).resolve().parents[1] / "docs"
REGENERATE = "regenerate it: python -m graphsval_core.cli.docgen {} > docs/{}.md"
COMMANDS = [(ctx.command_path, command, ctx) for command, ctx in walk_commands(
    cli, click.Context(cli, info_name="graphsval")
)]  # fmt: skip


def test_every_hookspec_is_found():
    names = {
        n for n in dir(hookspecs) if n.startswith("graphsval_") and callable(getattr(hookspecs, n))
    }
    assert {fn.__name__ for fn in hook_functions()} == names
    assert len(names) >= 13


@pytest.mark.parametrize("fn", hook_functions(), ids=lambda fn: fn.__name__)
def test_every_hook_is_in_the_reference_with_its_exact_signature(fn):
    text = (DOCS / "hooks.md").read_text()
    signature = hook_signature(fn)
    assert signature in text, f"{signature} is not in docs/hooks.md; " + REGENERATE.format(
        "hooks", "hooks"
    )
    for name in inspect.signature(fn).parameters:
        assert f"{name}:" in signature
    summary = inspect.getdoc(fn).splitlines()[0]
    assert rst_to_markdown(summary).strip() in text


def test_hook_signature_is_the_inspected_one():
    fn = hookspecs.graphsval_measure
    assert hook_signature(fn) == (
        "graphsval_measure(target: TargetSpec, op: OpSpec, shape: tuple[int, ...], "
        "dtype: str, settings: Mapping[str, Any]) -> Measurement | None"
    )


@pytest.mark.parametrize("path, command, ctx", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_every_command_is_in_the_cli_reference(path, command, ctx):
    text = (DOCS / "cli.md").read_text()
    heading = f"## `{path}`\n"
    assert heading in text, f"{path} is not in docs/cli.md; " + REGENERATE.format("cli", "cli")
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    for param in command.get_params(ctx):
        if isinstance(param, click.Option):
            flag = max(param.opts, key=len)
            assert re.search(rf"`[^`]*{re.escape(flag)}\b", section), (
                f"{path} {flag} is not in docs/cli.md; " + REGENERATE.format("cli", "cli")
            )


def test_the_new_commands_are_documented():
    paths = {c[0] for c in COMMANDS}
    assert {"graphsval plugin new", "graphsval ci-matrix", "graphsval sweep label"} <= paths


def test_generators_produce_markdown():
    hooks = hooks_markdown()
    assert hooks.startswith("# Hook reference\n") and ":param" not in hooks
    assert ":class:" not in hooks and not re.search(r"(?<!`)``(?!`)", hooks)
    assert cli_markdown().startswith("# Command-line reference\n")


def test_writing_a_plugin_links_the_references_and_runbooks():
    text = (DOCS / "writing-a-plugin.md").read_text()
    for link in ("hooks.md", "cli.md", "runbook-cpu.md", "runbook-nvidia.md", "runbook-jetson.md"):
        assert f"]({link})" in text
    for step in ("graphsval plugin new", "graphsval sweep label", "graphsval validate"):
        assert step in text
