"""Shared fixtures. PyTorch is an optional, independent reference: tests that use it skip with a
reason."""

import pytest

TORCH_MISSING = (
    "PyTorch is not installed, so the comparison with an independent framework is skipped; "
    "install it with `pip install -e .[reference]` or run `make test TORCH_SPEC=torch`"
)


@pytest.fixture(scope="session")
def torch():
    """The torch module, or a visible skip when it is absent."""
    return pytest.importorskip("torch", reason=TORCH_MISSING)


def pytest_collection_modifyitems(items):
    """Run the tests marked ``slow`` first (stable order otherwise), so two xdist workers finish
    together instead of one working alone through a long test collected last."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
