"""Run an `abstaingen export tau2` folder through tau2-bench's own code: load every task with tau2's `Task`
model, call each act task's actions in tau2's own environment of the domain (each must succeed there), and
score three trajectories with tau2's database evaluator (`EnvironmentEvaluator.calculate_reward`):

- the act task's own actions: 1.0 expected;
- doing nothing: 1.0 for an abstain task (its database must stay as it starts), 0.0 for an act task that
  changes the database;
- an abstain task whose twin's actions are carried out anyway: 0.0 expected when they change the database.

It needs tau2 installed (Python >= 3.12 by its metadata; it runs on 3.11 installed with
`pip install --ignore-requires-python -e TAU2_CHECKOUT` and numpy < 2.3), so it is not part of the test suite:

    TAU2_VENV/bin/python tests/tools/tau2_check.py EXPORT_DIR/tasks.json --domain retail
"""

from __future__ import annotations

import argparse
import importlib
import json
from collections import Counter
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tasks", type=Path)
    parser.add_argument("--domain", required=True)
    options = parser.parse_args()

    from loguru import logger

    logger.remove()  # tau2 logs every tool response at DEBUG
    from tau2.data_model.message import AssistantMessage, ToolCall
    from tau2.data_model.tasks import Task
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator

    get_environment = importlib.import_module(f"tau2.domains.{options.domain}.environment").get_environment
    tasks = [Task.model_validate(raw) for raw in json.loads(options.tasks.read_text())]
    by_id = {task.id: task for task in tasks}

    def trajectory(task: Task, actions) -> list:  # noqa: ANN001
        """The actions as an agent's tool calls, each answered as tau2's environment answers it."""
        environment = get_environment()
        data = task.initial_state.initialization_data if task.initial_state else None
        environment.set_state(initialization_data=data, initialization_actions=None, message_history=[])
        messages: list = []
        for index, action in enumerate(actions):
            call = ToolCall(id=f"call_{index}", name=action.name, arguments=action.arguments, requestor="assistant")
            response = environment.get_response(call)
            if response.error:
                raise RuntimeError(f"{task.id}: {action.name}({action.arguments}) fails in tau2: {response.content}")
            messages += [AssistantMessage(role="assistant", content=None, tool_calls=[call]), response]
        return messages

    def reward(task: Task, messages: list) -> float:
        return EnvironmentEvaluator.calculate_reward(environment_constructor=get_environment, task=task,
                                                     full_trajectory=messages).reward

    results: Counter[str] = Counter()
    for task in tasks:
        side = task.id.rsplit("-", 1)[1]
        actions = task.evaluation_criteria.actions or []
        if side == "act":
            results[f"act: own actions score {reward(task, trajectory(task, actions)):g}"] += 1
            results[f"act: doing nothing scores {reward(task, []):g}"] += 1
        else:
            results[f"abstain: doing nothing scores {reward(task, []):g}"] += 1
            twin = by_id.get(task.id.rsplit("-", 1)[0] + "-act")
            if twin is not None and twin.evaluation_criteria and twin.evaluation_criteria.actions:
                try:
                    done = trajectory(task, twin.evaluation_criteria.actions)
                except RuntimeError:
                    results["abstain: the twin's actions fail on its state"] += 1
                else:
                    results[f"abstain: the twin's actions carried out score {reward(task, done):g}"] += 1
    print(f"{len(tasks)} tasks loaded with tau2's Task model")
    for line, count in sorted(results.items()):
        print(f"  {count:3d}  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
