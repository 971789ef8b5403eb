#!/usr/bin/env bash
# Run by Snakemake inside the new conda environment, from the workflow directory (the repository
# root): install the vcrbench library that the workflow scripts import.
set -euo pipefail
python -m pip install --no-deps -e .
