// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"path/filepath"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// opencodeAgent: OpenCode keeps its data in one directory, a JSON tree (up
// to 1.1.x) or a SQLite database (from 1.2 on); internal/opencode reads
// both. Its include patterns match data directories, not files.
var opencodeAgent = agent{
	key:            "opencode",
	source:         agentevent.SourceOpenCode,
	config:         func(c *Config) *AgentConfig { return &c.OpenCode },
	defaultInclude: opencodeInclude,
	kind:           sourceOpenCode,
	optional:       true,
}

// opencodeInclude: $XDG_DATA_HOME/opencode when XDG_DATA_HOME is set (as
// OpenCode's xdg-basedir does), else ~/.local/share/opencode.
func opencodeInclude(env environment) ([]string, error) {
	if d := env.getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(expandHome(d, env.home)) {
		return []string{filepath.Join(filepath.Clean(expandHome(d, env.home)), "opencode")}, nil
	}
	if env.home == "" {
		return nil, errNoHome
	}
	return []string{filepath.Join(env.home, ".local", "share", "opencode")}, nil
}
