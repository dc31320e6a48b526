// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package agents is the registry of the coding agents agentotel reads. Each
// agent's vendor package (internal/vendors/<agent>) registers one Descriptor
// in its init function, and internal/vendors/all imports the set: adding an
// agent is its package plus one import line there. Every part that needs a fact about
// an agent — the receiver its folders and reader, the exporter the folders it
// must not write to, agent_native the mappers of an agent's own telemetry,
// the fidelity check and the tests how ccusage names it and where its
// fixtures go, the docs' tables — ranges over All or asks Lookup, never a
// list of its own.
//
// The package imports only internal/agentevent: vendor packages import it to
// register themselves.
package agents

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// Descriptor is everything the rest of agentotel knows about one agent.
type Descriptor struct {
	// Source is the agent's event source: every event's source, the key of
	// its block in agent_log's configuration and of its storage, and the
	// `agent` attribute of the receiver's own metrics.
	Source agentevent.Source
	// Service is the service.name of the agent's telemetry.
	Service string
	// Display is the agent's name for people ("Claude Code").
	Display string
	// Color is the agent's color in timelines (agent_event's canonical
	// format).
	Color string

	// Folders are where the agent keeps its data, each the folder an
	// environment variable names or a default below the home directory.
	Folders []Folder
	// Include gives the include patterns of the agent's files below one of
	// its data folders.
	Include func(folder string) []string
	// Optional agents are skipped, with a warning, when their default
	// location cannot be known (no home directory): on by default, they
	// must not stop the others from being read.
	Optional bool
	// Reader says how the agent's files are read.
	Reader Reader

	// FallbackModel is the model a response that names none is priced as
	// (gen_ai_cost's default fallback_models): what ccusage prices it as,
	// the agent's default model when its logs left the model out ("" for
	// none).
	FallbackModel string

	// Ccusage is how ccusage reads the agent; nil when it does not.
	Ccusage *Ccusage
	// Native maps the agent's own OTLP; nil for an agent that sends none.
	Native *Native
	// Fixtures is how the agent's files of a fixture corpus are laid out in
	// a test home.
	Fixtures Fixtures
	// Doc is what the docs' tables say of the agent.
	Doc Doc
}

// Doc is the part of the docs' agent tables that is not derived from the
// rest of the descriptor.
type Doc struct {
	// Versions are the versions or formats of the agent's files seen.
	Versions string
	// NativeOTLP says what agent_native reads of the agent's own telemetry
	// ("" for none).
	NativeOTLP string
}

var (
	mu       sync.RWMutex
	bySource = map[agentevent.Source]*Descriptor{}
	order    []*Descriptor
)

// Register adds an agent to the registry; it panics on a descriptor that
// is incomplete or whose source or service is already registered, as a
// programming error found by any test that imports the set.
func Register(d Descriptor) {
	if err := d.validate(); err != nil {
		panic("agents.Register: " + err.Error())
	}
	mu.Lock()
	defer mu.Unlock()
	for _, o := range order {
		if o.Source == d.Source || o.Service == d.Service {
			panic(fmt.Sprintf("agents.Register: %s: source or service already registered by %s", d.Source, o.Source))
		}
	}
	agentevent.NameService(d.Source, d.Service)
	p := &d
	bySource[d.Source] = p
	order = append(order, p)
	slices.SortStableFunc(order, func(a, b *Descriptor) int { return strings.Compare(string(a.Source), string(b.Source)) })
}

func (d *Descriptor) validate() error {
	var missing []string
	if d.Source == "" {
		missing = append(missing, "Source")
	}
	if d.Service == "" {
		missing = append(missing, "Service")
	}
	if d.Display == "" {
		missing = append(missing, "Display")
	}
	if len(d.Folders) == 0 {
		missing = append(missing, "Folders")
	}
	if d.Include == nil {
		missing = append(missing, "Include")
	}
	if d.Fixtures.Dir == "" {
		missing = append(missing, "Fixtures.Dir")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: missing %s", d.Source, strings.Join(missing, ", "))
	}
	return d.Reader.validate()
}

// All returns every registered agent, ordered by source.
func All() []*Descriptor {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Clone(order)
}

// Lookup returns the agent of a source; nil when none is registered.
func Lookup(s agentevent.Source) *Descriptor {
	mu.RLock()
	defer mu.RUnlock()
	return bySource[s]
}
