# Thin wrapper over CMake for the README's commands. Two trees: `make` builds the optimised
# programs a person runs into build-release/ (Release: no debug checks), and the tests build
# and run build/ (Debug: the transcript rule is re-checked after every change).
BUILD ?= build
BUILD_TYPE ?= Debug
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local
CMAKE_FLAGS ?=

.PHONY: all release deps configure build test demo bench package install asan tsan fuzz format-check ci-checks clean

all: release

# build-release/bin/agent and agentd, optimised.
release:
	$(MAKE) build BUILD=build-release BUILD_TYPE=Release

deps:
	bash packaging/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j$(JOBS)

# Installs what it needs, builds, and runs every test (unit, integration, model server).
# Configured again each time: a tree `make demo` made without GoogleTest gains its tests.
test: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)
	$(MAKE) build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 300

# A real agentd/agent session against the scripted model server (the model is scripted):
# only the packages and the programs it runs.
demo:
	bash packaging/install-deps.sh --run
	$(MAKE) configure
	cmake --build $(BUILD) -j$(JOBS) --target agent_programs
	bash tests/demo/demo.sh $(BUILD)/bin

bench: deps
	$(MAKE) release
	bash tests/bench/run_bench.sh build-release

package: deps
	$(MAKE) release
	cd build-release && cpack -G DEB

# `make install PREFIX=~/.local`: the optimised agent and agentd into $(PREFIX)/bin, with the
# man pages, completions and systemd user units.
install:
	$(MAKE) release
	cmake --install build-release --prefix $(PREFIX)

# clang with ASan+UBSan, -Wthread-safety and -Werror: the whole suite.
asan: deps
	$(MAKE) build BUILD=build-asan CMAKE_FLAGS="-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DAGENT_SANITIZE=address,undefined -DAGENT_WERROR=ON -DAGENT_BENCH=OFF"
	cd build-asan && ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j$(JOBS) --timeout 600

# clang with TSan over the concurrent parts: sessions and their manager, hooks, approvals, the worker
# pool, event fan-out queues, tools' threads and background jobs, editor file reads, the rule
# cache, the MCP client and its servers, the sandbox's network proxy.
tsan: deps
	$(MAKE) configure BUILD=build-tsan CMAKE_FLAGS="-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DAGENT_SANITIZE=thread -DAGENT_BENCH=OFF"
	cmake --build build-tsan -j$(JOBS) --target daemon_test common_test tools_test policy_test mcp_test hooks_test llm_test sandbox_test
	cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	  ctest --output-on-failure -j$(JOBS) --timeout 600 \
	  -R '^(RequestCache|Session|TurnTest|CallGuard|HookRunner|ProcessRunner|SubscriberQueue|Transcript|Subprocess|Bash|BackgroundJobs|EditorText|ApprovalGate|WorkerPool|ToolDispatch|EventLog|RuleSource|Checkpointer|ShadowStore|Subagent|ClientTest|StdioFaultsTest|HttpFaultsTest|StdioTransportTest|HttpTransportTest|ManagedServerTest|RegistryTest|NetworkProxyTest)'

# Each libFuzzer target for FUZZ_SECONDS, from its corpus in tests/fuzz/corpus/.
FUZZ_SECONDS ?= 30
fuzz: deps
	$(MAKE) configure BUILD=build-fuzz CMAKE_FLAGS="-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DAGENT_FUZZ=ON -DAGENT_BENCH=OFF" BUILD_TYPE=RelWithDebInfo
	cmake --build build-fuzz -j$(JOBS) --target stream_fuzz tool_args_fuzz tool_input_fuzz transcript_fuzz bash_rules_fuzz journal_fuzz
	bash tests/fuzz/run_fuzz.sh build-fuzz/bin $(FUZZ_SECONDS)

format-check:
	git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror

# What CI runs after `make test`.
ci-checks: format-check asan tsan fuzz

clean:
	rm -rf build build-release build-asan build-tsan build-fuzz
