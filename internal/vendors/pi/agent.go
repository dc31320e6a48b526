// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package pi

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
)

// Source is Pi's event source.
const Source agentevent.Source = "pi"

func init() {
	agents.Register(agents.Descriptor{
		Source:  Source,
		Service: "pi",
		Display: "Pi",
		Color:   "teal",
		Folders: []agents.Folder{{Env: "PI_CODING_AGENT_DIR", Home: []string{".pi", "agent"}}},
		// sessions/--<cwd>--/<ISO>_<id>.jsonl, one file per session.
		Include:  func(dir string) []string { return []string{filepath.Join(dir, "sessions", "**", "*.jsonl")} },
		Optional: true,
		Reader: agents.Reader{
			Kind: agents.AppendedJSONL,
			NewParser: func(path string, o agents.ParseOptions) agents.LineParser {
				return NewParserWithOptions(path, Options{OmitContent: o.OmitContent, OmitRaw: o.OmitRaw})
			},
		},
		Ccusage: &agents.Ccusage{Command: "pi", Env: []string{"PI_AGENT_DIR"}, SessionKey: FileSessionKey},
		Fixtures: agents.Fixtures{
			Dir: "pi",
			Stage: func(s *agents.Staging) error {
				for _, p := range s.Glob("*.jsonl") {
					if err := s.Copy(p, filepath.Join(".pi", "agent", "sessions", "--fixtures--", filepath.Base(p))); err != nil {
						return err
					}
				}
				return nil
			},
			Keep: func(rel string) bool { return strings.HasSuffix(rel, ".jsonl") },
			Place: func(r int, rel string, _ []byte) string {
				return filepath.Join(".pi", "agent", "sessions", fmt.Sprintf("--bench-r%04d--", r), filepath.Base(rel))
			},
			JSONLInclude: ".pi/agent/sessions/**/*.jsonl",
			SessionID:    HeaderSessionID,
			Share:        0.05,
		},
		Doc: agents.Doc{Versions: "session header v1 and v3"},
	})
}

// FileSessionKey is the name ccusage gives a session: the part of its file
// name after the first "_" (files are <time>_<id>.jsonl).
func FileSessionKey(logFile, _ string) string {
	base := strings.TrimSuffix(filepath.Base(logFile), filepath.Ext(logFile))
	if _, after, ok := strings.Cut(base, "_"); ok {
		return after
	}
	return base
}

var headerID = regexp.MustCompile(`^\{"type":"session"[^\n]*?"id":"([^"]+)"`)

// HeaderSessionID is the id of a session file's header ("" when it does
// not start with one).
func HeaderSessionID(data []byte) string {
	if m := headerID.FindSubmatch(data); m != nil {
		return string(m[1])
	}
	return ""
}
