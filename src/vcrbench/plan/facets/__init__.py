"""The methods of :class:`vcrbench.plan.rules.Plan`, by the stage whose rules use them.

- :mod:`.testsets`: test sets and ImageNet-C sets (shards, groups, per-corruption settings);
- :mod:`.inference`: models, predictions, estimates, defense pairs;
- :mod:`.humans`: human references (their entries, files and settings);
- :mod:`.retrain`: retraining runs (pool, training sets, fine-tuned models).

Each is a mixin of ``Plan``; the settings every rule uses and the workflow's targets are ``Plan``'s
own (:mod:`vcrbench.plan.rules`).
"""
