// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// TestQuickStartConsole runs config/default.yaml as written (what `make run` runs) on a home
// holding the Claude testdata, and checks what the README's quick start promises: the console
// says what was found and, once the history is read, sums it up (sessions, turns, tool calls,
// failed ones, tokens), in lines that start with their message; no debug exporter output; and
// one trace per turn in _out/traces.jsonl.
func TestQuickStartConsole(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds the collector (skipped with -short)")
	}
	root := repoRoot(t)
	bin := collectorBinary(t)
	exp := expectedFromGoldens(t, root)
	wantTurns := 0
	for _, n := range exp.turns {
		wantTurns += n
	}

	home := t.TempDir()
	cases, err := filepath.Glob(filepath.Join(root, "testdata", "claude_code", "*", "events.yaml"))
	require.NoError(t, err)
	files := 0
	for _, c := range cases {
		dir := filepath.Dir(c)
		copyTree(t, dir, filepath.Join(home, ".claude", "projects", "-home-me-"+filepath.Base(dir)),
			func(p string) bool {
				if strings.HasSuffix(p, ".jsonl") {
					files++
					return true
				}
				return false
			})
	}
	out := t.TempDir()
	p := start(t, "collector", bin, []string{
		"HOME=" + home, "CLAUDE_CONFIG_DIR=", "XDG_DATA_HOME=", "CODEX_HOME=", "PI_CODING_AGENT_DIR=", "COPILOT_HOME=",
		"AGENTOTEL_STATE_DIR=" + filepath.Join(t.TempDir(), "state"),
		"AGENTOTEL_OUT_DIR=" + out,
	}, "--config", filepath.Join(root, "config", "default.yaml"))

	summary := regexp.MustCompile(`\tinfo\tclaude_code: history read in \S+: (\d+) sessions, (\d+) turns, (\d+) tool calls \((\d+) failed\), ([\d,]+) tokens\t`)
	waitFor(t, 60*time.Second, "the summary line", func() (bool, string) {
		return summary.MatchString(p.LogText()) || p.Exited(), "not yet"
	})
	require.False(t, p.Exited(), p.LogText())
	console := p.LogText()
	assert.Contains(t, console, fmt.Sprintf("\tinfo\tclaude_code: found %d session files (", files))
	m := summary.FindStringSubmatch(console)
	sessions := map[string]bool{}
	for _, c := range cases {
		logs, err := golden.ReadLogs(c)
		require.NoError(t, err)
		evs, _ := agentevent.DecodeLogs(logs)
		for _, ev := range evs {
			if ev.Unparsed == "" {
				sessions[ev.SessionID] = true
			}
		}
	}
	assert.Equal(t, fmt.Sprint(len(sessions)), m[1], "sessions")
	assert.Equal(t, fmt.Sprint(wantTurns), m[2], "turns")
	assert.NotContains(t, console, "otelcol.component.id\": \"debug\"", "no debug exporter on the console")
	assert.NotContains(t, console, "Started watching file", "no line per file")
	assert.NotContains(t, console, ".go:", "no source locations before the messages")

	// The traces: one root per turn in the OTLP-JSON file.
	waitFor(t, 60*time.Second, fmt.Sprintf("%d turn roots in traces.jsonl", wantTurns), func() (bool, string) {
		n := turnRoots(t, filepath.Join(out, "traces.jsonl"))
		return n >= wantTurns, fmt.Sprintf("%d roots", n)
	})
}

// turnRoots counts the invoke_agent roots in an OTLP-JSON file written by the file exporter.
func turnRoots(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var u ptrace.JSONUnmarshaler
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		td, err := u.UnmarshalTraces(sc.Bytes())
		if err != nil {
			continue // a line being written
		}
		for i := range td.ResourceSpans().Len() {
			sss := td.ResourceSpans().At(i).ScopeSpans()
			for j := range sss.Len() {
				spans := sss.At(j).Spans()
				for k := range spans.Len() {
					if sp := spans.At(k); sp.ParentSpanID().IsEmpty() && strings.HasPrefix(sp.Name(), "invoke_agent ") {
						n++
					}
				}
			}
		}
	}
	return n
}
