#!/usr/bin/env bash
# Builds build/libggml-wgpu.so (go build -buildmode=c-shared) against the ggml host
# libraries that scripts/setup.sh placed in .cache/ggml/lib.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$root/.cache/ggml/lib/libggml-base.so" ] || bash "$root/scripts/setup.sh"
mkdir -p "$root/build"
cd "$root"
# The version script limits the exported symbols to the public API (cgo refuses it in
# #cgo directives, so it goes to the final link only).
go build -buildmode=c-shared -trimpath \
	-ldflags="-extldflags=-Wl,--version-script=$root/capi/exports.map" \
	-o build/libggml-wgpu.so ./capi
rm -f build/libggml-wgpu.h
echo "build: build/libggml-wgpu.so"
