package ggml

import (
	"fmt"

	"modernc.org/libc"
)

// cAlloc returns n zeroed bytes of C memory (modernc.org/libc's allocator, 16-byte
// aligned) for data that C keeps after a call returns, which Go memory must not be.
// Free it with cFree. A failed allocation is an error, not an abort.
func cAlloc(n uint64) (uintptr, error) {
	tls := libc.NewTLS()
	defer tls.Close()
	p := libc.Xcalloc(tls, 1, libc.Tsize_t(n))
	if p == 0 {
		return 0, fmt.Errorf("%w: %d bytes of C memory", ErrAlloc, n)
	}
	return p, nil
}

// cFree releases memory from cAlloc.
func cFree(p uintptr) {
	if p == 0 {
		return
	}
	tls := libc.NewTLS()
	defer tls.Close()
	libc.Xfree(tls, p)
}
