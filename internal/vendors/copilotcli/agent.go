// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
)

// Source is GitHub Copilot CLI's event source.
const Source agentevent.Source = "copilot_cli"

func init() {
	agents.Register(agents.Descriptor{
		Source:  Source,
		Service: "copilot-cli",
		Display: "GitHub Copilot CLI",
		Color:   "gray",
		// The CLI's home: $COPILOT_HOME (its documented relocation of
		// ~/.copilot), else ~/.copilot.
		Folders:  []agents.Folder{{Env: "COPILOT_HOME", Home: []string{".copilot"}}},
		Include:  sessionPatterns,
		Optional: true,
		// Appended session-state/<id>/events.jsonl (1.0.x, workspace.yaml
		// beside it) and flat session-state/<id>.jsonl (0.0.3xx) are
		// tailed; history-session-state/*.json (0.0.x, one JSON object
		// rewritten as the session goes) re-read.
		Reader: agents.Reader{
			Kind: agents.AppendedAndRewritten,
			NewParser: func(path string, o agents.ParseOptions) agents.LineParser {
				p := NewParserWithOptions(path, Options{OmitContent: o.OmitContent, OmitRaw: o.OmitRaw})
				if o.Beside != nil {
					p.SetWorkspace(ParseWorkspace(o.Beside))
				}
				return p
			},
			// workspace.yaml names the project where session.start does not.
			Beside: func(path string) string {
				if filepath.Base(path) != "events.jsonl" {
					return ""
				}
				return filepath.Join(filepath.Dir(path), "workspace.yaml")
			},
			NewSnapshot: func() agents.SnapshotMapper { return historyMapper{} },
		},
		Ccusage: &agents.Ccusage{Command: "copilot"},
		// Copilot sends spans (and, from VS Code, log events no mapping
		// reads yet: they pass).
		Native: &agents.Native{
			Normalize:     NormalizeNativeSpan,
			Services:      []string{"github-copilot", "copilot-chat"},
			ScopePrefixes: []string{"github.copilot"},
		},
		Fixtures: agents.Fixtures{
			Dir: "copilot_cli",
			// A fixture folder is a ~/.copilot: every fixture's folders
			// merged.
			Stage: func(s *agents.Staging) error {
				for _, p := range append(s.Glob("*/session-state"), s.Glob("*/history-session-state")...) {
					if err := s.Tree(p, filepath.Join(".copilot", filepath.Base(p))); err != nil {
						return err
					}
				}
				return nil
			},
			Keep: func(rel string) bool {
				return strings.Contains(rel, "session-state/") &&
					(strings.HasSuffix(rel, ".jsonl") || strings.HasSuffix(rel, ".json") || strings.HasSuffix(rel, "/workspace.yaml"))
			},
			Place: func(_ int, rel string, _ []byte) string {
				_, rest, _ := strings.Cut(rel, "/")
				return filepath.Join(".copilot", rest)
			},
			JSONLInclude: ".copilot/session-state/**/*.jsonl",
			Share:        0.05,
		},
		Doc: agents.Doc{
			Versions:   "0.0.3xx (flat JSONL), 1.0.x (folder per session), VS Code-hosted, 0.0.x history JSON",
			NativeOTLP: "GenAI spans, CLI and VS Code Copilot Chat (from the documented shapes: no capture)",
		},
	})
}

// sessionPatterns are the session files below a Copilot CLI home.
func sessionPatterns(dir string) []string {
	return []string{
		filepath.Join(dir, "session-state", "*", "events.jsonl"),
		filepath.Join(dir, "session-state", "*.jsonl"),
		filepath.Join(dir, "history-session-state", "*.json"),
	}
}

// historyMapper maps history-session-state files.
type historyMapper struct{}

func (historyMapper) Sort(paths []string) { slices.Sort(paths) }

func (historyMapper) NewWatermark() agents.Watermark { return Watermark{} }

func (historyMapper) UnmarshalWatermark(b []byte) (agents.Watermark, error) {
	return UnmarshalWatermark(b)
}

func (historyMapper) Read(ctx context.Context, r *agents.SnapshotRead) (string, error) {
	h, err := DecodeHistory(r.Data)
	if err != nil {
		if de, ok := errors.AsType[*DecodeError](err); ok {
			return de.Reason, err
		}
		return ReasonMalformedJSON, err
	}
	r.Records(ctx, len(h.Timeline))
	r.Deliver(ctx, h.SessionID, func(th *agents.SnapshotThread) agents.SnapshotResult {
		res := MapHistory(HistoryContext{LogFile: r.Path, Sequence: th.Seq}, h, th.Emitted.(Watermark))
		return agents.SnapshotResult{Events: res.Events, Emitted: res.Emitted, CaughtUp: true}
	})
	return "", nil
}
