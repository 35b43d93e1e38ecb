#!/usr/bin/env bash
# The main job: llama.cpp's own llama-server serving a GGUF model with every layer on our
# WebGPU backend (device WGPU0): one chat-completion request over loopback, the answer, the
# speed and the adapter that ran it. Each option overrides one default:
#   scripts/demo.sh [-m model.gguf] [-p prompt] [-n tokens] [-d WGPU0|CPU] [-v]
# The default model is a small llama-architecture model with random weights and the
# generator's own vocabulary (conformance/host/mkmodel.c), written once into .cache/models.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() {
	cat <<EOF
usage: scripts/demo.sh [-m model.gguf] [-p prompt] [-n tokens] [-d device] [-v]
  -m  GGUF model (default: a small random-weight llama model written by
      conformance/host/mkmodel.c into .cache/models)
  -p  the user's chat message (default: "Once upon a time")
  -n  tokens to generate at most (default: 32)
  -d  ggml device running the model: WGPU0 (default), WGPU1, ..., or CPU
  -v  print llama-server's whole log
The first run builds llama.cpp's programs into .cache/llama.cpp (scripts/llama/build.sh).
EOF
}

model= prompt="Once upon a time" n=32 device=WGPU0 verbose=
while (($#)); do
	case "$1" in
	-h | --help) usage; exit 0 ;;
	-v) verbose=-v; shift; continue ;;
	-m | -p | -n | -d)
		(($# >= 2)) || { echo "demo: $1 needs a value" >&2; usage >&2; exit 2; }
		case "$1" in
		-m) model=$2 ;; -p) prompt=$2 ;; -n) n=$2 ;; -d) device=$2 ;;
		esac
		shift 2 ;;
	*) echo "demo: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
done
[[ "$n" =~ ^[0-9]+$ ]] || { echo "demo: -n wants a number of tokens, not $n" >&2; exit 2; }

bash "$root/scripts/setup.sh" >/dev/null
bash "$root/scripts/build.sh" >/dev/null
bin=$(bash "$root/scripts/llama/build.sh" | tail -1)
lib="$root/.cache/ggml/lib"

# A host library that is missing: say which package brings it.
missing=$(ldd "$bin/llama-server" "$lib/libggml-base.so" 2>/dev/null | awk '/not found/ {print $1}' | sort -u)
# (grep -q would end the pipe early, and pipefail would count ldconfig's SIGPIPE as failure)
if ! ldconfig -p | grep 'libvulkan\.so\.1 ' >/dev/null; then missing+=" libvulkan.so.1"; fi
if [ -n "${missing// /}" ]; then
	for m in $missing; do
		case "$m" in
		libvulkan*) echo "demo: $m is missing: install the Vulkan loader (sudo apt-get install libvulkan1 mesa-vulkan-drivers)" >&2 ;;
		libggml* | libllama*) echo "demo: $m is missing: scripts/setup.sh fetches it from npm @node-llama-cpp/linux-x64@3.22.1 into .cache/ggml/lib" >&2 ;;
		libstdc++*) echo "demo: $m is missing: sudo apt-get install libstdc++6" >&2 ;;
		libgomp*) echo "demo: $m is missing: sudo apt-get install libgomp1" >&2 ;;
		*) echo "demo: $m is missing (apt-file search $m names the package)" >&2 ;;
		esac
	done
	exit 1
fi
if [ "$device" != CPU ] && ! compgen -G "/usr/share/vulkan/icd.d/*.json" >/dev/null &&
	! compgen -G "/etc/vulkan/icd.d/*.json" >/dev/null; then
	echo "demo: no Vulkan driver is installed: sudo apt-get install mesa-vulkan-drivers (lavapipe) or your GPU's driver" >&2
	exit 1
fi

if [ -z "$model" ]; then
	# The default model, written once per generator version.
	src=("$root/conformance/host/mkmodel.c" "$root/conformance/host/vocab.h")
	shape=(--type f16 --embd 256 --layers 4 --heads 8 --kv-heads 4 --ff 768 --ctx 2048)
	key=$( (cat "${src[@]}"; echo "${shape[*]}") | sha256sum | cut -c1-12)
	model="$root/.cache/models/demo-llama-$key.gguf"
	if [ ! -f "$model" ]; then
		mkdir -p "$root/.cache/models"
		gcc -O2 -o "$root/build/mkmodel" "${src[0]}" -I "$root/.cache/ggml/include" \
			"$lib/libggml-base.so" "$lib/libggml.v0.5.0.so" -lm -Wl,-rpath,"$lib"
		"$root/build/mkmodel" -o "$model.tmp" "${shape[@]}" 2>&1 | sed 's/^mkmodel: wrote [^:]*:/demo: default model:/' >&2
		mv "$model.tmp" "$model"
	fi
elif [ ! -f "$model" ]; then
	echo "demo: model $model not found" >&2
	exit 1
fi

(cd "$root" && go build -o build/wgpu-chat ./conformance/cmd/wgpu-chat)
exec "$root/build/wgpu-chat" -bin "$bin" -lib "$root/build/libggml-wgpu.so" \
	-m "$model" -p "$prompt" -n "$n" -d "$device" $verbose
