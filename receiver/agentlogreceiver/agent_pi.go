// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"path/filepath"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/pi"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/jsonl"
)

// piAgent: the Pi coding agent appends one JSONL file per session.
var piAgent = agent{
	key:            "pi",
	source:         agentevent.SourcePi,
	config:         func(c *Config) *AgentConfig { return &c.Pi },
	defaultInclude: piInclude,
	kind:           sourceJSONL,
	newParser: func(path string, o jsonl.ParseOptions) jsonl.Parser {
		return pi.NewParserWithOptions(path, pi.Options{OmitContent: o.OmitContent, OmitRaw: o.OmitRaw})
	},
	optional: true,
}

// piInclude: Pi writes ~/.pi/agent/sessions/--<cwd>--/<ISO>_<id>.jsonl, or
// the same under $PI_CODING_AGENT_DIR when that is set.
func piInclude(env environment) ([]string, error) {
	dir, err := homeOr(env, "PI_CODING_AGENT_DIR", ".pi", "agent")
	if err != nil {
		return nil, err
	}
	return []string{filepath.Join(filepath.Clean(dir), "sessions", "**", "*.jsonl")}, nil
}
