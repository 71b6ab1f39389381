"""What to use today's checklist as PyTorch code runs as printed (learner B, 2026-11-30: "a
copy-paste PyTorch block that implements the checklist and calls the book's own checker"): a model
built from it trains one mixed-precision step, and item 9's check of the RMSNorm passes."""

import json
import re
import warnings
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "chapters" / "what_to_use_today.md"
NUMERICS = PAGE.with_name("13_numerics.ipynb")


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


#: What a checklist item may rest on, as the key under the checklist names the kinds.
EVIDENCE = {"papers", "measured", "toy", "argued", "PyTorch's docs"}


def checklist_rows() -> list[list[str]]:
    """The cells of each row of the checklist's table (its list-table), the header row first."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("::::{admonition} If you train a small transformer now")
    box = text[start : text.index("\n::::\n", start)]
    table = box[box.index("```{list-table}") : box.index("\n```\n", box.index("```{list-table}"))]
    rows = re.split(r"^\* - ", table, flags=re.M)[1:]
    return [[" ".join(c.split()) for c in re.split(r"^  - ", row, flags=re.M)] for row in rows]


def test_each_checklist_item_says_why_and_how_to_check_it():
    # learner B (2026-11-30, eleventh reading): "give each of the 11 checklist items an inline
    # reason and a one-line 'verify in your stack' test"; learner B31: "the checklist as a
    # one-screen table (Do / one-line Why / one-line Check)"
    header, *items = checklist_rows()
    assert header == ["", "Do", "Why", "Check", "Rests on"]
    assert [row[0] for row in items] == [str(n) for n in range(1, 12)]
    for number, (_, do, why, check, basis) in enumerate(items, 1):
        assert "**" in do and why and check, f"item {number}"
        # and what it rests on (learner B28, 2026-11-30: "label each checklist item 'measured
        # here', 'measured in the paper' or 'argued from bytes/maths, not timed'"), in a column of
        # its own, so the why reads as one plain sentence (learners B34, B35)
        assert set(basis.split("; ")) <= EVIDENCE, f"item {number}: {basis}"
        # one screen: each cell a few lines at desktop width, as read (a link as its text)
        shown = [re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell) for cell in (do, why, check)]
        assert max(len(cell) for cell in shown) <= 160, f"item {number}: {shown}"


def test_the_key_under_the_checklist_names_each_kind_it_rests_on():
    # learner B36 (2026-11-30): the kinds were one long sentence, "this should be a five-row
    # legend"; the key is a table under the checklist's, one row a kind, each with its meaning
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("::::{admonition} If you train a small transformer now")
    box = text[start : text.index("\n::::\n", start)]
    key = re.search(r"^\| Rests on \| Meaning \|\n\| --- \| --- \|\n((?:\|.*\|\n)+)", box, re.M)
    assert key, "no key table under the checklist"
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")] for line in key.group(1).splitlines()
    ]
    assert {kind for kind, _ in rows} == EVIDENCE
    assert len(rows) == len(EVIDENCE) and all(meaning for _, meaning in rows)


def test_each_item_has_its_own_evidence_box_in_the_checklists_order():
    # learners B36 and B37 (2026-11-30): one fold of some 2,000 words held every item's
    # evidence, "eleven folds, one per item, would be easier to use"
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("## Why each item of the checklist") :]
    titles = re.findall(r"^:{3,4}\{dropdown\} (\d+)\. (.*)$", section, re.M)
    assert [int(number) for number, _ in titles] == list(range(1, 12))
    _, *items = checklist_rows()
    for (number, title), (_, do, *_) in zip(titles, items):
        # the box's title names what the item's "Do" says, down to its last word
        bold = re.search(r"\*\*(.*?)\*\*", do).group(1).lower()
        assert title.split()[-1].lower() in bold, (number, title, bold)


def test_the_eps_check_the_checklist_names_finds_an_unset_eps():
    # item 6's check: "no norm of model.modules() has eps set to None" catches nn.RMSNorm's default
    torch = pytest.importorskip(
        "torch", reason="PyTorch is an optional extra (pip install 'lnlib[reference]')"
    )
    model = torch.nn.Sequential(torch.nn.RMSNorm(8), torch.nn.RMSNorm(8, eps=1e-6))
    unset = [m for m in model.modules() if getattr(m, "eps", 0) is None]
    assert unset == [model[0]]


@pytest.mark.filterwarnings("ignore:Mismatch dtype between input and weight")
def test_nn_rmsnorms_default_eps_is_float32s_machine_epsilon_for_16_and_32_bit_inputs():
    # item 6 rests on PyTorch's docs and this run (the truth audit, 2026-12-01: "measured" needs a
    # run the book keeps): a mean square near float32's epsilon tells it from float16's, 8000 times
    # larger, and from no epsilon at all
    torch = pytest.importorskip(
        "torch", reason="PyTorch is an optional extra (pip install 'lnlib[reference]')"
    )
    import numpy as np

    x64 = np.random.default_rng(0).normal(size=(4, 8)) * 3e-4
    for dtype, tolerance in ((torch.float32, 1e-5), (torch.float16, 1e-2), (torch.bfloat16, 2e-2)):
        x = torch.tensor(x64, dtype=dtype)
        rounded = x.double().numpy()
        norm = torch.nn.RMSNorm(8)
        assert norm.eps is None
        with torch.no_grad():
            y = norm(x).double().numpy()
        for eps, should_match in (
            (float(np.finfo(np.float32).eps), True),
            (0.0, False),
            (float(np.finfo(np.float16).eps), False),
        ):
            expected = rounded / np.sqrt((rounded**2).mean(axis=-1, keepdims=True) + eps)
            close = np.allclose(y, expected, rtol=tolerance, atol=0)
            assert close == should_match, (dtype, eps)


def _float16_statistics(x, gamma, eps):
    """An RMSNorm whose mean square is kept in float16 for float16 data (checklist item 7's bug)."""
    import numpy as np

    import lnlib

    if x.dtype != np.float16:
        return lnlib.rms_norm(x, gamma, eps=eps)
    with np.errstate(over="ignore"):
        square = (x * x).mean(axis=-1, keepdims=True, dtype=np.float16)
    return (gamma * (x / np.sqrt(square + np.float16(eps)))).astype(np.float16)


def _dgamma_summed_in_float16(dy, x, gamma, eps):
    """lnlib's RMSNorm backward, its dγ summed row by row in float16 (checklist item 8's bug)."""
    import numpy as np

    import lnlib

    dx, dgamma = lnlib.rms_norm_backward(dy, x, gamma, eps=eps)
    if x.dtype == np.float16:
        xf = x.astype(np.float32)
        rstd = 1 / np.sqrt((xf * xf).mean(axis=-1, keepdims=True) + eps)
        terms = (dy.astype(np.float32) * xf * rstd).reshape(-1, x.shape[-1]).astype(np.float16)
        total = np.zeros(x.shape[-1], np.float16)
        for term in terms:
            total = (total + term).astype(np.float16)
        dgamma = total.astype(gamma.dtype)
    return dx, dgamma


def test_the_checks_the_checklist_names_for_items_7_and_8_fail_their_bugs():
    import lnlib

    statistics = lnlib.check_rms_norm(_float16_statistics, dtypes=("float16",))
    assert not statistics.passed
    sums = lnlib.check_rms_norm(
        lambda x, gamma, eps: lnlib.rms_norm(x, gamma, eps=eps),
        _dgamma_summed_in_float16,
        dtypes=("float16",),
        param_dtype="float32",
    )
    assert not sums.passed and {f.part for f in sums.failures} == {"backward"}


def test_item_1s_check_tells_pre_norm_from_post_norm_where_print_cannot():
    # the truth audit (2026-11-30): print(model) lists modules as __init__ registers them, so a
    # post-norm layer prints as its pre-norm twin; the order they run on one batch tells them apart
    torch = pytest.importorskip(
        "torch", reason="PyTorch is an optional extra (pip install 'lnlib[reference]')"
    )
    orders = {}
    for norm_first in (True, False):
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(8, 2, 16, norm_first=norm_first, dropout=0.0)
        ran = []
        for name, module in layer.named_children():
            module.register_forward_pre_hook(lambda m, args, name=name: ran.append(name))
        layer(torch.randn(3, 4, 8))
        orders[norm_first] = ran
    assert orders[True].index("norm1") < orders[True].index("self_attn")
    assert orders[False].index("norm1") > orders[False].index("self_attn")
    pre = torch.nn.TransformerEncoderLayer(8, 2, 16, norm_first=True)
    post = torch.nn.TransformerEncoderLayer(8, 2, 16, norm_first=False)
    assert str(pre) == str(post)


def stall_code() -> str:
    """The python block of chapter 13's fold on PyTorch's CPU kernel, which What to use today's
    item 8 links: PyTorch's CPU dβ stall in a few lines."""
    cells = json.loads(NUMERICS.read_text(encoding="utf-8"))["cells"]
    fold = next(
        "".join(c["source"])
        for c in cells
        if ":::{dropdown} PyTorch 2.13's CPU kernel, as run" in "".join(c["source"])
    )
    return re.search(r"```python\n(.*?)```", fold, re.S).group(1)


def test_the_stall_lines_show_pytorchs_cpu_stall_where_float32_sums_count_every_row():
    # learner B42 (2026-12-01): "put a 5-line repro of the PyTorch CPU dβ stall in its place";
    # learners B45 and B46 moved it to chapter 13 (What to use today: "one line for a GPU team")
    import numpy as np

    import lnlib

    torch = pytest.importorskip(
        "torch", reason="PyTorch is an optional extra (pip install 'lnlib[reference]')"
    )
    code, before, namespace = stall_code(), torch.get_num_threads(), {}
    try:
        exec(compile(code, str(NUMERICS), "exec"), namespace)
    finally:
        torch.set_num_threads(before)
    x = namespace["x"].detach().numpy()
    rows = x.shape[0]
    # the comment's two numbers: float32 sums (lnlib's backward), and PyTorch 2.13's kernel
    _, _, dbeta = lnlib.layer_norm_backward(np.ones_like(x), x, np.ones(8, np.float32))
    assert f"float32 sums: {rows}" in code and np.all(dbeta == rows)
    stalled = namespace["beta"].grad.numpy()
    if torch.__version__.startswith("2.13."):
        assert "PyTorch 2.13's CPU kernel: 2048" in code and np.all(stalled == 2048)
