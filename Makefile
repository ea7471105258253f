# Thin wrapper over CMake for the README's commands. `make` configures and builds into build/.
BUILD ?= build
BUILD_TYPE ?= Debug
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local
CMAKE_FLAGS ?=

.PHONY: all deps configure build test demo bench package install asan tsan fuzz format-check clean

all: build

deps:
	bash packaging/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j$(JOBS)

# Installs what it needs, builds, and runs every test (unit, integration, model server).
test: deps
	$(MAKE) build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 300

# A real agentd/agent session against the scripted model server (the model is scripted).
demo: deps
	$(MAKE) build
	bash tests/demo/demo.sh $(BUILD)/bin

bench: deps
	$(MAKE) build BUILD=build-release BUILD_TYPE=Release
	bash tests/bench/run_bench.sh build-release

package: deps
	$(MAKE) build BUILD=build-release BUILD_TYPE=Release
	cd build-release && cpack -G DEB

install:
	$(MAKE) build BUILD=build-release BUILD_TYPE=Release
	cmake --install build-release --prefix $(PREFIX)

asan: deps
	$(MAKE) test BUILD=build-asan CMAKE_FLAGS="-DAGENT_SANITIZE=address,undefined -DAGENT_BENCH=OFF"

tsan: deps
	$(MAKE) build BUILD=build-tsan CMAKE_FLAGS="-DAGENT_SANITIZE=thread -DAGENT_BENCH=OFF"
	cd build-tsan && ctest --output-on-failure -L concurrency --timeout 300

format-check:
	git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror

clean:
	rm -rf build build-release build-asan build-tsan build-fuzz
