#!/usr/bin/env bash
# Draws where the GPU time of traced graphs goes (a PNG), from a trace written with
# GGML_WGPU_PROFILE=<file> and, optionally, a perf sweep of our device beside a peer
# written by `wgpu-conformance -perf -perf-json FILE`.
#
#   GGML_WGPU_PROFILE=trace.json <a decode run on WGPU0>
#   go run ./conformance/cmd/wgpu-conformance -perf -device WGPU0 -device Vulkan0 \
#       -load .cache/ggml/peer/libggml-vulkan.so -perf-json perf.json     # optional
#   bash scripts/chart.sh trace.json [perf.json] [-out chart.png] [-by op] [-skip N] ...
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 1 ] || [ "${1#-}" != "$1" ]; then
	echo "usage: $0 TRACE.json [PERF.json] [wgpu-chart flags: -out FILE -by kernel|op -skip N -top N -ours NAME -peer NAME]" >&2
	exit 2
fi
args=(-trace "$(realpath "$1")")
shift
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
	args+=(-perf "$(realpath "$1")")
	shift
fi
out=chart.png
rest=()
while [ $# -gt 0 ]; do
	if [ "$1" = -out ] && [ $# -gt 1 ]; then
		out=$2
		shift 2
		continue
	fi
	rest+=("$1")
	shift
done
out=$(realpath -m "$out")
cd "$root"
go run ./conformance/cmd/wgpu-chart "${args[@]}" -out "$out" "${rest[@]}"
