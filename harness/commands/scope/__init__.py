"""`convdiff scope`: when exactly does a target's failure show, tested on fresh cases (infer.py, with the
rules of harness/judge/rules.py over harness/model/features.py); and are known issues' selectors too broad
or too narrow (check.py). command.py is the CLI, sample.py draws the fresh cases, runs.py runs them on warm
workers, write.py writes scope.yaml and scope.md. docs/guide/scope.md says how to use it."""
