#!/usr/bin/env bash
# The main job: a GGUF model generating text through the real llama.cpp library with every
# layer on our WebGPU backend (device WGPU0). With no arguments it runs the tiny LLaMA test
# model from ../shared/models; any arguments go to the generator:
#   scripts/demo.sh -m model.gguf -p "prompt" -n 64 [-d WGPU0|CPU]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh" >/dev/null
bash "$root/scripts/build.sh" >/dev/null
lib="$root/.cache/ggml/lib"
gcc -O2 -o "$root/build/generate" "$root/conformance/host/generate.c" -I "$root/.cache/ggml/include" \
	"$lib/libllama.v0.5.0.so" "$lib/libggml.v0.5.0.so" "$lib/libggml-base.so" -Wl,-rpath,"$lib"
args=("$@")
if [ ${#args[@]} -eq 0 ]; then
	model="$root/../shared/models/llama-2-tiny-random.gguf"
	[ -f "$model" ] || { echo "demo: default model $model not found; pass -m model.gguf" >&2; exit 1; }
	args=(-m "$model" -p "Once upon a time" -n 32)
fi
export GGML_BACKEND_PATH="$root/build/libggml-wgpu.so"
# llama.cpp's loading log is long: keep our lines, the offload summary and the timing.
"$root/build/generate" -L "$lib" "${args[@]}" 2> >(grep -E "^generate:|ggml-wgpu|offloaded|model buffer size|error" >&2)
