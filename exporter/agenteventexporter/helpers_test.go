// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/exporter/agenteventexporter/internal/metadata"
	"github.com/agentotel/agentotel/exporter/agenteventexporter/schemas"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// farFuture is the tests' wall clock: every fixture is long idle by then.
var farFuture = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// t0 is when the hand-written test sessions start.
var t0 = time.Date(2025, 11, 2, 10, 0, 0, 0, time.UTC)

func testConfig(format Format, dir string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Format = format
	cfg.Directory = dir
	return cfg
}

// newTestExporter builds and starts an exporter whose clock is *now.
func newTestExporter(t *testing.T, cfg *Config, now *time.Time) *agentEventExporter {
	t.Helper()
	return newTestExporterWithSettings(t, cfg, now, exportertest.NewNopSettings(metadata.Type))
}

func newTestExporterWithSettings(t *testing.T, cfg *Config, now *time.Time, set exporter.Settings) *agentEventExporter {
	t.Helper()
	require.NoError(t, cfg.Validate())
	e, err := newExporter(set, cfg)
	require.NoError(t, err)
	e.now = func() time.Time { return *now }
	require.NoError(t, e.start(t.Context(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, e.shutdown(context.Background())) })
	return e
}

// readTree returns every session file under dir by its slash-separated
// relative path (not the commit records beside them).
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path) //nolint:gosec // G122: dir is the test's own output folder or its golden folder
		files[filepath.ToSlash(rel)] = b
		return err
	}))
	return files
}

// requireSchema validates every line of every file against the format's schema.
func requireSchema(t *testing.T, format Format, files map[string][]byte) int {
	t.Helper()
	total := 0
	for name, b := range files {
		n, err := schemas.ValidateLines(string(format), b)
		require.NoError(t, err, "%s: %s", name, firstLines(b, n))
		total += n
	}
	return total
}

func firstLines(b []byte, n int) string {
	lines := bytes.Split(b, []byte("\n"))
	if n > 0 && n <= len(lines) {
		return string(lines[n-1])
	}
	return ""
}

// decodeLines reads a JSON Lines file into generic values.
func decodeLines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range bytes.SplitSeq(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var v map[string]any
		require.NoError(t, json.Unmarshal(line, &v), "%s", line)
		out = append(out, v)
	}
	return out
}

// session builds hand-written events of one Claude Code session.
type testSession struct {
	id     string
	prompt string // the current turn's prompt
	seq    int64
}

func newTestSession(id string) *testSession { return &testSession{id: id} }

func (s *testSession) event(typ agentevent.EventType, id string, minute int) agentevent.Event {
	s.seq++
	ev := agentevent.Event{
		Source:       agentevent.Source("claude_code"),
		SessionID:    s.id,
		EventID:      id,
		Type:         typ,
		Timestamp:    t0.Add(time.Duration(minute) * time.Minute),
		Sequence:     s.seq,
		AgentVersion: "2.1.0",
		ProjectRoot:  "/home/dev/src/app",
		LogFile:      s.id + ".jsonl",
		LogLine:      s.seq,
	}
	if typ == agentevent.TypeUserMessage {
		s.prompt = id
	} else {
		ev.ParentEventID = s.prompt
	}
	agentevent.Normalize(&ev)
	ev.ProjectHash = agentevent.ProjectHash(ev.ProjectRoot)
	return ev
}

func (s *testSession) userPrompt(id, text string, minute int) agentevent.Event {
	ev := s.event(agentevent.TypeUserMessage, id, minute)
	ev.Channel, ev.Text = agentevent.ChannelChat, text
	return ev
}

func (s *testSession) answer(id, response, text string, minute int) agentevent.Event {
	ev := s.event(agentevent.TypeAssistantMessage, id, minute)
	ev.Channel, ev.Text, ev.ResponseID, ev.Model, ev.Provider = agentevent.ChannelChat, text, response, "claude-opus-4-7", "anthropic"
	ev.TokensInput, ev.TokensOutput, ev.TokensCached, ev.TokensCacheCreation = agentevent.Int(1200), agentevent.Int(80), agentevent.Int(1000), agentevent.Int(150)
	return ev
}

func (s *testSession) call(id, response, callID, tool, input string, minute int) agentevent.Event {
	ev := s.event(agentevent.TypeToolCall, id, minute)
	ev.Channel, ev.Text, ev.ResponseID, ev.Model = agentevent.ChannelChat, input, response, "claude-opus-4-7"
	ev.ToolName, ev.ToolCallID = tool, callID
	return ev
}

func (s *testSession) result(id string, call agentevent.Event, output string, minute int) agentevent.Event {
	ev := s.event(agentevent.TypeToolResult, id, minute)
	ev.Channel, ev.Text = call.Channel, output
	ev.ToolName, ev.ToolCallID, ev.ToolStatus = call.ToolName, call.ToolCallID, agentevent.ToolSuccess
	ev.FilePath, ev.FileOp = call.FilePath, call.FileOp
	return ev
}

func writeFile(path, content string) error {
	return os.WriteFile(path, []byte(content), 0o600) //nolint:gosec // G703: a path in the test's temporary folder
}

func logsOf(events ...agentevent.Event) plog.Logs {
	return agentevent.EncodeLogs(events, "test-host")
}
