package gpu

import (
	"regexp"
	"testing"
)

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

func TestFormatPCIBusID(t *testing.T) {
	if got := FormatPCIBusID(0, 0xc1, 0, 0); got != "0000:c1:00.0" {
		t.Fatalf("FormatPCIBusID = %q", got)
	}
	if got := FormatPCIBusID(0x10, 3, 0x1f, 7); got != "0010:03:1f.7" {
		t.Fatalf("FormatPCIBusID = %q", got)
	}
}

// TestAdapterPCIBusID reads every adapter's PCI location: a software adapter has none, a
// hardware one's is well formed.
func TestAdapterPCIBusID(t *testing.T) {
	in, err := NewInstance()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)
	for _, a := range in.Adapters() {
		id, ok := a.PCIBusID()
		t.Logf("%s: PCI bus id %q ok %v", a.Info.Description, id, ok)
		if a.Info.Type == CPU && ok {
			t.Fatalf("software adapter %s reports PCI bus id %q", a.Info.Device, id)
		}
		if ok && !re.MatchString(id) {
			t.Fatalf("malformed PCI bus id %q", id)
		}
	}
}

// TestAdapterComputeUnits reads every adapter's multiprocessor count: a software adapter
// reports none (no VK_NV_shader_sm_builtins), an NVIDIA one a plausible count.
func TestAdapterComputeUnits(t *testing.T) {
	in, err := NewInstance()
	if err != nil {
		t.Fatal(err)
	}
	var nilAdapter *Adapter
	if _, ok := nilAdapter.ComputeUnits(); ok {
		t.Fatal("a nil adapter reports compute units")
	}
	for _, a := range in.Adapters() {
		n, ok := a.ComputeUnits()
		t.Logf("%s: compute units %d ok %v", a.Info.Description, n, ok)
		if a.Info.Type == CPU && ok {
			t.Fatalf("software adapter %s reports %d compute units", a.Info.Device, n)
		}
		if ok && (n == 0 || n > 4096) {
			t.Fatalf("implausible compute units %d", n)
		}
	}
}
