"""Which human reference each corruption is compared against.

Human data exist for few corruptions. The VCR paper found that humans cannot tell apart the members
of two *similarity classes* (their human curves' 83% intervals overlap everywhere), so the human
data of one member may serve the whole class:

- noise: shot_noise, impulse_noise, gaussian_noise, uniform_noise
- blur: blur, median_blur, gaussian_blur, glass_blur, defocus_blur

The classes come from the corruptions registry (``Corruption.similarity_class``); a user
corruption declares its own (``corruptions.<name>.similarity_class``). VCR-Bench puts
``geirhos_lowpass`` (Geirhos et al.'s greyscale Gaussian low-pass) in the blur class: it is
Gaussian blur on the greyscale image, which the paper did not test as such (reports say so through
``how = "similarity-class"``).

The config's ``humans`` block, which :mod:`vcrbench.plan.humans` reads into the arguments here
(reference name -> the corruption its trials hold; ``assign``)::

    humans:
      references:                       # name -> where the trials come from
        geirhos2018-noise:   {kind: geirhos2018, experiment: noise}
        geirhos2018-lowpass: {kind: geirhos2018, experiment: lowpass}
        my-study:            {kind: trials, path: data/my_trials.csv, corruption: gaussian_blur}
      assign:                           # optional overrides: corruption -> reference name or null
        glass_blur: my-study
        frost: null

:func:`resolve_reference` applies, in order: an explicit ``assign`` entry; a reference of the
corruption itself (``how = "own"``); a reference of a member of its similarity class
(``how = "similarity-class"``); else no reference (``(None, None)``).
"""

from __future__ import annotations

from collections.abc import Mapping

from vcrbench.errors import HumanReferenceError

#: geirhos_lowpass is not a registry corruption; it is Gaussian blur on the greyscale image.
LOCAL_CLASSES: dict[str, str | None] = {"geirhos_lowpass": "blur"}


def declared_classes(corruptions_config: Mapping | None = None) -> dict[str, str | None]:
    """Map corruption -> similarity class, as the corruptions registry declares it.

    Built-in corruptions carry the paper's classes; a user corruption (an entry of the config's
    ``corruptions`` block with ``function``) may declare ``similarity_class``.
    ``geirhos_lowpass`` is in the blur class.
    """
    from vcrbench.corruptions import get_corruption, list_corruptions

    out = dict(LOCAL_CLASSES)
    for name in list_corruptions():
        out[name] = get_corruption(name).similarity_class
    for name, opts in (corruptions_config or {}).items():
        out[name] = get_corruption(name, opts or {}).similarity_class
    return out


def resolve_reference(
    corruption: str,
    references: Mapping[str, str] | None,
    assign: Mapping[str, str | None] | None = None,
    classes: Mapping[str, str | None] | None = None,
) -> tuple[str | None, str | None]:
    """The human reference of ``corruption`` and how it was chosen.

    Parameters
    ----------
    corruption : str
        The corruption to compare models on.
    references : mapping
        Reference name -> the corruption its trials hold
        (:attr:`~vcrbench.humans.references.HumanReference.corruption`).
    assign : mapping, optional
        ``humans.assign``: corruption -> reference name, or None for "no human reference".
    classes : mapping, optional
        corruption -> similarity class (default :func:`declared_classes` without overrides).

    Returns
    -------
    (reference_name, how)
        ``how`` is ``"own"`` (the reference holds trials of this corruption), ``"similarity-class"``
        (of another member of its class) or None together with ``reference_name`` None.

    Raises
    ------
    HumanReferenceError
        An unknown reference name, an assignment across similarity classes, or several
        candidate references with none assigned; the message names the config key.
    """
    ref_corr = dict(references or {})
    assign = dict(assign or {})
    classes = dict(classes) if classes is not None else declared_classes()
    own_class = classes.get(corruption)

    if corruption in assign:
        name = assign[corruption]
        key = f"humans.assign.{corruption}"
        if name is None or name == "none":
            return None, None
        if name not in ref_corr:
            raise HumanReferenceError(
                f"config key '{key}': unknown human reference {name!r}; defined in "
                f"humans.references: {', '.join(sorted(ref_corr)) or '(none)'}"
            )
        if ref_corr[name] == corruption:
            return name, "own"
        if own_class is not None and classes.get(ref_corr[name]) == own_class:
            return name, "similarity-class"
        raise HumanReferenceError(
            f"config key '{key}': reference {name!r} holds trials of {ref_corr[name]!r}, which is "
            f"not in the similarity class of {corruption!r} ({own_class or 'none'})"
        )

    own = sorted(n for n, c in ref_corr.items() if c == corruption)
    if len(own) == 1:
        return own[0], "own"
    if len(own) > 1:
        raise HumanReferenceError(
            f"config key 'humans.assign.{corruption}': several references hold trials of "
            f"{corruption!r} ({', '.join(own)}); choose one"
        )
    if own_class is None:
        return None, None
    peers = sorted(n for n, c in ref_corr.items() if classes.get(c) == own_class)
    if len(peers) == 1:
        return peers[0], "similarity-class"
    if len(peers) > 1:
        raise HumanReferenceError(
            f"config key 'humans.assign.{corruption}': several references of the {own_class!r} "
            f"class could serve {corruption!r} ({', '.join(peers)}); choose one"
        )
    return None, None


def resolve_all(
    corruptions: list[str],
    references: Mapping[str, str] | None,
    assign: Mapping[str, str | None] | None = None,
    corruptions_config: Mapping | None = None,
) -> dict[str, tuple[str | None, str | None]]:
    """:func:`resolve_reference` for every corruption; unknown ``assign`` keys are an error."""
    assign = dict(assign or {})
    stray = sorted(set(assign) - set(corruptions))
    if stray:
        raise HumanReferenceError(
            f"config key 'humans.assign': {', '.join(stray)} not among the configured corruptions "
            f"({', '.join(corruptions)})"
        )
    classes = declared_classes(corruptions_config)
    return {c: resolve_reference(c, references, assign, classes) for c in corruptions}
