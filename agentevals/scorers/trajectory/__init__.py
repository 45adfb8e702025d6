"""Trajectory scorers (code): the steps an agent took against the steps it should take, and helpers."""

from agentevals.scorers.trajectory._combined import create_trajectory_scorer
from agentevals.scorers.trajectory._compare import compare_trajectories
from agentevals.scorers.trajectory._limits import (
    analyze_tool_failures,
    check_trajectory_blacklist,
    check_trajectory_efficiency,
)
from agentevals.scorers.trajectory._model import (
    ExpectedStep,
    Trajectory,
    TrajectoryExpectation,
    TrajectoryStep,
    trajectory_from_run,
)
from agentevals.scorers.trajectory._scorers import (
    create_tool_failures_scorer,
    create_trajectory_accuracy_scorer_code,
    create_trajectory_blacklist_scorer,
    create_trajectory_efficiency_scorer,
)

__all__ = [
    "ExpectedStep",
    "Trajectory",
    "TrajectoryExpectation",
    "TrajectoryStep",
    "analyze_tool_failures",
    "check_trajectory_blacklist",
    "check_trajectory_efficiency",
    "compare_trajectories",
    "create_tool_failures_scorer",
    "create_trajectory_accuracy_scorer_code",
    "create_trajectory_blacklist_scorer",
    "create_trajectory_efficiency_scorer",
    "create_trajectory_scorer",
    "trajectory_from_run",
]
