# Two commands do everything on a fresh machine:
#   make run    create .venv, install spca, find the topics of the bundled KOS sample
#   make test   install the test extras into .venv and run the whole suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: run test bench install clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,plot,dask]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

# the package's bytecode, as pip writes it for an installed package (an editable install
# does not): every start then loads it instead of compiling 65 modules (0.13 s), also where
# PYTHONDONTWRITEBYTECODE keeps Python from writing it; stale files are recompiled in memory
BYTECODE = $(BIN)/python -m compileall -q spca_cli

install: $(STAMP)
	$(BYTECODE)

run: $(STAMP)
	$(BYTECODE)
	$(BIN)/spca topics data_samples/docword.kos-sample.txt.gz -k 8 --components 5 --titles data_samples/titles.kos-sample.txt --documents 2

# two worker processes (the machines have two cores); each test file stays in one of them, so
# its module fixtures (a real corpus's topics, the Dask cluster) are computed once
# Two test processes fill the two cores, so numba's OpenMP threads wait for a core instead of
# spinning for one (OMP_WAIT_POLICY=PASSIVE: a suite slice 74 s -> 47 s); runs of spca keep
# OpenMP's default, which is faster on a quiet machine.
test: $(STAMP)
	$(BYTECODE)
	$(if $(SPCA_DATA),,$(if $(wildcard ../shared/data),SPCA_DATA=$(abspath ../shared/data))) OMP_WAIT_POLICY=PASSIVE $(BIN)/python -m pytest -q -n 2 --dist loadfile

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'  # gensim, the benchmarks' LDA peer
	$(BYTECODE)
	$(if $(SPCA_DATA),,$(if $(wildcard ../shared/data),SPCA_DATA=$(abspath ../shared/data))) $(BIN)/python -m pytest -q -m slow || test $$? -eq 5  # 5: no slow test selected
	$(if $(SPCA_DATA),,$(if $(wildcard ../shared/data),SPCA_DATA=$(abspath ../shared/data))) $(BIN)/python -m bench.run

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
