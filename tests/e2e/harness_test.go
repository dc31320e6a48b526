// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package e2e runs the ocb-built otelcol-agentotel binary as a user would, against a real Jaeger
// built from source, and asserts what arrives through Jaeger's HTTP API.
package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/tests/testenv"
)

// The shared harness, under the names the tests here use.
var (
	repoRoot        = testenv.RepoRoot
	collectorBinary = testenv.CollectorBinary
	start           = testenv.Start
	copyTree        = testenv.CopyTree
	waitFor         = testenv.WaitFor
)

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

// jaeger is a running Jaeger with its ports.
type jaeger struct {
	otlpGRPC int
	query    int
}

func startJaeger(t *testing.T) *jaeger {
	t.Helper()
	// A port picked free can be taken by another process before Jaeger binds it: try again
	// with new ports when Jaeger exits at start.
	for attempt := 1; ; attempt++ {
		ports := testenv.FreePorts(t, 4)
		j := &jaeger{otlpGRPC: ports[0], query: ports[1]}
		env := []string{
			fmt.Sprintf("JAEGER_OTLP_GRPC_PORT=%d", ports[0]),
			fmt.Sprintf("JAEGER_QUERY_HTTP_PORT=%d", ports[1]),
			fmt.Sprintf("JAEGER_OTLP_HTTP_PORT=%d", ports[2]),
			fmt.Sprintf("JAEGER_QUERY_GRPC_PORT=%d", ports[3]),
		}
		p := start(t, fmt.Sprintf("jaeger-%d", attempt), jaegerBinary(t), env, "--config", filepath.Join(repoRoot(t), "config", "jaeger-server.yaml"))
		up := false
		waitFor(t, 60*time.Second, "jaeger's query API", func() (bool, string) {
			if p.Exited() {
				return true, "exited"
			}
			resp, err := http.Get(j.url("/api/services"))
			if err != nil {
				return false, err.Error()
			}
			resp.Body.Close()
			up = resp.StatusCode == http.StatusOK
			return up, resp.Status
		})
		if up {
			return j
		}
		require.Less(t, attempt, 3, "jaeger did not start: %s", p.LogText())
		t.Logf("jaeger exited at start (attempt %d), retrying with other ports: %s", attempt, p.LogText())
	}
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
	resp, err := http.Get(u) //nolint:gosec // G107: the Jaeger this test started
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
