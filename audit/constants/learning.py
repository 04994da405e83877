"""Learning from reviewers: calibration, agreement and drift.

Part of ``audit.constants`` (import from there: ``from audit.constants import NAME``)."""

from __future__ import annotations

# --- Learning from reviewers (docs/ARCHITECTURE.md "Learning from reviewers") ---------------------
# Every case resolution and revision review is a labelled example; `calibrate` refits a
# workspace's decision threshold, confidence calibration (Platt on the judge's support logit) and
# the judge's stacker weights from them, by grouped cross-validation.
# With fewer reviewed examples than CALIBRATION_MIN_EXAMPLES, or fewer than CALIBRATION_MIN_PER_CLASS
# that the reviewers found SUPPORTED (or not), nothing is fitted and `calibrate` says how many more.
CALIBRATION_MIN_EXAMPLES = 60
CALIBRATION_MIN_PER_CLASS = 15
CALIBRATION_MAX_EXAMPLES = 2000  # the newest this-many examples are used (a refit stays cheap)
CALIBRATION_FOLDS = 5  # grouped folds (by answer: no answer straddles a fold)
# A candidate is kept only when, out of fold, its 2-class balanced accuracy beats the judge as shipped
# by this margin, the lower end of a paired bootstrap interval of that gain (over answers) is above
# zero, and its ECE is no worse than this tolerance. A refit that only flattens the confidences
# (reviewers who disagree at random) decides no better and is declined.
CALIBRATION_MIN_BACC_GAIN = 0.02
CALIBRATION_MAX_ECE_LOSS = 0.02
CALIBRATION_BOOTSTRAP_ROUNDS = 400
CALIBRATION_BOOTSTRAP_CONFIDENCE = 0.90  # two-sided: the 5th percentile of the gain must be above 0
CALIBRATION_STACKER_L2 = 4.0  # pull of the refitted stacker toward the shipped weights (standardised inputs)
CALIBRATION_PLATT_L2 = 1.0  # pull of (a, b) toward (1, 0)
# The decision threshold is searched in this range (a calibrated confidence under 0.5 says the claim is
# more likely unsupported: SUPPORTED never needs less) ...
CALIBRATION_THRESHOLD_RANGE = (0.50, 0.95)
CALIBRATION_THRESHOLD_STEP = 0.01  # ... at this step (ties: the value nearest the threshold in force)
CALIBRATION_ECE_BINS = 10  # equal-width bins of the expected calibration error and the reliability diagram
# Reviewer agreement and label drift (dashboard, daily check): a domain whose reviewers agreed with
# the machine less than REVIEW_DRIFT_MIN_AGREEMENT over the last REVIEW_DRIFT_WINDOW_DAYS days (at
# least REVIEW_DRIFT_MIN_EXAMPLES decisions) alerts the workspace's notification targets, once a window.
REVIEW_DRIFT_WINDOW_DAYS = 14
REVIEW_DRIFT_MIN_AGREEMENT = 0.70
REVIEW_DRIFT_MIN_EXAMPLES = 10
