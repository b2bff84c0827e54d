"""As in AgentAbstain: environment packages come with the data, found under `$AGENTABSTAIN_DATA/environments`
(default `./data/environments`), and import as `abstention_factory.environments.<name>`."""

import os
from pathlib import Path

_data = Path(os.environ.get("AGENTABSTAIN_DATA", "data")).resolve() / "environments"
if _data.is_dir():
    __path__.append(str(_data))
