"""Follow-up suggestions as a feature: suggest after a turn, speculate, accept or abort."""
