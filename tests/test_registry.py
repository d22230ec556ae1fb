"""The solver registry is the one description of every solver's parameters: the functions'
signatures, the pipeline's calls, the CLI's options and the option checks all agree with it."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from click.testing import CliRunner

from spca_cli.cli import cli
from spca_cli.errors import SpcaParameterError
from spca_cli.matrix import Gram
from spca_cli.params import check_solver_options
from spca_cli.solvers import JOINT_SOLVERS, SOLVERS
from spca_cli.solvers.greedy import greedy
from spca_cli.solvers.registry import COMMON_INPUTS, REGISTRY, cli_params, solvers_taking

TINY = "data_samples/docword.kos-sample.txt.gz"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_the_entry_is_the_signature(name):
    """Each function takes exactly the inputs and options its entry declares, nothing else."""
    spec = REGISTRY[name]
    params = inspect.signature(spec.function).parameters
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    positional = ["A", "k", "n_components"] if spec.joint else ["A", "k"]
    assert list(params)[:len(positional)] == positional
    declared = set(spec.inputs) | set(spec.option_names)
    assert set(params) - set(positional) == declared
    assert set(spec.inputs) <= set(COMMON_INPUTS)


def test_solvers_and_joint_solvers_are_views_of_the_registry():
    assert set(SOLVERS) | set(JOINT_SOLVERS) == set(REGISTRY)
    assert list(JOINT_SOLVERS) == ["bipartite"]
    assert all(REGISTRY[name].function is fn for name, fn in SOLVERS.items())


def test_a_misspelled_keyword_is_an_error_not_ignored():
    A = Gram.from_dense(np.eye(6))
    with pytest.raises(TypeError, match="rnak"):
        greedy(A, 3, rnak=3)
    with pytest.raises(SpcaParameterError, match=r"'rnak': not an option of solver 'greedy' "
                                                 r"\(its options: none\)"):
        check_solver_options("greedy", {"rnak": 3})


def test_constraints_come_from_the_table():
    with pytest.raises(SpcaParameterError) as caught:
        check_solver_options("auto", {"budget": -1})
    assert str(caught.value) == "solver_options: 'budget': must be a number >= 0, got -1"
    with pytest.raises(SpcaParameterError) as caught:
        check_solver_options("nonneg", {"epsilon": 1.5})
    assert str(caught.value) == ("solver_options: 'epsilon': must be a number in (0, 1] "
                                 "(or None), got 1.5")
    assert check_solver_options("bipartite", {"n_jobs": -1, "samples": None}) == {
        "n_jobs": -1, "samples": None}


def test_cli_options_are_the_registry_flags():
    flags = {p.flag for p in cli_params()}
    assert flags == {"--init", "--max-iter", "--tol", "--exact/--no-exact", "--samples",
                     "--epsilon", "--no-elimination", "--sign-reduction", "--budget", "--jobs"}
    assert solvers_taking("samples") == ["nonneg", "bipartite"]
    samples = next(p for p in cli_params() if p.name == "samples")
    assert samples.help == "nonneg: epsilon-net samples; bipartite: sampled sketch directions"


@pytest.mark.parametrize("args, message", [
    (["--solver", "greedy", "--jobs", "2"], "--jobs applies to --solver bipartite, not greedy"),
    (["--solver", "tpower", "--no-exact"], "--exact applies to --solver nonneg, not tpower"),
    (["--solver", "auto", "--no-elimination"],
     "--no-elimination applies to --solver spannogram, not auto"),
])
def test_cli_refuses_an_option_of_another_solver_before_reading(args, message, tmp_path):
    missing = tmp_path / "not-there.txt"  # the option is refused before any input is read
    result = CliRunner().invoke(cli, ["topics", str(missing), *args])
    assert result.exit_code == 2
    assert f"Error: {message}" in result.output
