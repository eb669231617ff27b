"""Every command that writes a file refuses an existing target that is not a
regular file (a FIFO here, standing in for a device such as /dev/full) in
one line with exit code 2, before opening it, and leaves it as it was; a
folder where a file is expected likewise (issue 18, follow-up item 1).

No test opens a device for writing: the FIFO is only stat'ed (a write would
block, a read would wait for a writer), so a test that hangs has a bug."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.files.baseline import BaselineFileError
from graphsval_core.files.outputs import check_output_file, check_output_folder, special_kind

HOST = "host_intel_xeon_2c_1t"
SHIPPED = Path(__file__).parents[2] / "plugins/graphsval_cpu/graphsval_cpu/baselines"
CALIBRATION = SHIPPED / f"{HOST}_vector_add.calibration.csv"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def _refused(argv: list[str], fragment: str) -> str:
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, (argv, result.output)
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, (argv, result.output)
    assert fragment in errors[0], (argv, errors[0])
    return errors[0]


def _still_a_fifo(path: Path) -> None:
    assert stat.S_ISFIFO(os.stat(path).st_mode), f"{path} was replaced"
    assert not path.with_name(path.name + ".tmp").exists()


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "cfg.json"
    config.write_text(
        '{"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, '
        '"vocab_size": 100, "num_hidden_layers": 2}'
    )
    return config


def test_every_writing_command_refuses_a_fifo(tmp_path, fifo):
    config = _config(tmp_path)
    fifo_dir = tmp_path / "in"
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / f"{HOST}_fit.png")
    cases = [
        (["sweep", "from-config", str(config), "--out", str(fifo)], "--out "),
        (["sweep", "label", "--hw", HOST, "--out", str(fifo)], "--out "),
        (["sweep", "generate", "--op", "vector_add", "--out-dir", str(fifo)], "--out-dir "),
        (["validate", "--hw", HOST, "-q", "--out", str(fifo)], "--out "),
        (["validate", "--hw", HOST, "-q", "--update-floors", "--floors", str(fifo)], "--floors "),
        (["check", "--hw", HOST, "--update-snapshot", "--snapshot", str(fifo)], "--snapshot "),
        (["calibrate", "--hw", HOST, "--baseline", str(CALIBRATION), "--out", str(fifo)], "--out "),
        (
            ["calibrate", "--hw", HOST, "--baseline", str(CALIBRATION), "--out",
             str(tmp_path / "c.json"), "--report", str(fifo)],
            "--report ",
        ),
    ]  # fmt: skip
    for argv, fragment in cases:
        line = _refused(argv, fragment)
        assert "FIFO" in line and "refusing" in line, line
        _still_a_fifo(fifo)
    assert not (tmp_path / "c.json").exists()
    assert not (tmp_path / "cfg_sweep.json").exists()


def test_targets_target_file_out_names_a_fifo_as_one(fifo):
    """``targets --target-file --out`` said a FIFO (or a device) "exists":
    it is told what it is, as every other writer does, and left alone."""
    line = _refused(["targets", "--hw", HOST, "--target-file", "--out", str(fifo)], str(fifo))
    assert line == (
        f"Error: {fifo}: is a FIFO (named pipe), not a regular file; refusing to write over it"
    )
    _still_a_fifo(fifo)
    if os.path.exists("/dev/null"):  # only stat'ed, never opened
        _refused(
            ["targets", "--hw", HOST, "--target-file", "--out", "/dev/null"], "character device"
        )


def test_a_folder_where_a_file_is_expected(tmp_path):
    config = _config(tmp_path)
    folder = tmp_path / "folder"
    folder.mkdir()
    _refused(["sweep", "from-config", str(config), "--out", str(folder)], "is a folder")
    _refused(
        ["calibrate", "--hw", HOST, "--baseline", str(CALIBRATION), "--out", str(folder)],
        "is a folder",
    )
    assert list(folder.iterdir()) == []


def test_a_file_option_in_a_missing_folder_names_the_option(tmp_path, monkeypatch):
    """``sweep label --out``, ``--floors`` and ``--snapshot`` in a folder that
    is not there said "<absolute path>: cannot write: No such file or
    directory" after the work, naming no option (from the newcomer); each
    now says so first, as ``calibrate --out`` did."""
    monkeypatch.chdir(tmp_path)
    config = _config(tmp_path)
    cases = [
        ["sweep", "from-config", str(config), "--out", "nope/s.json"],
        ["sweep", "label", "--hw", HOST, "--out", "nope/s.json"],
        ["validate", "--hw", HOST, "-q", "--update-floors", "--floors", "nope/s.json"],
        ["check", "--hw", HOST, "--update-snapshot", "--snapshot", "nope/s.json"],
        ["calibrate", "--hw", HOST, "--baseline", str(CALIBRATION), "--out", "nope/s.json"],
    ]
    for argv in cases:
        flag = argv[-2]
        line = _refused(argv, f"{flag} nope/s.json: ")
        assert line == f"Error: {flag} nope/s.json: no folder {tmp_path / 'nope'} to write it in"
    assert not (tmp_path / "nope").exists()


def test_the_helper_names_what_it_is(tmp_path, fifo):
    assert special_kind(fifo) == "a FIFO (named pipe)"
    assert special_kind(tmp_path) is None
    assert check_output_file(tmp_path / "new.json", UserInputError) == tmp_path / "new.json"
    with pytest.raises(UserInputError, match="--x .*: is a FIFO"):
        check_output_file(fifo, UserInputError, f"--x {fifo}")
    with pytest.raises(UserInputError, match="is a folder, not a file"):
        check_output_file(tmp_path, UserInputError)
    with pytest.raises(UserInputError, match="not a folder"):
        check_output_folder(fifo, UserInputError)
    a_file = tmp_path / "f"
    a_file.write_text("x")
    with pytest.raises(UserInputError, match="is a file, not a folder"):
        check_output_folder(a_file, UserInputError)
    if os.path.exists("/dev/null"):  # only stat'ed, never opened
        with pytest.raises(UserInputError, match="character device"):
            check_output_file("/dev/null", UserInputError, "--out /dev/null")


def test_capture_files_and_workspace_specs_refuse_a_fifo(fifo, make_target):
    from graphsval_core.files.target_spec import TargetFileError, write_spec
    from graphsval_core.measure.capture_file import (
        append_row,
        read_capture,
        read_journal,
        start_journal,
        write_sorted,
    )

    for call in (
        lambda: read_capture(fifo, HOST, "matmul"),
        lambda: append_row(fifo, {}),
        lambda: write_sorted(fifo, {}),
        lambda: read_journal(fifo),
        lambda: start_journal(fifo, {"hardware": HOST}),
    ):
        with pytest.raises(BaselineFileError, match="FIFO"):
            call()
    with pytest.raises(TargetFileError, match="FIFO"):
        write_spec(make_target(), fifo)
    _still_a_fifo(fifo)


def test_an_atomic_write_through_a_link_writes_its_file_and_keeps_the_link(tmp_path):
    from graphsval_core.files.outputs import write_text_atomic

    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "c.json").write_text("old")
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "real" / "c.json")
    write_text_atomic(link, "{}", UserInputError, "--out out.json")
    assert link.is_symlink() and (tmp_path / "real" / "c.json").read_text() == "{}"
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["c.json"]  # no temp left
    dangling = tmp_path / "d.json"
    dangling.symlink_to(tmp_path / "nowhere" / "c.json")
    with pytest.raises(UserInputError, match="a link to .*nowhere/c.json, in no folder"):
        write_text_atomic(dangling, "{}", UserInputError, "--out d.json")
    assert dangling.is_symlink() and not (tmp_path / "nowhere").exists()


def test_a_link_to_a_file_not_there_is_never_written_through(tmp_path):
    """A link leading to a missing file in an existing folder had the file
    created there: refused in one line naming the link, by every writer."""
    from graphsval_core.files.outputs import write_text_atomic

    (tmp_path / "real").mkdir()
    dangling = tmp_path / "d.json"
    dangling.symlink_to(tmp_path / "real" / "c.json")
    told = (
        f"--out d.json: a link to {tmp_path / 'real' / 'c.json'}, which is not there; nothing "
        "written through it (remove the link or name another file)"
    )
    with pytest.raises(UserInputError) as caught:
        write_text_atomic(dangling, "{}", UserInputError, "--out d.json")
    assert str(caught.value) == told
    with pytest.raises(UserInputError, match="which is not there"):
        check_output_file(dangling, UserInputError)
    config = _config(tmp_path)
    _refused(["sweep", "from-config", str(config), "--out", str(dangling)], "which is not there")
    _refused(
        ["targets", "--hw", "i7_12700k", "--target-file", "--out", str(dangling)],
        "which is not there",
    )
    out_dir = tmp_path / "sweeps"
    out_dir.mkdir()
    (out_dir / "vector_add_calibration.json").symlink_to(tmp_path / "real" / "v.json")
    _refused(
        ["sweep", "generate", "--op", "vector_add", "--out-dir", str(out_dir)],
        "vector_add_calibration.json: a link to",
    )
    assert dangling.is_symlink() and not list((tmp_path / "real").iterdir())


def test_validate_out_is_refused_before_validating(tmp_path, monkeypatch, fifo):
    """A report file that is a FIFO, or a folder no file can be made in, is
    one line before any record is validated (it took seconds, then failed)."""
    import graphsval_core.validate.workflow as workflow

    monkeypatch.setattr(workflow, "validate", None)  # reached: a TypeError, not exit 2
    out = tmp_path / "reports"
    out.mkdir()
    os.mkfifo(out / "report.md")
    _refused(["validate", "--out", str(out)], f"--out {out / 'report.md'}: is a FIFO")
    # a folder where a report goes: it is the command's name, so "name a file" would not do
    held = tmp_path / "held"
    (held / "report.json").mkdir(parents=True)
    _refused(
        ["validate", "--out", str(held)],
        f"--out {held}: {held / 'report.json'} is a folder, where the command writes its file "
        "report.json; remove it or give another folder",
    )
    import tempfile

    real = tempfile.mkstemp
    locked = tmp_path / "locked"
    locked.mkdir()

    def mkstemp(*args, dir=None, **kw):  # as a read-only mount answers, whoever runs the test
        if dir is not None and str(dir) == str(locked):
            raise PermissionError(13, "Permission denied")
        return real(*args, dir=dir, **kw)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    _refused(
        ["validate", "--out", str(locked / "new")],
        f"--out {locked / 'new'}: cannot make a file in {locked} (Permission denied)",
    )


def test_validate_out_that_is_a_link_leading_nowhere_is_refused_first(tmp_path, monkeypatch):
    import graphsval_core.validate.workflow as workflow

    monkeypatch.setattr(workflow, "validate", None)  # reached: a TypeError, not exit 2
    (tmp_path / "dang").symlink_to(tmp_path / "nope")
    _refused(
        ["validate", "--out", str(tmp_path / "dang")],
        f"--out {tmp_path / 'dang'}: {tmp_path / 'dang'} is a link that leads nowhere",
    )


def test_validate_out_never_writes_through_a_report_named_link(tmp_path, monkeypatch):
    """``ln -s /etc/hostname DIR/report.json; validate --out DIR`` replaced
    the file the link leads to (from the newcomer, as root): a link of a
    report's name is refused before the work, the file it leads to kept."""
    import graphsval_core.validate.workflow as workflow

    monkeypatch.setattr(workflow, "validate", None)  # reached: a TypeError, not exit 2
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    (tmp_path / "rep").mkdir()
    (tmp_path / "rep" / "report.json").symlink_to(victim)
    _refused(
        ["validate", "--out", str(tmp_path / "rep")],
        f"--out {tmp_path / 'rep' / 'report.json'}: is a link (to {victim}); the reports are "
        "written into the folder itself",
    )
    assert victim.read_text() == "keep"


def test_a_pipe_opened_on_a_terminal_says_it_waits(tmp_path, monkeypatch, capsys):
    import sys
    import threading

    from graphsval_core.files.inputs import read_input

    fifo = tmp_path / "in.csv"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text("a,b\n"), daemon=True)
    writer.start()
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert read_input(fifo, UserInputError) == b"a,b\n"
    writer.join(timeout=10)
    assert f"reading {fifo}, a pipe: waiting for what writes it" in capsys.readouterr().err


def test_files_written_together_are_all_written_or_none(tmp_path, monkeypatch):
    from graphsval_core.datamodel.errors import UserInputError
    from graphsval_core.files.outputs import write_texts_atomic

    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text("old a")
    second.write_text("old b")
    files = [(first, "new a", None), (second, "new b", "--out-dir b.json")]
    real_write = Path.write_text

    def full_disk(self, text, *args, **kwargs):  # the second temp file cannot be written
        if self.name == "b.json.tmp":
            raise OSError(28, "No space left on device")
        return real_write(self, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full_disk)
    with pytest.raises(UserInputError, match=r"^--out-dir b.json: cannot write: No space left"):
        write_texts_atomic(files, UserInputError)
    assert first.read_text() == "old a" and second.read_text() == "old b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]  # no temp left

    monkeypatch.setattr(Path, "write_text", real_write)
    real_replace = Path.replace

    def busy(self, target):  # b.json is mounted read-only: its rename fails
        if Path(target).name == "b.json":
            raise OSError(16, "Device or resource busy")
        return real_replace(self, target)

    monkeypatch.setattr(Path, "replace", busy)
    with pytest.raises(UserInputError, match=r"already written\)$") as caught:
        write_texts_atomic(files, UserInputError)
    assert f"({first} already written)" in str(caught.value)
    assert first.read_text() == "new a" and second.read_text() == "old b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]


def test_two_outputs_leading_to_one_file_or_a_linked_temp_file_are_refused(tmp_path):
    from graphsval_core.datamodel.errors import UserInputError
    from graphsval_core.files.outputs import write_texts_atomic

    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text("old a")
    second.symlink_to(first)  # b.json leads to a.json
    with pytest.raises(UserInputError, match=r"b.json: leads to the same file as .*a.json"):
        write_texts_atomic([(first, "a", None), (second, "b", None)], UserInputError)
    assert first.read_text() == "old a"

    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (tmp_path / "c.json.tmp").symlink_to(victim)
    with pytest.raises(UserInputError, match=r"its temp file .*c.json.tmp is a link; remove it"):
        write_texts_atomic([(tmp_path / "c.json", "c", None)], UserInputError)
    assert victim.read_text() == "mine" and not (tmp_path / "c.json").exists()


def test_an_out_dir_that_is_a_link_loop_is_one_line(tmp_path):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    result = CliRunner().invoke(
        cli, ["sweep", "generate", "--op", "vector_add", "--out-dir", str(loop)]
    )
    assert result.exit_code == 2, result.output
    assert "internal error" not in result.output and "Traceback" not in result.output
    assert str(loop) in result.output


def test_sweep_from_config_never_writes_over_its_config(tmp_path):
    """``sweep from-config cfg.json --out cfg.json`` replaced the config by the
    sweep, exit 0 (from the newcomer); a link to it too."""
    config = _config(tmp_path)
    before = config.read_text()
    link = tmp_path / "link.json"
    link.symlink_to(config)
    for out in (config, link):
        line = _refused(["sweep", "from-config", str(config), "--out", str(out)], "--out ")
        assert line == f"Error: --out {out}: is the config it reads ({config}); name another file"
    assert config.read_text() == before


def test_a_link_to_a_missing_input_says_so(tmp_path, monkeypatch):
    """A baseline that is a link to a file gone was told "No such file or
    directory", as if the link itself were missing (from the newcomer)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dang.csv").symlink_to(tmp_path / "gone.csv")
    result = CliRunner().invoke(cli, ["validate", "--baseline", "dang.csv"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == (
        f"Error: dang.csv: a link to a file that is not there ({tmp_path / 'gone.csv'})"
    )
    missing = CliRunner().invoke(cli, ["validate", "--baseline", "none.csv"])
    assert "none.csv: cannot read: No such file or directory" in missing.output


def test_a_path_with_a_newline_is_one_line_in_what_a_writer_says(tmp_path):
    """An error escaped a newline in a path, the line saying what was written
    printed it raw, over two lines: escaped too."""
    odd = tmp_path / "a\nb"
    config = _config(tmp_path)
    wrote = CliRunner().invoke(cli, ["sweep", "from-config", str(config), "--out", f"{odd}.json"])
    assert wrote.exit_code == 0, wrote.output
    assert wrote.output.count("\n") == 1
    assert wrote.output.startswith(f"wrote {tmp_path}/a\\nb.json: 22 distinct shapes")
    target = CliRunner().invoke(
        cli, ["targets", "--hw", "i7_12700k", "--target-file", "--out", f"{odd}.t.json"]
    )
    assert target.output.strip() == (
        f"wrote {tmp_path}/a\\nb.t.json: target i7_12700k's file, before calibration"
    )
    reports = CliRunner().invoke(cli, ["validate", "--hw", "i7_12700k", "-q", "--out", str(odd)])
    said = [line for line in reports.output.splitlines() if "reports written" in line]
    assert said == [
        f"reports written to {tmp_path}/a\\nb/ (report.json, report.md, records.csv, report.html)"
    ]
    missing = CliRunner().invoke(cli, ["validate", "--baseline", f"{odd}.csv"])
    assert missing.exit_code == 2
    assert missing.output.strip() == (
        f"Error: {tmp_path}/a\\nb.csv: cannot read: No such file or directory"
    )
    # check --update-snapshot, and the lines of a capture and of capture-machine's
    # calibration (shown here without measuring: their renderers, given a result)
    snap = CliRunner().invoke(
        cli, ["check", "--hw", "i7_12700k", "--update-snapshot", "--snapshot", f"{odd}.s.json"]
    )
    assert snap.exit_code == 0, snap.output
    assert snap.output.splitlines()[0] == f"snapshot {tmp_path}/a\\nb.s.json: 1 change(s)"
    from types import SimpleNamespace

    from graphsval_core.cli.capture_cmd import render_summary
    from graphsval_core.cli.capture_machine_cmd import calibrated_line
    from graphsval_core.measure.capture import CaptureSummary

    capture = SimpleNamespace(
        out=Path(f"{odd}.csv"), summary=CaptureSummary(rows=3), elapsed_s=1.0, reconciled=None
    )
    said = CliRunner().invoke(click.command()(lambda: render_summary(capture)), [])
    assert said.output.splitlines()[0].startswith(f"{tmp_path}/a\\nb.csv: 3 rows; this run")
    fit = SimpleNamespace(grouped=None, validation=None, rows=[], path=Path(f"{odd}.t.json"))
    assert calibrated_line("toy", fit) == (
        f"calibrated toy on 0 calibration rows: {tmp_path}/a\\nb.t.json"
    )


def test_a_file_called_dash_is_shown_as_dot_slash_dash(tmp_path, monkeypatch):
    """``--out ./-`` writes a file called ``-``; the line saying so read
    ``wrote -``, as if it had gone to standard output: it says ``./-``, in
    every line that names what a command wrote."""
    monkeypatch.chdir(tmp_path)
    config = _config(tmp_path)

    def said(argv: list[str]) -> list[str]:
        result = CliRunner().invoke(cli, argv)
        assert result.exit_code in (0, 1), (argv, result.output)
        assert Path("-").exists(), argv
        if Path("-").is_dir():
            for inner in Path("-").iterdir():
                inner.unlink()
            Path("-").rmdir()
        else:
            Path("-").unlink()
        return result.output.splitlines()

    calibrate = said(
        ["calibrate", "--hw", HOST, "--baseline", str(CALIBRATION), "--out", "./-", "--no-loo",
         "--no-grouped-cv"]
    )  # fmt: skip
    assert calibrate[0].startswith("wrote ./-: ") and "latency constants" in calibrate[0]
    assert said(["sweep", "from-config", str(config), "--out", "./-"])[0].startswith(
        "wrote ./-: 22 distinct shapes"
    )
    assert said(["sweep", "label", "--hw", HOST, "--out", "./-"]) == [
        f"wrote overlay ./- for {HOST}"
    ]
    assert said(["targets", "--hw", HOST, "--target-file", "--out", "./-"]) == [
        f"wrote ./-: target {HOST}'s file, before calibration"
    ]
    snapshot = said(["check", "--hw", HOST, "--update-snapshot", "--snapshot", "./-"])
    assert snapshot[0] == "snapshot ./-: 1 change(s)"
    reports = said(["validate", "--hw", HOST, "-q", "--out", "./-"])
    assert "reports written to ./-/ (report.json, report.md, records.csv, report.html)" in reports
    generated = said(["sweep", "generate", "--op", "vector_add", "--out-dir", "./-"])
    assert generated[0].startswith("wrote ./-/vector_add_calibration.json: ")
    from types import SimpleNamespace

    from graphsval_core.cli.capture_cmd import render_summary
    from graphsval_core.cli.capture_machine_cmd import calibrated_line
    from graphsval_core.cli.context import shown_path
    from graphsval_core.measure.capture import CaptureSummary

    capture = SimpleNamespace(
        out=Path("./-"), summary=CaptureSummary(rows=3), elapsed_s=1.0, reconciled=None
    )
    line = CliRunner().invoke(click.command()(lambda: render_summary(capture)), [])
    assert line.output.startswith("./-: 3 rows; this run")
    fit = SimpleNamespace(grouped=None, validation=None, rows=[], path=Path("./-"))
    assert calibrated_line("toy", fit) == "calibrated toy on 0 calibration rows: ./-"
    assert [shown_path(p) for p in ("-x.json", "a/-", "/tmp/-", "x\n-")] == [
        "./-x.json",
        "a/-",
        "/tmp/-",
        "x\\n-",
    ]


def test_an_output_named_like_a_flag_keeps_its_dot_slash_in_each_error(tmp_path, monkeypatch):
    """``validate --out ./-`` (a file ``-`` there) said ``Error: --out -: is
    a file, not a folder``, as if ``-`` were standard output, ``--out ./--d``
    (a folder) ``--out --d``, a flag; ``targets --target-file --out ./-``
    (a folder) suggested ``-/KEY.target.json`` (from the newcomer): each
    error names the path as the lines saying what was written do."""
    monkeypatch.chdir(tmp_path)
    config = _config(tmp_path)
    Path("-").write_text("x")
    Path("--d").mkdir()
    os.mkfifo("-fifo")
    calibrate = ["calibrate", "--hw", HOST, "--baseline", str(CALIBRATION)]
    cases = [
        (["validate", "--hw", HOST, "-q", "--out", "./-"], "--out ./-: is a file, not a folder"),
        (
            ["validate", "--hw", HOST, "-q", "--out", "./-fifo"],
            "--out ./-fifo: is a FIFO (named pipe), not a folder; refusing to write there",
        ),
        ([*calibrate, "--out", "./--d"], "--out ./--d: is a folder, not a file; name a file"),
        ([*calibrate, "--out", "./-fifo"], "--out ./-fifo: is a FIFO (named pipe), not a regular"),
        (
            [*calibrate, "--out", str(tmp_path / "c.json"), "--report", "./-"],
            "--report ./-: is a file, not a folder",
        ),
        (
            ["check", "--hw", HOST, "--update-snapshot", "--snapshot", "./--d"],
            "--snapshot ./--d: is a folder, not a file",
        ),
        (
            ["validate", "--hw", HOST, "-q", "--update-floors", "--floors", "./--d"],
            "--floors ./--d: is a folder, not a file",
        ),
        (["sweep", "label", "--hw", HOST, "--out", "./--d"], "--out ./--d: is a folder"),
        (["sweep", "from-config", str(config), "--out", "./--d"], "--out ./--d: is a folder"),
        (
            ["sweep", "generate", "--op", "vector_add", "--out-dir", "./-"],
            "--out-dir ./-: is a file, not a folder",
        ),
    ]
    for argv, fragment in cases:
        _refused(argv, fragment)
    Path("-").unlink()
    Path("-").mkdir()
    assert _refused(["targets", "--hw", HOST, "--target-file", "--out", "./-"], "is a folder") == (
        f"Error: ./-: is a folder; give the file's name (e.g. ./-/{HOST}.target.json)"
    )
    assert Path("-").is_dir() and not any(Path("-").iterdir())
    assert Path("--d").is_dir() and not any(Path("--d").iterdir())
    _still_a_fifo(Path("-fifo"))


def test_the_helpers_show_a_path_named_like_a_flag_as_the_command_line_does(tmp_path, monkeypatch):
    """The output checks name a path through the lowest layer's
    ``shown_path``: the command line's is the same (the core layers import
    no CLI module)."""
    from graphsval_core.cli import context
    from graphsval_core.datamodel.errors import one_line, shown_path
    from graphsval_core.files.outputs import check_output_files

    for path in ("-", "-x.json", "a/-", "/tmp/-", "x\n-", Path("./-/a"), "\x1b[2J"):
        assert shown_path(path) == context.shown_path(path)
    assert shown_path(Path("./-/a")) == "./-/a"
    assert one_line("a\x1bb\u202e") == context.one_line("a\x1bb\u202e") == "a\\x1bb\\u202e"
    monkeypatch.chdir(tmp_path)
    Path("-/r.json").mkdir(parents=True)
    with pytest.raises(UserInputError) as err:
        check_output_files(Path("-"), ["r.json"], UserInputError, "--out")
    assert str(err.value).startswith("--out ./-: ./-/r.json is a folder, where the command")


def test_a_command_a_message_suggests_quotes_a_path_with_a_space(tmp_path, monkeypatch):
    """A message suggesting a command to paste put a path in it unquoted:
    ``--out my ws/targets/KEY.target.json`` (a workspace under macOS's
    ``Application Support``) is two arguments in a shell. Each such path is
    shell-quoted, as ``plugin new``'s next steps are (``shell_path``); a
    line naming a file it wrote or could not read is not a command, and
    shows the path as it is (``shown_path``: ``wrote my dir/x.json``)."""
    import json
    import re
    import shlex

    from graphsval_core.datamodel.errors import shell_path

    assert [shell_path(p) for p in ("my dir/x.json", "plain/x.json", "-x", "a\x1bb")] == [
        "'my dir/x.json'",
        "plain/x.json",
        "./-x",
        "'a\\x1bb'",
    ]
    monkeypatch.chdir(tmp_path)
    Path("my ws/calibration").mkdir(parents=True)
    line = _refused(
        ["--workspace", "my ws", "calibrate", "--hw", HOST, "--baseline", str(CALIBRATION),
         "--out", "my ws/calibration/c.json"],
        "is in the workspace's calibration/",
    )  # fmt: skip
    command = re.search(r"\(`(graphsval targets [^`]*)`\)", line).group(1)
    assert shlex.split(command)[-2:] == ["--out", f"my ws/targets/{HOST}.target.json"]
    Path("my dir").mkdir()
    Path("my dir/snap.json").write_text(
        '{"targets": {"i7_12700k": {"matmul 32x32x32 fp32": [1e-05, 0.001]}}}'
    )
    result = CliRunner().invoke(
        cli, ["check", "--hw", HOST, "--snapshot", "my dir/snap.json", "--json"]
    )
    assert result.exit_code == 0, result.output
    said = [o["message"] for t in json.loads(result.stdout)["targets"] for o in t["outcomes"]]
    (skip,) = [m for m in said if m.startswith("no committed snapshot")]
    command = re.search(r"`(graphsval check [^`]*)`", skip).group(1)
    assert shlex.split(command)[-2:] == ["--snapshot", "my dir/snap.json"]
