#!/usr/bin/env bash
# Idempotent set-up: Debian packages (Vulkan loader, lavapipe, C compiler), the ggml host
# libraries from npm (@node-llama-cpp/linux-x64@3.22.1) and the ggml headers of the same
# release into .cache/ggml, and the Go modules. With --peer, also ggml's Vulkan backend
# (@node-llama-cpp/linux-x64-vulkan@3.22.1) into .cache/ggml/peer, for benchmarks.
# .cache is a link to the user's cache folder (GGML_WGPU_CACHE, else
# $XDG_CACHE_HOME/ggml-wgpu or ~/.cache/ggml-wgpu), so every clone reuses the downloads.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache="$root/.cache"
if [ ! -e "$cache" ]; then
	shared="${GGML_WGPU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ggml-wgpu}"
	mkdir -p "$shared"
	ln -s "$shared" "$cache"
fi
ggml="$cache/ggml"
version=3.22.1

need=()
for p in mesa-vulkan-drivers libvulkan1 gcc git xz-utils ca-certificates; do
	dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
command -v npm >/dev/null 2>&1 || need+=(npm)
if ((${#need[@]})); then
	echo "setup: installing ${need[*]}"
	sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ ! -f "$ggml/lib/libggml-base.so" ] || [ "$(cat "$ggml/VERSION" 2>/dev/null)" != "$version" ]; then
	echo "setup: fetching @node-llama-cpp/linux-x64@$version"
	rm -rf "$ggml" "$cache/npm"
	mkdir -p "$cache/npm" "$ggml/lib"
	(cd "$cache/npm" && npm pack --silent "@node-llama-cpp/linux-x64@$version" >/dev/null)
	tar xzf "$cache/npm/node-llama-cpp-linux-x64-$version.tgz" -C "$cache/npm"
	cp "$cache/npm/package/bins/linux-x64/"*.so "$ggml/lib/"
	echo "setup: fetching the ggml headers of node-llama-cpp@$version"
	(cd "$cache/npm" && npm pack --silent "node-llama-cpp@$version" >/dev/null)
	tar xzf "$cache/npm/node-llama-cpp-$version.tgz" -C "$cache/npm" package/llama/gitRelease.bundle
	# The source stays in .cache/llama.cpp/src: scripts/llama/build.sh builds its programs.
	src="$cache/llama.cpp/src"
	rm -rf "$src"
	mkdir -p "$cache/llama.cpp"
	git clone -q --depth 1 "$cache/npm/package/llama/gitRelease.bundle" "$src" 2>/dev/null ||
		git clone -q "$cache/npm/package/llama/gitRelease.bundle" "$src"
	mkdir -p "$ggml/include"
	cp "$src/ggml/include/"*.h "$ggml/include/"
	cp "$src/include/llama.h" "$ggml/include/"
	rm -rf "$cache/npm"
	echo "$version" >"$ggml/VERSION"
fi

# The peer to compare against (scripts/bench.sh): ggml's Vulkan backend of the same release.
if [ "${1:-}" = "--peer" ] && [ ! -f "$ggml/peer/libggml-vulkan.so" ]; then
	echo "setup: fetching @node-llama-cpp/linux-x64-vulkan@$version (the peer backend)"
	mkdir -p "$cache/npm" "$ggml/peer"
	(cd "$cache/npm" && npm pack --silent "@node-llama-cpp/linux-x64-vulkan@$version" >/dev/null)
	tar xzf "$cache/npm/node-llama-cpp-linux-x64-vulkan-$version.tgz" -C "$cache/npm" package/bins/linux-x64-vulkan/libggml-vulkan.so
	mv "$cache/npm/package/bins/linux-x64-vulkan/libggml-vulkan.so" "$ggml/peer/"
	rm -rf "$cache/npm"
fi

(cd "$root" && go mod download)
(cd "$root/examples/yzma" && go mod download) # the yzma example is its own module
echo "setup: ready (ggml host libraries in .cache/ggml/lib)"
