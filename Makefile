# The two quick-start commands:
#   make run    build, then run the seismic example (GPU when there is one,
#               else CPU); results in seismic3d.out/
#   make test   build, then run every test (GPU tests skip without a GPU)
# Everything else is plain CMake in $(BUILD).
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
NVCC := $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
ifneq ($(NVCC),)
CMAKE_FLAGS += -DCMAKE_CUDA_COMPILER=$(NVCC)
endif

.PHONY: all deps configure build run test bench clean

all: build

deps:
	@sh scripts/deps.sh

$(BUILD)/CMakeCache.txt:
	@sh scripts/deps.sh
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# run builds the library and the command only; the tests and benchmarks
# are built by test, bench and build
run: configure
	cmake --build $(BUILD) -j $(JOBS) --target strata_cli
	$(BUILD)/strata run examples/seismic3d.ini

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	$(BUILD)/strata_bench

clean:
	rm -rf $(BUILD)
