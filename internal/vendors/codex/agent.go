// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// Source is Codex's event source.
const Source agentevent.Source = "codex"

func init() {
	agents.Register(agents.Descriptor{
		Source:  Source,
		Service: "codex",
		Display: "Codex CLI",
		Color:   "green",
		Folders: []agents.Folder{{Env: "CODEX_HOME", Home: []string{".codex"}}},
		// sessions/YYYY/MM/DD/rollout-*.jsonl, old ones moved to
		// archived_sessions/. A rollout in both places at once has the same
		// content and is read once; a moved rollout goes on from its
		// position (the receiver knows a file by its first bytes).
		Include: func(dir string) []string {
			return []string{
				filepath.Join(dir, "sessions", "**", "rollout-*.jsonl"),
				filepath.Join(dir, "archived_sessions", "rollout-*.jsonl"),
			}
		},
		Optional: true,
		Reader: agents.Reader{
			Kind: agents.AppendedJSONL,
			NewParser: func(path string, o agents.ParseOptions) agents.LineParser {
				return NewParserWithOptions(path, Options{OmitContent: o.OmitContent, OmitRaw: o.OmitRaw})
			},
		},
		// Rollouts of the 0.3x CLIs record no model; gpt-5 was then the
		// CLI's default, and ccusage prices them as it.
		FallbackModel: "gpt-5",
		// ccusage names a session by its rollout file.
		Ccusage: &agents.Ccusage{Command: "codex", SessionKey: func(logFile, _ string) string {
			return strings.TrimSuffix(filepath.Base(logFile), filepath.Ext(logFile))
		}},
		Native: &agents.Native{
			NewMapper: func() agents.NativeMapper { return NewNativeMapper() },
			Normalize: NormalizeNativeSpan,
			// codex_cli_rs, codex_exec, codex-tui, codex_vscode,
			// codex-app-server, "Codex Desktop", …
			ServicePrefixes: []string{"codex"},
			ScopePrefixes:   []string{"codex_otel"},
		},
		Fixtures: agents.Fixtures{
			Dir: "codex",
			Stage: func(s *agents.Staging) error {
				for _, p := range s.Glob("*.jsonl") {
					if err := s.Copy(p, filepath.Join(".codex", "sessions", "2025", "01", "01", "rollout-"+filepath.Base(p))); err != nil {
						return err
					}
				}
				return nil
			},
			Keep: func(rel string) bool { return strings.HasSuffix(rel, ".jsonl") },
			// sessions/YYYY/MM/DD/rollout-<…>-<id>.jsonl, dated by its
			// first record.
			Place: func(r int, rel string, data []byte) string {
				day := []string{"2025", "01", "01"}
				if m := rolloutDay.FindSubmatch(data); m != nil {
					day = []string{string(m[1]), string(m[2]), string(m[3])}
				}
				name := strings.TrimSuffix(filepath.Base(rel), ".jsonl")
				if id := RolloutSessionID(data); id != "" {
					name = id
				}
				return filepath.Join(".codex", "sessions", day[0], day[1], day[2], fmt.Sprintf("rollout-r%04d-%s.jsonl", r, name))
			},
			JSONLInclude: ".codex/sessions/**/*.jsonl",
			Share:        0.30,
		},
		Doc: agents.Doc{
			Versions:   "0.34 – 0.146 (CLI, Desktop, VS Code, exec)",
			NativeOTLP: "log events and spans, 0.154 – 0.155 (app-server, Desktop)",
		},
	})
}

var rolloutDay = regexp.MustCompile(`"timestamp":"(\d{4})-(\d{2})-(\d{2})T`)

// RolloutSessionID is the session id of a rollout: the id of its
// session_meta record ("" when it has none).
func RolloutSessionID(data []byte) string {
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		var rec struct {
			Type    string `json:"type"`
			Payload struct {
				ID string `json:"id"`
			} `json:"payload"`
		}
		if jsonx.Unmarshal(line, &rec) == nil && rec.Type == "session_meta" && rec.Payload.ID != "" {
			return rec.Payload.ID
		}
	}
	return ""
}
