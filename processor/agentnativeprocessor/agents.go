// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentnativeprocessor

import (
	"slices"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/claudecode"
	"github.com/agentotel/agentotel/internal/vendors/codex"
	"github.com/agentotel/agentotel/internal/vendors/copilotcli"
)

// logMapper turns one native log record into agent events: (nil, nil) for
// a record the agent's model ignores, an error wrapping
// agentevent.ErrNativeUnmapped for one it cannot map. It keeps per-session
// state; the processor calls it from one goroutine at a time.
type logMapper interface {
	Map(rec *agentevent.NativeRecord) ([]agentevent.Event, error)
}

// spanNormalizer is an agent's pure span normalization; ok is false for a
// span outside its model.
type spanNormalizer func(sp *agentevent.NativeSpan) (patch agentevent.SpanPatch, ok bool)

// agentDef is one agent that speaks OTLP: how its telemetry is recognized
// and the vendor functions that map it.
type agentDef struct {
	source agentevent.Source
	// newMapper is nil for an agent whose log records are not mapped
	// (they pass untouched).
	newMapper func() logMapper
	// normalize is nil for an agent whose spans are not normalized.
	normalize spanNormalizer
	// services are service.name values (compared case-insensitively),
	// servicePrefixes prefixes of it (lower case).
	services        []string
	servicePrefixes []string
	// scopePrefixes are prefixes of the instrumentation scope name.
	scopePrefixes []string
	// spansByScopeOnly: the agent's spans are recognized by scope only (its
	// service.name is also the one agent_span gives the spans it builds).
	spansByScopeOnly bool
}

// defaultAgents is the registry: the agents and their vendor mappings.
func defaultAgents() []agentDef {
	return []agentDef{
		{
			source:           agentevent.SourceClaudeCode,
			newMapper:        func() logMapper { return claudecode.NewNativeMapper() },
			normalize:        claudecode.NormalizeNativeSpan,
			services:         []string{"claude-code", "claude-code-desktop"},
			scopePrefixes:    []string{"com.anthropic.claude_code"},
			spansByScopeOnly: true,
		},
		{
			source:    agentevent.SourceCodex,
			newMapper: func() logMapper { return codex.NewNativeMapper() },
			normalize: codex.NormalizeNativeSpan,
			// codex_cli_rs, codex_exec, codex-tui, codex_vscode,
			// codex-app-server, "Codex Desktop", …
			servicePrefixes: []string{"codex"},
			scopePrefixes:   []string{"codex_otel"},
		},
		{
			// Copilot sends spans (and, from VS Code, log events no
			// mapping reads yet: they pass).
			source:        agentevent.SourceCopilotCLI,
			normalize:     copilotcli.NormalizeNativeSpan,
			services:      []string{"github-copilot", "copilot-chat"},
			scopePrefixes: []string{"github.copilot"},
		},
	}
}

// ownScopePrefix is the scope of every component of this module: the
// records and spans agentotel builds are never native, whatever their
// service.name says (agent_span's Codex spans have service.name codex).
const ownScopePrefix = "github.com/agentotel/agentotel/"

// registry finds the agent of a resource and scope.
type registry struct {
	agents []agentDef
}

// match is the agent whose telemetry a resource's service.name and a scope
// name denote; nil for any other.
func (r *registry) match(service, scope string, span bool) *agentDef {
	if strings.HasPrefix(scope, ownScopePrefix) {
		return nil
	}
	svc := strings.ToLower(service)
	for i := range r.agents {
		a := &r.agents[i]
		for _, p := range a.scopePrefixes {
			if strings.HasPrefix(scope, p) {
				return a
			}
		}
		if span && a.spansByScopeOnly {
			continue
		}
		if slices.Contains(a.services, svc) {
			return a
		}
		for _, p := range a.servicePrefixes {
			if strings.HasPrefix(svc, p) {
				return a
			}
		}
	}
	return nil
}
