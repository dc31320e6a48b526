// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package e2e runs the ocb-built otelcol-agentotel binary as a user would, against a real Jaeger
// built from source, and asserts what arrives through Jaeger's HTTP API.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// repoRoot is the folder holding go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "go.mod not found above the test")
		dir = parent
	}
}

// collectorBinary is the ocb-built collector: $AGENTOTEL_COLLECTOR (set by `make test`), else
// built here with `make build`.
func collectorBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("AGENTOTEL_COLLECTOR"); bin != "" {
		return bin
	}
	root := repoRoot(t)
	cmd := exec.Command("make", "build")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "make build: %s", out)
	return filepath.Join(root, "_build", "otelcol-agentotel")
}

// jaegerBinary is Jaeger v1.76.0 built from its module source: $AGENTOTEL_JAEGER (set by
// `make test`), else built (or taken from the cache) by scripts/ensure-jaeger.sh.
func jaegerBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("AGENTOTEL_JAEGER"); bin != "" {
		return bin
	}
	cmd := exec.Command("scripts/ensure-jaeger.sh")
	cmd.Dir = repoRoot(t)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// freePort returns a loopback TCP port nobody listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// process is a server the test started; it is stopped by PID at cleanup.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// start runs bin in its own process group with env added to the test's environment; its output
// goes to a log file that is printed when the test fails.
func start(t *testing.T, name, bin string, env []string, args ...string) *process {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logFile.Close(); close(p.done) }()
	t.Cleanup(func() {
		p.stop(t)
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

// stop sends SIGTERM (graceful shutdown: the collector saves its state), then SIGKILL after 20s.
func (p *process) stop(t *testing.T) {
	select {
	case <-p.done:
		return
	default:
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

func (p *process) logText() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// jaeger is a running Jaeger with its ports.
type jaeger struct {
	otlpGRPC int
	query    int
}

func startJaeger(t *testing.T) *jaeger {
	t.Helper()
	j := &jaeger{otlpGRPC: freePort(t), query: freePort(t)}
	env := []string{
		fmt.Sprintf("JAEGER_OTLP_GRPC_PORT=%d", j.otlpGRPC),
		fmt.Sprintf("JAEGER_OTLP_HTTP_PORT=%d", freePort(t)),
		fmt.Sprintf("JAEGER_QUERY_HTTP_PORT=%d", j.query),
		fmt.Sprintf("JAEGER_QUERY_GRPC_PORT=%d", freePort(t)),
	}
	p := start(t, "jaeger", jaegerBinary(t), env, "--config", filepath.Join(repoRoot(t), "config", "jaeger-server.yaml"))
	require.Eventually(t, func() bool {
		select {
		case <-p.done:
			t.Fatalf("jaeger exited: %s", p.logText())
		default:
		}
		resp, err := http.Get(j.url("/api/services"))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 60*time.Second, 200*time.Millisecond, "jaeger query API did not come up")
	return j
}

func (j *jaeger) url(path string) string { return fmt.Sprintf("http://127.0.0.1:%d%s", j.query, path) }

// jTrace is the part of Jaeger's /api/traces answer the tests read.
type jTrace struct {
	TraceID   string              `json:"traceID"`
	Spans     []jSpan             `json:"spans"`
	Processes map[string]jProcess `json:"processes"`
}

type jSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	StartTime int64  `json:"startTime"`
	Duration  int64  `json:"duration"`
	Tags      []jTag `json:"tags"`
	Logs      []struct {
		Fields []jTag `json:"fields"`
	} `json:"logs"`
	ProcessID string `json:"processID"`
}

type jTag struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type jProcess struct {
	ServiceName string `json:"serviceName"`
	Tags        []jTag `json:"tags"`
}

func (s jSpan) tag(key string) (any, bool) {
	for _, tg := range s.Tags {
		if tg.Key == key {
			return tg.Value, true
		}
	}
	return nil, false
}

func (s jSpan) tagString(key string) string {
	v, _ := s.tag(key)
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// parent is the span id this span is a child of ("" for a root).
func (s jSpan) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" && r.TraceID == s.TraceID {
			return r.SpanID
		}
	}
	return ""
}

// traces asks Jaeger for every trace of a service since the epoch (the fixtures are old).
func (j *jaeger) traces(t *testing.T, service string) []jTrace {
	t.Helper()
	u := j.url(fmt.Sprintf("/api/traces?service=%s&limit=10000&start=1&end=%d&lookback=custom",
		service, time.Now().Add(time.Hour).UnixMicro()))
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if resp.StatusCode == http.StatusNotFound {
		return nil // service not known yet
	}
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", u, body)
	var out struct {
		Data []jTrace `json:"data"`
	}
	require.NoError(t, json.Unmarshal(body, &out), "%s", body)
	return out.Data
}

// copyTree copies the files under src whose name matches keep into dst, keeping the layout.
func copyTree(t *testing.T, src, dst string, keep func(path string) bool) {
	t.Helper()
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
		return os.WriteFile(target, b, 0o644)
	}))
}

// waitFor polls cond until it returns true or the deadline passes, reporting the last reason.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	last := ""
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
