// Package backend holds the Go objects behind ggml's backend vtables: the Registry and its
// Devices (WebGPU adapters), the buffer type and Buffers (GPU memory behind fake base
// addresses), and Backends (graph compute and synchronisation). capi maps the C structs to
// these objects; nothing here touches C memory.
package backend

import (
	"fmt"
	"os"
)

// Log levels, as ggml numbers them.
const (
	LogDebug = 1
	LogInfo  = 2
	LogWarn  = 3
	LogError = 4
)

// Logger receives the library's messages. capi routes them to ggml's logger.
var Logger = func(level int, msg string) {
	if level >= LogWarn {
		fmt.Fprint(os.Stderr, msg)
	}
}

func logf(level int, format string, args ...any) {
	Logger(level, "ggml-wgpu: "+fmt.Sprintf(format, args...)+"\n")
}
