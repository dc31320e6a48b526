// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

//go:generate go run ./gen -in prices.json -out table_generated.go

// Package pricing is the gen_ai_cost processor's price table: the embedded
// table generated from prices.json, model-name normalization, and the cost
// of one model response.
package pricing

import (
	"maps"
	"regexp"
	"strings"
)

// Rates are USD per token.
type Rates struct {
	Input           float64 // uncached input
	Output          float64 // output, reasoning included
	CacheRead       float64 // input served from the prompt cache
	CacheCreation   float64 // input written to the cache (5-minute lifetime)
	CacheCreation1h float64 // input written to the cache with a 1-hour lifetime
}

// Price is a model's price: its rates, and other rates for a request whose
// input (cache included) exceeds Threshold tokens, when Threshold > 0.
type Price struct {
	Rates
	Threshold int64
	Above     Rates
}

// Usage is the token usage of one model response, in the GenAI convention:
// Input includes CacheRead and CacheCreation, CacheCreation includes
// CacheCreation1h, Output includes reasoning.
type Usage struct {
	Input, Output, CacheRead, CacheCreation, CacheCreation1h int64
}

// Total is the number of tokens used.
func (u Usage) Total() int64 { return u.Input + u.Output }

// Cost is the price of u in USD. The rates above the threshold apply to the
// whole request once its input exceeds it (how Anthropic and Google bill
// long-context requests).
func (p Price) Cost(u Usage) float64 {
	return p.CostAt(u, p.Threshold > 0 && u.Input > p.Threshold)
}

// CostAt is the price of u at the rates above the threshold or not (for the
// later records of a streamed response, which carry no input of their own).
func (p Price) CostAt(u Usage, above bool) float64 {
	r := p.Rates
	if above && p.Threshold > 0 {
		r = p.Above
	}
	uncached := max(u.Input-u.CacheRead-u.CacheCreation, 0)
	create1h := min(max(u.CacheCreation1h, 0), u.CacheCreation)
	return float64(uncached)*r.Input +
		float64(u.CacheRead)*r.CacheRead +
		float64(u.CacheCreation-create1h)*r.CacheCreation +
		float64(create1h)*r.CacheCreation1h +
		float64(u.Output)*r.Output
}

// Table looks prices up by model name.
type Table struct {
	prices     map[string]Price
	aliases    map[string]string
	overridden map[string]bool
}

// NewTable returns the embedded table with overrides (whole prices, by
// normalized model name) and aliases (model name as logged → table name).
func NewTable(overrides map[string]Price, aliases map[string]string) *Table {
	t := &Table{prices: make(map[string]Price, len(table)+len(overrides)), aliases: map[string]string{}, overridden: map[string]bool{}}
	maps.Copy(t.prices, table)
	for k, v := range overrides {
		t.prices[strings.ToLower(k)] = v
		t.overridden[strings.ToLower(k)] = true
	}
	for k, v := range aliases {
		t.aliases[strings.ToLower(k)] = strings.ToLower(v)
	}
	return t
}

// Overridden tells whether the price of a table name comes from overrides.
func (t *Table) Overridden(name string) bool { return t.overridden[name] }

// Embedded returns the price of a model of the embedded table, by its exact
// table name.
func Embedded(name string) (Price, bool) {
	p, ok := table[name]
	return p, ok
}

// Lookup returns the price of a model as an agent logged its name, and the
// table name it was found under.
func (t *Table) Lookup(model string) (Price, string, bool) {
	for _, name := range Candidates(model) {
		if a, ok := t.aliases[name]; ok {
			name = a
		}
		if p, ok := t.prices[name]; ok {
			return p, name, true
		}
	}
	return Price{}, "", false
}

var (
	// A release date: -20250514, -2025-05-14, @20250514.
	dateSuffix = regexp.MustCompile(`[-@](20\d{6}|20\d\d-\d\d-\d\d)$`)
	// Bedrock and Vertex spellings: a region and vendor prefix
	// (us.anthropic.), a version suffix (-v1:0, @001).
	regionPrefix  = regexp.MustCompile(`^(us|eu|apac|jp|au|global)\.`)
	vendorPrefix  = regexp.MustCompile(`^(anthropic|openai|google|meta|amazon)\.`)
	versionSuffix = regexp.MustCompile(`(-v\d+(:\d+)?|:\d+|@\d{3})$`)
	// A tag after a colon: Ollama's (kimi-k2.5:cloud, qwen3-coder:480b-cloud,
	// llama3:latest) and any other decoration of a model served under a
	// base model's name.
	tagSuffix = regexp.MustCompile(`:[^:/]*$`)
	// Modes and reasoning efforts agents append to a model's name.
	modeSuffix = regexp.MustCompile(`(-thinking|:thinking|-(minimal|low|medium|high|xhigh)|\[1m\]|-1m)$`)
)

// Candidates lists the names a logged model name is looked up under, most
// specific first: as logged (lower case), without a provider prefix
// (anthropic/…, openrouter/openai/…), without a tag (:cloud, :latest, any
// :tag) or a Bedrock or Vertex spelling (us.anthropic.…-v1:0, @001), with
// Claude's dotted versions dashed (claude-opus-4.6), without a release date,
// without a mode or reasoning-effort suffix (-thinking, -high, [1m]), and the
// combinations. A name the table holds as logged (a dated
// claude-sonnet-4-20250514) is found as logged, before any of these.
func Candidates(model string) []string {
	name := strings.ToLower(strings.TrimSpace(model))
	if name == "" {
		return nil
	}
	out := []string{name}
	add := func(s string) {
		if s != "" && s != out[len(out)-1] {
			out = append(out, s)
		}
	}
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
		add(name)
	}
	name = vendorPrefix.ReplaceAllString(regionPrefix.ReplaceAllString(name, ""), "")
	// Bedrock's -v1:0 goes whole; any other :tag after it.
	name = tagSuffix.ReplaceAllString(versionSuffix.ReplaceAllString(name, ""), "")
	add(name)
	if strings.HasPrefix(name, "claude-") {
		name = strings.ReplaceAll(name, ".", "-")
		add(name)
	}
	for {
		trimmed := modeSuffix.ReplaceAllString(dateSuffix.ReplaceAllString(name, ""), "")
		if trimmed == name {
			break
		}
		name = trimmed
		add(name)
	}
	return out
}
