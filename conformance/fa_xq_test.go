package conformance

import "testing"

// TestFAOutPlans plans the GRAPH(flash_attn+wo) cases under quickLimits and checks that
// each takes the fusion row flash_attn+view+mul_mat: the split attention, its reduction
// quantizing the rows (XQ=1) and the integer mat-vec reading them, with no dispatch that
// quantizes the column.
func TestFAOutPlans(t *testing.T) {
	requirePlans(t, faOutCases(), quickLimits, []planKind{
		{kernel: "flash_attn", define: "SPLIT=1"},
		{kernel: "flash_attn_reduce", define: "XQ=1", need: true},
		{kernel: "mul_mat_vec_q4", define: "XQ=1", need: true},
	}, nil)
}

// TestConformanceFAOut runs the GRAPH(flash_attn+wo) cases, and again with their results
// placed by ggml-alloc (placedCases).
func TestConformanceFAOut(t *testing.T) {
	runPlaced(t, faOutCases)
}
