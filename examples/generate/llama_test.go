package main

import (
	"testing"
	"unsafe"
)

// The structs passed by value must have the sizes of llama.h's on x86-64 (their fields
// follow the header in order; a missing or extra field changes the size).
func TestStructSizes(t *testing.T) {
	for name, got := range map[string]uintptr{
		"llama_model_params":   unsafe.Sizeof(modelParams{}),
		"llama_context_params": unsafe.Sizeof(contextParams{}),
		"llama_batch":          unsafe.Sizeof(batch{}),
	} {
		want := map[string]uintptr{"llama_model_params": 80, "llama_context_params": 160, "llama_batch": 56}[name]
		if got != want {
			t.Errorf("%s: %d bytes, want %d", name, got, want)
		}
	}
}
