"""``python -m toolkit.report``: the options become the notebooks' parameters (only those given;
``-p`` values read as YAML, as papermill reads them), and what would fail in every notebook (an
unknown cloud or credential word, a day that is no date, a parameter name that is no name, a
notebook that is not there) stops the command before any kernel starts, saying which option."""

from __future__ import annotations

import pytest

from toolkit.report.__main__ import _parser, main, parameters_of


def _given(*argv: str) -> dict:
    return parameters_of(_parser().parse_args(list(argv)))


def test_only_the_options_given_become_parameters() -> None:
    assert _given() == {}
    assert _given("--cloud", "public", "--credential", "cli", "--subscription", "prod-1",
                  "--subscription", "prod-2", "--day", "2026-06-01", "--place", "Ordino",
                  "--workspace", "Sales", "--history-store", "abfs://c/h",
                  "--management-group", "retail", "--resource-group", "rg-1") == {
        "cloud": "public", "credential": "cli", "management_group": "retail",
        "subscriptions": ["prod-1", "prod-2"], "resource_groups": ["rg-1"],
        "day": "2026-06-01", "places": ["Ordino"], "workspace": "Sales",
        "history_store": "abfs://c/h"}


@pytest.mark.parametrize("text, value", [
    ("3", 3), ("2.5", 2.5), ("null", None), ("true", True), ("[a, b]", ["a", "b"]),
    ("rg-data", "rg-data"), ("'007'", "007"), ("{a: 1}", {"a": 1}),
    ("[unclosed", "[unclosed"),  # not YAML: the text itself
])
def test_a_parameter_value_is_read_as_papermill_reads_it(text, value) -> None:
    assert _given("-p", "x", text) == {"x": value}


def test_a_parameter_given_twice_keeps_the_last_and_overrides_an_option() -> None:
    assert _given("--cloud", "public", "-p", "cloud", "usgov", "-p", "n", "1", "-p", "n",
                  "2") == {"cloud": "usgov", "n": 2}


@pytest.mark.parametrize("argv, said", [
    (["--cloud", "mars"], "argument --cloud: no cloud is named 'mars'"),
    (["--credential", "password"], "argument --credential: 'password' must be"),
    (["--day", "yesterday"], "argument --day: 'yesterday' is no ISO 8601 day"),
    (["--day", "2026-13-01"], "argument --day: '2026-13-01'"),
    (["--subscription", " "], "argument --subscription: an empty value names nothing"),
    (["-p", "a b", "1"], "argument -p/--parameter: 'a b' is no parameter name"),
    (["-p", "class", "1"], "argument -p/--parameter: 'class' is no parameter name"),
    (["-p", "x"], "argument -p/--parameter: expected 2 arguments"),
    (["--jobs", "0"], "--jobs and --timeout must be at least 1"),
    (["--timeout", "-5"], "--jobs and --timeout must be at least 1"),
    (["--jobs", "two"], "argument --jobs: invalid int value: 'two'"),
    (["--pages", "summary"], "argument --pages: invalid choice: 'summary'"),
    (["no-such-notebook.ipynb"], "no such notebook: no-such-notebook.ipynb"),
])
def test_bad_options_stop_the_command_before_any_kernel(argv, said, capsys, tmp_path,
                                                        monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert said in err and "usage: python -m toolkit.report" in err
    assert "Traceback" not in err
    assert not (tmp_path / "reports").exists()  # nothing was written


def test_an_output_dir_that_is_a_file_is_refused(tmp_path, capsys) -> None:
    taken = tmp_path / "reports"
    taken.write_text("not a folder")
    with pytest.raises(SystemExit) as info:
        main(["--output-dir", str(taken)])
    assert info.value.code == 2
    assert f"{taken} is a file, not a folder" in capsys.readouterr().err


def test_a_notebook_that_fails_makes_the_exit_status_1_and_is_named(tmp_path, capsys) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("raise RuntimeError('the service said no')")]
    path = tmp_path / "fails.ipynb"
    nbformat.write(nb, path)
    status = main([str(path), "--output-dir", str(tmp_path / "out"), "--jobs", "1"])
    out, err = capsys.readouterr()
    assert status == 1
    assert f"failed: {path}: RuntimeError: the service said no" in err
    assert "1 notebooks in" in out and (tmp_path / "out" / "fails.html").is_file()
    assert (tmp_path / "out" / "fails-no-code.html").is_file()
    # one page only, when asked
    status = main([str(path), "--output-dir", str(tmp_path / "full"), "--pages", "full"])
    assert status == 1 and [p.name for p in (tmp_path / "full").glob("*.html")] == ["fails.html"]


def test_help_lists_the_options(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for option in ("--cloud", "--credential", "--management-group", "--subscription",
                   "--resource-group", "--day", "--place", "--workspace", "--history-store",
                   "--parameter", "--output-dir", "--pages", "--jobs", "--timeout"):
        assert option in out
