#!/usr/bin/env bash
# Benchmark: llama-bench's method (pp512, tg128) on our backend and on ggml's Vulkan
# backend (the peer) in one run, side by side, on the same model. Without -m it writes a
# 1B-class llama model with random F16 weights (embedding 2048, 16 layers, 32/8 heads,
# feed-forward 8192, the tiny test model's 32000-token vocabulary) into .cache/models.
#   scripts/bench.sh [-m model.gguf] [-d WGPU0 -d Vulkan0] [-p 512] [-n 128] [-r 3] [-s 1]
# (-s S: tg decodes S sequences side by side and reports the tokens of all of them a second)
# Set MKMODEL_ARGS (e.g. "--type q4_0 --embd 4096 --layers 32 --ff 14336") to shape the
# generated model.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh" --peer >/dev/null
bash "$root/scripts/build.sh" >/dev/null
lib="$root/.cache/ggml/lib"
cc() { gcc -O2 -o "$root/build/$1" "$root/conformance/host/$1.c" -I "$root/.cache/ggml/include" \
	"$lib/libllama.v0.5.0.so" "$lib/libggml.v0.5.0.so" "$lib/libggml-base.so" -Wl,-rpath,"$lib" -lm; }
cc bench
cc mkmodel
args=("$@")
if ! printf '%s\n' "${args[@]}" | grep -x -- -m >/dev/null; then
	shape=${MKMODEL_ARGS:-}
	name=$(echo "bench ${shape}" | tr -c 'a-z0-9_\n' '-' | tr -s '-')
	model="$root/.cache/models/${name%-}.gguf"
	if [ ! -f "$model" ]; then
		mkdir -p "$root/.cache/models"
		# shellcheck disable=SC2086
		"$root/build/mkmodel" -t "$root/../shared/models/llama-2-tiny-random.gguf" -o "$model" $shape
	fi
	args+=(-m "$model")
fi
if ! printf '%s\n' "${args[@]}" | grep -x -- -d >/dev/null; then
	args+=(-d WGPU0 -d Vulkan0)
fi
export GGML_BACKEND_PATH="$root/build/libggml-wgpu.so"
"$root/build/bench" -L "$lib" --load "$root/.cache/ggml/peer/libggml-vulkan.so" "${args[@]}"
