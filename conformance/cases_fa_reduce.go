package conformance

import "github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"

// ---------------------------------------------------------------------------------------
// FLASH_ATTN_EXT decoding at the boundaries of the split reduction's register form (each
// invocation one column of at most 16 splits, lanes of Dv invocations up to the device's
// workgroup limit): llama 1B's decode (8 KV heads x 4, Dv 64, 32 splits), split counts that
// leave lanes short (clamped loads), lanes of a Dv that is no power of two, Dv 512 at
// exactly 16 splits an invocation (workgroup limit 1024), one split more, and many more
// (the loop form), with and without sinks.

// faReduceCases are the split reduction's boundary cases.
func faReduceCases() []*Case {
	base := faSpec{nh: 1, nr2: 1, nr3: 1, nb: 1, mask: true, causal: true, prec: ggml.PrecF32, typeK: f16, typeV: f16}
	with := func(f func(s *faSpec)) *Case {
		s := base
		f(&s)
		return faCase(s)
	}
	return []*Case{
		with(func(s *faSpec) { s.hsk, s.hsv, s.nh, s.nr2, s.kv = 64, 64, 8, 4, 1024 }),
		with(func(s *faSpec) { s.hsk, s.hsv, s.nh, s.nr2, s.kv, s.sinks = 64, 64, 8, 4, 1000, true }),
		with(func(s *faSpec) { s.hsk, s.hsv, s.kv, s.nb = 64, 64, 3000, 2 }),
		with(func(s *faSpec) { s.hsk, s.hsv, s.kv, s.sinks = 72, 72, 700, true }),
		with(func(s *faSpec) { s.hsk, s.hsv, s.nr2, s.kv, s.vOfK = 576, 512, 4, 1024, true }),
		with(func(s *faSpec) { s.hsk, s.hsv, s.nr2, s.kv, s.vOfK = 576, 512, 4, 1056, true }),
		with(func(s *faSpec) { s.hsk, s.hsv, s.nr2, s.kv, s.vOfK, s.sinks = 576, 512, 4, 2048, true, true }),
	}
}
