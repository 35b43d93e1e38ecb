package gpu

import "testing"

func TestAdapterMemory(t *testing.T) {
	in, err := NewInstance()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range in.Adapters() {
		free, total, ok := a.Memory()
		t.Logf("%s: free %d total %d ok %v", a.Info.Description, free, total, ok)
		if ok && (total == 0 || free > total) {
			t.Fatalf("inconsistent memory report: free %d total %d", free, total)
		}
	}
}
