package exec

import (
	"errors"
	"fmt"
	"time"

	"github.com/ggml-wgpu/ggml-wgpu/arena"
	"github.com/ggml-wgpu/ggml-wgpu/gpu"
)

// A Recording is a graph's steps recorded ahead of their run, their parameters already
// written: when the same steps run next (RunRecorded), the whole graph is submitted at
// once, without recording it first. llama runs the same decode graph token after token,
// so the next token's recording is made while the GPU runs this one's, and the GPU
// neither waits for the first dispatches to be recorded nor idles between submissions.
// It is several command buffers (one compute pass each): the first FirstPart steps,
// submitted on their own, then the rest in command buffers of at most perSubmit steps,
// submitted together in one submission, for a GPU pauses between submissions (on an H100
// a 1B decode graph's GPU time from its first pass's start to its last one's end exceeded
// the passes' busy time by ~25 µs per extra submission). On CPU drivers, which need
// short submissions, the command buffers hold at most perSubmit steps each and are
// submitted one after the other.
type Recording struct {
	key      any
	cbs      []*gpu.CommandBuffer
	slots    arena.Held
	timed    bool // pass i writes the pass timer's pair i
	together bool // cbs[0] submitted alone, then the rest in one submission
}

// Prerecord records steps for the next RunRecorded of key, replacing the recording the
// executor held. With a pass timer (NewPassTimer) each command buffer's pass is timed; a
// per-dispatch timer cannot time a recording. The parameters are written at once
// (ordered before any later submission) into arena slots held until the recording is
// submitted or dropped. A failed recording leaves nothing held: the steps then Run.
func (e *Executor) Prerecord(key any, steps []Step, perSubmit int, together bool, timer *Timer) error {
	e.DropRecording()
	if timer != nil && !timer.perPass {
		return errors.New("exec: a per-dispatch timer cannot time a recording")
	}
	perSubmit = max(perSubmit, 1)
	if timer != nil && len(steps)/perSubmit+2 > timer.cap { // a bound on the command buffers
		return fmt.Errorf("exec: %d steps take more passes than the timer's %d", len(steps), timer.cap)
	}
	err := e.prerecord(key, steps, perSubmit, together, timer)
	if errors.Is(err, arena.ErrFull) { // the batch reached the ring's end: again from its start
		err = e.prerecord(key, steps, perSubmit, together, timer)
	}
	return err
}

func (e *Executor) prerecord(key any, steps []Step, perSubmit int, together bool, timer *Timer) error {
	e.params.Seal(e.dev.Submitted()) // an empty batch: Run leaves none open
	var cbs []*gpu.CommandBuffer
	var enc *gpu.Encoder
	abandon := func(err error) error {
		enc.Discard()
		for _, cb := range cbs {
			cb.Discard()
		}
		e.params.Seal(e.dev.Submitted())
		return err
	}
	for i := range steps {
		s := &steps[i]
		if len(s.Params) > e.params.SlotSize {
			return abandon(fmt.Errorf("step %d: parameters of %d bytes exceed a %d-byte slot", i, len(s.Params), e.params.SlotSize))
		}
		g, err := e.group(s)
		if err != nil {
			return abandon(fmt.Errorf("step %d: %w", i, err))
		}
		slot, data, err := e.params.Slot()
		if err != nil {
			return abandon(err)
		}
		copy(data, s.Params)
		if enc == nil {
			enc = e.dev.NewEncoder()
			if timer != nil {
				if err := enc.TimeNextPass(timer.qs, len(cbs)); err != nil {
					return abandon(err)
				}
			}
		}
		if err := enc.Dispatch(s.Pipeline, g, slot, s.Grid); err != nil {
			return abandon(fmt.Errorf("step %d: %w", i, err))
		}
		if cutAfter(i, perSubmit, e.FirstPart, together) || i+1 == len(steps) {
			cb, err := enc.Finish()
			enc = nil
			if err != nil {
				return abandon(err)
			}
			cbs = append(cbs, cb)
		}
	}
	if err := e.params.Flush(); err != nil {
		return abandon(err)
	}
	e.rec = &Recording{key: key, cbs: cbs, slots: e.params.Hold(), timed: timer != nil, together: together}
	return nil
}

// A Readout is a range of a buffer that the host reads after a run (llama's logits): a
// recorded run copies it aside in its last submission (gpu.Device.SubmitReading).
type Readout struct {
	Buf          *gpu.Buffer
	Offset, Size uint64
}

// RunRecorded submits the recording of key, if the executor holds one made with a timer
// exactly when timer is given, and reports whether it did (ran); otherwise the caller runs
// the steps (Run). With out, its last submission also copies out aside for the host's read
// (read: whether it did). A recording whose buffers or bind groups were released since is
// dropped, unsubmitted; an error is a submission that failed part way.
func (e *Executor) RunRecorded(key any, timer *Timer, out *Readout) (ran, read bool, err error) {
	r := e.rec
	if r == nil || r.key != key || r.timed != (timer != nil) {
		return false, false, nil
	}
	for _, cb := range r.cbs {
		if cb.Check() != nil {
			e.DropRecording()
			return false, false, nil
		}
	}
	e.rec = nil
	last := e.dev.Submitted()
	defer func() { e.params.Settle(r.slots, last) }()
	// Together: the first command buffer alone, then the rest in one submission (the GPU
	// starts on the first while wgpu-native takes in the rest); else one each.
	var parts [][]*gpu.CommandBuffer
	if r.together {
		parts = append(parts, r.cbs[:1])
		if len(r.cbs) > 1 {
			parts = append(parts, r.cbs[1:])
		}
	} else {
		for i := range r.cbs {
			parts = append(parts, r.cbs[i:i+1])
		}
	}
	submitted := 0
	for i, part := range parts {
		var start time.Time
		if timer != nil {
			start = time.Now()
		}
		var seq uint64
		if out != nil && i == len(parts)-1 {
			seq, read, err = e.dev.SubmitReading(part, out.Buf, out.Offset, out.Size)
		} else {
			seq, err = e.dev.SubmitTogether(part) // drops the part on failure
		}
		if err != nil {
			for _, rest := range parts[i+1:] {
				for _, cb := range rest {
					cb.Discard()
				}
			}
			return true, false, err
		}
		last = seq
		submitted += len(part)
		if e.OnSubmit != nil {
			e.OnSubmit()
		}
		if timer != nil {
			timer.submitted(start, time.Now())
			timer.used = submitted
		}
	}
	return true, read, nil
}

// DropRecording discards the recording the executor holds, if any.
func (e *Executor) DropRecording() {
	if r := e.rec; r != nil {
		e.rec = nil
		for _, cb := range r.cbs {
			cb.Discard()
		}
		e.params.Settle(r.slots, e.dev.Submitted())
	}
}

// FirstPart is how many steps a recording submitted together puts in its first command
// buffer, submitted on its own by default (Executor.FirstPart): wgpu-native takes ~1 µs of
// CPU per recorded dispatch to submit (an H100 8B decode graph's 292 dispatches in one
// submission: 296 µs from the compute's start), and the GPU can start on these while it
// takes in the rest. A later round, with the rest in one command buffer, measured the
// GPU's time per decode graph 2% lower without a first part (H100, GGML_WGPU_PROFILE=1,
// bench -p 0 -n 64 -r 2, 16 / 0 apart: 1B Q4_0 877.0, 877.0 / 859.9, 859.3 µs; 8B Q4_K
// 2,872.1, 2,873.5 / 2,848.7, 2,853.7), but not the tokens untimed (alternating, another
// start: 1B Q4_0 tg128, -r 3 and -r 5, 855.0, 869.9, 838.5, 848.5, 861.3 / 726.3, 784.1,
// 823.7, 894.4, 833.7 t/s; 8B Q4_K tg64 -r 2 315.7, 302.3 / 303.3, 305.8), so it stays.
const FirstPart = 16

// cutAfter reports whether a recording's command buffer ends after step i, its first
// part first steps.
func cutAfter(i, perSubmit, first int, together bool) bool {
	if together && i+1 <= first {
		return i+1 == first
	}
	if together {
		return (i+1-first)%perSubmit == 0
	}
	return (i+1)%perSubmit == 0
}
