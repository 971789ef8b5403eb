# Retraining with VCR data (Section 4.3 of the paper).
