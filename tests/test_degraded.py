"""A degraded release: one its run may publish, but not the one it set out to make. What `degradation` says of
the funnel and the kept pairs (the state message of a Completed run, tagged `degraded`), and the keys the run's
artifacts get. The flows' runs are in test_flows.py."""

from __future__ import annotations

from builtin_fixtures import builtin_pair

from abstaingen.flows.artifacts import OOD_ARTIFACTS, PAIRS_ARTIFACTS, ArtifactKeys
from abstaingen.model import FunnelStage, Scenario, TaskPair
from abstaingen.pipelines import ood
from abstaingen.pipelines.pairs import degradation, scenario_floor
from abstaingen.validators.shortcuts import MIN_PAIRS

WHOLE = [FunnelStage.counted(stage="capability", received=2), FunnelStage.counted(stage="environment", received=2),
         FunnelStage.counted(stage="task", received=32), FunnelStage.counted(stage="perturbation", received=32),
         FunnelStage.counted(stage="dedup", received=32, rejected={"near_duplicate": 1}),
         FunnelStage.counted(stage="replay", received=31, rejected={"replay_final_state": 2}, retried=3)]


def kept(per_scenario: dict[Scenario, int]) -> list[TaskPair]:
    return [builtin_pair(scenario) for scenario, n in per_scenario.items() for _ in range(n)]


EVERY_SCENARIO = kept({scenario: 2 for scenario in Scenario})


def with_lines(*changed: FunnelStage) -> list[FunnelStage]:
    by_stage = {line.stage: line for line in changed}
    return [by_stage.get(line.stage, line) for line in WHOLE] + [line for line in changed if line.stage not in
                                                                 {w.stage for w in WHOLE}]


def test_a_release_that_lost_nothing_to_the_infrastructure_is_not_degraded() -> None:
    # rejections on the merits, dedup and retried sandboxes are a healthy run's
    assert degradation(WHOLE, EVERY_SCENARIO, planned_per_scenario=2) is None


def test_pairs_lost_to_sandboxes_and_providers_are_counted_against_the_pairs_planned() -> None:
    lines = with_lines(FunnelStage.counted(stage="perturbation", received=32, rejected={"S5: provider_error": 3}),
                       FunnelStage.counted(stage="env_checks", received=29, rejected={"env_infrastructure": 8}),
                       FunnelStage.counted(stage="replay", received=21, rejected={"infrastructure": 2,
                                                                                 "replay_final_state": 4}))
    assert degradation(lines, EVERY_SCENARIO, planned_per_scenario=2) == \
        "degraded: 13 of 32 pairs lost to infrastructure"


def test_environments_and_seeds_lost_before_any_pair_are_said_apart() -> None:
    lines = with_lines(FunnelStage.counted(stage="capability", received=3, rejected={"provider_error": 1}),
                       FunnelStage.counted(stage="environment", received=2, rejected={"provider_error": 1,
                                                                                     "repair_failed": 1}))
    assert degradation(lines, EVERY_SCENARIO, planned_per_scenario=2) == (
        "degraded: 1 of 3 seed instructions lost to infrastructure; 1 of 2 environments lost to infrastructure")


def test_a_scenario_under_its_floor_degrades_the_release_whatever_lost_its_pairs() -> None:
    assert scenario_floor(MIN_PAIRS - 1) == 1 and scenario_floor(MIN_PAIRS) == scenario_floor(24) == MIN_PAIRS
    full = kept({scenario: 24 for scenario in Scenario if scenario != Scenario.S5} | {Scenario.S5: 2})
    assert degradation(WHOLE, full, planned_per_scenario=24) == f"degraded: S5 2 pairs (floor {MIN_PAIRS})"
    # a run that never planned enough pairs for the gates: only a scenario left without any is under its floor
    assert degradation(WHOLE, kept({scenario: 1 for scenario in Scenario}), planned_per_scenario=2) is None
    assert degradation(WHOLE, [p for p in EVERY_SCENARIO if p.scenario != Scenario.S8], planned_per_scenario=2) == \
        "degraded: S8 0 pairs (floor 1)"


def test_an_ood_release_that_lost_items_to_a_provider_is_degraded() -> None:
    healthy = [FunnelStage.counted(stage="framing", received=40, rejected={"repair_failed": 2})]
    assert ood.degradation(healthy) is None
    lost = [*healthy, FunnelStage.counted(stage="translation", received=12, rejected={"provider_error": 3})]
    assert ood.degradation(lost) == "degraded: translation: 3 of 12 lost to infrastructure"


def test_artifact_keys_name_the_dataset_and_the_place_in_the_pipeline() -> None:
    pairs = ArtifactKeys(dataset="abstaingen-builtin", names=PAIRS_ARTIFACTS)
    keys = [pairs(name) for name in PAIRS_ARTIFACTS]
    assert keys[0] == "abstaingen-builtin-01-progress-environment" and keys[-1] == "abstaingen-builtin-13-release-summary"
    assert keys == sorted(keys)  # two digits: the sort by key is the pipeline's order past nine artifacts
    ood_keys = {ArtifactKeys(dataset="abstaingen-ood", names=OOD_ARTIFACTS)(name) for name in OOD_ARTIFACTS}
    assert not ood_keys & set(keys)
    # a dataset name may hold what a key may not
    assert ArtifactKeys(dataset="my_data.v2", names=OOD_ARTIFACTS)("stage-funnel") == "my-data-v2-02-stage-funnel"
