"""What the boosting classifiers (MIBoost, MI-AdaBoost) report as the reason boosting ended."""

# diagnostics_["stop"]: why boosting ended (0 all rounds run, 1 every bag's error ≤ 0.5,
# 2 every bag's error ≥ 0.5, 3 the optimal step c was not positive)
STOP_CODES = {"max_rounds": 0, "perfect": 1, "too_wrong": 2, "no_gain": 3}
