// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package testenv is what the end-to-end test packages share: the repository root, the
// ocb-built collector, loopback ports, servers started and stopped by PID, and polling.
package testenv

import (
	"context"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// RepoRoot is the folder holding go.mod.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	require.NoError(tb, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(tb, parent, dir, "go.mod not found above the test")
		dir = parent
	}
}

// CollectorBinary is the ocb-built collector: $AGENTOTEL_COLLECTOR (set by `make test`), else
// built here with `make build`.
func CollectorBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("AGENTOTEL_COLLECTOR"); bin != "" {
		return bin
	}
	root := RepoRoot(t)
	cmd := exec.Command("make", "build")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "make build: %s", out)
	return filepath.Join(root, "_build", "otelcol-agentotel")
}

// FreePort returns a loopback TCP port nobody listens on right now.
func FreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// FreePorts returns n distinct loopback TCP ports nobody listens on right now (all held open
// while they are picked, so none is handed out twice).
func FreePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// Process is a server the test started; it is stopped by PID at cleanup.
type Process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// Start runs bin in its own process group with env added to the test's environment; its output
// goes to a log file that is printed when the test fails.
func Start(t *testing.T, name, bin string, env []string, args ...string) *Process {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	p := &Process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logFile.Close(); close(p.done) }()
	t.Cleanup(func() {
		p.Stop(t)
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 8000 {
				b = b[len(b)-8000:]
			}
			t.Logf("--- %s log (tail) ---\n%s", name, b)
		}
	})
	return p
}

// Stop sends SIGTERM (graceful shutdown: the collector saves its state), then SIGKILL to the
// process group after 20s.
func (p *Process) Stop(t *testing.T) {
	if p.Exited() {
		return
	}
	_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Logf("%s did not stop on SIGTERM; killing", p.name)
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// LogText is what the process printed so far.
func (p *Process) LogText() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// CopyTree copies the files under src whose name matches keep into dst, keeping the layout.
func CopyTree(t *testing.T, src, dst string, keep func(path string) bool) {
	t.Helper()
	//nolint:gosec // G122: src is a tree of the test's own (a fixture folder or a temporary one)
	require.NoError(t, filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !keep(path) {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	}))
}

// WaitFor polls cond until it returns true or the deadline passes, reporting the last reason.
func WaitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	var last string
	for {
		ok, why := cond()
		if ok {
			return
		}
		last = why
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s: %s", what, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// FixturesDir is the shared fixture corpus, read in place: $AGENTOTEL_FIXTURES, or
// ../shared/fixtures beside the repository.
func FixturesDir(tb testing.TB) string {
	tb.Helper()
	if d := os.Getenv("AGENTOTEL_FIXTURES"); d != "" {
		return d
	}
	return filepath.Join(filepath.Dir(RepoRoot(tb)), "shared", "fixtures")
}

// FixtureRoots are the folders of the shared fixture corpus, each laid out as <agent>/<case>: the
// fixtures (FixturesDir, always first, whether or not it exists, so that a test can skip on it),
// the newer real files and the newest ($AGENTOTEL_FIXTURES_NEW or fixtures-new, and
// $AGENTOTEL_FIXTURES_NEXT or fixtures-next, beside the fixtures), each when that folder exists,
// and the repository's constructed corpus. Every corpus test reads every root.
func FixtureRoots(tb testing.TB) []string {
	tb.Helper()
	first := FixturesDir(tb)
	roots := []string{first}
	for _, sibling := range NewerFixtures {
		dir := os.Getenv(sibling.Env)
		if dir == "" {
			dir = filepath.Join(filepath.Dir(first), sibling.Name)
		}
		if info, err := os.Stat(dir); err == nil && info.IsDir() { //nolint:gosec // G703: the corpus folder the developer named
			roots = append(roots, dir)
		}
	}
	return append(roots, ConstructedRoot(tb))
}

// NewerFixtures are the folders of newer real files beside the shared fixtures, each with the
// variable that names it elsewhere: the newer files, and the newest.
var NewerFixtures = []struct{ Name, Env string }{
	{"fixtures-new", "AGENTOTEL_FIXTURES_NEW"},
	{"fixtures-next", "AGENTOTEL_FIXTURES_NEXT"},
}

// ConstructedRoot is the repository's own corpus (testdata/corpus): files
// built from the shapes an agent's source writes, for agents of which no
// real file is public (its SOURCES.md says from which code). It is laid out
// as the shared fixtures are, one folder per agent, and is always there.
func ConstructedRoot(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(RepoRoot(tb), "testdata", "corpus")
}

// FixturePaths is path below every root of FixtureRoots that exists, e.g. FixturePaths(tb,
// "codex") for every folder of Codex fixtures.
func FixturePaths(tb testing.TB, path string) []string {
	tb.Helper()
	var out []string
	for _, r := range FixtureRoots(tb) {
		p := filepath.Join(r, path)
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}
