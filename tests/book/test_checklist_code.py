"""What to use today's checklist as PyTorch code runs as printed (learner B, 2026-11-30: "a
copy-paste PyTorch block that implements the checklist and calls the book's own checker"): a model
built from it trains one mixed-precision step, and item 9's check of the RMSNorm passes."""

import re
import warnings
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "chapters" / "what_to_use_today.md"


def checklist_code() -> str:
    """The python block of the dropdown "The checklist as PyTorch code, to copy"."""
    text = PAGE.read_text(encoding="utf-8")
    box = text[text.index(":::{dropdown} The checklist as PyTorch code") :]
    return re.search(r"```python\n(.*?)```", box, re.S).group(1)


def test_the_checklist_code_is_on_the_page_with_every_items_number():
    code = checklist_code()
    for item in range(1, 12):
        assert re.search(rf"# .*\b{item}\.|\"\"\".*\b{item}\.", code), f"item {item} not in it"


def test_the_checklist_code_trains_a_step_and_its_check_passes(capsys):
    torch = pytest.importorskip(
        "torch", reason="PyTorch is an optional extra (pip install 'lnlib[reference]')"
    )
    namespace: dict = {}
    with warnings.catch_warnings():
        # PyTorch's own note that a 16-bit input with a float32 gain takes the unfused path
        warnings.filterwarnings("ignore", message="Mismatch dtype between input and weight")
        exec(compile(checklist_code(), str(PAGE), "exec"), namespace)
    printed = capsys.readouterr().out
    assert re.search(r"RMSNorm check, eps=1e-06: (\d+) of \1 checks passed", printed), printed
    model = namespace["model"]
    assert isinstance(model[-1], torch.nn.RMSNorm)  # the final norm
    # the step reached every parameter: AdamW keeps state only for those with a gradient
    state = namespace["optimizer"].state
    assert all(p in state and state[p]["step"] == 1 for p in model.parameters())
    with torch.autocast("cpu", dtype=torch.bfloat16):  # the matrices run in 16 bits
        assert model[0].qkv(torch.zeros(1, 2, namespace["width"])).dtype == torch.bfloat16
    gains = {id(p) for p in namespace["gains"]}
    norms = [m for m in model.modules() if isinstance(m, torch.nn.RMSNorm)]
    assert norms and all(m.eps == 1e-6 and id(m.weight) in gains for m in norms)
    assert torch.isfinite(namespace["loss"]).item()
