# dash: build, test, benchmark. Every target first installs what is missing (tools/ensure_deps.py:
# torch 2.11, ninja, pytest, numpy, matplotlib, the CUTLASS headers), so they work on a fresh machine.
#   make deps      only that
#   make build     compile dash/_C*.so in place (CUTLASS: see tools/cutlass_locator.py)
#   make test      build, then run the test suite (GPU tests skip without a Hopper GPU)
#   make bench     build, then benchmark dash against the peers (needs a Hopper GPU)
#   make install   pip install the package (no build isolation: uses the installed torch)
#   make sass      disassemble the main kernels and check HGMMA / UTMALDG / spills
#   make sanitize  run small backward calls under compute-sanitizer (needs a Hopper GPU)
PYTHON ?= python3
export CUDA_HOME ?= $(shell [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda)
export MAX_JOBS ?= $(shell nproc)

.PHONY: deps build test bench install sass sanitize clean

deps:
	$(PYTHON) tools/ensure_deps.py

build: deps
	$(PYTHON) setup.py build_ext --inplace

test: build
	$(PYTHON) -m pytest -q -rs tests

bench: build
	$(PYTHON) bench/bench_bwd.py --out bench/out

install: deps
	$(PYTHON) -m pip install --no-build-isolation .

sass: build
	$(PYTHON) tools/check_sass.py dash/_C*.so

sanitize: build
	for tool in memcheck synccheck racecheck; do \
	  compute-sanitizer --tool $$tool --error-exitcode 1 $(PYTHON) tools/sanitize_smoke.py || exit 1; done

clean:
	rm -rf build dash/_C*.so
