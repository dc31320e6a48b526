// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"time"

	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// parser maps the records of one session file to events. It is what every
// internal/vendors package provides, one instance per file path.
type parser interface {
	// Parse maps one line (without its "\n"); lineNo is 1-based, offset is
	// the byte offset of the line's start. Records at or before the last
	// offset parsed (after UnmarshalState) yield nothing.
	Parse(line []byte, lineNo, offset int64) []agentevent.Event
	MarshalState() ([]byte, error)
	UnmarshalState(b []byte) error
}

// flusher is a parser that holds some events back until the end of the
// file's data (Claude Code: the usage of a response whose last row has no
// stop_reason, the rows of a /btw side-question file). The JSONL source calls
// Flush when a batch ends where the file ends (caught up) and the file has
// not changed for the settle delay; a file still being written is flushed
// once it has settled (see jsonlSource.flushSettled), so what comes out
// depends on the file's content, never on when the reader caught up.
type flusher interface {
	Flush() []agentevent.Event
	// HeldAt tells whether anything is held and the time of the newest
	// record it comes from (zero when unknown).
	HeldAt() (at time.Time, holding bool)
}

// agent is one supported coding agent. Adding an agent is one
// AgentConfig field in Config, its default in createDefaultConfig, and one
// row here: its default paths, the shape of its data (kind) and its parser
// — newParser for appended JSONL (read by the tailer, tail.go), newSnapshot for
// whole files rewritten in place, both for an agent with files of each
// kind (sourceJSONLAndSnapshot). Nothing else in the receiver knows the
// agent; see "Adding an agent" in the README.
type agent struct {
	// key is the agent's block in the configuration, the prefix of its
	// storage keys and the `agent` attribute of the receiver's own metrics.
	key    string
	source agentevent.Source
	config func(*Config) *AgentConfig
	// defaultInclude returns the agent's standard file locations. It runs at
	// Start, so the environment (HOME, agent-specific variables) of the
	// running collector counts, not that of the factory.
	defaultInclude func(env environment) ([]string, error)
	kind           sourceKind
	// newParser (sourceJSONL) makes the parser of one file; o says what the
	// receiver drops, which the parser then need not build.
	newParser func(path string, o parseOptions) parser
	// newSnapshot (sourceSnapshot) makes the mapping of the agent's
	// rewritten files.
	newSnapshot func() snapshotMapper
	// optional agents are skipped, with a warning, when their default
	// location cannot be known (no home directory): being on by default, they
	// must not stop the others from being read.
	optional bool
}

var agents = []agent{
	{
		key:            "claude_code",
		source:         agentevent.SourceClaudeCode,
		config:         func(c *Config) *AgentConfig { return &c.ClaudeCode },
		defaultInclude: claudeCodeInclude,
		kind:           sourceJSONL,
		newParser:      newClaudeCodeParser,
	},
	{
		key:            "opencode",
		source:         agentevent.SourceOpenCode,
		config:         func(c *Config) *AgentConfig { return &c.OpenCode },
		defaultInclude: opencodeInclude,
		kind:           sourceOpenCode,
		optional:       true,
	},
	{
		key:            "codex",
		source:         agentevent.SourceCodex,
		config:         func(c *Config) *AgentConfig { return &c.Codex },
		defaultInclude: codexInclude,
		kind:           sourceJSONL,
		newParser:      newCodexParser,
		optional:       true,
	},
	{
		key:            "pi",
		source:         agentevent.SourcePi,
		config:         func(c *Config) *AgentConfig { return &c.Pi },
		defaultInclude: piInclude,
		kind:           sourceJSONL,
		newParser:      newPiParser,
		optional:       true,
	},
	{
		key:            "gemini",
		source:         agentevent.SourceGemini,
		config:         func(c *Config) *AgentConfig { return &c.Gemini },
		defaultInclude: geminiInclude,
		kind:           sourceSnapshot,
		newSnapshot:    newGeminiMapper,
		optional:       true,
	},
	{
		key:            "copilot_cli",
		source:         agentevent.SourceCopilotCLI,
		config:         func(c *Config) *AgentConfig { return &c.CopilotCLI },
		defaultInclude: copilotInclude,
		kind:           sourceJSONLAndSnapshot,
		newParser:      newCopilotParser,
		newSnapshot:    newCopilotHistoryMapper,
		optional:       true,
	},
	{
		key:            "amp",
		source:         agentevent.SourceAmp,
		config:         func(c *Config) *AgentConfig { return &c.Amp },
		defaultInclude: ampInclude,
		kind:           sourceSnapshot,
		newSnapshot:    newAmpMapper,
		optional:       true,
	},
}

// environment is the slice of the process environment default paths depend on.
type environment struct {
	home   string // "" when unknown
	getenv func(string) string
}

func processEnvironment() environment {
	home, err := os.UserHomeDir()
	if err != nil {
		home = ""
	}
	return environment{home: home, getenv: os.Getenv}
}

var errNoHome = errors.New("the home directory is unknown ($HOME is not set)")

// claudeCodeInclude: Claude Code writes ~/.claude/projects/<project>/<session>.jsonl
// (subagents below <session>/subagents/), or the same under $CLAUDE_CONFIG_DIR
// when that is set. Both are read when both exist.
func claudeCodeInclude(env environment) ([]string, error) {
	var dirs []string
	if env.home != "" {
		dirs = append(dirs, filepath.Join(env.home, ".claude"))
	}
	if d := env.getenv("CLAUDE_CONFIG_DIR"); d != "" {
		dirs = append(dirs, expandHome(d, env.home))
	}
	if len(dirs) == 0 {
		return nil, errNoHome
	}
	var include []string
	for _, d := range dirs {
		p := filepath.Join(filepath.Clean(d), "projects", "**", "*.jsonl")
		if !slices.Contains(include, p) {
			include = append(include, p)
		}
	}
	return include, nil
}

// codexInclude: Codex writes $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl
// and moves old ones to $CODEX_HOME/archived_sessions/ (CODEX_HOME defaults
// to ~/.codex). A rollout that is in both places at once has the same
// content and is read once; a moved rollout goes on from its position (the
// tailer knows a file by its first line and first bytes, tail.go).
func codexInclude(env environment) ([]string, error) {
	dir := ""
	switch d := env.getenv("CODEX_HOME"); {
	case d != "":
		dir = expandHome(d, env.home)
	case env.home != "":
		dir = filepath.Join(env.home, ".codex")
	default:
		return nil, errNoHome
	}
	dir = filepath.Clean(dir)
	return []string{
		filepath.Join(dir, "sessions", "**", "rollout-*.jsonl"),
		filepath.Join(dir, "archived_sessions", "rollout-*.jsonl"),
	}, nil
}

// piInclude: Pi writes ~/.pi/agent/sessions/--<cwd>--/<ISO>_<id>.jsonl, or
// the same under $PI_CODING_AGENT_DIR when that is set.
func piInclude(env environment) ([]string, error) {
	dir := ""
	switch d := env.getenv("PI_CODING_AGENT_DIR"); {
	case d != "":
		dir = expandHome(d, env.home)
	case env.home != "":
		dir = filepath.Join(env.home, ".pi", "agent")
	default:
		return nil, errNoHome
	}
	return []string{filepath.Join(filepath.Clean(dir), "sessions", "**", "*.jsonl")}, nil
}

// expandHome replaces a leading "~" (alone or followed by a separator) with
// home. Patterns are otherwise used as given.
func expandHome(p, home string) string {
	if home == "" || !strings.HasPrefix(p, "~") {
		return p
	}
	rest := p[1:]
	if rest == "" {
		return home
	}
	if rest[0] == '/' || rest[0] == filepath.Separator {
		return filepath.Join(home, rest[1:])
	}
	return p // ~user is not supported
}

// resolvePatterns returns the include and exclude patterns of an agent for
// the current environment.
func resolvePatterns(a agent, ac *AgentConfig, env environment) (include, exclude []string, err error) {
	if len(ac.Include) == 0 {
		include, err = a.defaultInclude(env)
		if err != nil {
			return nil, nil, err
		}
	} else {
		for _, p := range ac.Include {
			if strings.HasPrefix(p, "~") && env.home == "" {
				return nil, nil, errNoHome
			}
			include = append(include, expandHome(p, env.home))
		}
	}
	for _, p := range ac.Exclude {
		exclude = append(exclude, expandHome(p, env.home))
	}
	return include, exclude, nil
}
