"""Every exercise's collapsed solution is right, and every mistake it names is caught (issue 18, item 2).

Solutions are markdown (a collapsed dropdown), so Run All never executes them and nbval never sees
them. Here each chapter runs in a fresh kernel with every solution put in place of its answer line;
each check must then print "Correct!", and each mistake an Exercise names must get its own words
back, never "Correct!".
"""

import json
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from test_book import CHAPTERS, SOLUTION, exercise_cells, load, source

REPORT = """
import json as _json
print(_json.dumps({name: [value.feedback(mistake) for mistake in value.mistakes.values()]
                   for name, value in dict(globals()).items() if type(value).__name__ == "Exercise"}))
"""


def solved(path: Path):
    nb = load(path)
    for cell in nb["cells"]:
        cell["source"] = source(cell)
    exercises = exercise_cells(nb)
    for k, (answer, _, _, solution) in exercises.items():
        code = SOLUTION.match(source(solution).strip()).group(2)
        answer["source"] = re.sub(
            rf"^answer_{k} = None.*$", lambda _: code, source(answer), count=1, flags=re.M
        )
    nb["cells"].append(
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "mistake-report",
            "metadata": {},
            "outputs": [],
            "source": REPORT,
        }
    )
    return nbformat.from_dict(nb), exercises


@pytest.mark.slow
@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_solution_is_correct_and_every_named_mistake_is_caught(path):
    nb, exercises = solved(path)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    printed = {}
    for cell in nb.cells:
        match = (
            re.fullmatch(r"exercise_(\d+)\.check\(answer_\1\)", cell.source.strip())
            if cell.cell_type == "code"
            else None
        )
        if match:
            printed[match.group(1)] = "".join(out.get("text", "") for out in cell.outputs)
    assert sorted(printed) == sorted(exercises), f"{path.name}: a check cell is missing"
    for k, text in printed.items():
        assert text.startswith("Correct!"), (
            f"{path.name}, exercise {k}: the solution gets {text.strip()!r}"
        )
    # All the cell's stream text: on a loaded machine the kernel may flush one print as two outputs (text, then "\n").
    report = json.loads("".join(out.get("text", "") for out in nb.cells[-1].outputs))
    for name, lines in report.items():
        for line in lines:
            assert line.startswith("Not quite: ") and not line.startswith("Not quite: close"), (
                f"{path.name}, {name}: a named mistake is not named: {line!r}"
            )
