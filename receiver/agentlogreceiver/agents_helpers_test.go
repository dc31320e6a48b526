// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"path/filepath"

	"github.com/agentotel/agentotel/internal/agents"
)

// agentByKey is the registered agent with that configuration key.
func agentByKey(key string) agent {
	for _, a := range registered() {
		if a.key == key {
			return a
		}
	}
	panic("no agent " + key)
}

// includeOf is the default include of an agent in an environment.
func includeOf(key string) func(env agents.Env) ([]string, error) {
	return func(env agents.Env) ([]string, error) { return agentByKey(key).DefaultInclude(env) }
}

var (
	copilotInclude  = includeOf("copilot_cli")
	ampInclude      = includeOf("amp")
	geminiInclude   = includeOf("gemini")
	opencodeInclude = includeOf("opencode")
)

// The patterns of the agents' files below one of their folders.
func geminiPatterns(dir string) []string { return agentByKey("gemini").Include(filepath.Clean(dir)) }

func copilotPatterns(dir string) []string {
	return agentByKey("copilot_cli").Include(filepath.Clean(dir))
}
func ampPattern(dir string) string { return agentByKey("amp").Include(filepath.Clean(dir))[0] }
