// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/exporter/agenteventexporter/schemas"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/testhome"
)

// TestCopilotCLITracesInJaeger: the collector, with config/jaeger.yaml as written, reads the
// Copilot CLI testdata at the CLI's default location (~/.copilot: session-state/<id>/events.jsonl
// with workspace.yaml, history-session-state/*.json) and Jaeger shows service copilot-cli with
// one trace per turn, the failed commands as Error spans with their exit codes, and the subagent
// a task call ran nested under that call.
func TestCopilotCLITracesInJaeger(t *testing.T) {
	subagent := nestedUnder("invoke_agent explore", "the explore subagent's span",
		"execute_tool task", "under the task call that ran it", nil)
	testJSONLAgentInJaeger(t, "copilot_cli", "copilot-cli", subagent, func(home string, _ int, c string) {
		// Each case is a ~/.copilot tree; session ids differ between cases.
		copyTree(t, c, filepath.Join(home, ".copilot"), func(p string) bool {
			return strings.Contains(p, "session-state")
		})
	})
}

// TestAmpTracesInJaeger: the same for Amp, its threads at ~/.local/share/amp/threads (files
// rewritten in place, read as snapshots).
func TestAmpTracesInJaeger(t *testing.T) {
	testJSONLAgentInJaeger(t, "amp", "amp", nil, func(home string, _ int, c string) {
		copyTree(t, filepath.Join(c, "threads"), filepath.Join(home, ".local", "share", "amp", "threads"),
			func(p string) bool { return strings.HasSuffix(p, ".json") })
	})
}

// TestExportCopilotAndAmp runs config/export.yaml over the Copilot CLI and Amp testdata at their
// default locations: every event in agtrace_v1 (source copilot_cli / amp, an extension of the
// agtrace enum), and every line of all four formats valid against its schema, in files grouped
// under copilot-cli/ and amp/.
func TestExportCopilotAndAmp(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds the collector (skipped with -short)")
	}
	root := repoRoot(t)
	home := t.TempDir()
	events := map[string]int{}
	for _, agent := range []string{"copilot_cli", "amp"} {
		cases, err := filepath.Glob(filepath.Join(root, "testdata", agent, "*", "events.yaml"))
		require.NoError(t, err)
		for _, f := range cases {
			c := filepath.Dir(f)
			if agent == "copilot_cli" {
				copyTree(t, c, filepath.Join(home, ".copilot"), func(p string) bool { return strings.Contains(p, "session-state") })
			} else {
				copyTree(t, filepath.Join(c, "threads"), filepath.Join(home, ".local", "share", "amp", "threads"),
					func(p string) bool { return strings.HasSuffix(p, ".json") })
			}
			logs, err := golden.ReadLogs(f)
			require.NoError(t, err)
			evs, _ := agentevent.DecodeLogs(logs)
			for _, ev := range evs {
				if unterminated(t, c, ev) {
					continue // a last line still being written is not read (yet)
				}
				events[ev.SessionID]++
			}
		}
	}

	bin := collectorBinary(t)
	out := filepath.Join(t.TempDir(), "export")
	env := append(testhome.Env(home),
		"AGENTOTEL_STATE_DIR="+filepath.Join(t.TempDir(), "state"),
		"AGENTOTEL_EXPORT_DIR="+out,
	)
	p := start(t, "collector", bin, env, "--config", filepath.Join(root, "config", "export.yaml"))
	read := func(format string) (map[string][][]byte, map[string]bool) {
		files, agents := map[string][][]byte{}, map[string]bool{}
		dir := filepath.Join(out, exportDirs[format])
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			return files, agents
		}
		require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
				return err
			}
			agents[filepath.Base(filepath.Dir(path))] = true
			b, err := os.ReadFile(path) //nolint:gosec // G122: the collector's output folder of this test
			if err != nil {
				return err
			}
			for l := range bytes.SplitSeq(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
				if len(l) > 0 {
					files[strings.TrimSuffix(filepath.Base(path), ".jsonl")] = append(files[strings.TrimSuffix(filepath.Base(path), ".jsonl")], l)
				}
			}
			return nil
		}))
		return files, agents
	}
	waitFor(t, 90*time.Second, "every event in agtrace_v1 and a turn of each agent in canonical_task", func() (bool, string) {
		agtrace, _ := read("agtrace_v1")
		_, canonical := read("canonical_task")
		got := lineCounts(agtrace)
		return assert.ObjectsAreEqual(events, got) && canonical["copilot-cli"] && canonical["amp"],
			fmt.Sprintf("agtrace %v of %v; canonical agents %v", got, events, canonical)
	})
	p.Stop(t)

	for format := range exportDirs {
		files, agents := read(format)
		assert.Equal(t, map[string]bool{"copilot-cli": true, "amp": true}, agents, format)
		for session, lines := range files {
			for i, line := range lines {
				require.NoError(t, schemas.Validate(format, line), "%s %s line %d: %s", format, session, i+1, line)
			}
		}
	}
	agtrace, _ := read("agtrace_v1")
	sources := map[string]bool{}
	for _, lines := range agtrace {
		for _, l := range lines {
			var ev struct {
				Source string `json:"source"`
			}
			require.NoError(t, json.Unmarshal(l, &ev))
			sources[ev.Source] = true
		}
	}
	assert.Equal(t, map[string]bool{"copilot_cli": true, "amp": true}, sources)
}

// unterminated reports whether ev comes from the last line of a JSONL file that has no "\n" at
// its end: the receiver waits for the line to be finished.
func unterminated(t *testing.T, caseDir string, ev agentevent.Event) bool {
	if !strings.HasSuffix(ev.LogFile, ".jsonl") {
		return false
	}
	b, err := os.ReadFile(filepath.Join(caseDir, filepath.FromSlash(ev.LogFile)))
	require.NoError(t, err)
	return !bytes.HasSuffix(b, []byte("\n")) && ev.LogLine == int64(bytes.Count(b, []byte("\n"))+1)
}
