package backend

import (
	"os"
	"strconv"
	"strings"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
)

// Environment variables that choose which adapters become devices.
const (
	// EnvDevices selects adapters by index (as enumerated) or by a case-insensitive
	// substring of their name, comma separated: "0", "nvidia", "0,llvmpipe".
	EnvDevices = "GGML_WGPU_DEVICES"
	// EnvSoftware=1 also exposes software (CPU) adapters when hardware ones exist.
	EnvSoftware = "GGML_WGPU_SOFTWARE"
)

// selectAdapters returns the indices of the adapters to expose, in device order.
// Default: discrete GPUs, then integrated (and unknown) ones; software adapters only when
// there is no hardware adapter or EnvSoftware asks for them.
func selectAdapters(infos []gpu.AdapterInfo, devices string, software bool) []int {
	if devices = strings.TrimSpace(devices); devices != "" {
		var out []int
		seen := map[int]bool{}
		for _, f := range strings.Split(devices, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			if i, err := strconv.Atoi(f); err == nil {
				if i >= 0 && i < len(infos) && !seen[i] {
					out, seen[i] = append(out, i), true
				}
				continue
			}
			for i, in := range infos {
				name := strings.ToLower(in.Device + " " + in.Description)
				if strings.Contains(name, strings.ToLower(f)) && !seen[i] {
					out, seen[i] = append(out, i), true
				}
			}
		}
		return out
	}
	var discrete, other, soft []int
	for i, in := range infos {
		switch in.Type {
		case gpu.DiscreteGPU:
			discrete = append(discrete, i)
		case gpu.CPU:
			soft = append(soft, i)
		default:
			other = append(other, i)
		}
	}
	out := append(discrete, other...)
	if len(out) == 0 || software {
		out = append(out, soft...)
	}
	return out
}

// unmatchedSelections returns the entries of a GGML_WGPU_DEVICES value that select no
// adapter: an index out of range, or a name no adapter's contains.
func unmatchedSelections(infos []gpu.AdapterInfo, devices string) []string {
	var out []string
	for _, f := range strings.Split(devices, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if len(selectAdapters(infos, f, false)) == 0 {
			out = append(out, f)
		}
	}
	return out
}

// adapterList names the adapters by index, for messages: `0 "llvmpipe (...)", 1 "..."`
// (the description, or the device name where there is none).
func adapterList(infos []gpu.AdapterInfo) string {
	if len(infos) == 0 {
		return "none"
	}
	parts := make([]string, len(infos))
	for i, in := range infos {
		name := strings.TrimSpace(in.Description)
		if name == "" {
			name = strings.TrimSpace(in.Device)
		}
		parts[i] = strconv.Itoa(i) + " " + strconv.Quote(name)
	}
	return strings.Join(parts, ", ")
}

func envSelection() (string, bool) {
	return os.Getenv(EnvDevices), os.Getenv(EnvSoftware) == "1"
}
