"""The figure of the chapter "Check your own LayerNorm": each implementation's errors against the
dtypes' unit roundoff."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import lnlib  # noqa: E402
from lnlib.book.figures.check_your_own import relative_errors_figure  # noqa: E402
from lnlib.book.figures.style import layout_problems  # noqa: E402
from lnlib.harness import unit_roundoff  # noqa: E402
from lnlib.textbook import numpy_layer_norm  # noqa: E402
from lnlib.variants import buggy_eps_outside_root, buggy_unbiased_variance  # noqa: E402


def chapter_columns():
    """The chapter's batch and columns: two bugs in float64 and the correct kernel in float16."""
    tokens = np.random.default_rng(16).normal(0.5, 2.0, size=(4, 64))
    ones, zeros = np.ones(64), np.zeros(64)
    half = tokens.astype(np.float16)
    reference = lnlib.layer_norm(tokens, eps=1e-5)
    return {
        "unbiased variance\nfloat64": (
            buggy_unbiased_variance(tokens, ones, zeros, 1e-5),
            reference,
        ),
        "ε outside √\nfloat64": (buggy_eps_outside_root(tokens, ones, zeros, 1e-5), reference),
        "correct\nfloat16": (
            numpy_layer_norm(half, ones.astype(np.float16), zeros.astype(np.float16), 1e-5),
            lnlib.layer_norm(half.astype(np.float64), eps=1e-5),
        ),
    }


def test_the_figure_reads_cleanly_and_draws_every_error():
    roundoffs = {dtype: unit_roundoff(dtype) for dtype in ("float64", "float16")}
    fig = relative_errors_figure(chapter_columns(), roundoffs)
    assert layout_problems(fig) == []
    (ax,) = fig.axes
    dots = [line for line in ax.get_lines() if line.get_linestyle() == "None"]
    assert [len(line.get_ydata()) for line in dots] == [256, 256, 256]
    # what the caption says: the ε bug lies above float64's u and below float16's
    eps_bug = dots[1].get_ydata()
    assert eps_bug.min() > roundoffs["float64"] and eps_bug.max() < roundoffs["float16"]
    plt.close(fig)


def test_entries_without_error_are_left_out_and_columns_are_limited():
    exact = np.array([1.0, -2.0, 3.0])
    fig = relative_errors_figure({"exact": (exact.copy(), exact)}, {"float64": 1e-16})
    dots = [line for line in fig.axes[0].get_lines() if line.get_linestyle() == "None"]
    assert len(dots[0].get_ydata()) == 0
    plt.close(fig)
    with pytest.raises(ValueError, match="at most 4 columns"):
        relative_errors_figure({str(k): (exact, exact) for k in range(5)}, {})


# --- the chapter's prose numbers (experiments.check_your_own) -----------------------------------


def test_error_findings_name_each_error_and_roundoff():
    from lnlib.book.experiments.check_your_own import error_findings

    errors = {
        "buggy_unbiased_variance": 0.0234,
        "buggy_eps_outside_root": 8.6e-6,
        "numpy_layer_norm, float16": 0.00049,
    }
    found = {k: str(v) for k, v in error_findings(errors).items()}
    assert found == {
        "ex_unbiased": "2 × 10⁻²",
        "ex_eps": "9 × 10⁻⁶",
        "ex_half": "5 × 10⁻⁴",
        "u64": "1.1 × 10⁻¹⁶",  # 2⁻⁵³
        "u16": "4.9 × 10⁻⁴",  # 2⁻¹¹
        "f16_tiny": "5.96 × 10⁻⁸",  # 2⁻²⁴
        "f16_tiny_over_eps": "6",
    }


def test_harness_findings_count_failed_reports_and_checks():
    from types import SimpleNamespace

    from lnlib.book.experiments.check_your_own import harness_findings

    bugs = {
        name: SimpleNamespace(passed=ok) for name, ok in (("a", False), ("b", True), ("c", False))
    }
    report = SimpleNamespace(results=[object()] * 7)
    found = {k: str(v) for k, v in harness_findings(bugs, report).items()}
    assert found == {"n_bugs_caught": "2", "n_checks": "7"}


def test_a_storage_dtype_sum_of_ones_stalls_where_chapter_13_says():
    from lnlib.book.experiments.check_your_own import storage_sum_findings

    found = {k: str(v) for k, v in storage_sum_findings().items()}
    # float16 spaces its numbers 2 apart from 2048 on, bfloat16 from 256: adding 1 rounds back
    assert found == {"count_rows": "4096", "count_f16": "2048", "count_bf16": "256"}


def test_pytorch_findings_count_its_16_bit_backward_failures_and_refuse_any_other():
    from lnlib.book.experiments.check_your_own import pytorch_findings
    from lnlib.harness import CASES, CheckReport, CheckResult

    counting = next(case.name for case in CASES if case.dy == 1)
    results = (
        CheckResult("forward", counting, "float16", 0.5),
        CheckResult("backward", counting, "float16", 409.6),
        CheckResult("backward", "random", "bfloat16", 0.2),
        CheckResult("backward", "random", "float32", 0.9),
    )
    found = {k: str(v) for k, v in pytorch_findings(CheckReport(results, (), 1e-5)).items()}
    assert found == {
        "torch_failed": "1",
        "torch_half_backward": "2",
        "torch_checks": "4",
        "torch_count_f16": "410",
    }
    worse = (*results[:3], CheckResult("backward", "random", "float32", 2.0))
    with pytest.raises(ValueError, match="reword"):
        pytorch_findings(CheckReport(worse, (), 1e-5))


def test_the_pages_torch_module_block_reports_what_the_chapter_quotes(torch, llama_rms_norm):
    """Section "Hugging Face's ordering": its PyTorch block, run as printed on the module from
    Hugging Face's code, prints the line the chapter quotes from the numpy model."""
    import json
    import re
    from pathlib import Path

    from lnlib.book.tools.prose import glued_texts

    path = Path(__file__).resolve().parents[2] / "chapters" / "16_check_your_own.ipynb"
    notebook = json.loads(path.read_text())
    markdown = "".join(
        "".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown"
    )
    (block,) = [
        b for b in re.findall(r"```python\n(.*?)```", markdown, re.S) if "torch_module" in b
    ]
    torch.set_num_threads(1)
    namespace = {"lnlib": lnlib, "LlamaRMSNorm": llama_rms_norm}
    exec(block, namespace)
    quoted = glued_texts(notebook)["eager_three"]
    assert str(namespace["report"]).splitlines()[0].endswith(quoted)
