# Figures and tables of the paper (filled in by the figures stage).


def figure_outputs():
    return []
