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


@pytest.fixture
def llama_rms_norm(torch):
    """transformers' LlamaRMSNorm, as its code writes it: statistics and x̂ in float32, x̂ cast back
    to the input's dtype before the weight multiplies it (chapter "Check your own LayerNorm")."""

    class LlamaRMSNorm(torch.nn.Module):
        def __init__(self, hidden_size, eps=1e-6):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(hidden_size))
            self.variance_epsilon = eps

        def forward(self, hidden_states):
            input_dtype = hidden_states.dtype
            hidden_states = hidden_states.to(torch.float32)
            variance = hidden_states.pow(2).mean(-1, keepdim=True)
            hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
            return self.weight * hidden_states.to(input_dtype)

    return LlamaRMSNorm


def pytest_collection_modifyitems(items):
    """Run the tests marked ``slow`` first (stable order otherwise), so two xdist workers finish
    together instead of one working alone through a long test collected last."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture
def gemma_rms_norm(torch):
    """transformers' GemmaRMSNorm, as its code writes it: float32 inside, the gain 1 + weight
    (weight starts at 0), cast back to the input's dtype at the end."""

    class GemmaRMSNorm(torch.nn.Module):
        def __init__(self, dim, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = torch.nn.Parameter(torch.zeros(dim))

        def forward(self, x):
            wide = x.float()
            output = wide * torch.rsqrt(wide.pow(2).mean(-1, keepdim=True) + self.eps)
            return (output * (1.0 + self.weight.float())).type_as(x)

    return GemmaRMSNorm
