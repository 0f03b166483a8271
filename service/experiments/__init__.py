"""Experiments and replays: evidence for a verifier change before it reaches a run.

An experiment compares two versions of a verifier on a tenant's live traffic, in shadow (the
treatment also decides the control's items, off the hot path) or split (whole groups go to one
arm); a replay re-scores logged decisions with other versions as a background job. Both are
read through one report: agreement, the status confusion, the reward delta with its confidence
interval, the effect on GRPO's advantages, latency and failure rates, and the disagreements.
"""
