package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childEnv is the environment variable that tells a re-executed test binary which test it
// runs as an isolated child (its value is the full test name, e.g. TestA/case_1).
const childEnv = "GGML_WGPU_TEST_CHILD"

// childTimeout bounds one isolated child process.
const childTimeout = 3 * time.Minute

// isChild reports whether this process is the isolated child of test t.
func isChild(t *testing.T) bool { return os.Getenv(childEnv) == t.Name() }

// runPattern turns a test name (Parent/sub/subsub) into a -test.run pattern that selects
// exactly that test.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// isolated runs body in a child process (the test binary re-executed with -test.run
// selecting t alone and childEnv naming it), so that an abort inside the library or a
// driver fails t instead of killing the whole test binary. In the child it runs body
// directly. A child that dies (signal, exit status, timeout) or whose test does not pass
// fails t with the child's output; the child's log is relayed either way. Tests that call
// isolated must do nothing else outside their subtests: the child runs the parent's code
// that leads to the subtest too.
func isolated(t *testing.T, body func(t *testing.T)) {
	t.Helper()
	if isChild(t) {
		body(t)
		return
	}
	out, err := runChild(t, t.Name())
	t.Logf("isolated child process output:\n%s", indent(clip(out, 60)))
	switch {
	case err != nil && crashSummary(out) != "":
		t.Fatalf("child process of %s died: %v: the process (a host) was taken down:\n%s", t.Name(), err, indent(crashSummary(out)))
	case err != nil:
		t.Fatalf("child process of %s failed: %v (output above)", t.Name(), err)
	case strings.Contains(out, "--- SKIP: "+t.Name()):
		t.Skipf("skipped in the child process (output above)")
	case !strings.Contains(out, "--- PASS: "+t.Name()):
		t.Fatalf("child process of %s exited 0 without passing the test (output above)", t.Name())
	}
}

// runChild re-executes the test binary for the test named name, with the further
// environment variables env, and returns its combined output and the error of the run
// (nil for exit status 0).
func runChild(t *testing.T, name string, env ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), childTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", runPattern(name), "-test.count=1",
		"-test.v", "-test.timeout="+childTimeout.String())
	cmd.Env = append(append(os.Environ(), env...), childEnv+"="+name)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = errors.Join(err, ctx.Err())
	}
	return string(out), err
}

// crashSummary returns the lines of a child's output that say why it died: a Rust panic
// (with the line after it, its message), a failed GGML_ASSERT, a fatal Go runtime error or
// a signal.
func crashSummary(out string) string {
	lines := strings.Split(out, "\n")
	var keep []string
	for i, ln := range lines {
		switch {
		case strings.Contains(ln, "panicked at"):
			keep = append(keep, strings.TrimSpace(ln))
			if i+1 < len(lines) {
				keep = append(keep, strings.TrimSpace(lines[i+1]))
			}
		case strings.Contains(ln, "GGML_ASSERT"), strings.HasPrefix(strings.TrimSpace(ln), "fatal "),
			strings.HasPrefix(ln, "SIGABRT"), strings.HasPrefix(ln, "SIGSEGV"), strings.HasPrefix(ln, "SIGBUS"):
			keep = append(keep, strings.TrimSpace(ln))
		}
	}
	return strings.Join(keep, "\n")
}

// clip keeps the first n lines of s and says how many it left out.
func clip(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n... (%d more lines)", len(lines)-n)
}

// indent prefixes every line of s with a tab, for readable nested output.
func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	return "\t" + strings.ReplaceAll(s, "\n", "\n\t")
}

// captureStderr runs fn with file descriptor 2 redirected to a temporary file and returns
// what was written there: ggml's default logger (and so the library's log messages) writes
// to stderr. The captured text is also written to the real stderr afterwards.
func captureStderr(t *testing.T, fn func()) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatalf("capturing stderr: %v", err)
	}
	defer f.Close()
	saved, err := syscall.Dup(2)
	if err != nil {
		t.Fatalf("capturing stderr: %v", err)
	}
	if err := syscall.Dup3(int(f.Fd()), 2, 0); err != nil {
		syscall.Close(saved)
		t.Fatalf("capturing stderr: %v", err)
	}
	func() {
		defer func() {
			_ = syscall.Dup3(saved, 2, 0)
			syscall.Close(saved)
		}()
		fn()
	}()
	data, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatalf("reading captured stderr: %v", err)
	}
	os.Stderr.Write(data)
	return string(data)
}
