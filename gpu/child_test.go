package gpu

import (
	"errors"
	"os"
	"os/exec"
	"testing"
)

// Tests that may abort the process (a wgpu-native panic cannot unwind through C) run in a
// child: a fresh copy of the test binary, restricted with -test.run to one test, told by
// childEnv what to do. An abort then fails the parent's test instead of killing the suite.

// childEnv marks a run of the test binary as a child started by runChild; its value says
// what the child does.
const childEnv = "GGML_WGPU_GPU_TEST_CHILD"

// childMode returns what this process does as a child, "" when it is not one.
func childMode() string { return os.Getenv(childEnv) }

// runChild runs the tests matching pattern in a child with childEnv=mode and the extra
// environment env, and returns the child's output and exit code (-1 when a signal ended it).
func runChild(t *testing.T, pattern, mode string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+pattern, "-test.count=1", "-test.v", "-test.timeout=120s")
	cmd.Env = append(append(os.Environ(), childEnv+"="+mode), env...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return string(out), 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child %s: %v", pattern, err)
	}
	return string(out), ee.ExitCode()
}
