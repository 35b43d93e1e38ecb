package ggml

import "errors"

// Errors returned by the package, wrapped with details; test them with errors.Is.
var (
	// ErrLibrary reports a host or backend library that could not be found or loaded.
	ErrLibrary = errors.New("ggml: library")
	// ErrUnknownDevice reports a device name that no loaded backend provides.
	ErrUnknownDevice = errors.New("ggml: unknown device")
	// ErrClosed reports the use of a Backend or Context after Close.
	ErrClosed = errors.New("ggml: closed")
	// ErrNil reports a nil handle.
	ErrNil = errors.New("ggml: nil handle")
	// ErrShape reports shapes that an op cannot combine, or data of the wrong length.
	ErrShape = errors.New("ggml: shape mismatch")
	// ErrType reports an element type that an op or transfer does not take.
	ErrType = errors.New("ggml: unsupported type")
	// ErrContext reports tensors of different contexts used together, or a full context.
	ErrContext = errors.New("ggml: context")
	// ErrAlloc reports a failed or missing buffer allocation.
	ErrAlloc = errors.New("ggml: allocation")
	// ErrUnsupported reports a graph node that the device cannot compute.
	ErrUnsupported = errors.New("ggml: unsupported op")
	// ErrCompute reports a graph computation that returned a failure status.
	ErrCompute = errors.New("ggml: compute")
)
