"""What a newcomer looks for at the top of the repository: the licence pyproject names, how to
cite the project and the paper it implements, and make targets that take the same arguments."""

import re
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def test_the_licence_file_is_the_one_pyproject_names():
    text = (REPO / "LICENSE").read_text()
    assert pyproject()["license"] == {"text": "MIT"}
    assert text.startswith("MIT License\n\nCopyright (c) 2026 The VCR-Bench developers\n")
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text


def test_the_citation_file_names_the_project_and_the_vcr_paper():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["title"].startswith("VCR-Bench")
    assert cff["version"] == pyproject()["version"] and cff["license"] == "MIT"
    (paper,) = cff["references"]
    readme = " ".join((REPO / "README.md").read_text().split())
    title = " ".join(paper["title"].split())
    assert f'"{title}", ECCV 2024' in readme  # the README's citation of the method
    names = [f"{a['given-names']} {a['family-names']}" for a in paper["authors"]]
    assert f"VCR method: {', '.join(names)}," in readme
    assert paper["type"] == "conference-paper" and paper["year"] == 2024


def make_dry_run(target: str, *variables: str) -> list[str]:
    """The commands `make -n <target> <variables>` would run (nothing is set up or run)."""
    proc = subprocess.run(
        ["make", "-n", target, *variables, "VENV=/nonexistent"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


@pytest.mark.parametrize("target", ["run", "figures", "report", "plan"])
def test_every_make_target_names_its_config_with_config(target):
    """`make <target> CONFIG=my.yaml`, the same for every target that runs or plans the
    workflow (a dry run of make: nothing is set up or run)."""
    program = r"/bin/python scripts/plan_cost.py" if target == "plan" else r"/bin/snakemake\b"
    (line,) = [x for x in make_dry_run(target, "CONFIG=my.yaml") if re.search(program, x)]
    assert " --configfile my.yaml" in line, line


@pytest.mark.parametrize("target", ["run", "figures", "report"])
def test_make_targets_that_run_snakemake_take_snakemake_args(target):
    """`make <target> SNAKEMAKE_ARGS="--configfile my.yaml"` passes the arguments on (a dry run
    of make: nothing is set up or run)."""
    lines = make_dry_run(target, "SNAKEMAKE_ARGS=--configfile my.yaml")
    (line,) = [x for x in lines if re.search(r"/bin/snakemake\b", x)]
    assert line.endswith(" --configfile my.yaml"), line
