#!/usr/bin/env bash
# Every test: the README's test command (`npm test`) runs this, and so does CI.
set -uo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
passed=0; failed=0; failures=()
stage() { # stage NAME COMMAND...
  local name="$1"; shift
  echo; echo "=== $name"
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
}

bash scripts/setup.sh test || { echo "setup failed"; exit 1; }

stage "build: wasm core, CLI, page" npm run -s build
# the build rewrites the generated files; a clone must already hold what it writes (the Vitest staleness
# tests compare against the file on disk, which the build has just rewritten)
stage "generated files committed (wasm/generated.ts, wasm/profile-sources.json, docs/config.md, probe/llmem_probe/fields.json)" bash -c '
  git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 0; }
  git diff --exit-code --stat -- wasm/generated.ts wasm/profile-sources.json docs/config.md probe/llmem_probe/fields.json ||
    { echo "run npm run build:core and commit what it rewrote"; exit 1; }'
# clang is the wasm core's compiler (Emscripten); gcc a second one: code whose result depends on what
# C leaves unspecified (the order operands are evaluated in) passes under one and fails under the other
stage "C unit tests, clang-14 (ctest, address + undefined-behaviour sanitizers)" bash -c '
  CC=clang-14 cmake -S . -B build/asan-clang -DCMAKE_BUILD_TYPE=Debug -DLLMEM_SANITIZE=ON -DLLMEM_WERROR=ON >/dev/null &&
  cmake --build build/asan-clang -j2 >/dev/null && ctest --test-dir build/asan-clang --output-on-failure'
stage "C unit tests, gcc (ctest, optimised)" bash -c '
  CC=gcc cmake -S . -B build/gcc -DCMAKE_BUILD_TYPE=Release -DLLMEM_WERROR=ON >/dev/null &&
  cmake --build build/gcc -j2 >/dev/null && ctest --test-dir build/gcc --output-on-failure'
stage "fuzz the core and the planner (libFuzzer + ASan/UBSan, 10 s per target; long runs: npm run fuzz)" \
  node scripts/fuzz.mjs --seconds 20 --no-js --no-coverage
stage "typecheck (tsc)" npx tsc -p tsconfig.json --noEmit
stage "lint and format (Biome)" npx biome ci .
stage "C format (clang-format-14, .clang-format)" bash -c \
  'clang-format-14 --dry-run -Werror core/*.c core/*.h tests/c/*.c tests/c/*.h wasm/*.c wasm/*.h tools/*.c tools/*.h'
stage "Vitest (wrapper, vectors through wasm, CLI, page units)" npx vitest run
stage "end-to-end in headless Chromium (Playwright; screenshots in tests/out/screenshots)" npx playwright test
stage "page figures: size, input latency, planner in the Worker (figures, not assertions)" node scripts/perf-report.mjs
stage "package: npm pack, install into a temporary prefix, run llmem with Node only" bash tests/pack/run.sh
probe_python=python3
/usr/bin/python3 -c "import torch" 2>/dev/null && probe_python=/usr/bin/python3
stage "Python lint (pyflakes: the probe, its tests, the catalog checker)" \
  pyflakes3 probe tests/probe frontend/config/catalog/check_params.py docs/formulas_check.py
stage "GPU probe: config translation and refusals on CPU (python unittest)" \
  "$probe_python" -m unittest discover -s tests/probe
stage "accuracy report (figures, not assertions)" bash -c 'node build/js/tests/accuracy.js | tail -12'
stage "benchmarks (figures, not assertions)" node scripts/bench.mjs

echo
[ ${#failures[@]} -eq 0 ] || echo "failed stages: ${failures[*]}"
echo "run-all: ${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
