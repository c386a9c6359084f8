import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import strata  # noqa: E402


@pytest.fixture(scope="session")
def cpu():
    return strata.Context("cpu", threads=2)


def _gpu():
    ok, why = strata.backend_available("cuda")
    return ok, why


@pytest.fixture(scope="session")
def gpu():
    ok, why = _gpu()
    if not ok:
        pytest.skip("no usable GPU: " + why)
    return strata.Context("cuda")


@pytest.fixture(scope="session")
def cupy(gpu):
    return pytest.importorskip("cupy")


@pytest.fixture(scope="session")
def torch(gpu):
    t = pytest.importorskip("torch")
    if not t.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    return t
