// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentnativeprocessor

import (
	"slices"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
	_ "github.com/agentotel/agentotel/internal/vendors/all" // every agent registers itself, with its native mappings
)

// logMapper turns one native log record into agent events (the agent's
// registered agents.NativeMapper); the processor calls it from one
// goroutine at a time.
type logMapper = agents.NativeMapper

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

// defaultAgents are the registered agents that speak OTLP, with their
// vendor mappings (internal/agents).
func defaultAgents() []agentDef {
	var out []agentDef
	for _, d := range agents.All() {
		n := d.Native
		if n == nil {
			continue
		}
		a := agentDef{
			source:           d.Source,
			services:         n.Services,
			servicePrefixes:  n.ServicePrefixes,
			scopePrefixes:    n.ScopePrefixes,
			spansByScopeOnly: n.SpansByScopeOnly,
		}
		if n.NewMapper != nil {
			a.newMapper = n.NewMapper
		}
		if n.Normalize != nil {
			a.normalize = n.Normalize
		}
		out = append(out, a)
	}
	return out
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
