"""Datasets, the inputs layer (with models): a dataset's kinds by name (:mod:`.kinds`, a
leaf registry), their readers (:mod:`.listing`: label CSVs; :mod:`.layouts`: CUB, AwA2,
SUN), image files decoded and checked (:mod:`.imagefiles`), and the clean set every later
stage works from (:mod:`.loading`, which registers the built-in kinds).
"""
