package gpu

import (
	"strings"
	"testing"
)

// The validator's rules over plain values: no device needed.

// testLimits are limits shaped like a real device's (lavapipe's, with a small binding
// limit so that the numbers stay readable).
var testLimits = Limits{
	MaxBufferSize:                   1 << 20,
	MaxStorageBufferBindingSize:     1 << 16,
	MaxUniformBufferBindingSize:     1 << 12,
	MinStorageBufferOffsetAlignment: 32,
	MinUniformBufferOffsetAlignment: 256,
	MaxStorageBuffersPerShaderStage: 8,
	MaxComputeWorkgroupsPerDim:      65535,
}

// live returns a span of a live buffer id of bufSize bytes with the given usage.
func live(id, bufSize uint64, usage uint32, offset, size uint64) span {
	return span{state: objLive, id: id, bufSize: bufSize, usage: usage, offset: offset, size: size}
}

// validatorCase is one call of a check: ok or an error containing want.
type validatorCase struct {
	name string
	err  error
	want string // "" when the call must succeed
}

func runValidatorCases(t *testing.T, cases []validatorCase) {
	t.Helper()
	for _, c := range cases {
		switch {
		case c.want == "" && c.err != nil:
			t.Errorf("%s: unexpected error %v", c.name, c.err)
		case c.want != "" && c.err == nil:
			t.Errorf("%s: accepted, want an error containing %q", c.name, c.want)
		case c.want != "" && !strings.Contains(c.err.Error(), c.want):
			t.Errorf("%s: error %q, want it to contain %q", c.name, c.err, c.want)
		}
	}
}

func bufferCase(name string, size uint64, usage uint32, want string) validatorCase {
	_, err := checkBufferDesc(size, usage, testLimits.MaxBufferSize)
	return validatorCase{name, err, want}
}

func TestValidateBuffer(t *testing.T) {
	got, err := checkBufferDesc(5, UsageStorage, testLimits.MaxBufferSize)
	if err != nil || got != 8 {
		t.Fatalf("5 bytes: got %d, %v; want 8 bytes", got, err)
	}
	runValidatorCases(t, []validatorCase{
		bufferCase("storage", 4096, UsageStorage, ""),
		bufferCase("uniform", 256, UsageUniform, ""),
		bufferCase("staging", 4096, usageStaging, ""),
		bufferCase("timestamps", 64, UsageTimestamps, ""),
		bufferCase("at the limit", 1<<20, UsageStorage, ""),
		bufferCase("0 bytes", 0, UsageStorage, "0 bytes"),
		bufferCase("over the limit", 1<<20+1, UsageStorage, "maxBufferSize"),
		bufferCase("near 2^64", ^uint64(0), UsageStorage, "maxBufferSize"),
		bufferCase("empty usage", 64, 0, "empty"),
		bufferCase("unknown usage bits", 64, UsageStorage|0x10000, "unknown bits"),
		bufferCase("MapRead with Storage", 64, usageMapRead|usageStorage, "MapRead"),
		bufferCase("MapWrite with CopyDst", 64, usageMapWrite|usageCopyDst, "MapWrite"),
	})
}

func TestValidateTransfer(t *testing.T) {
	runValidatorCases(t, []validatorCase{
		{"write", checkTransfer("w", live(1, 64, UsageStorage, 16, 48), usageCopyDst), ""},
		{"nil buffer", checkTransfer("w", span{state: objNil}, usageCopyDst), "is nil"},
		{"released buffer", checkTransfer("w", span{state: objReleased}, usageCopyDst), "released"},
		{"foreign buffer", checkTransfer("w", span{state: objForeign}, usageCopyDst), "another device"},
		{"unaligned offset", checkTransfer("w", live(1, 64, UsageStorage, 2, 4), usageCopyDst), "aligned"},
		{"unaligned size", checkTransfer("w", live(1, 64, UsageStorage, 0, 6), usageCopyDst), "aligned"},
		{"past the end", checkTransfer("w", live(1, 64, UsageStorage, 32, 36), usageCopyDst), "outside"},
		{"offset past the end", checkTransfer("w", live(1, 64, UsageStorage, 68, 0), usageCopyDst), "outside"},
		{"overflowing range", checkTransfer("w", live(1, 64, UsageStorage, 8, ^uint64(0)-3), usageCopyDst), "outside"},
		{"read of a uniform buffer", checkTransfer("r", live(1, 64, UsageUniform, 0, 4), usageCopySrc), "needs CopySrc"},
		{"copy", checkCopy(live(1, 64, UsageStorage, 0, 32), live(1, 64, UsageStorage, 32, 32)), ""},
		{"overlapping copy", checkCopy(live(1, 64, UsageStorage, 0, 32), live(1, 64, UsageStorage, 16, 32)), "overlapping"},
		{"copy to a released buffer", checkCopy(live(1, 64, UsageStorage, 0, 32), span{state: objReleased}), "released"},
		{"resolve", checkResolve(live(1, 1024, UsageTimestamps, 256, 16)), ""},
		{"resolve unaligned", checkResolve(live(1, 1024, UsageTimestamps, 128, 16)), "multiple of 256"},
		{"resolve into storage", checkResolve(live(1, 1024, UsageStorage, 0, 16)), "needs QueryResolve"},
	})
}

func TestValidateBindGroup(t *testing.T) {
	l := &testLimits
	uni := live(9, 4096, UsageUniform, 0, 256)
	a := live(1, 4096, UsageStorage, 0, 1024)
	b := live(2, 4096, UsageStorage, 0, 1024)
	at := func(s span, offset, size uint64) span { s.offset, s.size = offset, size; return s }
	overlapOK := func(s span) span { s.mayOverlap = true; return s }
	readOnly := func(s span) span { s.readOnly = true; return s }
	runValidatorCases(t, []validatorCase{
		{"two buffers", checkBindGroup(Layout{Storage: 2}, uni, []span{a, b}, l), ""},
		{"no storage", checkBindGroup(Layout{Storage: 0}, uni, nil, l), ""},
		{"count below the layout's", checkBindGroup(Layout{Storage: 2}, uni, []span{a}, l), "has 2 storage bindings, got 1"},
		{"count above the layout's", checkBindGroup(Layout{Storage: 1}, uni, []span{a, b}, l), "has 1 storage bindings, got 2"},
		{"0-byte binding", checkBindGroup(Layout{Storage: 2}, uni, []span{a, at(b, 0, 0)}, l), "0 bytes"},
		{"size not a multiple of 4", checkBindGroup(Layout{Storage: 2}, uni, []span{a, at(b, 0, 6)}, l), "multiple of 4"},
		{"unaligned offset", checkBindGroup(Layout{Storage: 2}, uni, []span{a, at(b, 16, 64)}, l), "not aligned to 32"},
		{"past the end", checkBindGroup(Layout{Storage: 2}, uni, []span{a, at(b, 4064, 64)}, l), "past the end"},
		{"overflowing range", checkBindGroup(Layout{Storage: 2}, uni, []span{a, at(b, 32, ^uint64(0)-31)}, l), "past the end"},
		{"over the binding limit", checkBindGroup(Layout{Storage: 1}, uni, []span{live(3, 1<<17, UsageStorage, 0, 1<<16+32)}, l), "maxStorageBufferBindingSize"},
		{"at the binding limit", checkBindGroup(Layout{Storage: 1}, uni, []span{live(3, 1<<17, UsageStorage, 0, 1<<16)}, l), ""},
		{"nil buffer", checkBindGroup(Layout{Storage: 1}, uni, []span{{state: objNil}}, l), "is nil"},
		{"released buffer", checkBindGroup(Layout{Storage: 2}, uni, []span{a, {state: objReleased, size: 64}}, l), "released"},
		{"foreign buffer", checkBindGroup(Layout{Storage: 1}, uni, []span{{state: objForeign, size: 64}}, l), "another device"},
		{"storage without Storage usage", checkBindGroup(Layout{Storage: 1}, uni, []span{live(3, 64, UsageUniform, 0, 64)}, l), "lacks Storage"},
		{"uniform bound as storage", checkBindGroup(Layout{Storage: 1}, uni, []span{live(9, 4096, UsageStorage|UsageUniform, 0, 64)}, l), "is the uniform buffer"},
		{"released uniform", checkBindGroup(Layout{Storage: 1}, span{state: objReleased}, []span{a}, l), "uniform buffer was already released"},
		{"nil uniform", checkBindGroup(Layout{Storage: 1}, span{state: objNil}, []span{a}, l), "uniform buffer is nil"},
		{"0-byte uniform", checkBindGroup(Layout{Storage: 1}, at(uni, 0, 0), []span{a}, l), "uniform binding is 0 bytes"},
		{"uniform over its limit", checkBindGroup(Layout{Storage: 1}, live(9, 1<<14, UsageUniform, 0, 1<<13), []span{a}, l), "maxUniformBufferBindingSize"},
		{"uniform past its buffer", checkBindGroup(Layout{Storage: 1}, live(9, 128, UsageUniform, 0, 256), []span{a}, l), "past the end"},
		{"uniform without Uniform usage", checkBindGroup(Layout{Storage: 1}, live(9, 4096, UsageStorage, 0, 256), []span{a}, l), "lacks Uniform"},
		// The aliasing rule.
		{"identical ranges (in place)", checkBindGroup(Layout{Storage: 2}, uni, []span{a, a}, l), ""},
		{"disjoint ranges", checkBindGroup(Layout{Storage: 2}, uni, []span{at(a, 0, 512), at(a, 512, 512)}, l), ""},
		{"touching ranges", checkBindGroup(Layout{Storage: 2}, uni, []span{at(a, 0, 512), at(a, 512, 64)}, l), ""},
		{"partial overlap", checkBindGroup(Layout{Storage: 2}, uni, []span{at(a, 0, 512), at(a, 256, 512)}, l), "partially overlap"},
		{"range inside another", checkBindGroup(Layout{Storage: 2}, uni, []span{at(a, 0, 1024), at(a, 256, 256)}, l), "partially overlap"},
		{"same offset, other size", checkBindGroup(Layout{Storage: 2}, uni, []span{at(a, 0, 1024), at(a, 0, 512)}, l), "partially overlap"},
		{"third binding overlaps the first", checkBindGroup(Layout{Storage: 3}, uni, []span{at(a, 0, 512), b, at(a, 480, 64)}, l), "bindings 0 (at 0, 512 bytes) and 2"},
		{"overlap the kernel allows", checkBindGroup(Layout{Storage: 2}, uni, []span{at(a, 0, 512), overlapOK(at(a, 256, 512))}, l), ""},
		{"overlap of two read-only ranges", checkBindGroup(Layout{Storage: 2}, uni, []span{readOnly(at(a, 0, 512)), readOnly(at(a, 256, 512))}, l), ""},
		{"read-only range overlapping a written one", checkBindGroup(Layout{Storage: 2}, uni, []span{readOnly(at(a, 0, 512)), at(a, 256, 512)}, l), "partially overlap"},
		{"written range overlapping a read-only one", checkBindGroup(Layout{Storage: 3}, uni, []span{at(a, 0, 512), b, readOnly(at(a, 256, 512))}, l), "bindings 0 (at 0, 512 bytes) and 2"},
		{"read-only binding of its own buffer", checkBindGroup(Layout{Storage: 2, ReadOnly: 2}, uni, []span{a, b}, l), ""},
		{"read-only bindings sharing a buffer", checkBindGroup(Layout{Storage: 3, ReadOnly: 6}, uni, []span{a, at(b, 0, 64), at(b, 32, 64)}, l), ""},
		{"read-only binding of a written buffer", checkBindGroup(Layout{Storage: 2, ReadOnly: 1}, uni, []span{at(a, 0, 64), at(a, 512, 64)}, l), "binding 0 is read-only and binding 1 read_write"},
		{"read_write binding of a read-only buffer", checkBindGroup(Layout{Storage: 3, ReadOnly: 4}, uni, []span{a, b, at(a, 512, 64)}, l), "binding 2 is read-only and binding 0 read_write"},
	})
}

func TestValidateShaderQueriesDispatch(t *testing.T) {
	l := &testLimits
	runValidatorCases(t, []validatorCase{
		{"shader", checkShader("fn main() {}", Layout{Storage: 2}, l), ""},
		{"no storage", checkShader("fn main() {}", Layout{Storage: 0}, l), ""},
		{"read-only bindings", checkShader("fn main() {}", Layout{Storage: 3, ReadOnly: 5}, l), ""},
		{"read-only bit past the layout", checkShader("fn main() {}", Layout{Storage: 2, ReadOnly: 4}, l), "read-only bits 0x4"},
		{"empty source", checkShader("", Layout{Storage: 2}, l), "empty"},
		{"blank source", checkShader(" \n\t", Layout{Storage: 2}, l), "empty"},
		{"NUL in source", checkShader("fn main() {}\x00junk", Layout{Storage: 2}, l), "NUL"},
		{"negative storage count", checkShader("fn main() {}", Layout{Storage: -1}, l), "-1 storage bindings"},
		{"storage over the device limit", checkShader("fn main() {}", Layout{Storage: 9}, l), "9 storage bindings"},
		{"storage over the package limit", checkShader("fn main() {}", Layout{Storage: 16}, &Limits{MaxStorageBuffersPerShaderStage: 32}), "16 storage bindings"},
		{"query set", checkQueryCount(2), ""},
		{"query set at the limit", checkQueryCount(4096), ""},
		{"empty query set", checkQueryCount(0), "0 queries"},
		{"negative query set", checkQueryCount(-2), "-2 queries"},
		{"query set over the limit", checkQueryCount(4097), "4097 queries"},
		{"queries", checkQueries(2, 2, 4), ""},
		{"queries past the end", checkQueries(3, 2, 4), "outside"},
		{"negative first query", checkQueries(-1, 2, 4), "outside"},
		{"no queries", checkQueries(0, 0, 4), "outside"},
		{"grid", checkGrid([3]uint32{65535, 1, 1}, l.MaxComputeWorkgroupsPerDim), ""},
		{"empty grid", checkGrid([3]uint32{0, 1, 1}, l.MaxComputeWorkgroupsPerDim), ""},
		{"grid over the limit", checkGrid([3]uint32{1, 65536, 1}, l.MaxComputeWorkgroupsPerDim), "65536 workgroups in dimension 1"},
		{"uniform offset", checkUniformOffset(512, 256, 1024, 256), ""},
		{"last uniform slot", checkUniformOffset(768, 256, 1024, 256), ""},
		{"unaligned uniform offset", checkUniformOffset(100, 256, 1024, 256), "not aligned"},
		{"uniform window past the end", checkUniformOffset(1024, 256, 1024, 256), "outside"},
	})
}

func TestObjStateMessages(t *testing.T) {
	if err := objLive.check("x"); err != nil {
		t.Fatalf("live object: %v", err)
	}
	for s, want := range map[objState]string{objNil: "x is nil", objReleased: "x was already released", objForeign: "x belongs to another device"} {
		if err := s.check("x"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("state %d: %v, want %q", s, err, want)
		}
	}
	if got := usageNames(UsageStorage | 0x4000); got != "CopySrc|CopyDst|Storage|0x4000" {
		t.Errorf("usageNames: %q", got)
	}
}
