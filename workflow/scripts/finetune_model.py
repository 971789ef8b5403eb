"""Fine-tune a run's base model on its training shards (resumes from its last checkpoint)."""

from vcrbench import logs
from vcrbench.models import ModelSpec
from vcrbench.plan import job
from vcrbench.retrain.finetune import finetune
from vcrbench.retrain.loop import TrainSettings

with job.run(snakemake):
    logs.set_threads(snakemake.threads)
    p = snakemake.params
    run = p.run
    finetune(
        ModelSpec.from_config(run["base"], p.base),
        list(snakemake.input.shards),
        model_path=snakemake.output.model,
        history_path=snakemake.output.history,
        plot_path=snakemake.output.plot,
        checkpoint_dir=p.checkpoint_dir,
        settings=TrainSettings(
            epochs=run["epochs"],
            lr=run["lr"],
            momentum=run["momentum"],
            weight_decay=run["weight_decay"],
            batch_size=run["batch_size"],
            seed=p.seed,
        ),
        derived=ModelSpec.from_config(snakemake.wildcards.run, p.derived),
        device=p.device,
        precision=p.precision,
        keep_checkpoints=p.keep_checkpoints,
        label_space=p.label_space,
    )
