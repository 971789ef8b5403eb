"""A figure added to the workflow from outside it, as docs/architecture.md's recipe "Add a figure
or table" says: the drawing (:mod:`.figure`, which declares it too), its script
(``script.py``) and its caption (``caption.rst``)."""
