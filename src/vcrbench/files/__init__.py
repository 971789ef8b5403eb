"""Files, the foundation layer: atomic, byte-reproducible writing and checked reading
(:mod:`.io`), and the provenance record every output carries (:mod:`.provenance`).
"""
