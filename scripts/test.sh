#!/usr/bin/env bash
# The test command: set-up (Debian packages, ggml host libraries, Go modules; llama.cpp's
# programs, built once per machine into .cache/llama.cpp), build of libggml-wgpu.so, vet,
# the suite under the Khronos validation layer, then every test: unit tests, the Go package
# and its examples (no cgo), the ABI check against libggml-base, the C host test, the
# conformance suite against ggml's CPU backend, the end-to-end llama.cpp checks
# (llama-server on WGPU0 against the CPU device included), the robustness tests (bad input,
# threads, soak, the fuzz corpus), and the Go packages under the race detector. Runs on
# lavapipe when the machine has no GPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
bash scripts/build.sh
bash scripts/llama/build.sh >/dev/null
go vet ./...
# The Go package and the examples build without cgo (examples/yzma is its own module);
# go test ./examples runs them on WGPU0.
CGO_ENABLED=0 go build ./ggml ./examples/...
(cd examples/yzma && CGO_ENABLED=0 go vet . && CGO_ENABLED=0 go build -o /dev/null .)
# The Khronos validation layer over every case of the conformance suite: no errors. It
# prints the conformance table, per op and types.
bash scripts/validation.sh --full
go test -count=1 -timeout 20m ./...
# The Go side under the race detector (the library itself cannot load into a -race host).
go test -race -count=1 ./arena ./sched ./ops ./wgsl ./tensor ./exec ./backend ./gpu
