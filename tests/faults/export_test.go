// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Our own exporter, agent_event, runs beside the file exporters (testdata/collector.yaml): every
// event as an agtrace_v1 line, every turn as a canonical_task line, in one directory that all the
// runs of a deployment share (export/, unlike the file exporters' out/run-NNN/) — the runs append to
// the same session files, as a restarted collector does. Unlike the file exporters, it must write
// every event and turn exactly once through the kills: no redelivery is tolerated, no torn line,
// and every line the same, byte for byte, as the uninterrupted run's.
const (
	signalAgtrace   = "agtrace line"
	signalCanonical = "canonical line"
)

// exportFormats are the agent_event exporters' folders under export/, with the line field that
// names a line: agtrace_v1's event_id (with session_id), canonical_task's id (a turn).
var exportFormats = []struct {
	signal, folder, id, session string
}{
	{signalAgtrace, "agtrace", "event_id", "session_id"},
	{signalCanonical, "canonical", "id", ""},
}

// exportLine is one line of an agent_event file.
type exportLine struct {
	file string // agent/session file, relative to the format's folder
	line int    // from 0
	text string
}

// exports is what a deployment's agent_event exporters wrote, read once its last run is over.
type exports struct {
	lines map[string]map[string][]exportLine // signal → agent/session/id → copies
	torn  []string
	count map[string]int
}

// exportsDir is where a deployment's agent_event exporters write.
func (d *deployment) exportsDir() string { return filepath.Join(d.root, "export") }

// readExports reads every agent_event file of the deployment. A file must end with a newline and
// every line must be JSON with its id: a line cut short would be a torn write left in place.
func readExports(t *testing.T, d *deployment) *exports {
	t.Helper()
	x := &exports{lines: map[string]map[string][]exportLine{}, count: map[string]int{}}
	for _, f := range exportFormats {
		x.lines[f.signal] = map[string][]exportLine{}
		root := filepath.Join(d.exportsDir(), f.folder)
		files, err := filepath.Glob(filepath.Join(root, "*", "*.jsonl"))
		require.NoError(t, err)
		for _, path := range files {
			rel, err := filepath.Rel(root, path)
			require.NoError(t, err)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			if len(b) > 0 && b[len(b)-1] != '\n' {
				x.torn = append(x.torn, fmt.Sprintf("%s/%s: ends without a newline (%d bytes after the last)", f.folder, rel, len(b)-1-bytes.LastIndexByte(b, '\n')))
			}
			for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte{'\n'}), []byte{'\n'}) {
				if len(line) == 0 {
					continue
				}
				var v map[string]any
				if err := json.Unmarshal(line, &v); err != nil {
					x.torn = append(x.torn, fmt.Sprintf("%s/%s line %d: not JSON: %v", f.folder, rel, i+1, err))
					continue
				}
				id, _ := v[f.id].(string)
				session := filepath.Base(rel)
				if f.session != "" {
					session, _ = v[f.session].(string)
				}
				key := filepath.Dir(rel) + "/" + session + "/" + id
				x.lines[f.signal][key] = append(x.lines[f.signal][key], exportLine{file: rel, line: i, text: string(line)})
				x.count[f.signal]++
			}
		}
	}
	return x
}

// compareExports finds every agent_event line lost, repeated, invented or changed: an id whose
// copies are not exactly the uninterrupted run's.
func compareExports(ref, got *exports) []finding {
	var out []finding
	for _, f := range exportFormats {
		keys := map[string]bool{}
		for k := range ref.lines[f.signal] {
			keys[k] = true
		}
		for k := range got.lines[f.signal] {
			keys[k] = true
		}
		for k := range keys {
			want, have := ref.lines[f.signal][k], got.lines[f.signal][k]
			group := f.folder
			if i := strings.IndexByte(k, '/'); i > 0 {
				group = k[:i] + " " + f.folder
			}
			fd := finding{signal: f.signal, group: group, id: k, detail: exportLocs(have)}
			switch {
			case len(want) == 0:
				fd.class = classUnexpected
			case len(have) < len(want):
				fd.class = classLost
			case len(have) > len(want):
				fd.class = classDuplicated
			default:
				for i := range have {
					if !hasExportText(want, have[i].text) {
						fd.class = classChanged
						fd.detail = fmt.Sprintf("%s line %d: %s; uninterrupted: %s", have[i].file, have[i].line+1, clip(have[i].text), clip(want[0].text))
						break
					}
				}
			}
			if fd.class != "" {
				out = append(out, fd)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func hasExportText(copies []exportLine, text string) bool {
	for _, c := range copies {
		if c.text == text {
			return true
		}
	}
	return false
}

func exportLocs(copies []exportLine) string {
	if len(copies) == 0 {
		return "written in no file"
	}
	parts := make([]string, len(copies))
	for i, c := range copies {
		parts[i] = fmt.Sprintf("%s line %d", c.file, c.line+1)
	}
	return "written at " + strings.Join(parts, ", ")
}

func clip(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}
