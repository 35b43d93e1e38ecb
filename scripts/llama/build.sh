#!/usr/bin/env bash
# Set-up step: builds llama.cpp's own programs (llama-server, llama-cli, llama-bench) of the
# pinned release from the source that npm node-llama-cpp@3.22.1 ships (its gitRelease.bundle),
# with the release's own CMake build, linked to the prebuilt ggml libraries of .cache/ggml/lib
# (LLAMA_USE_SYSTEM_GGML, scripts/llama/ggml-config.cmake). Everything lands in
# .cache/llama.cpp (the user's cache folder), so the build runs once per machine:
#   .cache/llama.cpp/src        the release's source
#   .cache/llama.cpp/build/bin  llama-server, llama-cli, llama-bench, their libraries, and
#                               links to ggml's CPU backend variants (ggml loads backends
#                               from the programs' folder)
# The web UI is left out (no download): the server's HTTP API is all we use.
# Prints the folder of the programs on its last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -f "$root/.cache/ggml/lib/libggml-base.so" ] || bash "$root/scripts/setup.sh" >&2
cache=$(cd -P "$root/.cache" && pwd)
version=3.22.1
dir="$cache/llama.cpp"
bin="$dir/build/bin"
# The release's CMake build, linked to the prebuilt ggml, without tests, examples, HTTPS
# (no downloads of models) and the web UI (it would be downloaded).
options=(-DCMAKE_BUILD_TYPE=Release -DLLAMA_USE_SYSTEM_GGML=ON -DLLAMA_BUILD_TESTS=OFF
	-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF)
targets=(llama-server llama-cli llama-bench)
# What the build depends on: a change rebuilds.
stamp="$version ${options[*]} ${targets[*]} $(sha256sum <"$root/scripts/llama/ggml-config.cmake" | cut -c1-16)"
mkdir -p "$dir"

# One build at a time per cache (several clones may share it).
exec 9>"$dir/.lock"
flock 9
if [ "$(cat "$dir/READY" 2>/dev/null)" = "$stamp" ] && [ -x "$bin/llama-server" ]; then
	echo "$bin"
	exit 0
fi

need=()
for p in cmake g++ make git; do
	dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if ((${#need[@]})); then
	echo "llama.cpp: installing ${need[*]}" >&2
	sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ ! -f "$dir/src/CMakeLists.txt" ]; then
	echo "llama.cpp: fetching the source of node-llama-cpp@$version" >&2
	rm -rf "$dir/src" "$dir/npm"
	mkdir -p "$dir/npm"
	(cd "$dir/npm" && npm pack --silent "node-llama-cpp@$version" >/dev/null)
	tar xzf "$dir/npm/node-llama-cpp-$version.tgz" -C "$dir/npm" package/llama/gitRelease.bundle
	git clone -q --depth 1 "$dir/npm/package/llama/gitRelease.bundle" "$dir/src" 2>/dev/null ||
		git clone -q "$dir/npm/package/llama/gitRelease.bundle" "$dir/src"
	rm -rf "$dir/npm"
fi

start=$(date +%s)
echo "llama.cpp: building ${targets[*]} (once per machine, about 18 minutes of CPU time; $(nproc) cores)" >&2
rm -rf "$dir/build" "$dir/cmake" "$dir/READY"
mkdir -p "$dir/cmake"
cp "$root/scripts/llama/ggml-config.cmake" "$dir/cmake/"
cmake -S "$dir/src" -B "$dir/build" "${options[@]}" -Dggml_DIR="$dir/cmake" \
	-DGGML_LIB_DIR="$cache/ggml/lib" -DGGML_INCLUDE_DIR="$dir/src/ggml/include" >"$dir/configure.log" 2>&1 ||
	{ tail -30 "$dir/configure.log" >&2; echo "llama.cpp: configure failed ($dir/configure.log)" >&2; exit 1; }
nice -n 10 cmake --build "$dir/build" -j "$(nproc)" --target "${targets[@]}" >"$dir/build.log" 2>&1 ||
	{ grep -E "error|Error" "$dir/build.log" | head -30 >&2; echo "llama.cpp: build failed ($dir/build.log)" >&2; exit 1; }
# ggml finds its CPU backend variants in the folder of the running program.
for f in "$cache/ggml/lib/"libggml-cpu-*.so; do
	ln -sf "$f" "$bin/"
done
echo "$stamp" >"$dir/READY"
echo "llama.cpp: built in $(($(date +%s) - start)) s" >&2
echo "$bin"
