"""Load every config of a Hugging Face export folder with whatever `datasets` this interpreter has, and
print {"datasets": version, "configs": {config: [row, ...]}} as JSON. Run by tests/test_export_hf.py
under more than one major version of `datasets`; imports nothing from abstaingen."""

import json
import sys

import datasets

folder = sys.argv[1]
configs = {}
for config in sys.argv[2:]:
    loaded = datasets.load_dataset(folder, config, split="test")
    configs[config] = {"features": sorted(loaded.features), "rows": loaded.to_list()}
print(json.dumps({"datasets": datasets.__version__, "configs": configs}))
