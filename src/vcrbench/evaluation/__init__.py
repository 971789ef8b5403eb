"""Evaluation, stage III: each model's outcomes (:mod:`.outcomes`), curves and metrics per
label space (:mod:`.evaluate`), and models compared: paired differences
(:mod:`.differences`), error consistency (:mod:`.consistency`), defenses' effects
(:mod:`.defense_effects`).
"""
