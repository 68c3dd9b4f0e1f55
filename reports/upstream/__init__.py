"""Upstream reports, rendered: a root cause's report (body.py: the body a maintainer reads, details.py: the
collapsed evidence) from what harness/commands/upstream/ gathered (model.py); the snippet's docstring
(docstring.py); the environment in each tracker's form (environment.py); what the other implementations
do (others.py); one result's issue text for `convdiff repro --issue` (result.py). Rendering only: nothing
here runs a script or a framework."""
