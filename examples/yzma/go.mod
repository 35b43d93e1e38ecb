module github.com/ggml-wgpu/ggml-wgpu/examples/yzma

go 1.26.0

require (
	github.com/hybridgroup/yzma v1.27.0
	modernc.org/libc v1.80.1
)

require (
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/ebitengine/purego v0.10.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jupiterrider/ffi v0.7.0 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	golang.org/x/sys v0.49.0 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)
