// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// session writes a live Claude Code session: rows stamped around now, so turns stay open until
// the connector's idle timeout (2s in testdata/restart.yaml) passes.
type session struct {
	id   string
	cwd  string
	rows [][]byte
	n    int
}

func (s *session) row(typ, parent, message, extra string) string {
	s.n++
	uuid := fmt.Sprintf("00000000-0000-4000-8000-%012d", s.n)
	ts := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	p := "null"
	if parent != "" {
		p = fmt.Sprintf("%q", parent)
	}
	line := fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"type":%q,"message":%s,%s"uuid":%q,"timestamp":%q,"userType":"external","entrypoint":"cli","cwd":%q,"sessionId":%q,"version":"2.1.152","gitBranch":"main"}`,
		p, typ, message, extra, uuid, ts, s.cwd, s.id)
	s.rows = append(s.rows, []byte(line))
	return uuid
}

func (s *session) prompt(parent, text string) string {
	return s.row("user", parent, fmt.Sprintf(`{"role":"user","content":%q}`, text), "")
}

func (s *session) answer(parent, msgID, text string) string {
	return s.row("assistant", parent, fmt.Sprintf(`{"model":"claude-opus-4-7","id":%q,"type":"message","role":"assistant","content":[{"type":"text","text":%q}],"stop_reason":"end_turn","usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":20}}`, msgID, text), `"requestId":"req_`+msgID+`",`)
}

func (s *session) bash(parent, msgID, callID, cmd string) string {
	return s.row("assistant", parent, fmt.Sprintf(`{"model":"claude-opus-4-7","id":%q,"type":"message","role":"assistant","content":[{"type":"tool_use","id":%q,"name":"Bash","input":{"command":%q}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":900,"output_tokens":12}}`, msgID, callID, cmd), `"requestId":"req_`+msgID+`",`)
}

func (s *session) bashResult(parent, callID string) string {
	return s.row("user", parent, fmt.Sprintf(`{"role":"user","content":[{"tool_use_id":%q,"type":"tool_result","content":"ok","is_error":false}]}`, callID),
		`"toolUseResult":{"stdout":"ok","stderr":"","interrupted":false,"isImage":false},`)
}

// flush appends the rows written since the last flush to the file.
func (s *session) flush(t *testing.T, path string, from int) int {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	for _, r := range s.rows[from:] {
		_, err = f.Write(append(r, '\n'))
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
	return len(s.rows)
}

// readOTLPJSON decodes a file exporter's output: one OTLP-JSON object per line.
func readOTLPJSON[T any](t *testing.T, path string, unmarshal func([]byte) (T, error)) []T {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	// A last line without its newline is one the exporter is still
	// writing (the collector runs on): it is read at the next look.
	if i := bytes.LastIndexByte(b, '\n'); i < len(b)-1 {
		b = b[:i+1]
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		v, err := unmarshal(sc.Bytes())
		require.NoError(t, err)
		out = append(out, v)
	}
	return out
}

func eventIDs(t *testing.T, dirs ...string) []string {
	var ids []string
	var u plog.JSONUnmarshaler
	for _, d := range dirs {
		for _, logs := range readOTLPJSON(t, filepath.Join(d, "events.jsonl"), u.UnmarshalLogs) {
			evs, skipped := agentevent.DecodeLogs(logs)
			require.Zero(t, skipped)
			for i := range evs {
				ids = append(ids, evs[i].EventID)
			}
		}
	}
	return ids
}

type spanInfo struct {
	trace, id, parent, name string
}

func spans(t *testing.T, dirs ...string) []spanInfo {
	var out []spanInfo
	var u ptrace.JSONUnmarshaler
	for _, d := range dirs {
		for _, td := range readOTLPJSON(t, filepath.Join(d, "traces.jsonl"), u.UnmarshalTraces) {
			for i := 0; i < td.ResourceSpans().Len(); i++ {
				ss := td.ResourceSpans().At(i).ScopeSpans()
				for j := 0; j < ss.Len(); j++ {
					for k := 0; k < ss.At(j).Spans().Len(); k++ {
						sp := ss.At(j).Spans().At(k)
						p := ""
						if !sp.ParentSpanID().IsEmpty() {
							p = sp.ParentSpanID().String()
						}
						out = append(out, spanInfo{sp.TraceID().String(), sp.SpanID().String(), p, sp.Name()})
					}
				}
			}
		}
	}
	return out
}

// TestCollectorRestartMidFileMidTurn stops the real collector (SIGTERM) while a session file is
// half read and a turn is open, appends the rest, starts it again on the same file_storage, and
// checks that no event is emitted twice or lost and that every turn is exactly one trace with one
// root.
func TestCollectorRestartMidFileMidTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the collector (skipped with -short)")
	}
	bin := collectorBinary(t)
	root := t.TempDir()
	logs, state := filepath.Join(root, "logs", "-home-u-proj"), filepath.Join(root, "state")
	out1, out2 := filepath.Join(root, "out1"), filepath.Join(root, "out2")
	for _, d := range []string{logs, state, out1, out2} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	file := filepath.Join(logs, "3c7d5a0e-1111-4222-8333-444455556666.jsonl")
	s := &session{id: "3c7d5a0e-1111-4222-8333-444455556666", cwd: "/home/u/proj"}
	config := filepath.Join(repoRoot(t), "tests", "e2e", "testdata", "restart.yaml")
	env := func(out string) []string {
		return []string{"STATE_DIR=" + state, "LOGS_DIR=" + filepath.Dir(logs), "OUT_DIR=" + out}
	}

	// Turn 1 complete; turn 2 prompted, its Bash call still running.
	p1 := s.prompt("", "list the files")
	a1 := s.answer(p1, "msg_a1", "Here they are.")
	p2 := s.prompt(a1, "run the tests")
	c2 := s.bash(p2, "msg_a2", "toolu_b2", "go test ./...")
	written := s.flush(t, file, 0)

	run1 := start(t, "collector-run1", bin, env(out1), "--config", config)
	waitFor(t, 60*time.Second, "run 1 to emit the first 4 rows' events", func() (bool, string) {
		n := len(eventIDs(t, out1))
		return n >= 4, fmt.Sprintf("%d events", n)
	})
	waitFor(t, 30*time.Second, "turn 1's trace (closed by the next prompt)", func() (bool, string) {
		n := len(spans(t, out1))
		return n >= 2, fmt.Sprintf("%d spans", n)
	})
	run1.Stop(t)
	require.Contains(t, run1.LogText(), "Shutdown complete", "run 1 did not shut down cleanly")

	// While the collector is down: turn 2 finishes, turn 3 comes and goes.
	r2 := s.bashResult(c2, "toolu_b2")
	a2 := s.answer(r2, "msg_a3", "All tests pass.")
	p3 := s.prompt(a2, "thanks")
	s.answer(p3, "msg_a4", "You're welcome.")
	s.flush(t, file, written)

	run2 := start(t, "collector-run2", bin, env(out2), "--config", config)
	waitFor(t, 60*time.Second, "three turn roots across both runs", func() (bool, string) {
		roots := 0
		for _, sp := range spans(t, out1, out2) {
			if sp.parent == "" {
				roots++
			}
		}
		return roots >= 3, fmt.Sprintf("%d roots", roots)
	})
	run2.Stop(t)

	ids := eventIDs(t, out1, out2)
	seen := map[string]int{}
	for _, id := range ids {
		seen[id]++
	}
	for id, n := range seen {
		assert.Equal(t, 1, n, "event %s emitted %d times", id, n)
	}
	// 8 rows, each one event (prompt, answer, prompt, tool_call, tool_result, answer, prompt, answer).
	assert.Len(t, seen, 8, "events lost or invented")

	all := spans(t, out1, out2)
	byTrace := map[string][]spanInfo{}
	spanSeen := map[string]int{}
	for _, sp := range all {
		byTrace[sp.trace] = append(byTrace[sp.trace], sp)
		spanSeen[sp.trace+"/"+sp.id]++
	}
	for id, n := range spanSeen {
		assert.Equal(t, 1, n, "span %s emitted %d times", id, n)
	}
	require.Len(t, byTrace, 3, "one trace per turn")
	var withTool int
	for trace, sps := range byTrace {
		roots := 0
		for _, sp := range sps {
			if sp.parent == "" {
				roots++
				assert.Equal(t, "invoke_agent claude-code", sp.name)
			}
			if sp.name == "execute_tool Bash" {
				withTool++
			}
		}
		assert.Equal(t, 1, roots, "trace %s has %d roots: %v", trace, roots, sps)
	}
	assert.Equal(t, 1, withTool, "the Bash call of turn 2 is one span")
}
