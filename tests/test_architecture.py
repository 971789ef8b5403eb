"""The house's shape, checked: no import cycle in the library, stages in one direction, the plan
layer on top, no module over ~500 lines, the estimator a package, and config validation and
`snakemake -n` without torch (docs/architecture.md)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
PACKAGE = SRC / "vcrbench"
MAX_LINES = 500

#: The library's layers, lowest first: a module may import its own layer and those below it.
LAYERS = [
    {"errors", "vocab", "seeding", "files", "logs", "bins", "schema", "settings", "kappa"},  # foundation (leaves)
    {"vif", "corruptions", "labels", "runtime", "defenses"},  # registries and primitives
    {"datasets", "models"},  # inputs: images, labels, models
    {"testsets"},  # stage I: test sets, corrupt + measure Δv
    {"inference"},  # stage III: predictions
    {"estimation"},  # the estimator and its metrics
    {"humans"},  # stage II: human curves (through the estimator)
    {"evaluation"},  # stage III: outcomes, model curves and metrics, paired differences, error consistency, defenses
    {"tables", "figures"},  # reporting
    {"retrain"},  # fine-tuning
    {"plan"},  # what the workflow builds (imports any stage, no stage imports it)
    {"api", "__main__"},  # the Python API and its command: the stages driven with the plan's settings
]


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every vcrbench module ``name`` imports, at module level or inside functions (imports under
    ``if TYPE_CHECKING:`` are for annotations only and do not count)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name in known)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    base = ".".join([*parts, base] if base else parts)
                if base.startswith("vcrbench"):
                    for alias in child.names:
                        sub = f"{base}.{alias.name}"
                        found.add(sub if sub in known else base)
            visit(child)

    visit(ast.parse(path.read_text()))
    found.discard(name)
    return {m for m in found if m in known}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports(name, path, set(mods)) for name, path in mods.items()}


def test_no_import_cycle(graph):
    state: dict[str, int] = {}
    cycles = []

    def walk(node, stack):
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycles.append(" -> ".join([*stack[stack.index(dep) :], dep]))
            elif dep not in state:
                walk(dep, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node, [])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def layer_of(module: str) -> int:
    if module == "vcrbench":
        return 0  # the package's __init__: its docstring, __version__ and the API's lazy names
    top = module.split(".")[1] if "." in module else ""
    for i, layer in enumerate(LAYERS):
        if top in layer:
            return i
    raise AssertionError(f"{module}: in no layer of tests/test_architecture.py; add it")


def test_stages_import_only_earlier_stages(graph):
    wrong = [
        f"{mod} (layer {layer_of(mod)}) imports {dep} (layer {layer_of(dep)})"
        for mod, deps in sorted(graph.items())
        if mod != "vcrbench"
        for dep in sorted(deps)
        if layer_of(dep) > layer_of(mod)
    ]
    assert not wrong, "\n".join(wrong)


def test_only_the_plan_layer_and_the_api_import_the_plan_layer(graph):
    wrong = [
        f"{mod} imports {dep}"
        for mod, deps in graph.items()
        if not mod.startswith(("vcrbench.plan", "vcrbench.api", "vcrbench.__main__"))
        for dep in deps
        if dep.startswith("vcrbench.plan")
    ]
    assert not wrong, "\n".join(wrong)


def test_human_estimates_are_read_without_the_humans_package(graph):
    # the typed human estimate and its reader sit with the estimator (estimation.storage)
    readers = [m for m in graph if m.startswith(("vcrbench.evaluation.evaluate", "vcrbench.figures"))]
    wrong = [f"{m} imports {d}" for m in readers for d in graph[m] if d.startswith("vcrbench.humans")]
    assert readers and not wrong, "\n".join(wrong)


def test_no_library_module_is_over_500_lines():
    long = {
        str(p.relative_to(REPO)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_estimator_is_a_package_and_the_formulas_are_findable():
    estimation = PACKAGE / "estimation"
    assert (estimation / "__init__.py").is_file()
    assert not (PACKAGE / "estimation.py").exists()
    metrics = (PACKAGE / "estimation" / "metrics.py").read_text()
    assert re.search(r"^def hmri\(", metrics, re.M) and re.search(r"^def mrsi\(", metrics, re.M)
    assert re.search(r"^def fit_curve\(", (estimation / "spline.py").read_text(), re.M)


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300
    )


def test_config_validation_imports_no_torch():
    proc = _run(
        "import sys\n"
        "from vcrbench import plan\n"
        "config = plan.load('config/config.yaml')\n"
        "p = plan.Plan(config)\n"
        "p.final_outputs()\n"
        "heavy = sorted(m for m in ('torch', 'timm', 'torchvision', 'open_clip') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stdout, proc.stdout


def test_a_dry_run_imports_no_torch_and_no_corruption_library(tmp_path):
    """Snakemake itself (every run and dry run starts it, and the tests start it often) imports
    neither the models' libraries nor the corruptions' (numba, imagecorruptions: about 1.5 s):
    the plan checks a corruption by its registered name and parameters, the jobs apply it."""
    proc = subprocess.run(
        [
            sys.executable, "-X", "importtime", "-m", "snakemake", "-n", "--quiet", "all",
            "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path),
        ],
        capture_output=True, text=True, timeout=600,
        env={**__import__("os").environ, "NO_ALBUMENTATIONS_UPDATE": "1"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert "snakemake" in imported  # the import log was read
    assert not {"torch", "timm", "torchvision"} & imported
    assert not {"numba", "imagecorruptions", "skimage"} & imported


def test_the_figure_modules_import_no_scipy():
    """A figure or table job reads stored estimates and draws: it starts without scipy (its
    optimize, interpolate, linalg and stats were about 1.5 s of each figure job's 4), which the
    estimators and the tests of similarity import where they run."""
    figures = sorted(p.stem for p in (PACKAGE / "figures").glob("*.py") if p.stem != "__init__")
    proc = _run(
        "import importlib, sys\n"
        f"for name in {figures!r}:\n"
        "    importlib.import_module('vcrbench.figures.' + name)\n"
        "import vcrbench.estimation.storage, vcrbench.estimation.similarity\n"
        "print('SCIPY', sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert "SCIPY []" in proc.stdout, proc.stdout
