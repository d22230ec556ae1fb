"""Every error spca reports survives pickling (a worker process of ``spca topics --by``
raises it in the parent as itself): its class, message and attributes."""

from __future__ import annotations

import pickle

from spca_cli.errors import SpcaInputError, SpcaParameterError
from spca_cli.params import FitError, OptionError


def test_errors_come_back_from_pickle_as_themselves():
    errors = [OptionError("budget", "must be >= 0"), FitError("k", "k must be <= 5"),
              SpcaInputError("tweets.csv", "no column 'text'", line=3),
              SpcaParameterError("k must be an int")]
    for error in errors:
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error)
        assert str(again) == str(error)
        assert again.__dict__ == error.__dict__
    assert pickle.loads(pickle.dumps(errors[0])).option == "budget"
    assert pickle.loads(pickle.dumps(errors[1])).param == "k"
