package gpu

// #include "gw.h"
// #include "copy.h"
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"unsafe"
)

// A read made ahead: a copy of a buffer range into a staging buffer of its own, submitted
// right after the work that writes the range and mapped when that completes, so that the
// host's read of it (Device.Read) waits for nothing more and copies from mapped memory.
// llama reads its logits after every decode graph: reading them ahead saves that read a
// submission and a round trip to the GPU.
//
// Read serves from a read made ahead only what it would have read itself: the range lies
// within it, and no submission and no queue write to its buffer came after it. Any other read, and any
// later ReadAhead, retires it. Its staging buffer stays mapped until the read or until a
// later ReadAhead needs it back, so two staging buffers alternate and a ReadAhead never
// waits for the GPU: where both are still mapping, it makes no read ahead.
type aheads struct {
	stage [2]*Buffer
	open  [2]*readAhead // per staging buffer: a map not yet taken
	last  *readAhead    // the read Read may take
	taken uint64        // Reads served from reads made ahead
}

// ReadsTaken returns how many Reads were served from reads made ahead.
func (d *Device) ReadsTaken() uint64 { return d.ahead.taken }

type readAhead struct {
	slot         int
	src          *Buffer
	offset, size uint64
	note         *C.struct_map_note
	seq          uint64 // the copy's submission
	writes       uint64 // the source buffer's queue writes (Buffer.writes) when it was made
}

// MaxReadAhead bounds the bytes one read made ahead copies: one staging chunk (a 1B
// model's logits for one token are 0.5 MiB).
const MaxReadAhead = stagingChunk

// ReadAhead copies size bytes at offset of b (multiples of 4) aside for a Read of them
// after the work submitted so far, without waiting for it. It reports false, making
// nothing, where both staging buffers still wait for their maps.
func (d *Device) ReadAhead(b *Buffer, offset, size uint64) (bool, error) {
	slot, err := d.ahead.prepare(d, b, offset, size)
	if err != nil || slot < 0 {
		return false, err
	}
	cb, err := d.readCopy(slot, b, offset, size)
	if err != nil {
		return false, err
	}
	seq, err := d.SubmitTogether([]*CommandBuffer{cb})
	if err != nil {
		return false, err
	}
	return d.ahead.arm(d, slot, b, offset, size, seq)
}

// SubmitReading submits cbs as SubmitTogether does, with ReadAhead's copy of size bytes
// at offset of b as the submission's last command buffer, where ReadAhead would submit it
// on its own after them: a submission fewer for the GPU to take in (on an H100 each
// submission of a decode graph beyond its first left the GPU ~25 µs idle). read reports
// whether the copy was made; where ReadAhead would make none (both staging buffers still
// wait for their maps, a range it refuses, a copy that cannot be recorded), cbs are
// submitted alone.
func (d *Device) SubmitReading(cbs []*CommandBuffer, b *Buffer, offset, size uint64) (seq uint64, read bool, err error) {
	var copyCB *CommandBuffer
	if slot, err := d.ahead.prepare(d, b, offset, size); err == nil && slot >= 0 {
		copyCB, _ = d.readCopy(slot, b, offset, size)
		if copyCB != nil {
			seq, err = d.SubmitTogether(append(slices.Clip(cbs), copyCB))
			if err != nil {
				return 0, false, err
			}
			read, _ = d.ahead.arm(d, slot, b, offset, size, seq)
			return seq, read, nil
		}
	}
	seq, err = d.SubmitTogether(cbs)
	return seq, false, err
}

// readCopy records the copy of size bytes at offset of b into staging buffer slot (from
// prepare).
func (d *Device) readCopy(slot int, b *Buffer, offset, size uint64) (*CommandBuffer, error) {
	e := d.NewEncoder()
	if err := e.Copy(b, offset, d.ahead.stage[slot], 0, size); err != nil {
		e.Discard()
		return nil, err
	}
	return e.Finish() // Finish drops the encoder on failure
}

// arm asks for staging buffer slot to be mapped after submission seq, which copied size
// bytes at offset of b into it, and makes that the read Read may take (read). A map
// refused leaves its note open for retire to take.
func (a *aheads) arm(d *Device, slot int, b *Buffer, offset, size, seq uint64) (read bool, err error) {
	r := &readAhead{slot: slot, src: b, offset: offset, size: size, seq: seq, writes: b.writes}
	err = d.scoped("read ahead", func() { r.note = C.gw_map_read(d.d, a.stage[slot].h, C.uint64_t(size)) })
	if r.note == nil {
		if err == nil {
			err = errors.New("webgpu: read ahead: out of host memory")
		}
		return false, err
	}
	a.open[slot] = r
	if err != nil { // the map was refused: its note must still be taken
		return false, err
	}
	a.last = r
	return true, nil
}

// prepare checks a read ahead of size bytes at offset of b and returns the staging
// buffer slot that takes it, its buffer large enough, retiring the slot's earlier read;
// -1 where both still wait for their maps.
func (a *aheads) prepare(d *Device, b *Buffer, offset, size uint64) (int, error) {
	if err := d.usable(); err != nil {
		return -1, err
	}
	if err := checkTransfer("read-ahead source", d.span(b, offset, size), usageCopySrc); err != nil {
		return -1, err
	}
	if size == 0 || size > MaxReadAhead {
		return -1, fmt.Errorf("webgpu: a read ahead of %d bytes (1 to %d)", size, MaxReadAhead)
	}
	a.last = nil
	slot := -1
	for i := range a.open {
		if r := a.open[i]; r == nil || C.gw_map_done(r.note) != 0 {
			if err := a.retire(d, i); err != nil {
				return -1, err
			}
			slot = i
			break
		}
	}
	if slot < 0 {
		return -1, nil
	}
	if s := a.stage[slot]; s == nil || s.Size < size {
		s.Release()
		a.stage[slot] = nil
		ns, err := d.CreateBuffer(stagingSize(size, d.lim.MaxBufferSize), usageStaging)
		if err != nil {
			return -1, err
		}
		a.stage[slot] = ns
		if ns.Size < size {
			return -1, fmt.Errorf("webgpu: a read ahead of %d bytes exceeds the buffer size limit", size)
		}
	}
	return slot, nil
}

// take serves Read of len(dst) bytes at offset of b from the last read made ahead, if it
// holds them (ok): no submission since and no queue write to b. Any other read retires it.
func (a *aheads) take(d *Device, b *Buffer, offset uint64, dst []byte) (ok bool, err error) {
	r := a.last
	if r == nil {
		return false, nil
	}
	a.last = nil
	n := uint64(len(dst))
	if r.src != b || offset < r.offset || offset-r.offset > r.size || n > r.size-(offset-r.offset) ||
		uint64(d.d.submitted) != r.seq || b.writes != r.writes {
		return false, a.retire(d, r.slot)
	}
	a.open[r.slot] = nil
	stage := a.stage[r.slot].h
	var rc C.int
	p := C.gw_read_ahead_map(d.d, r.note, stage, C.uint64_t(r.size), d.timeoutMS(), &rc)
	if p == nil {
		return true, d.waitErr(rc, "read ahead")
	}
	if d.OnMapped != nil {
		d.OnMapped()
	}
	copyParallel(dst, unsafe.Slice((*byte)(unsafe.Add(p, offset-r.offset)), n))
	C.gw_unmap(stage)
	a.taken++
	return true, nil
}

// A read's copy out of mapped memory goes in pieces of at least copyPiece bytes, on up to
// copyParts threads: one core copies ~8 GB/s, and the read of several sequences' logits
// keeps the GPU idle. The threads are a pool of our own (copy.c), woken together: on the
// H100 machine a 4 MiB copy out of mapped memory after an idle period took 224 µs on 8
// goroutines, which Go's scheduler wakes one after the other, 64 µs on 8 threads already
// running and 1 thread 611 µs.
const (
	copyPiece = 64 << 10
	copyParts = 9
)

// copyParallel copies src into dst (as long), in pieces on the copy pool's threads where
// it is long enough.
func copyParallel(dst, src []byte) {
	n := len(dst)
	if n == 0 {
		return
	}
	C.gw_copy(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), C.size_t(n), C.int(min(copyParts, runtime.GOMAXPROCS(0))), copyPiece)
}

// copyPrewakes returns how many times a wait woke the copy pool ahead of a copy
// (SetPrewake).
func copyPrewakes() uint64 { return uint64(C.gw_copy_prewakes()) }

// copyThreads returns how many worker threads the copy pool has: one fewer than the CPUs
// the process may run on, at most eight, none on one CPU.
func copyThreads() int { return int(C.gw_copy_threads()) }

// retire takes the map of staging buffer slot's read, if one is open, without using it.
func (a *aheads) retire(d *Device, slot int) error {
	r := a.open[slot]
	if r == nil {
		return nil
	}
	a.open[slot] = nil
	if a.last == r {
		a.last = nil
	}
	if rc := C.gw_read_ahead_drop(d.d, r.note, a.stage[slot].h, d.timeoutMS()); rc != C.GW_OK {
		return d.waitErr(rc, "read ahead")
	}
	return nil
}

// close retires the reads and releases the staging buffers (the device is closing).
func (a *aheads) close(d *Device) {
	for i := range a.stage {
		_ = a.retire(d, i)
		a.stage[i].Release()
		a.stage[i] = nil
	}
	a.last = nil
}
