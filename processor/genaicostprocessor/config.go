// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package genaicostprocessor

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"

	"github.com/agentotel/agentotel/internal/agents"
	// The agents whose fallback models are the defaults.
	_ "github.com/agentotel/agentotel/internal/vendors/all"
	"github.com/agentotel/agentotel/processor/genaicostprocessor/internal/pricing"
)

// perMillion converts the config's USD per million tokens to USD per token.
const perMillion = 1e6

// Config is the configuration of the gen_ai_cost processor.
type Config struct {
	// Models overrides the price of a model of the embedded table, rate by
	// rate, or adds a model the table lacks (then input and output are
	// required). Keys are model names as the table or the logs spell them;
	// prices are USD per million tokens.
	Models map[string]ModelPrice `mapstructure:"models"`
	// Aliases maps a model name as the logs spell it to a name of the table
	// or of Models, for names the built-in normalization does not resolve.
	Aliases map[string]string `mapstructure:"aliases"`
	// FallbackModels names, by the service.name of an agent's events or
	// spans, the model a response that names no model is priced as (its
	// cost source is then "fallback"): Codex rollouts of the 0.3x CLIs
	// record no model, and gpt-5 was then the CLI's default. An empty model
	// turns the fallback off for that agent.
	FallbackModels map[string]string `mapstructure:"fallback_models"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// defaultFallbackModels are the fallback models of the default config: each
// registered agent's (agents.Descriptor.FallbackModel), the one ccusage
// prices a response without a model as.
func defaultFallbackModels() map[string]string {
	out := map[string]string{}
	for _, d := range agents.All() {
		if d.FallbackModel != "" {
			out[d.Service] = d.FallbackModel
		}
	}
	return out
}

// ModelPrice is one model's price in USD per million tokens. An unset rate
// keeps the embedded table's (for a new model: cache reads and writes cost
// what input costs, a 1-hour cache write what a 5-minute one costs).
type ModelPrice struct {
	Input           *float64 `mapstructure:"input"`
	Output          *float64 `mapstructure:"output"`
	CacheRead       *float64 `mapstructure:"cache_read"`
	CacheCreation   *float64 `mapstructure:"cache_creation"`
	CacheCreation1h *float64 `mapstructure:"cache_creation_1h"`
	// Tier holds the rates of a request whose input (cache included)
	// exceeds AboveInputTokens.
	Tier *TierPrice `mapstructure:"tier"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// TierPrice is a model's price above a context threshold (USD per million
// tokens); an unset rate is the model's base rate.
type TierPrice struct {
	AboveInputTokens int64    `mapstructure:"above_input_tokens"`
	Input            *float64 `mapstructure:"input"`
	Output           *float64 `mapstructure:"output"`
	CacheRead        *float64 `mapstructure:"cache_read"`
	CacheCreation    *float64 `mapstructure:"cache_creation"`
	CacheCreation1h  *float64 `mapstructure:"cache_creation_1h"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate checks every setting and reports all problems at once.
func (c *Config) Validate() error {
	var errs []error
	embedded := pricing.NewTable(nil, nil)
	for _, name := range sortedKeys(c.Models) {
		m := c.Models[name]
		key := "`models::" + name
		_, _, known := embedded.Lookup(name)
		if !known && (m.Input == nil || m.Output == nil) {
			errs = append(errs, fmt.Errorf("%s`: %q is not in the embedded price table, so `input` and `output` are required", key, name))
		}
		for _, r := range m.rates() {
			if r.v != nil && *r.v < 0 {
				errs = append(errs, fmt.Errorf("%s::%s` must not be negative, got %g", key, r.name, *r.v))
			}
		}
		if t := m.Tier; t != nil {
			if t.AboveInputTokens <= 0 {
				errs = append(errs, fmt.Errorf("%s::tier::above_input_tokens` must be a positive number of tokens, got %d", key, t.AboveInputTokens))
			}
			for _, r := range t.rates() {
				if r.v != nil && *r.v < 0 {
					errs = append(errs, fmt.Errorf("%s::tier::%s` must not be negative, got %g", key, r.name, *r.v))
				}
			}
		}
	}
	for _, from := range sortedKeys(c.Aliases) {
		to := c.Aliases[from]
		if _, ok := c.Models[to]; ok {
			continue
		}
		if _, _, ok := embedded.Lookup(to); !ok {
			errs = append(errs, fmt.Errorf("`aliases::%s`: %q is neither in the embedded price table nor in `models`", from, to))
		}
	}
	if len(c.FallbackModels) > 0 {
		tbl := c.table()
		for _, svc := range sortedKeys(c.FallbackModels) {
			model := c.FallbackModels[svc]
			switch {
			case strings.TrimSpace(svc) == "":
				errs = append(errs, errors.New("`fallback_models`: a key must be a service.name, got an empty one"))
			case model == "":
				// The fallback is off for this agent.
			default:
				if _, _, ok := tbl.Lookup(model); !ok {
					errs = append(errs, fmt.Errorf("`fallback_models::%s`: %q is neither in the embedded price table nor in `models` or `aliases`", svc, model))
				}
			}
		}
	}
	return errors.Join(errs...)
}

type namedRate struct {
	name string
	v    *float64
}

func (m ModelPrice) rates() []namedRate {
	return []namedRate{{"input", m.Input}, {"output", m.Output}, {"cache_read", m.CacheRead}, {"cache_creation", m.CacheCreation}, {"cache_creation_1h", m.CacheCreation1h}}
}

func (t TierPrice) rates() []namedRate {
	return []namedRate{{"input", t.Input}, {"output", t.Output}, {"cache_read", t.CacheRead}, {"cache_creation", t.CacheCreation}, {"cache_creation_1h", t.CacheCreation1h}}
}

// table builds the price table: the embedded one with the configured
// models laid over it.
func (c *Config) table() *pricing.Table {
	base := pricing.NewTable(nil, nil)
	overrides := make(map[string]pricing.Price, len(c.Models))
	for name, m := range c.Models {
		lower := strings.ToLower(name)
		p, tableName, ok := base.Lookup(name)
		if !ok {
			tableName = lower
		}
		set := func(dst, v *float64) {
			if v != nil {
				*dst = *v / perMillion
			}
		}
		set(&p.Input, m.Input)
		set(&p.Output, m.Output)
		if !ok {
			// A new model: what it does not price costs what input costs.
			p.CacheRead, p.CacheCreation = p.Input, p.Input
		}
		set(&p.CacheRead, m.CacheRead)
		set(&p.CacheCreation, m.CacheCreation)
		if !ok {
			p.CacheCreation1h = p.CacheCreation
		}
		set(&p.CacheCreation1h, m.CacheCreation1h)
		if t := m.Tier; t != nil {
			above := p.Rates
			if p.Threshold > 0 {
				above = p.Above
			}
			set(&above.Input, t.Input)
			set(&above.Output, t.Output)
			set(&above.CacheRead, t.CacheRead)
			set(&above.CacheCreation, t.CacheCreation)
			set(&above.CacheCreation1h, t.CacheCreation1h)
			p.Threshold, p.Above = t.AboveInputTokens, above
		}
		overrides[tableName] = p
		if tableName != lower {
			overrides[lower] = p
		}
	}
	return pricing.NewTable(overrides, c.Aliases)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
