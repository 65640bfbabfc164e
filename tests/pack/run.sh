#!/usr/bin/env bash
# The npm package: `npm pack` (its prepack builds the wasm core, the compiled CLI and the
# page), then `npm install -g` of the tarball into a temporary prefix, offline, with a PATH
# that holds node and npm only (no Emscripten, no C compiler, no checkout), and the
# installed `llmem` must print what this checkout's CLI prints.
#   bash tests/pack/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL $*"; exit 1; }
ok() { echo "ok   $*"; }

# pack (runs prepack: npm run build)
npm pack --pack-destination "$tmp" > "$tmp/pack.log" 2>&1 || { cat "$tmp/pack.log"; fail "npm pack"; }
tgz=$(ls "$tmp"/llmem-*.tgz 2>/dev/null | head -1)
[ -n "$tgz" ] && [ -f "$tgz" ] || fail "no tarball in $tmp"
tar -tzf "$tgz" | sed 's#^package/##' | sort > "$tmp/files.txt"
for f in package.json bin/llmem.mjs build/js/bin/cli.js build/js/wasm/node.js build/wasm/llmem_core.mjs build/wasm/llmem_core.wasm node_modules/smol-toml/package.json node_modules/yaml/package.json; do
  grep -qx "$f" "$tmp/files.txt" || fail "the tarball lacks $f"
done
if grep -E '^(core/|CMakeLists\.txt|frontend/|wasm/|tests/|dist/)|\.ts$' "$tmp/files.txt" | grep -v '\.d\.ts$' > "$tmp/extra.txt"; then
  fail "sources in the tarball: $(head -5 "$tmp/extra.txt" | tr '\n' ' ')"
fi
ok "npm pack: $(basename "$tgz"), $(wc -l < "$tmp/files.txt") files, $(du -k "$tgz" | cut -f1) KB; wasm core, compiled CLI, smol-toml and yaml inside"

# a PATH with node and npm only
mkdir -p "$tmp/bin" "$tmp/home" "$tmp/prefix" "$tmp/cwd"
ln -s "$(readlink -f "$(command -v node)")" "$tmp/bin/node"
ln -s "$(readlink -f "$(command -v npm)")" "$tmp/bin/npm"
bare() { env -i HOME="$tmp/home" PATH="$tmp/bin:$tmp/prefix/bin" "$@"; }
for tool in emcc emcmake cmake cc gcc clang make; do
  if bare /bin/sh -c "command -v $tool" >/dev/null 2>&1; then fail "$tool is on the bare PATH"; fi
done
(cd "$tmp/cwd" && bare npm install -g --offline --no-audit --no-fund --loglevel=error --prefix "$tmp/prefix" "$tgz") > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "npm install -g (offline, node and npm only)"; }
[ -x "$tmp/prefix/bin/llmem" ] || fail "npm install -g made no llmem command"
[ ! -e "$tmp/prefix/lib/node_modules/llmem/core" ] || fail "the installed package holds core/ (it could try to build)"
ok "npm install -g --offline into a temporary prefix with PATH=node,npm"

# the installed command, run outside the checkout, against this checkout's CLI
installed() { (cd "$tmp/cwd" && bare llmem "$@"); }
checkout() { node "$repo/bin/llmem.mjs" "$@"; }
config="$repo/tests/configs/llama-3.1-8b-fsdp-8xh100.json"
want_version=$(node -p 'require("./package.json").version')
got_version=$(installed --version) || fail "llmem --version"
[ "$got_version" = "$want_version" ] || fail "llmem --version printed '$got_version', package.json says $want_version"
ok "llmem --version: $got_version"
installed defaults > "$tmp/defaults.json" || fail "llmem defaults"
checkout defaults | cmp -s - "$tmp/defaults.json" || fail "llmem defaults differs from the checkout's"
node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' "$tmp/defaults.json" || fail "llmem defaults is not JSON"
ok "llmem defaults: the checkout's, $(wc -c < "$tmp/defaults.json") bytes"
installed estimate "$config" > "$tmp/estimate.txt" 2> "$tmp/estimate.err" || { cat "$tmp/estimate.err"; fail "llmem estimate"; }
grep -q 'peak allocated .* GiB | reserved .* GiB | nvidia-smi .* GiB' "$tmp/estimate.txt" || { cat "$tmp/estimate.txt"; fail "llmem estimate printed no readings"; }
checkout estimate "$config" | cmp -s - "$tmp/estimate.txt" || fail "llmem estimate differs from the checkout's"
ok "llmem estimate $(basename "$config"): $(grep -m1 'peak allocated' "$tmp/estimate.txt" | sed 's/^ *//')"
installed estimate "$config" --json > "$tmp/estimate.json" || fail "llmem estimate --json"
checkout estimate "$config" --json | cmp -s - "$tmp/estimate.json" || fail "llmem estimate --json differs from the checkout's"
set +e
echo '{"parallel": {"tp": "two"}}' | installed estimate - > /dev/null 2> "$tmp/bad.err"; rc=$?
set -e
[ "$rc" = 1 ] && grep -q 'parallel.tp' "$tmp/bad.err" && ! grep -q '    at ' "$tmp/bad.err" || { cat "$tmp/bad.err"; fail "an invalid config: exit $rc (want 1, a message naming parallel.tp, no stack trace)"; }
ok "an invalid config: exit 1, $(head -1 "$tmp/bad.err")"
echo "pack: 6 passed"
