// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
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
	"github.com/agentotel/agentotel/internal/testhome"
)

// TestQuickStartConsole runs config/default.yaml as written (what `make run` runs) on a home
// holding the Claude testdata and one session whose command carries credentials, and checks what
// the README's quick start promises: the console says what was found and, once the history is
// read, sums it up (sessions, turns, tool calls, failed ones, tokens), in lines that start with
// their message; no debug exporter output; one trace per turn in _out/traces.jsonl; and the
// credentials nowhere in it — the tool span's agent.tool.command and the turn's
// agent.turn.commands carry them redacted.
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
	// A session of its own (old timestamps: history) whose Bash call carries credentials.
	const (
		secretCmd   = `curl -fsS -H "Authorization: Bearer ghp_16C7e42F292c6912E7710c838347Ae178B4a" https://api.github.com/user && PGPASSWORD=hunter2 psql -h db -c 'select 1'`
		redactedCmd = `curl -fsS -H "Authorization: Bearer [REDACTED]" https://api.github.com/user && PGPASSWORD=[REDACTED] psql -h db -c 'select 1'`
	)
	s := &session{id: "5ec2e75a-0000-4000-8000-000000000001", cwd: "/home/me/deploy"}
	u := s.prompt("", "check the deploy credentials")
	b := s.bash(u, "msg_q1", "toolu_q1", secretCmd)
	r := s.bashResult(b, "toolu_q1")
	s.answer(r, "msg_q2", "All good.")
	ts := regexp.MustCompile(`"timestamp":"[^"]+"`)
	for i := range s.rows {
		s.rows[i] = ts.ReplaceAll(s.rows[i], []byte(fmt.Sprintf(`"timestamp":"2025-06-01T10:00:0%d.000Z"`, i)))
	}
	secretDir := filepath.Join(home, ".claude", "projects", "-home-me-deploy")
	require.NoError(t, os.MkdirAll(secretDir, 0o755))
	s.flush(t, filepath.Join(secretDir, s.id+".jsonl"), 0)
	files++
	wantTurns++

	out := t.TempDir()
	p := start(t, "collector", bin, append(testhome.Env(home),
		"AGENTOTEL_STATE_DIR="+filepath.Join(t.TempDir(), "state"),
		"AGENTOTEL_OUT_DIR="+out,
	), "--config", filepath.Join(root, "config", "default.yaml"))

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
		logs, errRead := golden.ReadLogs(c)
		require.NoError(t, errRead)
		evs, _ := agentevent.DecodeLogs(logs)
		for _, ev := range evs {
			if ev.Unparsed == "" {
				sessions[ev.SessionID] = true
			}
		}
	}
	assert.Equal(t, fmt.Sprint(len(sessions)+1), m[1], "sessions, the one with credentials included")
	assert.Equal(t, fmt.Sprint(wantTurns), m[2], "turns")
	assert.NotContains(t, console, "otelcol.component.id\": \"debug\"", "no debug exporter on the console")
	assert.NotContains(t, console, "Started watching file", "no line per file")
	assert.NotContains(t, console, ".go:", "no source locations before the messages")

	// The traces: one root per turn in the OTLP-JSON file.
	tracesPath := filepath.Join(out, "traces.jsonl")
	waitFor(t, 60*time.Second, fmt.Sprintf("%d turn roots in traces.jsonl", wantTurns), func() (bool, string) {
		n := turnRoots(t, tracesPath)
		return n >= wantTurns, fmt.Sprintf("%d roots", n)
	})

	// Secrets never leave by default.
	raw, err := os.ReadFile(tracesPath)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "ghp_16C7e42F")
	assert.NotContains(t, string(raw), "hunter2")
	var toolCommand, turnCommands string
	for _, td := range readOTLPJSON(t, tracesPath, (&ptrace.JSONUnmarshaler{}).UnmarshalTraces) {
		for i := range td.ResourceSpans().Len() {
			sss := td.ResourceSpans().At(i).ScopeSpans()
			for j := range sss.Len() {
				spans := sss.At(j).Spans()
				for k := range spans.Len() {
					attrs := spans.At(k).Attributes()
					if v, ok := attrs.Get("gen_ai.tool.call.id"); ok && v.Str() == "toolu_q1" {
						c, _ := attrs.Get("agent.tool.command")
						toolCommand = c.Str()
					}
					if v, ok := attrs.Get("gen_ai.conversation.id"); ok && v.Str() == s.id {
						if c, ok := attrs.Get("agent.turn.commands"); ok {
							turnCommands = c.Str()
						}
					}
				}
			}
		}
	}
	assert.Equal(t, redactedCmd, toolCommand, "the tool span's command")
	var cmds []struct {
		Command string `json:"command"`
	}
	require.NoError(t, json.Unmarshal([]byte(turnCommands), &cmds), "agent.turn.commands: %q", turnCommands)
	require.Len(t, cmds, 1)
	assert.Equal(t, redactedCmd, cmds[0].Command, "the turn's command list")
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
