// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package openclaw

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/vendors/pi"
)

// Source is OpenClaw's event source.
const Source agentevent.Source = "openclaw"

func init() {
	agents.Register(agents.Descriptor{
		Source:  Source,
		Service: "openclaw",
		Display: "OpenClaw",
		Color:   "pink",
		// The state directory: $OPENCLAW_STATE_DIR (once $CLAWDBOT_STATE_DIR),
		// else .openclaw below the home directory, which $OPENCLAW_HOME
		// relocates. The names OpenClaw had before are still read: OpenClaw
		// falls back to them when ~/.openclaw does not exist.
		Folders: []agents.Folder{
			{Env: "OPENCLAW_STATE_DIR", Home: []string{".openclaw"}},
			{Env: "OPENCLAW_HOME", Below: []string{".openclaw"}},
			{Env: "CLAWDBOT_STATE_DIR"},
			{Home: []string{".clawdbot"}},
			{Home: []string{".moldbot"}},
			{Home: []string{".moltbot"}},
		},
		Include:  Include,
		Optional: true,
		Reader: agents.Reader{
			Kind: agents.AppendedJSONL,
			NewParser: func(path string, o agents.ParseOptions) agents.LineParser {
				return NewParser(path, pi.Options{OmitContent: o.OmitContent, OmitRaw: o.OmitRaw})
			},
		},
		// ccusage reads every root of $OPENCLAW_DIR (a comma-separated list),
		// else the four state directories, and names a session by its file.
		Ccusage: &agents.Ccusage{Command: "openclaw", Env: []string{"OPENCLAW_DIR"}, SessionKey: SessionKey},
		Fixtures: agents.Fixtures{
			Dir:   "openclaw",
			Stage: stage,
			Keep: func(rel string) bool {
				dir, name := filepath.Split(filepath.FromSlash(rel))
				return filepath.Base(dir) == "sessions" && Transcript(name)
			},
			// agents/<agent>/sessions/<file>, the fixture's agent made one
			// of its own per copy.
			Place: func(r int, rel string, _ []byte) string {
				agent, name := fixtureAgent(rel), filepath.Base(rel)
				return filepath.Join(".openclaw", "agents", fmt.Sprintf("bench-r%04d-%s", r, agent), "sessions", name)
			},
			JSONLInclude: ".openclaw/agents/*/sessions/*.jsonl{,.reset.*,.deleted.*}",
			Share:        0.02,
		},
		Doc: agents.Doc{Versions: "Pi's session format v3 (JSONL transcripts, live and archived); constructed fixtures only"},
	})
}

// Include gives the transcripts below a state directory: each agent's
// sessions/<session id>.jsonl (a forum topic's <session id>-topic-<topic
// id>.jsonl), and the transcripts OpenClaw archived there when the session
// was reset (.jsonl.reset.<time>) or deleted (.jsonl.deleted.<time>). An
// archive is the transcript itself, renamed (the receiver follows a file
// renamed after it read it), and often the only record of a session left.
// Backups (.bak.<time>) are not matched, and the other .jsonl files there
// are no transcripts of their own (see Derived).
func Include(dir string) []string {
	return []string{filepath.Join(dir, "agents", "*", "sessions", "*.jsonl{,.reset.*,.deleted.*}")}
}

// SessionKey is the name ccusage gives the session of an event of logFile:
// the file's name up to ".jsonl" (an archive's ".reset.<time>" or
// ".deleted.<time>" left out).
func SessionKey(logFile, _ string) string {
	name := filepath.Base(logFile)
	if i := strings.Index(name, ".jsonl"); i > 0 {
		return name[:i]
	}
	return name
}

// stage copies a corpus laid out as <agent>/sessions/<file> into the
// home's ~/.openclaw/agents/<agent>/sessions/.
func stage(s *agents.Staging) error {
	for _, p := range s.Glob(filepath.Join("*", "sessions", "*")) {
		if !Transcript(filepath.Base(p)) {
			s.Note(fmt.Sprintf("openclaw: %s left out: not a transcript OpenClaw counts", p))
			continue
		}
		agent := filepath.Base(filepath.Dir(filepath.Dir(p)))
		if err := s.Copy(p, filepath.Join(".openclaw", "agents", agent, "sessions", filepath.Base(p))); err != nil {
			return err
		}
	}
	return nil
}

// fixtureAgent is the agent folder of a corpus file (<agent>/sessions/<file>).
func fixtureAgent(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) >= 3 {
		return parts[len(parts)-3]
	}
	return "main"
}
