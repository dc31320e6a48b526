// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"reflect"
	"strings"
	"sync"

	"github.com/agentotel/agentotel/internal/agents"
	// Every agent agentotel reads registers itself.
	_ "github.com/agentotel/agentotel/internal/vendors/all"
)

// agent is one agent the receiver reads: its registered descriptor
// (internal/agents) and its block of the configuration. What the agent's
// data is and how it is mapped is the descriptor's; nothing in the
// receiver knows an agent by name.
type agent struct {
	*agents.Descriptor
	// key is the agent's block in the configuration, the prefix of its
	// storage keys and the `agent` attribute of the receiver's own metrics.
	key string
}

// registered returns every registered agent that has a block in the
// configuration (TestEveryAgentHasSettings fails for one that has none), in
// the registry's order: the order their sources start and their settings
// are validated.
func registered() []agent {
	var out []agent
	for _, d := range agents.All() {
		if _, ok := agentFields()[string(d.Source)]; ok {
			out = append(out, agent{Descriptor: d, key: string(d.Source)})
		}
	}
	return out
}

// config is the agent's block of cfg.
func (a agent) config(cfg *Config) *AgentConfig {
	i := agentFields()[a.key]
	return reflect.ValueOf(cfg).Elem().Field(i).Addr().Interface().(*AgentConfig)
}

// agentFields maps each AgentConfig field of Config to its index, by its
// key in the configuration.
var agentFields = sync.OnceValue(func() map[string]int {
	fields := map[string]int{}
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type != reflect.TypeFor[AgentConfig]() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		fields[name] = i
	}
	return fields
})

// resolvePatterns returns the include and exclude patterns of an agent for
// the current environment.
func resolvePatterns(a agent, ac *AgentConfig, env agents.Env) (include, exclude []string, err error) {
	if len(ac.Include) == 0 {
		include, err = a.DefaultInclude(env)
		if err != nil {
			return nil, nil, err
		}
	} else {
		for _, p := range ac.Include {
			if strings.HasPrefix(p, "~") && env.Home == "" {
				return nil, nil, agents.ErrNoHome
			}
			include = append(include, agents.ExpandHome(p, env.Home))
		}
	}
	for _, p := range ac.Exclude {
		exclude = append(exclude, agents.ExpandHome(p, env.Home))
	}
	return include, exclude, nil
}
