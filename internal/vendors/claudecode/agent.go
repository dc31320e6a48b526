// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
)

// Source is Claude Code's event source.
const Source agentevent.Source = "claude_code"

func init() {
	agents.Register(agents.Descriptor{
		Source:  Source,
		Service: "claude-code",
		Display: "Claude Code",
		Color:   "purple",
		// ~/.claude, and $CLAUDE_CONFIG_DIR when set: both are read when
		// both exist.
		Folders: []agents.Folder{{Home: []string{".claude"}}, {Env: "CLAUDE_CONFIG_DIR"}},
		// One transcript per session, <project>/<session>.jsonl, subagents
		// below <session>/subagents/.
		Include: func(dir string) []string { return []string{filepath.Join(dir, "projects", "**", "*.jsonl")} },
		Reader: agents.Reader{
			Kind: agents.AppendedJSONL,
			NewParser: func(path string, o agents.ParseOptions) agents.LineParser {
				return NewParserWithOptions(path, Options{OmitContent: o.OmitContent, OmitRaw: o.OmitRaw, Orphan: o.OwnerMissing})
			},
			// A nested subagent's file belongs to its session's transcript;
			// without it, the subagent is an orphan.
			Owner: SubagentOwner,
		},
		Ccusage: &agents.Ccusage{Command: "claude", SessionKey: ccusageKey},
		Native: &agents.Native{
			NewMapper:        func() agents.NativeMapper { return NewNativeMapper() },
			Normalize:        NormalizeNativeSpan,
			Services:         []string{"claude-code", "claude-code-desktop"},
			ScopePrefixes:    []string{"com.anthropic.claude_code"},
			SpansByScopeOnly: true,
		},
		Fixtures: agents.Fixtures{
			Dir:   "claude_code",
			Stage: stage,
			Keep:  func(rel string) bool { return strings.HasSuffix(rel, ".jsonl") },
			// The fixture folder is the project.
			Place: func(r int, rel string, _ []byte) string {
				project, rest, ok := strings.Cut(rel, "/")
				if !ok {
					project, rest = "misc", rel
				}
				return filepath.Join(".claude", "projects", fmt.Sprintf("-bench-r%04d-%s", r, project), rest)
			},
			JSONLInclude: ".claude/projects/**/*.jsonl",
			Share:        0.45,
		},
		Doc: agents.Doc{
			Versions:   "1.0.17 – 2.1.232",
			NativeOTLP: "log events and beta traces, 2.1.269 – 2.1.273",
		},
	})
}

// ccusageKey is the name ccusage gives the session a file belongs to: the
// main transcript's name (a subagent file under <session>/subagents/ counts
// with its session, a flat agent-<id>.jsonl is a session of its own).
func ccusageKey(logFile, _ string) string {
	if filepath.Base(filepath.Dir(logFile)) == "subagents" {
		return filepath.Base(filepath.Dir(filepath.Dir(logFile)))
	}
	return strings.TrimSuffix(filepath.Base(logFile), filepath.Ext(logFile))
}

// stage lays a corpus out as ~/.claude/projects/<project>/…: a folder of
// the corpus is a project, a loose file goes to a project of its own.
func stage(s *agents.Staging) error {
	for _, p := range s.Glob("*") {
		var err error
		if fi, statErr := os.Stat(p); statErr == nil && fi.IsDir() {
			err = s.Tree(p, filepath.Join(".claude", "projects", filepath.Base(p)))
		} else {
			err = s.Copy(p, filepath.Join(".claude", "projects", "fixtures", filepath.Base(p)))
		}
		if err != nil {
			return err
		}
	}
	return nil
}
