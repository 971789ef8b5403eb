"""Result tables in the paper's layouts, written as CSV, Markdown and LaTeX.

- :mod:`~vcrbench.tables.format`: the :class:`Table` container, its writers and cell formatting;
- :mod:`~vcrbench.tables.paper`: :func:`table2_coverage` (Table 2, coverage of Δv, ImageNet-C
  against the VCR test set), :func:`metrics_table` (every metric with intervals),
  :func:`leaderboard` (one corruption's models ranked) and :func:`paper_tables` (all but
  Table 3);
- :mod:`~vcrbench.tables.retraining`: :func:`retraining_table` (Table 3: R̂, HMRI, MRSI for
  accuracy then consistency, before and after fine-tuning);
- :mod:`~vcrbench.tables.corruption_error`: ImageNet-C's CE, relative CE and mCE against AlexNet,
  and means by corruption category;
- :mod:`~vcrbench.tables.restricted`: R̂ and curves on clean-correct samples and of the
  unseen-only decision (Yucel et al.'s zero-shot study);
- :mod:`~vcrbench.tables.models`: :func:`table1_models` (Table 1: the run's models, their
  family, source, parameters and clean accuracy);
- :mod:`~vcrbench.tables.html`: :func:`~vcrbench.tables.html.page`, a CSV table as a
  self-contained HTML page that sorts by a click on a header (what the HTML report shows).

ImageNet-C accuracy per severity is computed on the evaluation side
(:func:`vcrbench.evaluation.evaluate.imagenet_c_accuracy`), from the same outcomes as the curves.
"""

from vcrbench.errors import TableError
from vcrbench.tables.format import (
    FORMATS,
    MISSING,
    Table,
    display_corruption,
    fmt,
    fmt_interval,
    latex_escape,
    latex_text,
    resolve_label_space,
    write_table,
    write_tables,
)
from vcrbench.tables.models import table1_models
from vcrbench.tables.paper import (
    leaderboard,
    metrics_table,
    paper_tables,
    table2_coverage,
)
from vcrbench.tables.retraining import retraining_table

__all__ = [
    "FORMATS",
    "MISSING",
    "Table",
    "TableError",
    "display_corruption",
    "fmt",
    "fmt_interval",
    "latex_escape",
    "latex_text",
    "leaderboard",
    "metrics_table",
    "paper_tables",
    "resolve_label_space",
    "retraining_table",
    "table1_models",
    "table2_coverage",
    "write_table",
    "write_tables",
]
