"""The [orchestration] section of the config: where the validation tasks run.

Apart from abstaingen.flows.scale, which acts on it, so that abstaingen.config can import it without
importing Prefect or the pipeline (which imports abstaingen.config).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictInt, model_validator

from abstaingen.model.common import Model

MAX_WORKERS = 256


class OrchestrationConfig(Model):
    """Where the validation tasks run."""

    kind: Literal["local", "dask"] = Field(
        default="local",
        description="local: every environment's validation on the flow's own event loop ([sandbox] concurrency at "
                    "once); dask: one Dask task per environment, each in a Dask worker process")
    address: str | None = Field(
        default=None, min_length=1,
        description="dask only: address of a running Dask scheduler (e.g. tcp://10.0.0.5:8786) whose workers run "
                    "the validations; unset: a Dask cluster of `workers` processes on this machine, for the run")
    workers: StrictInt = Field(
        default=2, ge=1, le=MAX_WORKERS,
        description="dask without an address: worker processes of the run's local cluster, one validation at a "
                    "time each")

    @model_validator(mode="after")
    def _address_is_for_dask(self) -> OrchestrationConfig:
        if self.address is not None and self.kind != "dask":
            raise ValueError("`address` is a Dask scheduler's: set kind = \"dask\" with it")
        return self
