// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/testhome"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// TestExportOpenCallOfRealThread runs config/export.yaml over the real Amp threads of the fixture
// corpus (read in place, copied into a scratch home), one of which ends with a tool call that was
// never answered: in agtrace_v1 every tool_call line has a status — the call's status when the
// line was written, in_progress — and the unanswered call's line says in_progress, with no
// tool_result after it.
func TestExportOpenCallOfRealThread(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds the collector (skipped with -short)")
	}
	root := repoRoot(t)
	roots := fixtureRoots(t)
	vendortest.SkipIfAbsent(t, filepath.Join(roots[0], "amp", "threads"))
	home := t.TempDir()
	for _, fixtures := range roots {
		threads := filepath.Join(fixtures, "amp", "threads")
		if _, err := os.Stat(threads); os.IsNotExist(err) {
			continue
		}
		copyTree(t, threads, filepath.Join(home, ".local", "share", "amp", "threads"),
			func(p string) bool { return strings.HasSuffix(p, ".json") })
	}

	bin := collectorBinary(t)
	out := filepath.Join(t.TempDir(), "export")
	env := append(testhome.Env(home),
		"AGENTOTEL_STATE_DIR="+filepath.Join(t.TempDir(), "state"),
		"AGENTOTEL_EXPORT_DIR="+out,
	)
	type line struct {
		Type   string  `json:"event_type"`
		CallID *string `json:"tool_call_id"`
		Status *string `json:"tool_status"`
	}
	var calls, results map[string]line
	p := start(t, "collector", bin, env, "--config", filepath.Join(root, "config", "export.yaml"))
	waitFor(t, 90*time.Second, "an unanswered tool call in agtrace_v1", func() (bool, string) {
		calls, results = map[string]line{}, map[string]line{}
		files, _ := filepath.Glob(filepath.Join(out, exportDirs["agtrace_v1"], "amp", "*.jsonl"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			for l := range bytes.SplitSeq(b, []byte("\n")) {
				var ev line
				if json.Unmarshal(l, &ev) != nil || ev.CallID == nil {
					continue
				}
				switch ev.Type {
				case "tool_call":
					calls[*ev.CallID] = ev
				case "tool_result":
					results[*ev.CallID] = ev
				}
			}
		}
		return len(calls) > len(results), fmt.Sprintf("%d calls, %d results", len(calls), len(results))
	})
	p.Stop(t)

	open := 0
	for id, c := range calls {
		require.NotNil(t, c.Status, "tool_call %s has no tool_status", id)
		if _, answered := results[id]; !answered {
			open++
			assert.Equal(t, "in_progress", *c.Status, "unanswered call %s", id)
		}
	}
	assert.Positive(t, open, "the corpus holds an unanswered call")
}
