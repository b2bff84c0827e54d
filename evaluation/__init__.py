"""Models evaluated on a release through Inspect AI: the tasks (pairs_task, ood_task), the scripted
policies (`--model abstaingen/<policy>`), the judges, the report and its HTML page, and `run`, the
composition `abstaingen eval` and the `evaluate` flow share."""
