"""Everything of Geirhos et al. (2018): the compact copy of their trial data (this namespace),
its reader into the trials schema, their networks and trained networks against their humans, and
error consistency.

Geirhos, Temme, Rauber, Schütt, Bethge, Wichmann: *Generalisation in humans and deep neural
networks*, NeurIPS 2018; data CC-BY-4.0 (licence and citation in ``vcrbench/data/geirhos2018/``).
``scripts/build_geirhos_data.py`` converts the release's CSV files into three Parquet files there,
one row per trial, rows in file order, files in name order:

============== ===================================================================================
collection     what
============== ===================================================================================
``humans``     the 12 lab experiments in 11 folders (the eidolon folder holds Eidolon I, II, III),
               3–6 observers each
``dnns``       the same experiments answered by GoogLeNet, ResNet-152 and VGG-19 (ImageNet
               weights); extra columns: softmax entropies/probabilities, ``object_response_sums``.
               The release's ``dnns`` folders also repeat the human files byte for byte: they are
               stored once (in ``humans``) and :func:`csv_files`/:func:`raw_frame` serve them again.
``trained``    8 test experiments answered by ResNet-50s trained on (distorted) 16-class-ImageNet
               (:data:`TRAINED_NETWORKS`: the paper's models A1–A9 and ``specialised``)
============== ===================================================================================

Columns: ``experiment`` (folder name without ``-experiment``), ``file`` (the CSV's name), then the
CSV's columns (``subj, session, trial, rt, object_response, category, condition, imagename`` and,
for the networks of ``dnns``, ``entropy_1000, prob_correct_16, rank_correct_16, entropy_16,
highest_prob_16, object_response_sums, prob_correct_16_sums, rank_correct_16_sums, entropy_16_sums,
highest_prob_16_sums``). Strings are dictionary-encoded, integers typed; ``rt`` and the networks'
entropies and probabilities are stored as the decimals the CSV prints (mantissa and exponent: the
CSV's digits, smaller than float64) and read as the float64 each text denotes, which prints back as
that text. ``rt`` is null where the CSV says ``NaN`` (networks, and humans without an answer) or,
in the ``specialised`` files, nothing.

Stimuli: a trial's stimulus is identified by its ImageNet source image and condition
(:data:`STIMULUS_KEY`); ``imagename`` itself never repeats across observers. Within an experiment
the ImageNet networks answered one stimulus set of their own (the same files, in the same order, for
all three; the trained networks the PNG versions of the same source images and conditions), not
the humans' stimuli: a human shares a few dozen (image, condition) pairs with them (more in the
two-condition experiments). Each human saw an individual random selection, except that subject-02
and subject-03 saw the same stimuli in the colour (1280) and false-colour (1120) experiments and
mostly the same in phase-scrambling (1033 of 1120), power-equalisation (1048) and rotation (720 of
1280).

Modules:

- :mod:`~vcrbench.humans.geirhos.store` (the Parquet store: :func:`load`, :func:`raw_frame`),
  :mod:`~vcrbench.humans.geirhos.experiments` (:data:`EXPERIMENTS`),
  :mod:`~vcrbench.humans.geirhos.accuracy` (per-condition accuracies),
  :mod:`~vcrbench.humans.geirhos.pairing` (trial pairing; κ per group): re-exported here;
- :mod:`~vcrbench.humans.geirhos.reader`: the trials of the experiments placed on the Δv axis in
  the trials schema (:func:`~vcrbench.humans.geirhos.reader.read_geirhos`);
- :mod:`~vcrbench.humans.geirhos.dnn`, :mod:`~vcrbench.humans.geirhos.trained`: HMRI/MRSI of the
  ImageNet networks and of the networks trained on distortions against the humans (one
  experiment's humans: :class:`~vcrbench.humans.geirhos.networks.ExperimentHumans`);
- :mod:`~vcrbench.humans.geirhos.error_consistency`: κ of the networks with the humans per
  condition on the Δv axis (the formula: :mod:`vcrbench.kappa`);
- :mod:`~vcrbench.humans.geirhos.stages`: the workflow's entry points of these tables.

Three views of the data:

- :func:`raw_frame` returns one CSV exactly as ``pd.read_csv(path, dtype=str,
  keep_default_na=False)`` parses it (what :mod:`vcrbench.humans.geirhos.reader` reads);
- :func:`load` returns the typed rows, with ``image_id`` (the ImageNet source image) and
  ``condition_label`` (the experiment's condition string; the release's ``specialised`` files print
  ``1.0`` for ``1`` and ``0.0`` for ``0.00``);
- :func:`condition_accuracy`: n and accuracy per experiment, observer, decision rule and condition.

:data:`EXPERIMENTS` (and :func:`experiments_table`, :func:`conditions_table`) describe each
experiment: folder, corruption and parameter names, conditions in order with their values, image
size and format. :func:`pair_trials` and :func:`vcrbench.kappa.error_consistency` implement the
trial matching and Cohen's κ of Geirhos, Meding & Wichmann, *Beyond accuracy: quantifying
trial-by-trial behaviour of CNNs and humans by measuring error consistency*, NeurIPS 2020.
"""

from vcrbench.humans.geirhos.accuracy import (
    CONDITIONS_COLUMNS,
    RESPONSE_RULE,
    accuracy_table,
    condition_accuracy,
)
from vcrbench.humans.geirhos.experiments import (
    _FILE_RE,
    COLLECTIONS,
    CSV_COLUMNS,
    DICTIONARY_COLUMNS,
    DNN_COLUMNS,
    EXPERIMENTS,
    FIGURE4_MODELS,
    FLOAT_COLUMNS,
    INT_COLUMNS,
    NO_ANSWER,
    NULL_TEXT,
    PARQUET_FILES,
    PRETRAINED_NETWORKS,
    RULES,
    SOURCE_COMMIT,
    SOURCE_REPOSITORY,
    STIMULUS_KEY,
    STRING_COLUMNS,
    TRAINED_EXPERIMENTS,
    TRAINED_NETWORKS,
    Experiment,
    conditions_table,
    experiment_info,
    experiments_table,
)
from vcrbench.humans.geirhos.pairing import consistency_table, pair_trials, paired_trials
from vcrbench.humans.geirhos.store import (
    EXPONENT,
    MANTISSA,
    _file_slices,
    _stored,
    csv_files,
    data_root,
    decode_decimal,
    experiments,
    load,
    metadata,
    observer_collection,
    parquet_path,
    raw_frame,
    stored,
)

__all__ = [
    "COLLECTIONS",
    "CONDITIONS_COLUMNS",
    "RESPONSE_RULE",
    "CSV_COLUMNS",
    "DICTIONARY_COLUMNS",
    "DNN_COLUMNS",
    "EXPERIMENTS",
    "EXPONENT",
    "FIGURE4_MODELS",
    "FLOAT_COLUMNS",
    "INT_COLUMNS",
    "MANTISSA",
    "NO_ANSWER",
    "NULL_TEXT",
    "PARQUET_FILES",
    "PRETRAINED_NETWORKS",
    "RULES",
    "SOURCE_COMMIT",
    "SOURCE_REPOSITORY",
    "STIMULUS_KEY",
    "STRING_COLUMNS",
    "TRAINED_EXPERIMENTS",
    "TRAINED_NETWORKS",
    "Experiment",
    "accuracy_table",
    "condition_accuracy",
    "conditions_table",
    "consistency_table",
    "csv_files",
    "data_root",
    "decode_decimal",
    "experiment_info",
    "experiments",
    "experiments_table",
    "load",
    "metadata",
    "observer_collection",
    "pair_trials",
    "paired_trials",
    "parquet_path",
    "raw_frame",
    "stored",
    "_FILE_RE",
    "_file_slices",
    "_stored",
]
