// Package arena holds the fixed-size rings the backend writes through: the slotted
// parameter arena (one uniform buffer of fixed slots, addressed with dynamic offsets).
package arena

import (
	"errors"
	"math"
)

// ErrFull says that the open batch spans the whole ring or would have to wrap: the caller
// must submit (Seal) it first and retry.
var ErrFull = errors.New("arena: the open batch is full")

// ErrHeld says that the next slot is held for a submission not made yet (Hold): the
// holder must settle it first.
var ErrHeld = errors.New("arena: the next slot is held for a submission not made yet")

// held is the sequence number of a run held for a submission not made yet.
const held = math.MaxUint64

// Held names a run of slots that Hold set aside.
type Held struct{ start, end int }

// Ring hands out runs of contiguous slots from a fixed number of slots, in order,
// wrapping around. Slots handed out are owned by the batch that is open until Seal marks
// them with the batch's submission sequence number; a slot is handed out again only after
// that submission has completed (the wait function blocks until it has).
type Ring struct {
	slots int
	head  int    // next free slot
	owner []span // sealed runs still possibly in use, oldest first
	open  span   // the run of the batch being filled
	wait  func(seq uint64) error
	done  uint64 // highest sequence number known complete
}

type span struct {
	start, end int // [start, end)
	seq        uint64
}

// NewRing returns a ring of n slots; wait(seq) must block until submission seq completed,
// or fail.
func NewRing(n int, wait func(seq uint64) error) *Ring {
	return &Ring{slots: n, wait: wait, open: span{start: 0, end: 0}}
}

// Slots returns the ring's capacity.
func (r *Ring) Slots() int { return r.slots }

// Open returns the slots of the open batch, [start, end).
func (r *Ring) Open() (start, end int) { return r.open.start, r.open.end }

// Alloc takes one slot for the open batch. It returns ErrFull when the open batch already
// spans the whole ring or would have to wrap, and the wait function's error when a slot's
// previous submission could not be waited for.
func (r *Ring) Alloc() (slot int, err error) {
	if r.head == r.slots {
		if r.open.end > r.open.start {
			return 0, ErrFull // the open batch must be submitted before wrapping
		}
		r.head = 0
		r.open = span{start: 0, end: 0}
	}
	if err := r.reclaim(r.head); err != nil {
		return 0, err
	}
	slot = r.head
	r.head++
	r.open.end = r.head
	return slot, nil
}

// reclaim waits until no sealed run still in flight covers slot.
func (r *Ring) reclaim(slot int) error {
	for len(r.owner) > 0 {
		o := r.owner[0]
		if o.seq <= r.done {
			r.owner = r.owner[1:]
			continue
		}
		if slot >= o.start && slot < o.end {
			if o.seq == held {
				return ErrHeld
			}
			if err := r.wait(o.seq); err != nil {
				return err
			}
			r.done = max(r.done, o.seq)
			r.owner = r.owner[1:]
			continue
		}
		return nil
	}
	return nil
}

// Seal marks the open batch's slots as read by submission seq and starts a new batch.
func (r *Ring) Seal(seq uint64) {
	if r.open.end > r.open.start {
		r.owner = append(r.owner, span{r.open.start, r.open.end, seq})
	}
	r.open = span{start: r.head, end: r.head}
}

// Completed records that every submission up to seq has completed.
func (r *Ring) Completed(seq uint64) { r.done = max(r.done, seq) }

// Hold sets the open batch's slots aside for a submission not made yet (a recording kept
// to be submitted later) and starts a new batch. Until Settle names the submission, the
// slots are not handed out again: an Alloc reaching them fails with ErrHeld.
func (r *Ring) Hold() Held {
	h := Held{r.open.start, r.open.end}
	if h.end > h.start {
		r.owner = append(r.owner, span{h.start, h.end, held})
	}
	r.open = span{start: r.head, end: r.head}
	return h
}

// Settle ties the held slots h to submission seq: the one that read them, or, for a
// recording dropped unsubmitted, the last one made (nothing in flight reads them).
func (r *Ring) Settle(h Held, seq uint64) {
	for i := range r.owner {
		if o := &r.owner[i]; o.seq == held && o.start == h.start && o.end == h.end {
			o.seq = seq
			return
		}
	}
}
