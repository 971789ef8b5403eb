"""Test sets, stage I: corrupt and measure Δv (:mod:`.measure`), the manifests
(:mod:`.sampling`, with its Δv-uniform and Δv-stratified modes), the shards and
ImageNet-C sets (:mod:`.testset`), and their coverage (:mod:`.coverage`, Table 2).
"""
