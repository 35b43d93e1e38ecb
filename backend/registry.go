package backend

import (
	"fmt"
	"sync"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
)

// Registry is the "WGPU" backend registry: one Device per selected WebGPU adapter.
type Registry struct {
	Devices []*Device
	inst    *gpu.Instance
}

var (
	regOnce sync.Once
	reg     *Registry
)

// Default returns the process-wide registry, discovering adapters on first use. With no
// WebGPU adapter it has zero devices.
func Default() *Registry {
	regOnce.Do(func() {
		reg = &Registry{}
		inst, err := gpu.NewInstance()
		if err != nil {
			logf(LogWarn, "no WebGPU instance: %v", err)
			return
		}
		reg.inst = inst
		adapters := inst.Adapters()
		infos := make([]gpu.AdapterInfo, len(adapters))
		for i, a := range adapters {
			infos[i] = a.Info
		}
		devices, software := envSelection()
		selected := selectAdapters(infos, devices, software)
		for _, f := range unmatchedSelections(infos, devices) {
			logf(LogWarn, "%s entry %q matches no WebGPU adapter (adapters: %s)", EnvDevices, f, adapterList(infos))
		}
		if len(selected) == 0 {
			logf(LogWarn, "no WebGPU adapter selected (%s=%q; adapters: %s): the backend has no device",
				EnvDevices, devices, adapterList(infos))
		}
		for _, i := range selected {
			d := newDevice(len(reg.Devices), adapters[i])
			reg.Devices = append(reg.Devices, d)
			logf(LogInfo, "device %s: %s", d.Name, d.Description)
		}
	})
	return reg
}

// Score is 0 when no device can be opened here, else a positive preference.
func (r *Registry) Score() int {
	for _, d := range r.Devices {
		if _, err := d.open(); err == nil {
			return 10
		}
	}
	return 0
}

// Device returns device i, or an error when out of range.
func (r *Registry) Device(i int) (*Device, error) {
	if i < 0 || i >= len(r.Devices) {
		return nil, fmt.Errorf("no device %d (have %d)", i, len(r.Devices))
	}
	return r.Devices[i], nil
}
