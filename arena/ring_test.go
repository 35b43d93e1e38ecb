package arena

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRingReusesSlotsOnlyAfterCompletion(t *testing.T) {
	var waited []uint64
	r := NewRing(4, func(seq uint64) error { waited = append(waited, seq); return nil })
	for i := 0; i < 3; i++ {
		s, err := r.Alloc()
		require.NoError(t, err)
		require.Equal(t, i, s)
	}
	r.Seal(1)
	s, err := r.Alloc()
	require.NoError(t, err)
	require.Equal(t, 3, s)
	r.Seal(2)
	// Wrapping reaches slot 0, owned by submission 1: the ring must wait for it.
	s, err = r.Alloc()
	require.NoError(t, err)
	require.Equal(t, 0, s)
	require.Equal(t, []uint64{1}, waited)
	// Slots 1 and 2 also belonged to submission 1, already waited for.
	r.Alloc()
	r.Alloc()
	require.Equal(t, []uint64{1}, waited)
	// Slot 3 belongs to submission 2 unless it was reported complete.
	r.Completed(2)
	s, err = r.Alloc()
	require.NoError(t, err)
	require.Equal(t, 3, s)
	require.Equal(t, []uint64{1}, waited)
}

func TestRingOpenBatchCannotWrap(t *testing.T) {
	r := NewRing(2, func(uint64) error { t.Fatal("no submission to wait for"); return nil })
	r.Alloc()
	r.Alloc()
	_, err := r.Alloc()
	require.ErrorIs(t, err, ErrFull, "a batch larger than the ring must be split by the caller")
	r.Seal(7)
	r.Completed(7)
	s, err := r.Alloc()
	require.NoError(t, err)
	require.Equal(t, 0, s)
	start, end := r.Open()
	require.Equal(t, 0, start)
	require.Equal(t, 1, end)
}

func TestRingHeldSlotsWaitForTheirSubmission(t *testing.T) {
	var waited []uint64
	r := NewRing(4, func(seq uint64) error { waited = append(waited, seq); return nil })
	for i := 0; i < 2; i++ {
		_, err := r.Alloc()
		require.NoError(t, err)
	}
	h := r.Hold() // slots 0 and 1, for a submission not made yet
	for i := 2; i < 4; i++ {
		s, err := r.Alloc()
		require.NoError(t, err)
		require.Equal(t, i, s)
	}
	r.Seal(1)
	// Wrapping reaches slot 0: held, so neither handed out nor waited for.
	_, err := r.Alloc()
	require.ErrorIs(t, err, ErrHeld)
	require.Empty(t, waited)
	// Once its submission is named, slot 0 waits for that one.
	r.Settle(h, 2)
	s, err := r.Alloc()
	require.NoError(t, err)
	require.Equal(t, 0, s)
	require.Equal(t, []uint64{2}, waited)
}

func TestRingHoldOfNothingHoldsNothing(t *testing.T) {
	r := NewRing(2, func(uint64) error { t.Fatal("nothing to wait for"); return nil })
	h := r.Hold()
	r.Settle(h, 5)
	for i := 0; i < 2; i++ {
		s, err := r.Alloc()
		require.NoError(t, err)
		require.Equal(t, i, s)
	}
}
