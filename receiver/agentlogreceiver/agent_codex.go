// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"path/filepath"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/codex"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/jsonl"
)

// codexAgent: Codex CLI appends one JSONL rollout per session.
var codexAgent = agent{
	key:            "codex",
	source:         agentevent.SourceCodex,
	config:         func(c *Config) *AgentConfig { return &c.Codex },
	defaultInclude: codexInclude,
	kind:           sourceJSONL,
	newParser: func(path string, o jsonl.ParseOptions) jsonl.Parser {
		return codex.NewParserWithOptions(path, codex.Options{OmitContent: o.OmitContent, OmitRaw: o.OmitRaw})
	},
	optional: true,
}

// codexInclude: Codex writes $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl
// and moves old ones to $CODEX_HOME/archived_sessions/ (CODEX_HOME defaults
// to ~/.codex). A rollout that is in both places at once has the same
// content and is read once; a moved rollout goes on from its position (the
// tailer knows a file by its first line and first bytes, internal/tailer).
func codexInclude(env environment) ([]string, error) {
	dir, err := homeOr(env, "CODEX_HOME", ".codex")
	if err != nil {
		return nil, err
	}
	dir = filepath.Clean(dir)
	return []string{
		filepath.Join(dir, "sessions", "**", "rollout-*.jsonl"),
		filepath.Join(dir, "archived_sessions", "rollout-*.jsonl"),
	}, nil
}
