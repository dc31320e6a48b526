// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/jsonl"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/snapshot"
)

// agent is one supported coding agent, declared in its own file
// (agent_<name>.go) and listed in the agents table (agents.go): its
// configuration block, its default paths, the shape of its data (kind) and
// its reader — newParser for appended JSONL (read by internal/jsonl),
// newSnapshot for whole files rewritten in place (internal/snapshot), both
// for an agent with files of each kind (sourceJSONLAndSnapshot). The format
// itself is the agent's vendor package (internal/vendors/<agent>). Nothing
// else in the receiver knows the agent.
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
	newParser func(path string, o jsonl.ParseOptions) jsonl.Parser
	// newSnapshot (sourceSnapshot) makes the mapping of the agent's
	// rewritten files.
	newSnapshot func() snapshot.Mapper
	// optional agents are skipped, with a warning, when their default
	// location cannot be known (no home directory): being on by default, they
	// must not stop the others from being read.
	optional bool
}

// sourceKind is the shape of an agent's data, which decides how it is read.
type sourceKind int

const (
	// sourceJSONL: files records are appended to, one JSON object a line
	// (Claude Code, Codex, Pi): read by the tailer (internal/jsonl).
	sourceJSONL sourceKind = iota
	// sourceSnapshot: whole files rewritten in place (Gemini CLI, Amp):
	// re-read on change, emitting what was not emitted (internal/snapshot).
	sourceSnapshot
	// sourceOpenCode: OpenCode data directories, a JSON tree (≤1.1) or a
	// SQLite database (≥1.2) (internal/opencode).
	sourceOpenCode
	// sourceJSONLAndSnapshot: an agent with both (GitHub Copilot CLI:
	// events.jsonl, and older history JSON files rewritten in place). Its
	// include patterns of *.jsonl files go to a JSONL source, the others to
	// a snapshot source with its own storage scope (<agent>.snapshot).
	sourceJSONLAndSnapshot
)

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

// homeOr is the directory named by the environment variable name (a
// leading "~" expanded), or else dir below the home directory; errNoHome
// when neither is known.
func homeOr(env environment, name string, dir ...string) (string, error) {
	switch d := env.getenv(name); {
	case d != "":
		return expandHome(d, env.home), nil
	case env.home != "":
		return filepath.Join(append([]string{env.home}, dir...)...), nil
	}
	return "", errNoHome
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
