// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package spanmodel

import (
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// usage is a token sum; has records which fields any event reported.
type usage struct {
	input, output, cacheRead, cacheCreation, reasoning int64
	has                                                [5]bool
}

func (u *usage) addEvent(ev *agentevent.Event) {
	for i, p := range []*int64{ev.TokensInput, ev.TokensOutput, ev.TokensCached, ev.TokensCacheCreation, ev.TokensThinking} {
		if p == nil {
			continue
		}
		u.has[i] = true
		*u.field(i) += *p
	}
}

func (u *usage) add(o usage) {
	for i := range u.has {
		if o.has[i] {
			u.has[i] = true
			*u.field(i) += *o.field(i)
		}
	}
}

func (u *usage) field(i int) *int64 {
	return [...]*int64{&u.input, &u.output, &u.cacheRead, &u.cacheCreation, &u.reasoning}[i]
}

func (u *usage) any() bool { return u.has != [5]bool{} }

// Keys of usage.put, by prefix.
var (
	genAIUsageKeys = usageKeys(agentevent.AttrGenAIUsagePrefix)
	turnUsageKeys  = usageKeys(agentevent.AttrTurnUsagePrefix)
)

func usageKeys(prefix string) [5]string {
	keys := [...]string{"input_tokens", "output_tokens", "cache_read.input_tokens", "cache_creation.input_tokens", "reasoning.output_tokens"}
	for i := range keys {
		keys[i] = prefix + keys[i]
	}
	return keys
}

// put adds the usage under prefix + the GenAI usage names.
func (u *usage) put(b *attrBuilder, prefix string) {
	keys := genAIUsageKeys
	if prefix == agentevent.AttrTurnUsagePrefix {
		keys = turnUsageKeys
	} else if prefix != agentevent.AttrGenAIUsagePrefix {
		keys = usageKeys(prefix)
	}
	for i, k := range keys {
		if u.has[i] {
			b.add(intAttr(k, *u.field(i)))
		}
	}
}

// usageAttrs is the rest of a response's usage, beyond the five GenAI token
// counts: the event model's other token counts (total, tool) and every
// usage attribute its events carry (isUsageAttr: the 1-hour cache writes,
// the carrier, the cost's source, …), by key. Numbers add up; of strings
// the first holds, except that a carrier "own" wins.
type usageAttrs map[string]any

func (x usageAttrs) addEvent(ev *agentevent.Event) {
	if ev.TokensTotal != nil {
		x.add(agentevent.AttrTokensTotal, *ev.TokensTotal)
	}
	if ev.TokensTool != nil {
		x.add(agentevent.AttrTokensTool, *ev.TokensTool)
	}
	for k, v := range ev.Attributes {
		if IsUsageAttr(k) {
			x.add(k, v)
		}
	}
}

func (x usageAttrs) add(k string, v any) {
	old, ok := x[k]
	if !ok {
		x[k] = v
		return
	}
	switch o := old.(type) {
	case int64:
		if n, ok := v.(int64); ok {
			x[k] = o + n
		}
	case float64:
		if f, ok := v.(float64); ok {
			x[k] = o + f
		}
	case bool:
		if b, ok := v.(bool); ok {
			x[k] = o || b
		}
	case string:
		if k == agentevent.AttrUsageCarrier && v == agentevent.UsageCarrierOwn {
			x[k] = v
		}
	}
}

// IsUsageAttr reports whether an attribute key is part of a model
// response's usage. A chat span carries all of its response's; no other
// span, and no span event but a reasoning block's own reasoning tokens,
// carries any.
func IsUsageAttr(k string) bool {
	return strings.HasPrefix(k, agentevent.AttrGenAIUsagePrefix) || strings.HasPrefix(k, agentevent.AttrUsagePrefix)
}
