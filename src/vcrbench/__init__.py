"""VCR-Bench: visually-continuous corruption robustness of image classifiers, against humans."""

__version__ = "0.1.0"
