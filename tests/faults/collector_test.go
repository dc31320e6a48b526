// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/tests/testenv"
)

// How a collector process ended.
const (
	endRunning = ""
	endKill    = "kill -9"
	endTerm    = "SIGTERM"
)

// deployment is one collector installation: its configuration, its state directory (file_storage)
// and the agents' log folders. Every process started on it writes the file exporters' output to a
// directory of its own (out/run-NNN), so a torn last line stays the last line of its file; the
// agent_event exporters write to export/, shared by all its processes.
type deployment struct {
	t      *testing.T
	bin    string
	root   string // holds state/, out/, export/
	logs   string // the agents' folders: claude/, codex/, gemini/
	config string
	runs   []*process
}

func newDeployment(t *testing.T, name, logs string) *deployment {
	// AGENTOTEL_FAULTS_KEEP=<dir> keeps every run's state, output and log there for a look after.
	root := filepath.Join(t.TempDir(), name)
	if keep := os.Getenv("AGENTOTEL_FAULTS_KEEP"); keep != "" {
		root = filepath.Join(keep, t.Name(), name)
		require.NoError(t, os.RemoveAll(root)) //nolint:gosec // G703: under the folder the developer named
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "state"), 0o755)) //nolint:gosec // G703: as above, or the test's own
	return &deployment{
		t:      t,
		bin:    testenv.CollectorBinary(t),
		root:   root,
		logs:   logs,
		config: filepath.Join(testenv.RepoRoot(t), "tests", "faults", "testdata", "collector.yaml"),
	}
}

// process is one collector process of a deployment.
type process struct {
	n       int
	out     string
	logPath string
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{}
	end     string
	lived   time.Duration
}

// start runs a new collector process on the deployment's state.
func (d *deployment) start() *process {
	t := d.t
	p := &process{n: len(d.runs), done: make(chan struct{})}
	p.out = filepath.Join(d.root, "out", fmt.Sprintf("run-%03d", p.n))
	require.NoError(t, os.MkdirAll(p.out, 0o755))
	p.logPath = filepath.Join(p.out, "collector.log")
	logFile, err := os.Create(p.logPath)
	require.NoError(t, err)
	p.cmd = exec.Command(d.bin, "--config", d.config) //nolint:gosec // G204: the collector under test
	p.cmd.Env = append(os.Environ(), "STATE_DIR="+filepath.Join(d.root, "state"), "LOGS_DIR="+d.logs, "OUT_DIR="+p.out,
		"EXPORT_DIR="+d.exportsDir())
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, p.cmd.Start())
	p.started = time.Now()
	go func() { _ = p.cmd.Wait(); logFile.Close(); close(p.done) }()
	d.runs = append(d.runs, p)
	t.Cleanup(func() {
		if !p.exited() {
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	})
	return p
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *process) logText() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// ready reports whether the collector finished starting.
func (p *process) ready() bool {
	return strings.Contains(p.logText(), "Everything is ready")
}

// kill ends the process with SIGKILL: no shutdown, nothing saved.
func (p *process) kill(t *testing.T) {
	t.Helper()
	require.False(t, p.exited(), "run %d ended by itself before the kill:\n%s", p.n, tail(p.logText()))
	require.NoError(t, syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL))
	<-p.done
	p.end, p.lived = endKill, time.Since(p.started)
}

// term stops the process gracefully and checks that it shut down cleanly.
func (p *process) term(t *testing.T) {
	t.Helper()
	require.False(t, p.exited(), "run %d ended by itself before SIGTERM:\n%s", p.n, tail(p.logText()))
	require.NoError(t, syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM))
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		t.Fatalf("run %d did not stop within 60s of SIGTERM:\n%s", p.n, tail(p.logText()))
	}
	p.end, p.lived = endTerm, time.Since(p.started)
	require.Contains(t, p.logText(), "Shutdown complete", "run %d did not shut down cleanly:\n%s", p.n, tail(p.logText()))
}

// waitReady waits until the process has started (or ended).
func (p *process) waitReady(t *testing.T) {
	t.Helper()
	testenv.WaitFor(t, 60*time.Second, fmt.Sprintf("run %d to start", p.n), func() (bool, string) {
		if p.exited() {
			t.Fatalf("run %d exited at start:\n%s", p.n, tail(p.logText()))
		}
		return p.ready(), "not ready"
	})
}

// checkLog fails on what no run may log: a panic, a storage failure.
func (d *deployment) checkLog(t *testing.T) {
	t.Helper()
	for _, p := range d.runs {
		text := p.logText()
		for _, bad := range []string{"panic:", "storage failed"} {
			if strings.Contains(text, bad) {
				t.Errorf("run %d (%s) logged %q:\n%s", p.n, p.end, bad, tail(text))
			}
		}
	}
}

func tail(s string) string {
	if len(s) > 6000 {
		return "…" + s[len(s)-6000:]
	}
	return s
}
