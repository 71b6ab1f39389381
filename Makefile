# The book's commands. A fresh machine needs only Python 3.11+, make and git:
# everything else is installed from the package registries into .venv.
#
#   make book    install, then build the website into _build/html (warnings are errors)
#   make test    install the test tools, then run every test (lint, lnlib, explorers, notebooks, strict build, browser)
#   make check   the inner loop, within 3 minutes: lint, the library's tests, nbval on the chapters changed since main
#   make lint    ruff's lint and format check
#   make lab     open the chapters in JupyterLab with live widgets
#   make serve   serve the built website on http://127.0.0.1:8000
#   make screenshots   the browser tests, saving screenshots of every page for a person to look at
#   make pdf     the whole book as one PDF, _build/pdf/book.pdf (needs Debian's Chromium); make test-pdf checks it
#   make instructor   the nbgrader answer key of every chapter in course/source (for a course; FORCE=1 writes it anew, keeping a backup)
#   make student   the student edition in course/release and course/student-edition.zip (with lnlib's wheel): no solutions
#   make wheel   lnlib (with the book's data) as a wheel in dist/
#   make website-course   the website without the exercises' solutions, to host while a course grades them
#   make test-course   nbgrader grades three students of every chapter, each on their own data (about 10 minutes)
#   make bench   measure explorer latency (Python side and in JupyterLab), each chapter's Run All, build time and test time
#   make bench-kernels   time the fused LayerNorm kernels against the memory-bandwidth floor
#   make bench-gpu   time the GPU chapter's CUDA kernels, PyTorch's and Triton's against a device copy, and check them (needs an NVIDIA GPU)
#   make notebooks   re-execute every chapter in place, top to bottom in a fresh kernel (maintainers)
#   make references  recompute PyTorch's outputs on the chapters' inputs (installs torch; maintainers)
#   make results     retrain chapter 11's warm-up sweep into lnlib/book/data/warmup_sweep.json (maintainers)
#   make results-placements  train chapter 12's placements into lnlib/book/data/placement_sweep.json (maintainers)
#   make results-decay  train chapter 07's weight-decay runs into lnlib/book/data/decay_sweep.json (maintainers)
#   make results-norm-lab  train chapter 10's BatchNorm lab into lnlib/book/data/norm_lab.json (installs scikit-learn; maintainers)

PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
# Optional: an extra package spec for the independent PyTorch reference, e.g. TORCH_SPEC=torch
TORCH_SPEC ?=
PIP_FLAGS ?= --disable-pip-version-check --quiet

export PATH := $(BIN):$(PATH)
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.DEFAULT_GOAL := help
.PHONY: help lint check book test instructor student website-course test-course wheel pdf test-pdf screenshots test-python test-notebooks test-build test-browser website lab serve bench bench-book bench-lab bench-run-all bench-kernels bench-gpu notebooks references results results-placements results-decay results-norm-lab clean

# Plain `make` prints the commands: the header of this file.
help:
	@sed -n '/^#   make/s/^#   //p' $(firstword $(MAKEFILE_LIST))

$(VENV)/.book-installed: requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11 or newer is needed, found " + sys.version.split()[0]'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install $(PIP_FLAGS) --upgrade pip
	$(BIN)/python -m pip install $(PIP_FLAGS) -r requirements.txt
	touch $@

$(VENV)/.test-installed: $(VENV)/.book-installed requirements-test.txt
	$(BIN)/python -m pip install $(PIP_FLAGS) -r requirements-test.txt
	touch $@

# Every build starts from an empty cache and runs every chapter in a fresh kernel, two at a time
# (jupyter-cache's parallel executor); the build then takes the outputs from that cache. A chapter
# that fails there is run again by the build itself, which stops on the error (raise_on_error).
# LNBOOK_WEBSITE=1 makes each explorer display as its precomputed website version (lnlib/book/explorers/web.py);
# its states are cached in .cache/web-explorers, keyed on lnlib's source, so an unchanged chapter costs nothing.
CACHE := _build/.jupyter_cache
# make test's nbval run leaves each chapter it ran here, for the build to take (tests/nbval_handoff.py)
EXECUTED := _build/.nbval-executed
WEBSITE_ENV := LNBOOK_WEBSITE=1 LNBOOK_WEB_CACHE=$(CURDIR)/.cache/web-explorers
book: $(VENV)/.book-installed
	rm -rf _build
	$(MAKE) website

# The website from whatever _build holds: chapters nbval has just run (make test) are cached, not run again.
website: $(VENV)/.book-installed
	yes | $(BIN)/jcache notebook --cache-path $(CACHE) add chapters/*.ipynb > /dev/null
	if [ -d $(EXECUTED) ]; then $(BIN)/jcache cache --cache-path $(CACHE) add $(EXECUTED)/*.ipynb > /dev/null; fi
	$(WEBSITE_ENV) $(BIN)/jcache project --cache-path $(CACHE) execute --executor local-parallel --timeout 600
	$(WEBSITE_ENV) $(BIN)/jupyter-book build . --all --warningiserror --keep-going

test: $(VENV)/.test-installed
	@if [ -n "$(TORCH_SPEC)" ]; then $(BIN)/python -m pip install $(PIP_FLAGS) $(TORCH_SPEC); fi
	@$(BIN)/python tests/versions.py
	$(MAKE) lint test-python test-notebooks test-build test-browser

# The inner loop: lint, lnlib's tests and doctests, and nbval (with the exercise checks) on each chapter changed
# since main, committed or not (CHAPTERS="chapters/05_epsilon.ipynb ..." names others). About 40 s with no chapter.
CHANGED_CHAPTERS = $(sort $(shell git diff --name-only $$(git merge-base HEAD main 2>/dev/null || echo HEAD) -- 'chapters/*.ipynb'; \
	git ls-files --others --exclude-standard -- 'chapters/*.ipynb'))
check: lint
	$(BIN)/python -m pytest -n 2 -q --doctest-modules tests/library lnlib --ignore=lnlib/book
	@chapters="$(or $(CHAPTERS),$(CHANGED_CHAPTERS))"; \
	if [ -z "$$chapters" ]; then echo "make check: no chapter changed since main"; else \
	$(WEBSITE_ENV) $(BIN)/python -m pytest -n 2 -q --dist loadfile --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
		-p tests.nbval_kernel -p tests.nbval_exercises $$chapters; fi

# ruff's lint and format check (configured in pyproject.toml): seconds, so it runs first.
lint: $(VENV)/.test-installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test-python: $(VENV)/.test-installed
	$(BIN)/python -m pytest -n 2 --doctest-modules tests lnlib --ignore=tests/browser

# nbval runs each chapter as the website build does (LNBOOK_WEBSITE=1), starts a kernel that dies while
# starting again (tests/nbval_kernel.py), checks each exercise's solution in
# the same kernel (tests/nbval_exercises.py) and hands its runs to test-build (tests/nbval_handoff.py).
test-notebooks: $(VENV)/.test-installed
	rm -rf _build
	$(WEBSITE_ENV) $(BIN)/python -m pytest -n 2 --dist loadfile --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
		-p tests.nbval_kernel -p tests.nbval_exercises -p tests.nbval_handoff --nbval-executed-into $(EXECUTED) chapters

test-build: $(VENV)/.book-installed
	$(MAKE) website

# The built website and live notebooks in Debian's Chromium (skipped, with the install command, when
# Chromium is missing; mandatory in CI). No screenshots (make screenshots saves them). Two workers, each
# with its own Chromium (and JupyterLab for test_lab.py): much of each test is waiting on a kernel or a page.
test-browser: $(VENV)/.test-installed
	$(BIN)/python -m pytest -n 2 tests/browser

# The same browser tests, saving a screenshot of every page at both widths, every chapter in JupyterLab
# and every explorer in tests/artifacts/screenshots, for a person to look at (make test skips them).
screenshots: $(VENV)/.test-installed
	@test -f _build/html/index.html || $(MAKE) book
	LNBOOK_SCREENSHOTS=1 $(BIN)/python -m pytest -n 2 tests/browser

# The printable edition (lnlib/book/tools/pdf.py): the single-page build, from the execution cache
# that make book and make test fill (_build/.jupyter_cache), printed by Chromium with a title page,
# numbered pages and the contents with their page numbers (a first print finds them, a second prints
# them). After make book, 2-3 minutes; from a fresh clone, with no cache, jupyter-book runs every
# chapter one after another first: about 10 minutes in all (602 s, an instructor's review,
# 2026-11-28; instructors.md).
pdf: $(VENV)/.test-installed
	$(WEBSITE_ENV) $(BIN)/jupyter-book build . --builder singlehtml --warningiserror --keep-going
	$(BIN)/python -m lnlib.book.tools.pdf _build/singlehtml _build/pdf/book.pdf

# The PDF's checks (tests/book/test_pdf.py: every chapter title, the contents' page numbers, no raw
# markup). Not part of make test (make pdf's time is above); in make test they skip unless a PDF is
# built.
test-pdf: pdf
	$(BIN)/python -m pytest tests/book/test_pdf.py

# The course edition (lnlib/book/tools/course.py): an nbgrader course in course/. `make instructor` writes each
# chapter's answer key (solutions marked, one graded test per exercise); `make student` runs nbgrader's own
# generate_assignment on them. `nbgrader validate` on a key passes every test; on a student notebook, none.
COURSE := course
$(VENV)/.course-installed: $(VENV)/.book-installed
	$(BIN)/python -m pip install $(PIP_FLAGS) "nbgrader==0.9.6"
	touch $@

# Neither deletes anything: `make instructor` refuses to overwrite an existing key unless FORCE=1 (which moves
# it to course/source.backup-<time> first); `make student` rewrites course/release alone, from the key as it
# stands (writing one first if there is none), and course/student-edition.zip (the notebooks, lnlib's wheel, a
# requirements file: what students install, without the answers or the repository); submissions, autograded
# notebooks and the gradebook stay.
# BY_HAND=1 (the default): each graded derivation (09.2, 09.4, 10.4) is followed by a cell for the
# student's derivation, graded by hand in nbgrader's formgrader; BY_HAND=0 grades the numbers alone.
BY_HAND ?= 1
instructor: $(VENV)/.book-installed
	$(BIN)/python -m lnlib.book.tools.course instructor $(COURSE) $(if $(FORCE),--force) $(if $(filter 1,$(BY_HAND)),--by-hand)

student: $(VENV)/.course-installed wheel
	$(BIN)/python -m lnlib.book.tools.course student $(COURSE) $(WHEEL) $(if $(filter 1,$(BY_HAND)),--by-hand)

# The website without the exercises' solutions, for a term (_build/course-site/_build/html; every chapter
# executed again: a few minutes)
website-course: $(VENV)/.book-installed
	rm -rf _build/course-site
	$(BIN)/python -m lnlib.book.tools.course website _build/course-site
	cd _build/course-site && $(WEBSITE_ENV) LNBOOK_COURSE_SITE=1 $(BIN)/jupyter-book build . --all --warningiserror --keep-going

# Every chapter's nbgrader round trip (tests/book/test_course.py): make test runs chapter 03's only.
test-course: $(VENV)/.test-installed
	LNBOOK_COURSE_ALL=1 $(BIN)/python -m pytest -n 2 tests/book/test_course.py -k round_trip

# lnlib as a wheel, with the book's data (dist/): what a student or an engineer installs without the repository.
WHEEL = dist/lnlib-$(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)-py3-none-any.whl
wheel: $(VENV)/.book-installed
	rm -rf dist build
	$(BIN)/python -m pip wheel $(PIP_FLAGS) --no-deps --wheel-dir dist .
	rm -rf build

# jupyterlab-myst renders the chapters' MyST prose (admonitions, math, dropdowns) as the website does.
lab: $(VENV)/.book-installed
	$(BIN)/python -m pip install $(PIP_FLAGS) "jupyterlab>=4.1" "jupyterlab-myst>=2.7"
	$(BIN)/jupyter lab --allow-root chapters/

serve:
	@test -f _build/html/index.html || $(MAKE) book
	$(BIN)/python -m http.server --bind 127.0.0.1 --directory _build/html 8000

# make bench runs every benchmark in BENCHES; a new one adds its target with BENCHES += bench-x.
BENCHES := bench-book bench-lab bench-run-all bench-kernels
bench: $(BENCHES)

# Each explorer's Python side, the website's explorers, the book build and make test (benchmarks/run.py).
bench-book: $(VENV)/.test-installed
	$(BIN)/python benchmarks/run.py

# Input event to new figure loaded, in a real JupyterLab in Chromium, per explorer (benchmarks/lab.py).
bench-lab: $(VENV)/.test-installed
	$(BIN)/python benchmarks/lab.py

# Run All of each chapter in a fresh reader's kernel: its time and every cell over 3 s, with or without a
# progress bar (benchmarks/run_all.py); CHAPTERS=11_pre_post_norm limits it.
bench-run-all: $(VENV)/.test-installed
	$(BIN)/python benchmarks/run_all.py $(CHAPTERS)

# The fused kernels against the measured memory-bandwidth floor (chapter 14): about 2-4 minutes, writes
# lnlib/book/data/kernels.json, which the chapter reads (it never times anything itself). Add
# TORCH_SPEC=torch==2.13.0 to time PyTorch's CPU kernels in the same run (the committed file has them).
bench-kernels: $(VENV)/.book-installed
	@if [ -n "$(TORCH_SPEC)" ]; then $(BIN)/python -m pip install $(PIP_FLAGS) $(TORCH_SPEC); fi
	$(BIN)/python benchmarks/kernels.py

# Chapter 15's kernels (lnlib.gpu, compiled for the GPU), torch.nn.functional.layer_norm, a Triton LayerNorm
# after Triton's tutorial and a device-to-device copy, forward and backward, over chapter 14's shape and real
# models' widths in three dtypes: writes lnlib/book/data/gpu_kernels.json; then the same kernels, PyTorch's CUDA
# modules and the Triton kernel through lnlib's harness, with the planted bugs: lnlib/book/data/gpu_checks.json.
# The chapter reads both (about 4 minutes on an H200). Not part of make bench: it needs an NVIDIA GPU, and runs
# with the Python that has PyTorch and Triton there (GPU_PYTHON; numba-cuda, numpy, ml_dtypes and scipy too). On
# a CPU, `python benchmarks/gpu_kernels.py --smoke --out /tmp/gpu.json` (and gpu_checks.py likewise) runs it
# end to end on numba's simulator (tests/book/test_gpu_chapter.py does).
GPU_PYTHON ?= $(PYTHON)
bench-gpu:
	NUMBA_ENABLE_CUDASIM=0 PYTHONPATH=$(CURDIR) $(GPU_PYTHON) benchmarks/gpu_kernels.py
	NUMBA_ENABLE_CUDASIM=0 PYTHONPATH=$(CURDIR) $(GPU_PYTHON) benchmarks/gpu_checks.py

# No timestamps and no widget state in committed notebooks: a re-run changes only what the code changed,
# so diffs stay readable and two branches' notebooks merge cell by cell. After the run, the numbers in the
# prose (<!--glue:key-->...<!--/glue--> markers) are set to what the run glued (lnlib/book/tools/prose.py), so the
# notebook reads right in JupyterLab before any cell runs, and live-widget outputs are dropped
# (lnlib/book/tools/notebooks.py: without their kernel JupyterLab would show their text repr), and each chapter's
# time estimate is restated under its goal (lnlib/book/tools/course.py).
# NOTEBOOKS=chapters/03_mean.ipynb re-runs just one chapter.
NB_EXEC_FLAGS := --ExecutePreprocessor.record_timing=False --ExecutePreprocessor.store_widget_state=False
notebooks: $(VENV)/.book-installed
	$(BIN)/jupyter nbconvert --log-level=ERROR --to notebook --execute --inplace $(NB_EXEC_FLAGS) $(or $(NOTEBOOKS),chapters/*.ipynb)
	$(BIN)/python -m lnlib.book.tools.prose $(or $(NOTEBOOKS),chapters/*.ipynb)
	$(BIN)/python -m lnlib.book.tools.notebooks $(or $(NOTEBOOKS),chapters/*.ipynb)
	$(BIN)/python -m lnlib.book.tools.verdicts $(or $(NOTEBOOKS),chapters/*.ipynb)
	$(BIN)/python -m lnlib.book.tools.course times $(or $(NOTEBOOKS),chapters/*.ipynb)

# PyTorch's outputs on the chapters' own inputs, stored in lnlib/book/data/pytorch_reference.{npz,json} with
# their provenance, so the website shows PyTorch's evidence without PyTorch. Re-run after changing an input
# in lnlib.book.tools.pytorch_reference.CASES; tests/book/test_pytorch_reference.py fails when the stored file has drifted.
TORCH_REFERENCE ?= torch==2.13.0
references: $(VENV)/.book-installed
	$(BIN)/python -m pip install $(PIP_FLAGS) "$(TORCH_REFERENCE)"
	$(BIN)/python -m lnlib.book.tools.pytorch_reference make references

# Chapter 11's warm-up sweep (96 small training runs of 500 steps, a few minutes on two cores), stored with the
# machine it ran on; the chapter reads it and states each loss as mean ± sd over the seeds, because
# training is chaotic and another CPU's rounding moves every run (tests/book/test_training_cpus.py).
results: $(VENV)/.book-installed
	$(BIN)/python -m lnlib.book.models.training --workers 2

# Chapter 12's stability map and chapters 01 and 07's trained model: nine variants x 5 rates x 2 depths
# x warm-up on/off x 3 seeds of a character model of the standard library's docstrings (540 short runs, about
# 4 CPU-minutes, under 3 minutes on two idle cores; one BLAS thread per worker), into lnlib/book/data/placement_sweep.json with
# the machine, its load and the time taken. The chapters read it (tests/book/test_training_placements.py).
results-placements: $(VENV)/.book-installed
	OPENBLAS_NUM_THREADS=1 $(BIN)/python -m lnlib.book.models.language --workers 2

# Chapter 07's weight decay on γ and β or not: 2 x 5 runs of the character model, about a CPU-minute.
results-decay: $(VENV)/.book-installed
	OPENBLAS_NUM_THREADS=1 $(BIN)/python -m lnlib.book.models.decay

# Chapter 10's BatchNorm lab: an MLP on scikit-learn's digits (shipped inside the package, no download) with no
# norm, BatchNorm, LayerNorm and RMSNorm at five batch sizes x 5 seeds (about a CPU-minute on one core), into
# lnlib/book/data/norm_lab.json with the machine, its load and the CPU time. The chapter reads it.
SKLEARN_SPEC ?= scikit-learn==1.9.1
results-norm-lab: $(VENV)/.book-installed
	$(BIN)/python -m pip install $(PIP_FLAGS) "$(SKLEARN_SPEC)"
	OPENBLAS_NUM_THREADS=1 $(BIN)/python -m lnlib.book.models.norm_lab

clean:
	rm -rf _build course .cache/web-explorers .pytest_cache .hypothesis
