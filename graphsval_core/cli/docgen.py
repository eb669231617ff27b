"""Reference documentation generated from the code: the hooks and the CLI.

::

    python -m graphsval_core.cli.docgen hooks > docs/hooks.md
    python -m graphsval_core.cli.docgen cli > docs/cli.md

The hook reference is the hookspec docstrings of :mod:`graphsval_core.plugins.hookspecs`
(reST roles turned into Markdown), each under its exact signature, with the
source of its worked example (:data:`EXAMPLES`) where it has one; the CLI
reference is every command and subcommand with its usage and options, as
click knows them. ``tests/test_docs.py`` keeps both files honest.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import click

from graphsval_core import PROJECT_NAME
from graphsval_core.plugins import hookspecs

_SECTION_RE = re.compile(r"^# --- (.+?) -*$")
_ROLE_RE = re.compile(r":(?:class|mod|func|data|meth|attr):`(~?)([^`]+)`")


# --- hooks -----------------------------------------------------------------------


def hook_functions() -> list[Callable[..., Any]]:
    """Every hookspec, in source order."""
    specs = [
        fn
        for name, fn in vars(hookspecs).items()
        if name.startswith(f"{PROJECT_NAME}_") and hasattr(fn, f"{PROJECT_NAME}_spec")
    ]
    return sorted(specs, key=lambda fn: inspect.getsourcelines(fn)[1])


def _annotation(value: Any) -> str:
    return value if isinstance(value, str) else inspect.formatannotation(value)


def hook_signature(fn: Callable[..., Any]) -> str:
    """``name(param: Type, ...) -> Return``, from :func:`inspect.signature`."""
    sig = inspect.signature(fn)
    params = []
    for p in sig.parameters.values():
        text = p.name
        if p.annotation is not inspect.Parameter.empty:
            text += f": {_annotation(p.annotation)}"
        params.append(text)
    ret = ""
    if sig.return_annotation is not inspect.Signature.empty:
        ret = f" -> {_annotation(sig.return_annotation)}"
    return f"{fn.__name__}({', '.join(params)}){ret}"


def is_first_result(fn: Callable[..., Any]) -> bool:
    return bool(getattr(fn, f"{PROJECT_NAME}_spec", {}).get("firstresult"))


def rst_to_markdown(text: str) -> str:
    """The reST of the docstrings as Markdown: roles, literals, field lists,
    ``::`` literal blocks."""
    text = _ROLE_RE.sub(
        lambda m: f"`{m.group(2).split('.')[-1] if m.group(1) else m.group(2)}`", text
    )
    text = text.replace("``", "`")
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        field = re.match(r"^:param (\w+):\s*(.*)$", line) or re.match(r"^:(returns):\s*(.*)$", line)
        if field:
            body = [field.group(2)]
            while i + 1 < len(lines) and lines[i + 1].startswith("    "):
                i += 1
                body.append(lines[i].strip())
            label = "**Returns:**" if field.group(1) == "returns" else f"`{field.group(1)}`:"
            out.append(f"- {label} {' '.join(body)}")
        elif line.rstrip().endswith("::"):
            intro = line.rstrip()[:-2].rstrip()
            out.extend([intro + ":" if intro else "", "", "```python"])
            i += 1
            while i < len(lines) and not lines[i].strip():
                i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith("    ")):
                out.append(lines[i][4:])
                i += 1
            while out and not out[-1].strip():
                out.pop()
            out.extend(["```", ""])
            continue
        else:
            out.append(line)
        i += 1
    return "\n".join(out).strip() + "\n"


#: Worked examples printed under a hook's reference: hook -> the example module.
EXAMPLES: dict[str, str] = {
    "graphsval_register_predictors": "graphsval_core.examples.naive_roofline",
}


def example_markdown(module_name: str) -> str:
    """The source of an example module under a heading, as a Python block."""
    import importlib

    module = importlib.import_module(module_name)
    path = module_name.replace(".", "/") + ".py"
    return "\n".join(
        [
            f"#### Worked example: `{path}`",
            "",
            "```python",
            inspect.getsource(module).rstrip(),
            "```",
            "",
        ]
    )


def _sections() -> dict[int, str]:
    lines = inspect.getsource(hookspecs).splitlines()
    return {n: m.group(1) for n, line in enumerate(lines, 1) if (m := _SECTION_RE.match(line))}


def hooks_markdown() -> str:
    """docs/hooks.md."""
    sections = _sections()
    parts = [
        "# Hook reference",
        "",
        "Generated from `graphsval_core/plugins/hookspecs.py` by "
        "`python -m graphsval_core.cli.docgen hooks > docs/hooks.md`; do not edit by hand.",
        "",
        rst_to_markdown(inspect.getdoc(hookspecs) or ""),
    ]
    current = None
    for fn in hook_functions():
        line = inspect.getsourcelines(fn)[1]
        section = next((s for n, s in sorted(sections.items(), reverse=True) if n < line), None)
        if section and section != current:
            parts += [f"## {section[0].upper()}{section[1:]}", ""]
            current = section
        kind = "first-result hook" if is_first_result(fn) else "collecting hook"
        parts += [
            f"### `{fn.__name__}`",
            "",
            "```python",
            hook_signature(fn),
            "```",
            "",
            f"*{kind}*",
            "",
            rst_to_markdown(inspect.getdoc(fn) or ""),
        ]
        if fn.__name__ in EXAMPLES:
            parts.append(example_markdown(EXAMPLES[fn.__name__]))
    return "\n".join(parts).rstrip() + "\n"


# --- the command line ----------------------------------------------------------------


def walk_commands(
    command: click.Command, ctx: click.Context
) -> Iterator[tuple[click.Command, click.Context]]:
    """``command`` and every subcommand below it, depth first, in name order."""
    yield command, ctx
    if isinstance(command, click.Group):
        for name in sorted(command.list_commands(ctx)):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from walk_commands(sub, click.Context(sub, info_name=name, parent=ctx))


def command_path(ctx: click.Context) -> str:
    return ctx.command_path


def _escape(text: str) -> str:
    """Markdown text: ``<placeholders>`` shown, not taken for HTML."""
    return text.replace("<", "\\<").replace(">", "\\>")


def _help(command: click.Command) -> str:
    text = inspect.cleandoc(command.help or "")
    return _escape("\n".join(line for line in text.splitlines() if line.strip() != "\b"))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def cli_markdown() -> str:
    """docs/cli.md."""
    from graphsval_core.cli.main import cli

    root = click.Context(cli, info_name="graphsval")
    parts = [
        "# Command-line reference",
        "",
        "Generated from the click commands by "
        "`python -m graphsval_core.cli.docgen cli > docs/cli.md`; do not edit by hand. "
        "Every command answers `--help`. Exit codes: 0 success, 1 a validation or check "
        "failed, 2 a usage, input or output error (one line, never a traceback).",
        "",
    ]
    for command, ctx in walk_commands(cli, root):
        usage = " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])
        parts += [f"## `{ctx.command_path}`", "", "```", usage, "```", "", _help(command), ""]
        records = [r for p in command.get_params(ctx) if (r := p.get_help_record(ctx))]
        if records:
            parts += ["| option | description |", "|---|---|"]
            parts += [f"| `{_cell(opts)}` | {_escape(_cell(text))} |" for opts, text in records]
            parts.append("")
        if isinstance(command, click.Group):
            subs = sorted(command.list_commands(ctx))
            parts += ["Commands: " + ", ".join(f"`{name}`" for name in subs), ""]
    return "\n".join(parts).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    generators = {"hooks": hooks_markdown, "cli": cli_markdown}
    if len(args) != 1 or args[0] not in generators:
        print("usage: python -m graphsval_core.cli.docgen hooks|cli", file=sys.stderr)
        return 2
    sys.stdout.write(generators[args[0]]())
    return 0


if __name__ == "__main__":
    sys.exit(main())
