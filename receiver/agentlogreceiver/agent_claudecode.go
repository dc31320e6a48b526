// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"path/filepath"
	"slices"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/claudecode"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/jsonl"
)

// claudeCodeAgent: Claude Code appends one JSONL transcript per session.
var claudeCodeAgent = agent{
	key:            "claude_code",
	source:         agentevent.SourceClaudeCode,
	config:         func(c *Config) *AgentConfig { return &c.ClaudeCode },
	defaultInclude: claudeCodeInclude,
	kind:           sourceJSONL,
	newParser: func(path string, o jsonl.ParseOptions) jsonl.Parser {
		return claudecode.NewParserWithOptions(path, claudecode.Options{OmitContent: o.OmitContent, OmitRaw: o.OmitRaw})
	},
}

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
