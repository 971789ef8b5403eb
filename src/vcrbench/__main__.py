"""``python -m vcrbench``: the ``vcrbench`` command (:mod:`vcrbench.api.cli`)."""

from vcrbench.api.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
