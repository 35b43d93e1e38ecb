package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The Vulkan validation run (scripts/validation.sh does the same from the shell).
const (
	// envValidation: "1" requires the run (a missing layer fails the test), "0" skips it;
	// unset, the test runs when the layer is installed.
	envValidation = "GGML_WGPU_VALIDATION"
	// envVVLLibrary names the layer library (libVkLayer_khronos_validation.so).
	envVVLLibrary = "GGML_WGPU_VVL_LIBRARY"
	// envValidationChild marks the child process that runs the cases under the layer.
	envValidationChild = "GGML_WGPU_VALIDATION_CHILD"
	// defaultVVL is where Debian's chromium ships the layer (without a manifest).
	defaultVVL = "/usr/lib/chromium/libVkLayer_khronos_validation.so"
	// vvlLayerName is the layer's name in its manifest and in VK_INSTANCE_LAYERS.
	vvlLayerName = "VK_LAYER_KHRONOS_validation"
)

// vvlAllowed are the message ids that do not count, as in scripts/validation.sh: naga
// 0.19's SPIR-V decorates workgroup arrays with an ArrayStride (10684) and gives the relaxed
// atomics of f16 stores the UniformMemory bit (10871); newer SPIR-V rules forbid both,
// drivers compute them correctly, and the wgpu we link cannot be told otherwise.
var vvlAllowed = map[string]bool{
	"VUID-StandaloneSpirv-None-10684":            true,
	"VUID-StandaloneSpirv-MemorySemantics-10871": true,
}

// TestVulkanValidation runs the quick selection of the suite (Env.Quick: the first case of
// every op family and types and of every kernel pipeline) in a child process under the
// Khronos validation layer, with synchronization validation, and fails on any error
// message other than vvlAllowed's.
func TestVulkanValidation(t *testing.T) {
	if os.Getenv(envValidationChild) == "1" {
		validationChild(t)
		return
	}
	required := os.Getenv(envValidation) == "1"
	if os.Getenv(envValidation) == "0" {
		t.Skipf("%s=0", envValidation)
	}
	layer := os.Getenv(envVVLLibrary)
	if layer == "" {
		layer = defaultVVL
	}
	if _, err := os.Stat(layer); err != nil {
		if required {
			t.Fatalf("%s=1 but the validation layer is missing: %v (scripts/validation.sh installs it)", envValidation, err)
		}
		t.Skipf("no Vulkan validation layer at %s (scripts/validation.sh installs it; %s=1 requires it)", layer, envValidation)
	}
	if testing.Short() && !required {
		t.Skip("short mode")
	}
	cfg := testConfig(t)
	if _, err := os.Stat(cfg.BackendPath); err != nil {
		t.Fatalf("%s not found: run scripts/build.sh first", cfg.BackendPath)
	}

	dir := t.TempDir()
	manifest, err := json.Marshal(map[string]any{
		"file_format_version": "1.2.0",
		"layer": map[string]string{
			"name": vvlLayerName, "type": "GLOBAL", "library_path": layer,
			"api_version": "1.3.280", "implementation_version": "1", "description": "validation",
		},
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "VkLayer_khronos_validation.json"), manifest, 0o644))
	logFile := filepath.Join(dir, "layer.log")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestVulkanValidation$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(),
		envValidationChild+"=1",
		"VK_LAYER_PATH="+dir,
		"VK_INSTANCE_LAYERS="+vvlLayerName,
		// Layer settings: messages to a file, errors and warnings, every message (no
		// duplicate limit), synchronization validation, spirv-val on every shader module.
		"VK_LAYER_LOG_FILENAME="+logFile,
		"VK_LAYER_DEBUG_ACTION=VK_DBG_LAYER_ACTION_LOG_MSG",
		"VK_LAYER_REPORT_FLAGS=error,warn",
		"VK_LAYER_ENABLE_MESSAGE_LIMIT=false",
		"VK_LAYER_VALIDATE_SYNC=true",
		"VK_LAYER_CHECK_SHADERS_CACHING=false",
		// The loader's layer log proves that the device ran under the layer.
		"VK_LOADER_DEBUG=layer",
	)
	start := time.Now()
	out, runErr := cmd.CombinedOutput()
	elapsed := time.Since(start)
	logged, _ := os.ReadFile(logFile)

	if !bytes.Contains(out, []byte(`Inserted device layer "`+vvlLayerName+`"`)) {
		t.Fatalf("the device did not run under the layer (%s); the loader said:\n%s", layer, loaderLines(out, layer))
	}
	msgs := append(parseValidation(logged), parseValidation(out)...)
	var errs, warns, filtered int
	byID := map[string]int{}
	first := map[string]string{}
	for _, m := range msgs {
		switch {
		case m.Severity == "Error" && vvlAllowed[m.ID]:
			filtered++
		case m.Severity == "Error":
			errs++
			if byID["error "+m.ID] == 0 {
				first[m.ID] = m.Text
			}
			byID["error "+m.ID]++
		default:
			warns++
			byID[strings.ToLower(m.Severity)+" "+m.ID]++
		}
	}
	keys := make([]string, 0, len(byID))
	for k := range byID {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var summary strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&summary, "\n  %5d  %s", byID[k], k)
	}
	t.Logf("Vulkan validation of the quick selection: %d errors, %d warnings (not counted), %d filtered; %.1f s%s",
		errs, warns, filtered, elapsed.Seconds(), summary.String())
	ids := make([]string, 0, len(first))
	for id := range first {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t.Errorf("%d× %s, the first:\n%s", byID["error "+id], id, first[id])
	}
	if runErr != nil {
		t.Errorf("the run under the layer failed: %v\n%s", runErr, tail(string(out), 60))
	}
}

// validationChild is the child process: the quick selection, as the conformance suite.
func validationChild(t *testing.T) {
	env, err := Open(testConfig(t))
	require.NoError(t, err)
	defer env.Close()
	cases, err := env.QuickCases(Cases())
	require.NoError(t, err)
	runSuite(t, env, cases)
}

// vvlMessage is one message of the validation layer.
type vvlMessage struct {
	Severity string // "Error", "Warning", "Information", "Performance Warning", ...
	ID       string // the message id: a VUID, or a name such as WARNING-...
	Text     string // the whole message, header included
}

// vvlHeader is the first line of a layer message: "Validation Error: [ VUID-... ] | ...".
var vvlHeader = regexp.MustCompile(`^Validation ([A-Za-z ]+): (?:\[ *([^\] ]+) *\])?`)

// parseValidation splits the layer's output into messages: each runs from its header line
// to the next header (lines before the first header are not the layer's).
func parseValidation(b []byte) []vvlMessage {
	var msgs []vvlMessage
	var cur *vvlMessage
	var text strings.Builder
	flush := func() {
		if cur != nil {
			cur.Text = strings.TrimRight(text.String(), "\n")
			msgs = append(msgs, *cur)
		}
		cur = nil
		text.Reset()
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m := vvlHeader.FindStringSubmatch(line); m != nil {
			flush()
			cur = &vvlMessage{Severity: m[1], ID: m[2]}
			if cur.ID == "" {
				cur.ID = "?"
			}
		}
		if cur != nil {
			text.WriteString(line)
			text.WriteByte('\n')
		}
	}
	flush()
	return msgs
}

// loaderLines returns the loader's lines about the layer, for when it did not load.
func loaderLines(out []byte, layer string) string {
	var keep []string
	seen := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if (strings.Contains(line, vvlLayerName) || strings.Contains(line, layer)) && !seen[line] {
			seen[line] = true
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestParseValidation checks the splitting of the layer's output into messages.
func TestParseValidation(t *testing.T) {
	out := "load_backend: something\n" +
		"Validation Warning: [ WARNING-x ] | MessageID = 0x1\nfirst\n\n" +
		"Validation Error: [ VUID-StandaloneSpirv-None-10684 ] | MessageID = 0x2\nspirv\n\nCommand to reproduce:\n\tspirv-val\n\n" +
		"Validation Error: [ VUID-vkResetCommandPool-commandPool-00040 ] Object 0: handle = 0x1; | MessageID = 0x3 | text\n" +
		"Validation Information: no id\n"
	msgs := parseValidation([]byte(out))
	require.Len(t, msgs, 4)
	require.Equal(t, vvlMessage{"Warning", "WARNING-x", "Validation Warning: [ WARNING-x ] | MessageID = 0x1\nfirst"}, msgs[0])
	require.Equal(t, "Error", msgs[1].Severity)
	require.Equal(t, "VUID-StandaloneSpirv-None-10684", msgs[1].ID)
	require.Contains(t, msgs[1].Text, "\tspirv-val")
	require.Equal(t, "VUID-vkResetCommandPool-commandPool-00040", msgs[2].ID)
	require.Equal(t, vvlMessage{"Information", "?", "Validation Information: no id"}, msgs[3])
}
